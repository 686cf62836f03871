#!/usr/bin/env python3
"""Follow one setting through a run: every function that receives the study's settings, in call order.

    python tools/route.py unitize/examples/tdb-mini/study.toml            # convert it, print the route
    python tools/route.py STUDY --type Settings --out /tmp/out --quiet   # only the counts

A *stop* is a call of a unitize function one of whose arguments is a ``Settings`` (``--type``; the class's
own methods aside) or holds one as its ``settings`` (a run's context, its result): the route of the
settings from the command to the written files. Printed: the stops by module (consecutive stops
in one module are one visit), then the counts a layout is judged by — the modules visited, the visits
that *return* to a module already left, and the *climbs*: a visit to a package of a later stage than
the one before it (against the data's flow, as ``tests/test_layering.py`` ranks the packages); and the
same by stage package, the run (``unitize/run/``, which chains the stages) left out.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def layers() -> dict[str, int]:
    """The rank of each top-level module or package of unitize, lowest first, as the layering test declares them."""
    tree = ast.parse((ROOT / "tests" / "test_layering.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "LAYERS" for t in node.targets):
            return {name: i for i, layer in enumerate(ast.literal_eval(node.value)) for name in layer}
    raise SystemExit("tests/test_layering.py declares no LAYERS")


def carries(value: object, kind: str) -> bool:
    """Whether ``value`` is the value followed, or holds it as an attribute (a run's result, a run's context)."""
    if type(value).__name__ == kind:
        return True
    try:
        return any(type(getattr(value, name, None)).__name__ == kind for name in ("settings", "_settings"))
    except Exception:  # noqa: BLE001  (a value whose attributes cannot be read does not carry it)
        return False


def trace(study: Path, out: Path, kind: str) -> list[tuple[str, str]]:
    """(module, function) of every stop of a ``unitize convert`` of ``study`` into ``out``, in call order."""
    from unitize.cli import main

    stops: list[tuple[str, str]] = []

    def profile(frame, event, arg):  # noqa: ANN001
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("unitize."):
            return
        code = frame.f_code
        args = [frame.f_locals.get(name) for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]]
        if code.co_qualname.startswith(kind + ".") or code.co_name == "__init__" and code.co_qualname.startswith("__create_fn__"):
            return  # the value's own methods, and the field assignments of a dataclass's generated __init__
        if any(carries(a, kind) for a in args):
            stops.append((module, code.co_qualname))

    sys.setprofile(profile)
    try:
        code = main(["convert", str(study), "--out", str(out), "--quiet"])
    finally:
        sys.setprofile(None)
    if code != 0:
        raise SystemExit(f"unitize convert {study} exited {code}")
    return stops


def _visits(names: list[str]) -> list[str]:
    """Consecutive repeats collapsed: the rooms in the order they were entered."""
    return [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]


def stage_route(stops: list[tuple[str, str]]) -> list[str]:
    """The stage packages the route enters, in order (``unitize/run/``, the chain between them, left out)."""
    return _visits([m.split(".")[1] for m, _ in stops if m.split(".")[1] != "run"])


def counts(stops: list[tuple[str, str]], rank: dict[str, int]) -> dict[str, int]:
    """Stops, modules, visits, returns to a module already left and climbs against the flow; the same by stage."""
    visits = _visits([m for m, _ in stops])
    returns = sum(1 for i, m in enumerate(visits) if m in visits[:i])
    stage = [rank.get(m.split(".")[1], -1) for m in visits]
    climbs = sum(1 for a, b in zip(stage, stage[1:]) if b > a)
    stages = stage_route(stops)
    return {"stops": len(stops), "modules": len(set(visits)), "visits": len(visits), "returns": returns, "climbs": climbs,
            "stage_visits": len(stages), "stage_returns": sum(1 for i, p in enumerate(stages) if p in stages[:i])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path)
    parser.add_argument("--type", default="Settings", help="the class of the value followed (default Settings)")
    parser.add_argument("--out", type=Path, help="output directory (default a temporary one)")
    parser.add_argument("--quiet", action="store_true", help="only the counts")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        stops = trace(args.study.resolve(), args.out or Path(tmp) / "out", args.type)
    if not args.quiet:
        previous = None
        for module, function in stops:
            print(f"{module if module != previous else '':<34} {function}")
            previous = module
    print(" ".join(f"{k}={v}" for k, v in counts(stops, layers()).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
