"""``unitize examples``: the bundled studies listed, shown and copied so that a pip user can run one."""

from __future__ import annotations

from unitize.cli import main
from unitize.cli.examples import bundled

NAMES = ["bio-mini", "brat-mini", "crowd-mini", "inception-mini", "labels-mini", "models-mini", "tdb-mini"]


def test_the_list_names_every_bundled_study_with_its_title(capsys):
    assert list(bundled()) == NAMES
    assert main(["examples"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:7] == [f"{n:<14}  {t}" for n, t in zip(NAMES, ["a CoNLL BIO pair", "a brat project, three annotators",
                                                                  "a crowd span table, four workers",
                                                                  "an INCEpTION project export, three annotators",
                                                                  "flat labels, three annotators", "three humans and two runs of a model",
                                                                  "a hand-crafted DATT example corpus"],
                                                            strict=True)]


def test_a_copy_converts_and_agrees_where_it_was_put(tmp_path, capsys):
    dest = tmp_path / "try"
    assert main(["examples", "labels-mini", "--copy", str(dest)]) == 0
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "annotations", "study.toml"]
    assert main(["convert", str(dest / "study.toml"), "--out", str(dest / "out"), "-q"]) == 0
    assert main(["agree", str(dest / "out"), "-q"]) == 0
    assert (dest / "out" / "agreement" / "results.csv").is_file()


def test_mistakes_get_a_message_and_exit_2(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("x")
    assert main(["examples", "labels-mini", "--copy", str(tmp_path / "full")]) == 2
    assert "is not an empty folder" in capsys.readouterr().err
    assert (tmp_path / "full" / "mine.txt").read_text() == "x" and len(list((tmp_path / "full").iterdir())) == 1
    assert main(["examples", "nope"]) == 2
    assert "no bundled example 'nope'; the examples are: bio-mini, brat-mini" in capsys.readouterr().err
    assert main(["examples", "--copy", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
