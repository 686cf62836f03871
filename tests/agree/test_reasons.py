"""A NaN's reason names the label a label setting holds, not the code it is stored as."""

from __future__ import annotations

import pyarrow.parquet as pq

from unitize.agree.rows import in_words as _in_words
from unitize.cli import main


def test_a_code_at_the_end_of_a_reason_becomes_its_label():
    cats = ["O", "PER", "ORG"]
    assert _in_words("no variation: every annotator gave every unit the value 1", cats) == \
        "no variation: every annotator gave every unit the label 'PER'"
    assert _in_words("no variation: both gave every unit the value 0", cats) == "no variation: both gave every unit the label 'O'"
    assert _in_words("no variation: every annotator gave every unit the value 1", None).endswith("the value 1")  # 0/1 data
    assert _in_words("fewer than two annotators with data", cats) == "fewer than two annotators with data"
    assert _in_words("every unit the value 7", cats) == "every unit the value 7"  # no such code: left as it is
    assert _in_words(None, cats) is None


def test_item_labels_all_alike_say_which_label(tmp_path):
    (tmp_path / "labels.csv").write_text("item,annotator,label\n" + "".join(f"{i},{a},yes\n" for i in range(1, 5) for a in "xyz"))
    out = tmp_path / "out"
    assert main(["convert", "--format", "labels", "--annotations", str(tmp_path / "labels.csv"), "--item", "item",
                 "--annotator", "annotator", "--label-columns", "label", "--out", str(out), "-q"]) == 0
    assert main(["agree", str(out), "--metric", "alpha,fleiss", "-q"]) == 0
    reasons = {r["metric"]: r["reason"] for r in pq.read_table(out / "agreement" / "results.parquet").to_pylist()}
    assert reasons == {"alpha": "no variation: every annotator gave every unit the label 'yes'",
                       "fleiss": "no variation: every annotator gave every unit the label 'yes'"}
