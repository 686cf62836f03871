"""Flat labels (format "labels"): every input shape, the item-matrix rules, bad input, real data."""

from __future__ import annotations

import csv
import json
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.conftest import CORPORA, ROOT, needs_shared
from unitize.adapters import AdapterError
from unitize.cli import main
from unitize.config import ConfigError, Settings, load_toml
from unitize.errors import RunError
from unitize.items import NOT_APPLICABLE, ItemOptions, build
from unitize.layouts import LONG, WIDE
from unitize.model import ItemLabel
from unitize.run import convert
from unitize.schema import contract, setting_path

SCHEMAS = ROOT / "schemas"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run(root: Path, annotations: str, items: dict | None = None, **inp):
    settings = Settings(
        format="labels",
        input={"annotations": root / annotations, **inp},
        out=root / "out",
        base=root,
        items=items or {},
    )
    unitized, manifest = convert(settings)
    return unitized, manifest, root / "out"


def rows(out: Path, layout: str = "wide") -> list[dict]:
    name = "items" if layout == "wide" else "items-long"
    return pq.read_table(out / setting_path(name) / "part-00000.parquet").to_pylist()


def meta(out: Path, layout: str = "wide") -> dict:
    name = "items" if layout == "wide" else "items-long"
    return json.loads(pq.read_schema(out / setting_path(name) / "part-00000.parquet").metadata[b"unitize"])


def report(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]


def by_group(table: list[dict]) -> dict[str, list[dict]]:
    out = defaultdict(list)
    for r in table:
        out[r["group"]].append(r)
    return out


def assert_accounted(manifest: dict) -> None:
    labels = manifest["accounting"]["labels"]
    assert labels["read"] == sum(v for k, v in labels.items() if k != "read")


# --- the seed's hierarchical scheme (000_db7eb1cf5249cf26.txt) ----------------------

# (annotator 1, annotator 2, count); the seed's tables have annotator 2 in the rows
# and annotator 1 in the columns (its marginals say so: "Annotator 1 said 18 to OFF")
GILBERT = [("HATE", "HATE", 11), ("NOHATE", "HATE", 0), ("HATE", "NOHATE", 6), ("NOHATE", "NOHATE", 27)]
KUMAR = [("CAG", "CAG", 7), ("NAG", "CAG", 1), ("OAG", "CAG", 1), ("CAG", "NAG", 0), ("NAG", "NAG", 14),
         ("OAG", "NAG", 3), ("CAG", "OAG", 4), ("NAG", "OAG", 2), ("OAG", "OAG", 12)]  # fmt: skip
ZAMP_A = [("OFF", "OFF", 14), ("NON", "OFF", 7), ("OFF", "NON", 4), ("NON", "NON", 19)]
ZAMP_B = [("TARG", "TARG", 11), ("NOTARG", "TARG", 1), ("TARG", "NOTARG", 1), ("NOTARG", "NOTARG", 1)]


def _expand(table):
    return [(a, b) for a, b, n in table for _ in range(n)]


def seed_study(root: Path) -> None:
    """Two annotator CSVs (ID, text, one column per scheme), as the seed notebook's files."""
    zamp_b = iter(_expand(ZAMP_B))
    out = {"A1": [], "A2": []}
    for i, (g, k, a) in enumerate(zip(_expand(GILBERT), _expand(KUMAR), _expand(ZAMP_A))):
        if a == ("OFF", "OFF"):
            b = next(zamp_b)
        else:  # only one annotator (or none) reached the target level; "-" = did not answer
            b = tuple("TARG" if v == "OFF" else "-" for v in a)
        for j, who in enumerate(("A1", "A2")):
            out[who].append(f"{1001 + i},\"tweet, number {i}\",{g[j]},{k[j]},{a[j]},{b[j]}")
    for who, lines in out.items():
        write(root, {f"labels/{who}.csv": "ID,text,gilbert,kumar,zamp_a,zamp_b\n" + "\n".join(lines) + "\n"})


def confusion(table: list[dict]) -> Counter:
    return Counter((r["A1"], r["A2"]) for r in table)


def expected(table) -> Counter:
    return Counter({(a, b): n for a, b, n in table if n})


