"""A group's unit universe held as columns (unitize.model.assigned.Assigned) is the dict of Absent it replaces: the
same documents, the same missing annotators at each, equal to it; any other group stays a dict."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unitize.model import Absent
from unitize.model.assigned import Assigned, assigned, joined_universe

STUDY = frozenset(f"w{i}" for i in range(40))


def test_a_crowd_group_is_held_as_columns_and_is_the_dict_it_replaces():
    entries = [("t2", Absent(STUDY, ["w3", "w1"])), ("t10", Absent(STUDY, [])), ("t1", Absent(frozenset(STUDY), ["w39"]))]
    held = assigned(entries)
    assert isinstance(held, Assigned) and list(held) == ["t1", "t10", "t2"]  # sorted
    assert held == dict(entries) and dict(entries) == held and len(held) == 3
    assert held["t2"].present == ("w1", "w3") and "w1" not in held["t2"] and "w2" in held["t2"] and len(held["t2"]) == 38
    assert held["t10"] == STUDY and held["t1"] == STUDY - {"w39"}
    assert "t3" not in held and 7 not in held and held.get("t3") is None
    with pytest.raises(KeyError):
        held["t0"]


def test_any_other_group_stays_a_dict_in_the_entries_order():
    plain = [("d2", frozenset({"a"})), ("d1", frozenset())]
    assert assigned(plain) == dict(plain) and type(assigned(plain)) is dict and list(assigned(plain)) == ["d2", "d1"]
    mixed = [("t2", Absent(STUDY, ["w1"])), ("t1", frozenset({"w5"})), ("t0", Absent(STUDY, ["w2"]))]
    assert type(assigned(mixed)) is dict and assigned(mixed) == dict(mixed) and list(assigned(mixed)) == ["t2", "t1", "t0"]
    other = [("t1", Absent(STUDY, ["w1"])), ("t2", Absent(frozenset({"w1", "w2"}), ["w1"]))]  # two studies
    assert type(assigned(other)) is dict and assigned(other) == dict(other)
    twice = [("t1", Absent(STUDY, ["w1"])), ("t1", Absent(STUDY, ["w2"]))]  # a later entry replaces an earlier one
    assert type(assigned(twice)) is dict and assigned(twice) == {"t1": Absent(STUDY, ["w2"])}
    assert assigned([]) == {} and type(assigned([])) is dict


def test_an_assigned_universe_refuses_unsorted_documents():
    with pytest.raises(ValueError, match="sorted and distinct"):
        Assigned(STUDY, ["b", "a"], [(), ()])
    with pytest.raises(ValueError, match="sorted and distinct"):
        Assigned(STUDY, ["a", "a"], [(), ()])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=6), st.sets(st.sampled_from(sorted(STUDY)), max_size=5)), max_size=30, unique_by=lambda e: e[0]),
       st.randoms(use_true_random=False))
def test_every_document_has_the_missing_annotators_of_its_entry(rows, rng: random.Random):
    entries = [(doc, Absent(STUDY, present)) for doc, present in rows]
    rng.shuffle(entries)
    held = assigned(entries)
    assert held == dict(entries) and sorted(held) == sorted(doc for doc, _ in entries)
    for doc, missing in entries:
        assert held[doc] == missing and held[doc].present == missing.present


def stored_as(ids: dict[str, str]):
    return lambda doc: ids.get(doc, doc)


def test_a_groups_batches_joined_are_their_columns_one_after_the_other_under_the_stored_ids(monkeypatch):
    """A crowd group's batches each send back their universe as columns; joined, they are the columns one after the
    other (no entry made per text), every document id the run's own string, and the dict of every entry."""
    first = assigned([("t1", Absent(STUDY, ["w1", "w2"])), ("t0", Absent(STUDY, []))])
    empty = assigned([])
    second = assigned([("t3", Absent(frozenset(STUDY), ["w39"])), ("t2", Absent(STUDY, ["w5"]))])
    own = "".join(["t", "2"])  # another string object equal to "t2": the one the run holds
    monkeypatch.setattr("unitize.model.assigned.assigned", None)  # no entry made again
    held = joined_universe([first, empty, second.with_ids(stored_as({"t2": own}))])  # settled as the run does
    assert isinstance(held, Assigned) and list(held) == ["t0", "t1", "t2", "t3"]
    assert held == {"t0": STUDY, "t1": STUDY - {"w1", "w2"}, "t2": STUDY - {"w5"}, "t3": STUDY - {"w39"}}
    assert held["t3"].present == ("w39",) and held["t1"].present == ("w1", "w2")
    assert next(d for d in held if d == "t2") is own


def test_batches_out_of_order_of_two_studies_or_as_entries_join_as_their_entries_would():
    """Batches whose documents do not come in order, of two studies, or sent as entries (a group that is no crowd
    study's) are joined from their entries in batch order: what :func:`assigned` makes of them."""
    early, late = assigned([("t5", Absent(STUDY, ["w1"]))]), assigned([("t2", Absent(STUDY, ["w2"]))])
    swapped = joined_universe([early, late])
    assert isinstance(swapped, Assigned) and list(swapped) == ["t2", "t5"] and swapped["t5"].present == ("w1",)
    other = assigned([("t9", Absent(frozenset({"w1", "w2"}), ["w1"]))])
    mixed = joined_universe([early, other])
    assert type(mixed) is dict and mixed == {"t5": STUDY - {"w1"}, "t9": {"w2"}}
    plain = joined_universe([[("d2", frozenset({"a"}))], [("d1", frozenset())]])
    assert type(plain) is dict and list(plain) == ["d2", "d1"]
    again = joined_universe([early, assigned([("t5", Absent(STUDY, ["w3"]))])])  # a later entry replaces
    assert type(again) is dict and again == {"t5": STUDY - {"w3"}}
    assert joined_universe([]) == {} and joined_universe([assigned([])]) == {}
