"""The ``unitize`` command line: one module per command over a shared helper (:mod:`.common`).

Exit codes: 0 done (findings may exist, see the report), 2 usage or
configuration error, 3 input errors under ``--strict`` (nothing written),
4 a quality gate not passed (``unitize agree --fail-below``: a value below its floor),
1 an internal error (a bug: please report it), 141 standard output closed
by its reader (``| head``), quietly.

A command costs what it does, not what the others do: :func:`main` adds the
arguments of the command being run only (the top-level ``--help`` needs each
command's one-line ``HELP`` and nothing more), and a command module imports its
machinery inside its functions, so importing it for its ``HELP`` loads no
NumPy, pyarrow or adapter (``tests/cli/test_startup.py`` holds this).
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import platform
import sys
import tempfile
import traceback
import warnings
from collections.abc import Iterable, Sequence

from ..errors import OutputWarning, UnitizeError
from . import adjudicate, agree, common, convert, convert_format, estimate, examples, export, formats, info, init, plan, report, screen, validate
from .common import EXIT_INTERNAL, EXIT_USAGE, print_error
from .screen import escaped_output

#: command name -> its module (``HELP``, ``add_arguments(parser)``, ``run(args) -> exit code``, optional
#: ``EXAMPLES``: the end of its --help), in help order
COMMANDS = {
    "examples": examples,
    "init": init,
    "convert": convert,
    "validate": validate,
    "convert-format": convert_format,
    "info": info,
    "formats": formats,
    "export": export,
    "agree": agree,
    "plan": plan,
    "report": report,
    "adjudicate": adjudicate,
    "estimate": estimate,
}

#: commands that read or write no table at scale: they load no Arrow (nor choose its memory pool)
LIGHT_COMMANDS = frozenset({"examples", "init", "info", "formats"})

#: a command whose standard output was closed by its reader ends as if killed by SIGPIPE, as shell tools do
EXIT_PIPE = 128 + 13


class _Version(argparse.Action):
    """``--version``: the version is read when asked for, not whenever a parser is built."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option_string: str | None = None) -> None:
        from .._version import version

        print(f"unitize {version()}")
        parser.exit()


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the command line; ``commands``: only these commands get their arguments (default all),
    the others their one-line help alone (what the top-level ``--help`` shows)."""
    chosen = set(COMMANDS if commands is None else commands)
    parser = argparse.ArgumentParser(
        prog="unitize",
        description="Turn multi-annotator annotations into unit matrices for inter-annotator agreement.",
        epilog="start here:\n  unitize examples                       # the bundled studies, to try first\n"
        "  unitize formats                        # which format is yours\n"
        "  unitize init --format NAME DIR         # a commented study.toml from your data\n"
        "  unitize convert DIR/study.toml         # then: unitize agree OUT\n"
        "Every command has --help with examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
        if name in chosen:
            p.description = command.HELP[:1].upper() + command.HELP[1:] + "."
            p.epilog = getattr(command, "EXAMPLES", None)
            command.add_arguments(p)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option (the top level's options take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _unrecognized(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> None:
    """Exit 2 with the usage of the command (not the top level) and the nearest flag for a misspelled one."""
    target = parser
    if command:
        target = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    flags = [o for a in target._actions for o in a.option_strings if o.startswith("--")]
    guesses = [
        f"{x.split('=')[0]}: did you mean {near[0]}?"
        for x in extra
        if x.startswith("--") and (near := difflib.get_close_matches(x.split("=")[0], flags, n=1, cutoff=0.6))
    ]
    target.error(f"unrecognized arguments: {' '.join(extra)}" + (f" ({'; '.join(guesses)})" if guesses else ""))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with escaped_output():  # names and labels from the data never act on the terminal
            code = _main(argv)
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:  # the reader went away (`unitize formats | head -1`): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
                  line: str | None = None) -> None:
    """A warning of unitize's on standard error, one line, without Python's file and line; another's as Python shows it
    (``warnings.showwarning``'s signature: its ``file`` is ignored, standard error is where a warning goes)."""
    if issubclass(category, OutputWarning):
        print(f"unitize: warning: {message}", file=sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


def _prefer_jemalloc() -> None:
    """Arrow's allocations in its jemalloc pool, chosen before Arrow is loaded (its default pool is fixed then) where
    its wheels have one (Linux on x86-64) and ``ARROW_DEFAULT_MEMORY_POOL`` names none: against mimalloc, pyarrow's
    default, the same commands peak 5–13 % lower at the same CPU (bench/README.md)."""
    if "pyarrow" in sys.modules or os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64"):
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"  # inherited by the processes a run starts


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = _command(argv)
    if name in COMMANDS and name not in LIGHT_COMMANDS:
        _prefer_jemalloc()  # before the parser is built: its options load the adapters, and Arrow with them
    parser = build_parser([name] if name in COMMANDS else [])
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, args.command, extra)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", OutputWarning)
            warnings.showwarning = _show_warning
            return COMMANDS[args.command].run(args)
    except BrokenPipeError:
        raise
    except UnitizeError as exc:  # the user can fix it: the message says how
        print_error(exc)
        return EXIT_USAGE
    except OSError as exc:  # a file-system problem (disk full, permissions), not a bug
        print_error(os_error_message(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("unitize: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so plainly, no traceback unless asked
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(
            f"unitize: internal error: {type(exc).__name__}: {exc}\n"
            "  This is a bug in unitize. Rerun with --debug for the traceback and please report it.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def os_error_message(exc: OSError) -> str:
    """What a file-system error says, and for a full disk where unitize needed room and what to do."""
    target = f": {exc.filename}" if exc.filename else ""
    text = f"{exc.strerror or exc}{target}"
    if exc.errno == errno.ENOSPC or "No space left" in str(exc):
        text += (f"\n  unitize needs room for scratch files in the temporary directory {tempfile.gettempdir()} (TMPDIR) and for "
                 "a staged copy of the output beside the output directory; free space there, or set TMPDIR to a folder "
                 "with room (nothing was changed in the output)")
    return text


__all__ = ["COMMANDS", "build_parser", "common", "main", "screen"]