@pytest.mark.parametrize("reach", ["every", "any"])
def test_seed_hierarchical_scheme(tmp_path, reach):
    seed_study(tmp_path)
    items = {"layouts": ["wide", "long"], "groups": {"zamp_b": {"applies_when": {"level": "zamp_a", "value": "OFF"}, "reach": reach}}}
    unitized, manifest, out = run(
        tmp_path, "labels", items, shape="per-annotator", item="ID", labels=["gilbert", "kumar", "zamp_a", "zamp_b"], missing=["-"]
    )
    groups = by_group(rows(out))
    assert list(groups) == ["gilbert", "kumar", "zamp_a", "zamp_b"]
    assert len(groups["zamp_a"]) == 44
    assert confusion(groups["gilbert"]) == expected(GILBERT)
    assert confusion(groups["kumar"]) == expected(KUMAR)
    assert confusion(groups["zamp_a"]) == expected(ZAMP_A)
    zamp_b = groups["zamp_b"]
    if reach == "every":
        assert len(zamp_b) == 14
        assert confusion(zamp_b) == expected(ZAMP_B)
    else:  # also the 7 + 4 items only one annotator reached; the other is not applicable
        assert len(zamp_b) == 25
        assert confusion(zamp_b) == expected(ZAMP_B) + Counter({(NOT_APPLICABLE, "TARG"): 7, ("TARG", NOT_APPLICABLE): 4})
    assert [r["item"] for r in groups["zamp_a"]] == [str(1001 + i) for i in range(44)]
    m = meta(out)
    assert m["kind"] == "items" and m["layout"] == "wide" and m["annotators"] == ["A1", "A2"]
    assert m["levels"] == dict.fromkeys(["gilbert", "kumar", "zamp_a", "zamp_b"], "nominal")
    assert m["not_applicable"] == NOT_APPLICABLE
    assert m["applies_when"] == {"zamp_b": {"level": "zamp_a", "values": ["OFF"], "reach": reach}}
    assert m["items"]["zamp_b"] == {"items": 14 if reach == "every" else 25, "complete": 14, "kept": 14 if reach == "every" else 25, "reached_by_any": 25}
    # 11 items where one annotator's upper answer closed the target level, each reported
    na = [f for f in report(out) if f["code"] == "not-applicable"]
    assert len(na) == 11 and {f["group"] for f in na} == {"zamp_b"}
    long = rows(out, "long")
    assert meta(out, "long")["layout"] == "long"
    assert len(long) == 2 * (44 * 3 + len(zamp_b))
    assert Counter(r["value"] for r in long if r["group"] == "zamp_b") == Counter(
        v for r in zamp_b for v in (r["A1"], r["A2"])
    )
    assert_accounted(manifest)


def test_seed_complete_keeps_items_every_annotator_labelled(tmp_path):
    seed_study(tmp_path)
    _, manifest, out = run(
        tmp_path, "labels", {"complete": True}, shape="per-annotator", item="ID", labels=["zamp_b"], missing=["-"]
    )
    # zamp_b without applies_when: 44 items, only the 14 both annotators answered are complete
    table = rows(out)
    assert len(table) == 14 and all(r["A1"] in ("TARG", "NOTARG") and r["A2"] in ("TARG", "NOTARG") for r in table)
    kept = [f for f in report(out) if f["code"] == "items-kept"]
    assert kept[0]["message"] == "group zamp_b: 44 items; 14 labelled by every annotator (A1, A2)"
    assert kept[0]["action"] == "complete = true keeps 14"
    assert manifest["accounting"]["labels"] == {"read": 88, "item_not_kept": 60, "labelled": 28}


def test_label_where_the_upper_level_did_not_open_it(tmp_path):
    write(tmp_path, {"l.csv": "item,ann,A,B\n1,x,OFF,TARG\n1,y,NON,TARG\n2,x,NON,\n2,y,NON,\n"})
    _, manifest, out = run(
        tmp_path, "l.csv", {"groups": {"B": {"applies_when": {"level": "A", "value": "OFF"}}}}, item="item", annotator="ann", labels=["A", "B"]
    )
    groups = by_group(rows(out))
    assert groups["B"] == [{"group": "B", "item": "1", "x": "TARG", "y": NOT_APPLICABLE}]
    found = [f for f in report(out) if f["code"] == "label-not-applicable"]
    assert [(f["doc"], f["annotator"], f["record"]) for f in found] == [("1", "y", "3")]
    assert manifest["accounting"]["labels"] == {"read": 8, "item_not_kept": 2, "labelled": 5, "not_applicable": 1}


# --- shapes ------------------------------------------------------------------------


def test_wide_table_missing_tokens_and_ids_as_given(tmp_path):
    write(tmp_path, {"w.csv": "id,text,ann1,ann2,ann3\n00123,a,POS,NA,neg\n123,b,,-,none\n7,c,?,POS,POS\n"})
    _, manifest, out = run(tmp_path, "w.csv", shape="wide", item="id", ignore=["text"], missing=["NA", "-", "?"])
    assert rows(out) == [
        {"group": "label", "item": "7", "ann1": None, "ann2": "POS", "ann3": "POS"},
        {"group": "label", "item": "00123", "ann1": "POS", "ann2": None, "ann3": "neg"},
        {"group": "label", "item": "123", "ann1": None, "ann2": None, "ann3": "none"},  # "none" is a value
    ]
    assert manifest["accounting"]["labels"] == {"read": 9, "labelled": 5, "not_labelled": 4}
    schema = pq.read_schema(out / "units" / "setting=items" / "part-00000.parquet")
    assert [(f.name, str(f.type)) for f in schema][:2] == [("group", "dictionary<values=string, indices=int32, ordered=0>"), ("item", "string")]


