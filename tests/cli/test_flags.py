"""Flags, help and messages: every option is a flag, every flag has help, study keys in the wrong section are named."""

from __future__ import annotations

import argparse
import inspect
import json
import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import ROOT
from unitize.adapters import all_options, available, get_adapter
from unitize.adapters.discourse_read import read_relations
from unitize.cli import COMMANDS, build_parser, main
from unitize.cli.flags import FIXED, flag
from unitize.config import ConfigError, Option, apply_set, from_mapping, toml_value

EXAMPLES = ROOT / "unitize" / "examples"


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_adapter_option_is_a_flag_of_convert(capsys):
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    text = capsys.readouterr().out
    shown = set(re.findall(r"(--[a-z][a-z0-9-]*)", text))
    for name in available():
        for key in get_adapter(name).options:
            assert flag(key) in shown, f"{name}: [input] {key} has no flag"
    # the flags of the issue, each generated from the declarations
    assert {"--roster", "--columns", "--newlines", "--layer", "--scheme", "--annotator-columns", "--token-column", "--offsets", "--feature", "--text-key"} <= shown
    # flags that worked before keep working
    assert {"--annotator-column", "--label-columns", "--annotators", "--annotations", "--texts"} <= shown


def test_every_flag_of_every_command_has_help():
    for name, parser in subparsers().items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = f"unitize {name} {'/'.join(action.option_strings) or action.dest}"
            if action.help == argparse.SUPPRESS:
                assert action.option_strings == ["--debug"], f"{where} is hidden"
                continue
            assert action.help and action.help.strip(), f"{where} has no help"


@pytest.mark.parametrize("command", ["convert", "agree", "export"])
def test_help_ends_with_three_examples(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    tail = capsys.readouterr().out.rstrip().split("examples:")[-1]
    lines = [line.strip() for line in tail.strip().splitlines() if line.strip().startswith("unitize ")]
    assert len(lines) >= 3, tail


def test_the_convert_examples_run(tmp_path, monkeypatch):
    """The examples at the end of `unitize convert --help` run from the repository root as written (output moved to tmp)."""
    monkeypatch.chdir(ROOT)
    for line in COMMANDS["convert"].EXAMPLES.splitlines():
        if not line.strip().startswith("unitize convert"):
            continue
        words = shlex.split(line.split("  #")[0])[1:]
        at = words.index("--out")
        words[at + 1] = str(tmp_path / words[at + 1])
        assert main([*words, "-q"]) == 0, line


def test_each_option_default_is_stated_once_in_its_declaration():
    """A built-in reader function states no default of its own for an option: ``None`` ("not given") where the
    declaration's default is ``None``, none at all where it declares one or requires the option; ``Adapter.read``
    passes the declared defaults (and shows them in its signature)."""
    for name in available():
        adapter = get_adapter(name)
        params = dict(inspect.signature(adapter.read.fn).parameters)
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):  # a PDTB-family reader passing the rest on
            params = {**dict(list(inspect.signature(read_relations).parameters.items())[1:]), **params}
            params.pop("options")
        shown = inspect.signature(adapter.read).parameters
        for key, option in adapter.options.items():
            assert key in params, f"{name}: {key} is declared but read() has no such argument"
            default = params[key].default
            if option.required or option.default is not None:
                assert default is inspect.Parameter.empty, f"{name}: read() states a default for {key} ({default!r}); declare it in the Option"
            else:
                assert default is None, f"{name}: {key} declares no default, read() has {default!r}"
            if key in shown:  # a parameter of its own (not passed on through **options)
                assert shown[key].default == (inspect.Parameter.empty if option.required else option.default), f"{name}: {key}"
            assert option.help, f"{name}: {key} has no help"
        # the run's own arguments; ``stream`` only where the traits say the reader streams
        run_arguments = {"base", "progress"} | ({"stream"} if adapter.traits.streams else set())
        assert set(params) - set(adapter.options) <= run_arguments, f"{name}: read() takes undeclared options"


