"""A table's texts held as columns (unitize.model.documents.TextTable) are the documents a dict of them held: each
document made when asked has the fields a text read from a table always had, and the run's questions (which have a
text, their lengths, their texts, the id object) have the answers the dict gives."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.adapters._spans import text_document
from unitize.model import Document
from unitize.model.documents import TextTable, lengths, stored_id, texts, with_text
from unitize.model.documents import lacking as documents_lacking

TEXTS = {"d2": "naïve café 👍", "d10": "", "d1": "line one\r\nline two", "d3": "a\x00b"}


def table_and_dict() -> tuple[TextTable, dict[str, Document]]:
    table = TextTable(pa.array(list(TEXTS), pa.string()), pa.array(list(TEXTS.values()), pa.string()), "texts.csv")
    table["d0"] = Document(doc_id="d0", text=None)  # a document the spans name without a text row
    plain = {d: text_document(d, t, "texts.csv") for d, t in TEXTS.items()}
    plain["d0"] = Document(doc_id="d0", text=None)
    return table, plain


def test_a_text_table_holds_the_documents_a_dict_holds():
    table, plain = table_and_dict()
    assert list(table) == ["d2", "d10", "d1", "d3", "d0"] == list(plain)  # the table's order, then those added
    assert len(table) == 5 and "d0" in table and "d1" in table and "d9" not in table and table.get("d9") is None
    assert table == plain and dict(table.items()) == plain
    d2 = table["d2"]
    assert (d2.doc_id, d2.text, d2.source, d2.encoding, d2.size) == ("d2", "naïve café 👍", "texts.csv", "utf-8", 17)
    assert d2.sha256 == hashlib.sha256("naïve café 👍".encode()).hexdigest() and d2.newline is None and d2.bom is False
    with pytest.raises(KeyError, match="has its text in the table"):
        table["d1"] = Document(doc_id="d1", text="other")
    with pytest.raises(KeyError):
        del table["d1"]
    del table["d0"]
    assert list(table) == ["d2", "d10", "d1", "d3"]


def test_the_runs_questions_have_the_dicts_answers():
    table, plain = table_and_dict()
    assert with_text(table) == with_text(plain) == ["d1", "d10", "d2", "d3"]
    ids = ["d2", "d1", "d10", "d3"]
    assert lengths(table, ids).tolist() == lengths(plain, ids).tolist() == [12, 18, 0, 3]  # code points, not bytes
    assert lengths(table, ["d0", "d2"]).tolist() == [0, 12]  # a document without a row: asked of its Document
    assert texts(table, ids) == texts(plain, ids) == [TEXTS[d] for d in ids]
    copy = "".join(["d", "1"])  # an equal string that is another object (a batch's unpickled copy)
    assert stored_id(table, copy) is next(d for d in table if d == "d1") and stored_id(plain, "d0") == "d0"
    assert stored_id(table, "d9") == "d9" == stored_id(plain, "d9")


def test_a_text_table_refuses_unequal_columns_and_repeated_ids():
    with pytest.raises(ValueError, match="one text per document"):
        TextTable(pa.array(["a"]), pa.array(["x", "y"]), "t.csv")
    with pytest.raises(ValueError, match="distinct"):
        TextTable(pa.array(["a", "a"]), pa.array(["x", "y"]), "t.csv")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",)), max_size=30), max_size=12))
def test_every_document_is_the_one_a_text_row_always_made(values: list[str]) -> None:
    ids = [f"doc{i}" for i in range(len(values))]
    table = TextTable(pa.array(ids, pa.string()), pa.array(["pad", *values], pa.string()).slice(1), "t.csv")  # an offset array
    assert [table[d] for d in ids] == [text_document(d, t, "t.csv") for d, t in zip(ids, values)]
    assert lengths(table, ids).tolist() == [len(t) for t in values]


def test_ids_in_order_are_found_without_a_copy_and_digests_cross_offset_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids that come sorted are looked up in their own list (no sorted copy, no order); each text's size and digest are
    its own when the offsets are taken a block at a time (here two texts a block)."""
    import unitize.model.documents as documents

    monkeypatch.setattr(documents, "_BLOCK", 2)
    values = ["a", "", "naïve", "x" * 70, "👍 b"]
    ids = [f"d{i}" for i in range(len(values))]
    table = TextTable(pa.array(ids, pa.string()), pa.array(values, pa.string()), "t.csv")
    assert table._order is None and table._by_name is table._ids
    assert [table[d] for d in ids] == [text_document(d, t, "t.csv") for d, t in zip(ids, values)]
    assert "d5" not in table and "d" not in table and 3 not in table and table.get("d10") is None


def test_lacking_names_the_documents_not_held_in_their_order():
    table, plain = table_and_dict()
    names = pa.array(["d9", "d1", "d0", "d8", "d9", "d10"], pa.string())
    assert documents_lacking(table, names) == ["d9", "d8", "d9"] == documents_lacking(plain, names)
    assert documents_lacking(table, pa.array([], pa.string())) == []