def test_normalize_ids_merges_00123_and_123_and_reports_the_duplicate(tmp_path):
    write(tmp_path, {"w.csv": "id,a,b\n00123,X,Y\n123,X,Z\n"})
    unitized, _, out = run(tmp_path, "w.csv", shape="wide", item="id", normalize_ids=True)
    assert rows(out) == [{"group": "label", "item": "123", "a": "X", "b": None}]
    codes = Counter(f.code for f in unitized.findings)
    assert codes["duplicate-label"] == 1 and codes["conflicting-labels"] == 1
    conflict = next(f for f in unitized.findings if f.code == "conflicting-labels")
    assert conflict.annotator == "b" and "'Y' (line 2), 'Z' (line 3)" in conflict.message


def test_per_annotator_files_with_different_item_sets(tmp_path):
    write(tmp_path, {
        "anns/ivo.tsv": "ID\ttweet\tannotation\n1\tx\t1.0\n2\ty\t0.0\n3\tz\t\n",
        "anns/joely.tsv": "ID\ttweet\tannotation\n1\tx\t1.0\n2\ty\t1.0\n",
    })  # fmt: skip
    unitized, manifest, out = run(tmp_path, "anns", {"complete": True}, shape="per-annotator", item="ID", labels=["annotation"])
    assert rows(out) == [
        {"group": "annotation", "item": "1", "ivo": "1.0", "joely": "1.0"},
        {"group": "annotation", "item": "2", "ivo": "0.0", "joely": "1.0"},
    ]
    mismatch = [f for f in unitized.findings if f.code == "item-set-mismatch"]
    assert [(f.file, f.severity) for f in mismatch] == [("anns/joely.tsv", "warning")]
    assert "no row for 1 of the 3 items" in mismatch[0].message
    assert manifest["accounting"]["labels"] == {"read": 5, "item_not_kept": 1, "labelled": 4}


def test_jsonl_lists_and_dicts_with_multi_label_sets_and_split(tmp_path):
    write(tmp_path, {
        "lists.jsonl": '{"id": "p1", "annotators": "Ann1,Ann2", "annotations": "0,1"}\n'
        '{"id": "p2", "annotators": ["Ann1", "Ann2"], "annotations": ["1", "1"]}\n',
        "dict.jsonl": '{"id": "n1", "nli": {"Ann1": "entailment,neutral", "Ann2": "Neutral", "Ann3": ["neutral", "entailment"]}}\n'
        '{"id": "n2", "nli": {"Ann1": "contradiction"}}\n'
        "not json\n",
    })  # fmt: skip
    _, _, out = run(tmp_path, "lists.jsonl", shape="lists", item="id", annotator="annotators", labels=["annotations"])
    assert rows(out) == [
        {"group": "annotations", "item": "p1", "Ann1": "0", "Ann2": "1"},
        {"group": "annotations", "item": "p2", "Ann1": "1", "Ann2": "1"},
    ]
    sets = {"groups": {"nli": {"multi": "set", "casefold": True}}, "layouts": ["wide", "long"]}
    unitized, manifest, out = run(tmp_path, "dict.jsonl", sets, shape="dict", item="id", labels=["nli"])
    assert rows(out) == [
        {"group": "nli", "item": "n1", "Ann1": "entailment+neutral", "Ann2": "neutral", "Ann3": "entailment+neutral"},
        {"group": "nli", "item": "n2", "Ann1": "contradiction", "Ann2": None, "Ann3": None},
    ]
    assert meta(out)["multi"] == {"nli": "set"}
    # n2 has no records from Ann2 and Ann3: no rows in the long layout
    assert [(r["item"], r["annotator"]) for r in rows(out, "long")] == [("n1", "Ann1"), ("n1", "Ann2"), ("n1", "Ann3"), ("n2", "Ann1")]
    bad = [f for f in unitized.findings if f.code == "record-malformed"]
    assert [(f.file, f.record) for f in bad] == [("dict.jsonl", "3")]
    assert manifest["accounting"]["records"]["unreadable"] == 1

    split = {"groups": {"nli": {"multi": "split", "casefold": True}}}
    _, _, out = run(tmp_path, "dict.jsonl", split, shape="dict", item="id", labels=["nli"])
    table = rows(out)
    assert [r["group"] for r in table] == ["nli:contradiction"] * 2 + ["nli:entailment"] * 2 + ["nli:neutral"] * 2
    assert table[2] == {"group": "nli:entailment", "item": "n1", "Ann1": "1", "Ann2": "0", "Ann3": "1"}
    assert table[3] == {"group": "nli:entailment", "item": "n2", "Ann1": "0", "Ann2": None, "Ann3": None}
    assert meta(out)["split_of"] == {"nli:contradiction": "nli", "nli:entailment": "nli", "nli:neutral": "nli"}


def test_json_object_keyed_by_item(tmp_path):
    write(tmp_path, {"d.json": json.dumps({"7": {"annotations": {"a": "x", "b": "y"}}, "8": {"annotations": {"a": "x"}}})})
    _, _, out = run(tmp_path, "d.json", shape="dict", item="@key", labels=["annotations"])
    assert [(r["item"], r["a"], r["b"]) for r in rows(out)] == [("7", "x", "y"), ("8", "x", None)]