def test_option_values_from_flag_text():
    assert Option("list").parse("a, b") == ["a", "b"]
    assert Option("table").parse("doc=comment_id,label=type") == {"doc": "comment_id", "label": "type"}
    assert Option("table", item="int").parse("ayse=1,burak=2") == {"ayse": 1, "burak": 2}
    assert Option("bool").parse("yes") is True and Option("int").parse("-1") == -1
    assert Option("toml").parse('{role = ["Speaker"]}') == {"role": ["Speaker"]}
    for option, text, message in (
        (Option("str", choices=("a", "b")), "c", "not one of a, b"),
        (Option("table"), "doc", "not KEY=VALUE"),
        (Option("int"), "x", "not a whole number"),
        (Option("toml"), "[1,", "not a TOML value"),
    ):
        with pytest.raises(ConfigError, match=message):
            option.parse(text)


def test_generated_flags_read_a_crowd_table_without_a_study(tmp_path):
    crowd = EXAMPLES / "crowd-mini"
    argv = ["convert", "--format", "span-table", "--annotations", str(crowd / "spans.csv"), "--texts", str(crowd / "comments.csv")]
    argv += ["--roster", str(crowd / "annotations.csv"), "--columns", "doc=comment_id,text=comment_text,annotator=worker,key=annotation,label=type,begin=start"]
    assert main([*argv, "--units", "char", "--layout", "long", "--out", str(tmp_path / "o"), "-q"]) == 0
    assert main(["convert", str(crowd / "study.toml"), "--units", "char", "--out", str(tmp_path / "s"), "-q"]) == 0
    flags_rows = (tmp_path / "o" / "units" / "setting=char-interval" / "part-00000.parquet").read_bytes()
    study_rows = (tmp_path / "s" / "units" / "setting=char-interval" / "part-00000.parquet").read_bytes()
    assert len(flags_rows) > 0 and len(study_rows) > 0


