"""Numbers in a study are checked before anything runs: finite and in range, or exit 2 naming
the key (issue 24 item 5: ``max_unzipped_mb = inf`` was an internal error, OverflowError)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE
from unitize.cli import main

INCEPTION = EXAMPLE.parent / "inception-mini"


def zipped_export(tmp_path: Path) -> Path:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted((INCEPTION / "annotation").rglob("*.tsv")):
            z.write(path, path.relative_to(INCEPTION).as_posix())
    return archive


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("inf", "must be a finite number, not inf"),
        ("nan", "must be a finite number, not nan"),
        ("-1.0", "must be from 0.001 to 1,000,000, not -1.0"),
        ("1e300", "must be from 0.001 to 1,000,000, not 1e+300"),
        ('"lots"', "must be a number, not 'lots'"),
    ],
)
def test_a_number_out_of_range_in_a_study_file_exits_2_naming_the_key(tmp_path, capsys, value, says):
    archive = zipped_export(tmp_path)
    study = tmp_path / "study.toml"
    study.write_text(f'[input]\nformat = "webanno-tsv"\nannotations = "{archive.name}"\nmax_unzipped_mb = {value}\n', encoding="utf-8")
    assert main(["convert", str(study), "--out", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"[input] max_unzipped_mb {says}" in err and "internal error" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", [["--max-unzipped-mb", "inf"], ["--max-unzipped-mb", "nan"], ["--max-unzipped-mb", "0"]])
def test_a_number_out_of_range_as_a_flag_exits_2(tmp_path, capsys, flag):
    archive = zipped_export(tmp_path)
    argv = ["convert", "--format", "webanno-tsv", "--annotations", str(archive), "--out", str(tmp_path / "out"), "-q", *flag]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "max-unzipped-mb" in err or "max_unzipped_mb" in err, err
    assert ("finite" in err or "from 0.001 to 1,000,000" in err) and "internal error" not in err, err


def test_a_zip_read_with_a_sane_bound_still_works(tmp_path):
    archive = zipped_export(tmp_path)
    argv = ["convert", "--format", "webanno-tsv", "--annotations", str(archive), "--out", str(tmp_path / "out"), "-q", "--max-unzipped-mb", "1"]
    assert main(argv) == 0


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("[input]\nformat = \"datt\"\nannotations = \"a\"\nworkers = 0\n", "[input] workers must be"),
        ("[input]\nformat = \"datt\"\nannotations = \"a\"\nsense_level = 0\n", "[input] sense_level must be at least 1, not 0"),
        ("[input]\nformat = \"labels\"\nannotations = \"a.csv\"\nitem = \"id\"\nannotator = \"annotator\"\nlabels = [\"x\"]\n[items.groups.x]\nlevel = \"interval\"\nvalues = [1.0, nan]\n",
         "values must be labels or finite numbers"),
    ],
)
def test_other_numbers_are_checked_too(tmp_path, capsys, toml, says):
    (tmp_path / "a").mkdir()
    (tmp_path / "a.csv").write_text("id,annotator,x\n1,ana,1\n", encoding="utf-8")
    study = tmp_path / "study.toml"
    study.write_text(toml, encoding="utf-8")
    assert main(["convert", str(study), "--out", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert says in err and "internal error" not in err, err


@pytest.mark.parametrize("flag", [["--bootstrap", "1000000000000"], ["--seed", "-1", "--ci", "0.9"], ["--gamma-samples", "0"]])
def test_agree_numbers_out_of_range_exit_2(tmp_path, capsys, flag):
    out = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--tokenizer", "regex", "--units", "char", "-q"]) == 0
    with pytest.raises(SystemExit) as stop:
        main(["agree", str(out), "--dest", str(tmp_path / "agr"), "-q", *flag])
    assert stop.value.code == 2
    assert "is not from" in capsys.readouterr().err
    assert not (tmp_path / "agr").exists()