def test_parquet_long_table_with_bundles_and_typed_ids(tmp_path):
    table = pa.table({
        "utt": pa.array([1, 1, 2, 2], pa.int64()),
        "coder": ["c1", "c2", "c1", "c2"],
        "Speaker": ["Mouse", "Mouse", "Cat", None],
        "Addressee": ["Mouse", "Cat", None, None],
    })  # fmt: skip
    pq.write_table(table, tmp_path / "t.parquet")
    _, manifest, out = run(tmp_path, "t.parquet", item="utt", annotator="coder", labels=[], bundles={"role": ["Speaker", "Addressee"]})
    assert rows(out) == [
        {"group": "role", "item": "1", "c1": "Addressee=Mouse+Speaker=Mouse", "c2": "Addressee=Cat+Speaker=Mouse"},
        {"group": "role", "item": "2", "c1": "Speaker=Cat", "c2": None},
    ]
    assert manifest["inputs"][0]["path"] == "t.parquet"


def test_normalisation_levels_and_numbers(tmp_path):
    write(tmp_path, {"l.csv": "item,who,sent,score,size\n1,a, Pos ,1.0,small\n1,b,positive,01,large\n2,a,NEG,2.50,medium\n2,b,neg,3,small\n"})
    items = {
        "strip": True,
        "groups": {
            "sent": {"casefold": True, "map": {"positive": "pos"}, "values": ["pos", "neg"]},
            "score": {"level": "interval"},
            "size": {"level": "ordinal", "values": ["small", "medium", "large"]},
        },
    }
    _, _, out = run(tmp_path, "l.csv", items, item="item", annotator="who", labels=["sent", "score", "size"])
    groups = by_group(rows(out))
    assert [(r["a"], r["b"]) for r in groups["sent"]] == [("pos", "pos"), ("neg", "neg")]
    assert [(r["a"], r["b"]) for r in groups["score"]] == [("1", "1"), ("2.5", "3")]
    m = meta(out)
    assert m["levels"] == {"score": "interval", "sent": "nominal", "size": "ordinal"}
    assert m["numbers"] == {"score": {"1": 1.0, "2.5": 2.5, "3": 3.0}, "size": {"small": 1.0, "medium": 2.0, "large": 3.0}}
    assert m["order"] == {"score": ["1", "2.5", "3"], "size": ["small", "medium", "large"]}