def test_a_flag_the_format_does_not_have_is_refused(capsys):
    study = str(EXAMPLES / "brat-mini" / "study.toml")
    assert main(["convert", study, "--roster", "r.csv", "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert "--roster: not an option of format 'brat'; its options are --annotations, --encoding" in err
    assert "--newlines" in err
    assert main(["convert", study, "--texts", "t", "--out", "x"]) == 2
    assert "--texts: not an option of format 'brat'" in capsys.readouterr().err
    assert main(["convert", study, "--newlines", "sometimes", "--out", "x"]) == 2
    assert "--newlines 'sometimes': 'sometimes' is not one of universal, keep" in capsys.readouterr().err


def test_set_changes_any_key(tmp_path, capsys):
    study = str(EXAMPLES / "brat-mini" / "study.toml")
    out = tmp_path / "o"
    assert main(["convert", study, "--set", "unitize.units=[\"word\"]", "--set", "unitize.tokenizer=regex", "--out", str(out), "-q"]) == 0
    assert sorted(p.name.removeprefix("setting=") for p in (out / "units").iterdir()) == ["word-boundary", "word-interval"]
    assert sorted(p.name.removeprefix("setting=") for p in (out / "labels").iterdir()) == ["word-boundary-labels", "word-interval-labels"]
    assert main(["convert", study, "--set", "tokenizer=regex", "--out", str(out)]) == 2
    assert "e.g. --set unitize.tokenizer=regex" in capsys.readouterr().err
    assert main(["convert", study, "--set", "input.tokenizer=regex", "--out", str(out)]) == 2
    assert "tokenizer belongs in [unitize]" in capsys.readouterr().err
    data: dict = {}
    apply_set(data, "items.groups.severity.level=ordinal")
    apply_set(data, 'input.columns={doc = "id"}')
    assert data == {"items": {"groups": {"severity": {"level": "ordinal"}}}, "input": {"columns": {"doc": "id"}}}
    assert toml_value("regex") == "regex" and toml_value("3") == 3


def test_set_of_an_input_key_beside_format_and_no_study(tmp_path, capsys):
    # --set input.KEY=... with --format and no study file: the [input] it makes is of the flag's format (it was read
    # as a study naming no format: "[input] format is missing")
    crowd = EXAMPLES / "crowd-mini"
    out = tmp_path / "o"
    columns = 'input.columns={doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start"}'
    argv = ["convert", "--format", "span-table", "--annotations", str(crowd / "spans.csv"), "--set", columns,
            "--set", f"input.roster={str(crowd / 'annotations.csv')!r}", "--out", str(out), "-q"]
    assert main([*argv, "--set", "input.texts='nope.csv'"]) == 2
    assert "texts table not found" in capsys.readouterr().err
    assert main([*argv, "--set", f"input.texts={str(crowd / 'comments.csv')!r}"]) == 0
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["settings"]["format"] == "span-table"


@pytest.mark.parametrize(
    "tables,message",
    [
        ({"input": {"format": "brat", "tokenizer": "spacy:en"}}, "tokenizer belongs in [unitize] (found in [input])"),
        ({"input": {"dir": "out"}}, "dir belongs in [output]"),
        ({"unitize": {"annotations": "ann"}}, "annotations belongs in [input] (found in [unitize])"),
        ({"unitize": {"layouts": ["long"]}}, "layouts belongs in [items]"),
        ({"output": {"modes": ["labels"]}}, "modes belongs in [unitize]"),
        ({"format": "brat", "input": {}}, "format belongs in [input] (found at the top of the file)"),
        ({"input": {"complete": True}}, "complete belongs in [items]"),
    ],
)
def test_a_key_in_the_wrong_section_names_the_right_one(tables, message):
    with pytest.raises(ConfigError) as exc:
        from_mapping(tables, base=Path("."))
    assert message in str(exc.value)


def test_unknown_keys_still_list_the_known_ones():
    with pytest.raises(ConfigError, match="unknown key\\(s\\) in \\[unitize\\]: colour; known: approaches"):
        from_mapping({"unitize": {"colour": "red"}}, base=Path("."))


def test_formats_shows_a_formats_options_with_examples(capsys):
    assert main(["formats", "--format", "span-table"]) == 0
    text = capsys.readouterr().out
    assert "roster = " in text and "--roster PATH" in text and "columns = {doc = " in text
    assert "unitize init --format span-table DIR" in text
    assert main(["formats"]) == 0
    assert "--annotator-columns" in capsys.readouterr().out


def test_fixed_flags_cover_keys_of_some_format():
    keys = set(all_options())
    assert set(FIXED) <= keys


def test_a_misspelled_flag_gets_the_commands_usage_and_the_nearest_flag(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["convert", "--formt", "brat"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: unitize convert")
    assert "unrecognized arguments: --formt (--formt: did you mean --format?)" in err


def test_a_missing_output_directory_is_named_as_missing(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nope")]) == 2
    assert f"{tmp_path / 'nope'} does not exist; give the output directory of `unitize convert`" in capsys.readouterr().err
    (tmp_path / "study.toml").write_text("[input]\n", encoding="utf-8")
    assert main(["agree", str(tmp_path)]) == 2
    assert "is a study folder, not an output directory; run `unitize convert" in capsys.readouterr().err


def test_a_list_flag_given_twice_joins_its_lists(capsys):
    """``--metric alpha --metric span-f1`` measures both (argparse alone would keep the last); a name twice is refused."""
    agree = subparsers()["agree"]
    assert agree.parse_args(["out", "--metric", "alpha", "--metric", "span-f1,cohen"]).metric == ["alpha", "span-f1", "cohen"]
    assert agree.parse_args(["out"]).metric is None
    convert = subparsers()["convert"]
    assert convert.parse_args(["s.toml", "--units", "char", "--units", "word"]).units == ["char", "word"]
    with pytest.raises(SystemExit):
        agree.parse_args(["out", "--metric", "alpha", "--metric", "alpha"])
    assert "--metric names 'alpha' twice" in capsys.readouterr().err