def test_labels_outside_the_declared_set_and_not_numeric(tmp_path):
    write(tmp_path, {"l.csv": "item,who,sent,score\n1,a,pos,x\n1,b,Pos,2\n"})
    items = {"groups": {"sent": {"values": ["pos", "neg"]}, "score": {"level": "interval"}}}
    unitized, manifest, out = run(tmp_path, "l.csv", items, item="item", annotator="who", labels=["sent", "score"])
    found = sorted((f.code, f.group, f.annotator, f.record) for f in unitized.findings if f.severity == "error")
    assert found == [("label-not-numeric", "score", "a", "2"), ("label-undeclared", "sent", "b", "3")]
    assert by_group(rows(out))["sent"] == [{"group": "sent", "item": "1", "a": "pos", "b": None}]
    assert manifest["accounting"]["labels"] == {"read": 4, "invalid_label": 2, "labelled": 2}
    assert main(["convert", "--quiet", "--strict", str(toml_for(tmp_path, items))]) == 3


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def toml_for(root: Path, items: dict) -> Path:
    path = root / "study.toml"
    lines = ['[input]', 'format = "labels"', 'annotations = "l.csv"', 'item = "item"', 'annotator = "who"', 'labels = ["sent", "score"]', "", "[output]", 'dir = "cli-out"', ""]
    for name, spec in items.get("groups", {}).items():
        lines.append(f"[items.groups.{name}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in spec.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- bad input and configuration -----------------------------------------------------


def test_file_without_the_mapped_columns_is_a_usage_error(tmp_path, capsys):
    write(tmp_path, {"l.csv": "ID,label\n1,x\n"})
    with pytest.raises(AdapterError, match=r"l.csv: column\(s\) 'annotator' not found; the file has 'ID', 'label'"):
        run(tmp_path, "l.csv", item="ID", annotator="annotator", labels=["label"])
    toml = tmp_path / "s.toml"
    toml.write_text('[input]\nformat = "labels"\nannotations = "l.csv"\nitem = "ID"\nannotator = "annotator"\nlabels = ["label"]\n[output]\ndir = "o"\n')
    assert main(["convert", "--quiet", str(toml)]) == 2
    assert "column(s) 'annotator' not found" in capsys.readouterr().err


def test_conditional_level_pointing_nowhere_is_a_usage_error(tmp_path, capsys):
    write(tmp_path, {"l.csv": "item,who,sent,score\n1,a,pos,1\n"})
    with pytest.raises(ConfigError, match="applies_when level 'target' does not exist"):
        run(tmp_path, "l.csv", {"groups": {"score": {"applies_when": {"level": "target", "value": "x"}}}}, item="item", annotator="who", labels=["sent", "score"])
    toml = toml_for(tmp_path, {"groups": {"score": {"applies_when": {"level": "score", "value": "1"}}}})
    assert main(["convert", "--quiet", str(toml)]) == 2
    assert "points at the group itself" in capsys.readouterr().err


def test_bad_rows_are_reported_not_dropped(tmp_path):
    write(tmp_path, {"l.csv": "item,who,lab\n1,a,x\n1,a,x\n1,b,y\n1,b,z\n,a,x\n2,a\n"})
    unitized, manifest, out = run(tmp_path, "l.csv", item="item", annotator="who", labels=["lab"])
    found = sorted((f.code, f.record) for f in unitized.findings if f.code != "items-kept")
    assert found == [("conflicting-labels", "4"), ("duplicate-label", "3"), ("record-malformed", "6"), ("record-malformed", "7")]
    assert rows(out) == [{"group": "lab", "item": "1", "a": "x", "b": None}]
    assert manifest["accounting"]["labels"] == {"read": 4, "conflicting": 2, "duplicate": 1, "labelled": 1}


def test_unknown_items_options_are_config_errors(tmp_path):
    write(tmp_path, {"l.csv": "item,who,lab\n1,a,x\n"})
    for items, message in (
        ({"layout": "wide"}, "unknown key"),
        ({"groups": {"lab": {"level": "ratio"}}}, "level must be one of"),
        ({"groups": {"nope": {}}}, "names a group the input does not have"),
        ({"groups": {"lab": {"reach": "every"}}}, "reach needs applies_when"),
    ):
        with pytest.raises(ConfigError, match=message):
            run(tmp_path, "l.csv", items, item="item", annotator="who", labels=["lab"])


# --- contracts, determinism, CLI ------------------------------------------------------


def test_contract_manifest_schema_and_byte_identical_reruns(tmp_path):
    seed_study(tmp_path)
    (tmp_path / "study.toml").write_text(
        '[input]\nformat = "labels"\nannotations = "labels"\nshape = "per-annotator"\nitem = "ID"\n'
        'labels = ["zamp_a", "zamp_b"]\nmissing = ["-"]\n\n[items]\nlayouts = ["wide", "long"]\n\n'
        '[items.groups.zamp_b]\napplies_when = {level = "zamp_a", value = "OFF"}\nreach = "every"\n\n[output]\ndir = "out"\n',
        encoding="utf-8",
    )
    with open(tmp_path / "study.toml", "rb") as fh:
        jsonschema.validate(tomllib.load(fh), json.loads((SCHEMAS / "config.schema.json").read_text()))
    settings = load_toml(tmp_path / "study.toml")
    assert main(["convert", "--quiet", str(tmp_path / "study.toml")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    jsonschema.validate(manifest, json.loads((SCHEMAS / "manifest.schema.json").read_text()))
    report_schema = json.loads((SCHEMAS / "report.schema.json").read_text())
    for row in report(tmp_path / "out"):
        jsonschema.validate(row, report_schema)
    spec = contract("items.arrow.json")["layouts"]
    for layout, name in (("wide", "items"), ("long", "items-long")):
        schema = pq.read_schema(tmp_path / "out" / setting_path(name) / "part-00000.parquet")
        fields = [(f.name, f.nullable) for f in schema]
        assert fields[: len(spec[layout]["fields"])] == [(f["name"], f["nullable"]) for f in spec[layout]["fields"]]
    assert [f.name for f in pq.read_schema(tmp_path / "out" / "units" / "setting=items" / "part-00000.parquet")][2:] == ["A1", "A2"]
    assert settings.items["groups"]["zamp_b"]["reach"] == "every"
    first = {o["path"]: o["sha256"] for o in manifest["outputs"]}
    assert main(["convert", "--quiet", str(tmp_path / "study.toml")]) == 0
    again = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {o["path"]: o["sha256"] for o in again["outputs"]} == first
    assert main(["info", str(tmp_path / "out")]) == 0
    assert main(["validate", "--quiet", str(tmp_path / "study.toml")]) == 0


# --- real data: ToxicSpans annotations.csv as a long table ----------------------------


@needs_shared
def test_toxic_spans_long_table_counts(tmp_path):
    path = CORPORA / "toxic-spans" / "annotations.csv"
    # the direct computation: one answer per (comment, worker), the flags as given
    answers: dict[tuple[str, str], tuple[str, str]] = {}
    repeated = []
    with open(path, newline="", encoding="utf-8") as fh:
        for line, row in enumerate(csv.DictReader(fh), 2):  # no quoted newlines in this file
            key = (row["comment_id"], row["worker"])
            if key in answers:
                repeated.append((*key, str(line)))
            answers.setdefault(key, (row["all toxic"], row["not toxic"]))
    direct = {
        "all toxic": Counter(a for a, _ in answers.values()),
        "not toxic": Counter(n for _, n in answers.values()),
        "flags": Counter(f"all toxic={a}+not toxic={n}" for a, n in answers.values()),
    }
    settings = Settings(
        format="labels",
        input={"annotations": path, "item": "comment_id", "annotator": "worker", "labels": ["all toxic", "not toxic"], "bundles": {"flags": ["not toxic", "all toxic"]}},
        out=tmp_path / "out",
        base=CORPORA,
        items={"layouts": ["long"]},
    )
    unitized, manifest = convert(settings)
    long = pq.read_table(tmp_path / "out" / setting_path("items-long") / "part-00000.parquet").to_pylist()
    counts = defaultdict(Counter)
    for r in long:
        counts[r["group"]][r["value"]] += 1
    assert dict(counts) == direct
    assert direct["all toxic"] == Counter({"False": 37263, "True": 21951})
    assert len(answers) == 59214
    m = meta(tmp_path / "out", "long")
    assert len(m["annotators"]) == 3579
    assert m["items"]["flags"] == {"items": 16100, "complete": 0, "kept": 16100}
    # the one repeated (comment, worker) row: identical, kept once and reported per group
    dup = [f for f in unitized.findings if f.code == "duplicate-label"]
    assert sorted((f.group, f.doc, f.annotator, f.record) for f in dup) == [
        (g, *repeated[0]) for g in ("all toxic", "flags", "not toxic")
    ]
    assert repeated[0][:2] == ("6209917", "2906")
    assert manifest["accounting"]["labels"] == {"read": 3 * 59215, "duplicate": 3, "labelled": 3 * 59214}


def test_selection_of_annotators_and_groups_is_counted(tmp_path):
    write(tmp_path, {"l.csv": "item,who,x,y\n1,a,p,q\n1,b,p,q\n1,c,p,q\n"})
    _, manifest, out = run(tmp_path, "l.csv", item="item", annotator="who", labels=["x", "y"], annotators=["a", "c"], groups=["y"])
    assert rows(out) == [{"group": "y", "item": "1", "a": "q", "c": "q"}]
    assert manifest["accounting"]["records"]["labels_not_selected"] == 4
    assert manifest["accounting"]["labels"] == {"read": 2, "labelled": 2}


def test_wide_json_lines_infer_annotator_columns_and_duplicate_headers_fail(tmp_path):
    write(tmp_path, {"w.jsonl": '{"id": 1, "ann1": "a"}\n{"id": 2, "ann2": 3, "ann1": null}\n', "dup.csv": "id,a,a\n1,x,y\n"})
    _, _, out = run(tmp_path, "w.jsonl", shape="wide", item="id")
    assert rows(out) == [{"group": "label", "item": "1", "ann1": "a", "ann2": None}, {"group": "label", "item": "2", "ann1": None, "ann2": "3"}]
    with pytest.raises(AdapterError, match="'a' appear more than once"):
        run(tmp_path, "dup.csv", shape="wide", item="id")


def test_flags_only_run(tmp_path, capsys):
    write(tmp_path, {"l.csv": "item,who,x\n1,a,p\n1,b,NA\n2,a,q\n2,b,q\n"})
    code = main([
        "convert", "--format", "labels", "--annotations", str(tmp_path / "l.csv"), "--item", "item",
        "--annotator-column", "who", "--label-columns", "x", "--missing", "NA", "--layouts", "wide,long",
        "--complete", "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert code == 0
    assert rows(tmp_path / "out") == [{"group": "x", "item": "2", "a": "q", "b": "q"}]
    assert rows(tmp_path / "out", "long") == [
        {"group": "x", "item": "2", "annotator": "a", "value": "q"},
        {"group": "x", "item": "2", "annotator": "b", "value": "q"},
    ]
    printed = capsys.readouterr().out
    assert "x: 2 items, 1 labelled by every annotator, 1 kept" in printed
    assert main(["convert", "--format", "labels", "--annotations", str(tmp_path / "l.csv"), "--out", str(tmp_path / "o2")]) == 2
    assert "[input] item must name the item-id column" in capsys.readouterr().err


def test_example_labels_mini_three_levels(tmp_path):
    example = ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"
    assert main(["convert", "--quiet", str(example), "--out", str(tmp_path / "out")]) == 0
    groups = by_group(rows(tmp_path / "out"))
    na = NOT_APPLICABLE
    # a lower level is not applicable wherever the annotator's upper answer closed it, two levels down too
    assert [(r["item"], r["ayse"], r["burak"], r["cem"]) for r in groups["target_group"]] == [
        ("101", "GRP", "GRP", "GRP"),
        ("103", "IND", "IND", "IND"),
        ("105", "GRP", "GRP", "GRP"),
        ("107", "IND", na, "IND"),
        ("108", na, "IND", na),
        ("109", "GRP", "OTH", "GRP"),
    ]
    assert [(r["item"], r["ayse"], r["burak"], r["cem"]) for r in groups["target"]][2:4] == [("104", "NOTARG", na, "NOTARG"), ("105", "TARG", "TARG", "TARG")]
    # 00111 is kept as written; cem has no row for it
    assert groups["offensive"][10] == {"group": "offensive", "item": "00111", "ayse": "NON", "burak": "NON", "cem": None}
    assert [r["cem"] for r in groups["severity"]][7] is None  # "?" is a missing token
    assert [r["ayse"] for r in groups["topics"]][2] == "politics+sports"
    m = meta(tmp_path / "out")
    assert m["numbers"] == {"severity": {"1": 1.0, "2": 2.0, "3": 3.0}} and m["multi"] == {"topics": "set"}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert_accounted(manifest)
    assert Counter(f["code"] for f in report(tmp_path / "out")) == {"item-set-mismatch": 1, "items-kept": 5, "not-applicable": 4}


def test_malformed_records_of_every_shape_are_reported(tmp_path):
    write(tmp_path, {
        "lists.jsonl": '{"id": 1, "anns": "a,b", "labs": "x"}\n{"id": 2, "anns": "a,", "labs": "x,y"}\n{"id": 3, "anns": "a,b", "labs": "x,y"}\n',
        "dict.jsonl": '{"id": 1, "labs": "x"}\n{"id": 2, "labs": {"a": "y"}}\n{"id": 3}\n',
        "long.csv": "id,who,lab\n1,,x\n2,a,y\n",
    })  # fmt: skip
    unitized, _, out = run(tmp_path, "lists.jsonl", shape="lists", item="id", annotator="anns", labels=["labs"])
    bad = [(f.record, f.message.split(": ", 1)[1]) for f in unitized.findings if f.code == "record-malformed"]
    assert bad == [("1", "2 annotators in 'anns' but 1 labels in 'labs'"), ("2", "an empty annotator name in 'anns'")]
    assert rows(out) == [{"group": "labs", "item": "3", "a": "x", "b": "y"}]
    unitized, _, out = run(tmp_path, "dict.jsonl", shape="dict", item="id", labels=["labs"])
    bad = [(f.record, f.message.split(": ", 1)[1]) for f in unitized.findings if f.code == "record-malformed"]
    assert bad == [("1", "field 'labs' is not an {annotator: label} object")]
    assert rows(out) == [{"group": "labs", "item": "2", "a": "y"}]  # record 3 has no labels: nothing to add
    unitized, _, out = run(tmp_path, "long.csv", item="id", annotator="who", labels=["lab"])
    assert [(f.code, f.record) for f in unitized.findings if f.severity == "error"] == [("record-malformed", "2")]


def test_parquet_nan_is_not_labelled_and_odd_ids_sort(tmp_path):
    pq.write_table(pa.table({"id": ["²", "10", "9"], "a": [1.0, float("nan"), 0.0], "b": [None, 1.0, 0.0]}), tmp_path / "w.parquet")
    _, manifest, out = run(tmp_path, "w.parquet", shape="wide", item="id", normalize_ids=True)
    assert rows(out) == [
        {"group": "label", "item": "9", "a": "0.0", "b": "0.0"},
        {"group": "label", "item": "10", "a": None, "b": "1.0"},
        {"group": "label", "item": "²", "a": "1.0", "b": None},
    ]
    assert manifest["accounting"]["labels"] == {"read": 6, "labelled": 4, "not_labelled": 2}


def test_repeated_invalid_label_is_a_duplicate_not_a_conflict(tmp_path):
    write(tmp_path, {"l.csv": "item,who,lab\n1,a,zz\n1,a,zz\n1,b,x\n"})
    unitized, manifest, _ = run(tmp_path, "l.csv", {"groups": {"lab": {"values": ["x"]}}}, item="item", annotator="who", labels=["lab"])
    assert Counter(f.code for f in unitized.findings) == {"label-undeclared": 2, "duplicate-label": 1, "items-kept": 1}
    assert manifest["accounting"]["labels"] == {"read": 3, "duplicate": 1, "invalid_label": 1, "labelled": 1}


# --- properties ---------------------------------------------------------------------

_records = st.lists(
    st.tuples(st.sampled_from(["g", "h"]), st.sampled_from(["1", "2", "03", "x"]), st.sampled_from(["a", "b", "c"]), st.sampled_from([None, "p", "q"])),
    max_size=40,
)


@hsettings(max_examples=150, deadline=None)
@given(_records, st.booleans())
def test_matrices_match_a_direct_pivot(records, complete):
    labels = [ItemLabel(g, i, a, v, "f", n) for n, (g, i, a, v) in enumerate(records, 2)]
    result = build(labels, ["a", "b", "c"], ItemOptions(complete=complete, layouts=("wide", "long")))
    # direct: a (group, item, annotator) with one distinct value keeps it; with several it is null
    seen: dict[tuple, set] = defaultdict(set)
    for g, i, a, v in records:
        seen[(g, i, a)].add(v)
    direct = {k: next(iter(vs)) if len(vs) == 1 else None for k, vs in seen.items()}
    wide = pa.concat_tables([WIDE.item_table(m.name, m.cells(), ["a", "b", "c"], WIDE.items_schema(["a", "b", "c"], {}))
                             for m in result.groups]) if result.groups else None
    got = {}
    for row in wide.to_pylist() if wide is not None else []:
        for a in "abc":
            got[(row["group"], row["item"], a)] = row[a]
    items = {(g, i) for g, i, _ in direct}
    if complete:
        items = {(g, i) for g, i in items if all(direct.get((g, i, a)) is not None for a in "abc")}
    assert set((g, i) for g, i, _ in got) == items
    for (g, i, a), v in got.items():
        assert v == direct.get((g, i, a))
    long = [r for m in result.groups
            for r in LONG.item_table(m.name, m.cells(), ["a", "b", "c"], LONG.items_schema(["a", "b", "c"], {})).to_pylist()]
    assert {(r["group"], r["item"], r["annotator"]) for r in long} == {k for k in direct if (k[0], k[1]) in items}
    counts = result.accounting
    assert counts["read"] == len(records) == sum(v for k, v in counts.items() if k != "read")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"labels": "x"}, "labels must be a list of strings"),
        ({"labels": ["x"], "shape": "tall"}, "shape must be one of"),
        ({"labels": ["x"], "normalize_ids": "yes"}, "normalize_ids has the wrong type"),
        ({"labels": ["x"], "delimiter": ";;"}, "delimiter must be one character"),
        ({"labels": ["x"], "bundles": {"x": ["who"]}}, "bundles and labels both define group"),
        ({"shape": "lists"}, "needs \\[input\\] labels"),
        ({"labels": ["x"], "shape": "dict", "bundles": {"b": ["x"]}}, "bundles need one row per"),
    ],
)
def test_adapter_options_are_checked(tmp_path, options, message):
    write(tmp_path, {"l.csv": "item,who,x\n1,a,p\n"})
    with pytest.raises(AdapterError, match=message):
        run(tmp_path, "l.csv", item="item", annotator="who", **options)


def test_annotator_named_item_needs_the_long_layout(tmp_path):
    write(tmp_path, {"l.csv": "id,who,x\n1,item,p\n1,b,q\n"})
    with pytest.raises(ConfigError, match="clash with the wide item matrix's columns"):
        run(tmp_path, "l.csv", {"layouts": ["wide"]}, item="id", annotator="who", labels=["x"])
    for items in ({"layouts": ["long"]}, {}):  # auto stores it long
        unitized, _, out = run(tmp_path, "l.csv", items, item="id", annotator="who", labels=["x"])
        assert [layout.name for layout in unitized.item_layouts] == ["long"]
        assert [(r["annotator"], r["value"]) for r in rows(out, "long")] == [("b", "q"), ("item", "p")]
        assert not (out / "units" / "setting=items").exists()


def _crowd(root: Path, workers: int, per_item: int, items: int = 20) -> None:
    lines = ["item,worker,label"] + [
        f"i{i},w{(i * per_item + k) % workers},{'ab'[(i + k) % 2]}" for i in range(items) for k in range(per_item)
    ]
    write(root, {"l.csv": "\n".join(lines) + "\n"})


@pytest.mark.parametrize(
    ("workers", "per_item", "chosen"),
    [
        (40, 3, "long"),  # a crowd: 40 workers, 3 an item — the wide matrix would be 92 % nulls
        (40, 40, "wide"),  # a panel of 40, everyone labels everything
        (33, 17, "wide"),  # just over half of 33 workers an item: dense enough
        (33, 16, "long"),  # just under half
        (32, 2, "wide"),  # 32 workers or fewer: wide, however sparse
    ],
)
def test_auto_item_layout_follows_the_shape_of_the_data(tmp_path, workers, per_item, chosen):
    _crowd(tmp_path, workers, per_item)
    unitized, manifest, out = run(tmp_path, "l.csv", item="item", annotator="worker", labels=["label"])
    assert [layout.name for layout in unitized.item_layouts] == [chosen]
    assert unitized.accounting["labels"]["labelled"] == 20 * per_item
    folder = "long" if chosen == "long" else "units"
    assert sorted(p.name for p in out.iterdir() if p.name in ("units", "labels", "long")) == [folder]
    assert sorted(p.name for p in (out / folder).iterdir()) == [f"setting=items{'-long' if chosen == 'long' else ''}"]


def test_auto_item_layout_decides_alone(tmp_path):
    _crowd(tmp_path, 3, 2)
    with pytest.raises(ConfigError, match='"auto" decides alone'):
        run(tmp_path, "l.csv", {"layouts": ["auto", "long"]}, item="item", annotator="worker", labels=["label"])


def test_a_wide_item_matrix_past_the_cap_is_refused(tmp_path, monkeypatch):
    from unitize import layouts

    _crowd(tmp_path, 40, 40)
    monkeypatch.setattr(layouts, "MAX_WIDE_CELLS", 799)  # 20 items × 40 annotators = 800 cells
    with pytest.raises(RunError, match=r"a wide item matrix would hold 800 cells \(20 items × 40 annotators\)"):
        run(tmp_path, "l.csv", {"layouts": ["wide"]}, item="item", annotator="worker", labels=["label"])
    unitized, _, _ = run(tmp_path, "l.csv", item="item", annotator="worker", labels=["label"])
    assert [layout.name for layout in unitized.item_layouts] == ["long"]
