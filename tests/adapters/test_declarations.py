"""A format is declared once: typed traits, text conventions, options with one default each, one list of built-ins."""

from __future__ import annotations

import tomllib

import pytest

import unitize.adapters as registry
import unitize.writers as writers
from tests.conftest import ROOT, SHARED
from unitize import plugins
from unitize.adapters import Adapter, available, get_adapter
from unitize.model import Corpus
from unitize.model.traits import FormatTraits

EXAMPLES = ROOT / "unitize" / "examples"


def _read_nothing(**_: object) -> Corpus:
    return Corpus(format="legacy")


def test_every_adapter_declares_typed_traits():
    for name in available():
        traits = get_adapter(name).traits
        assert isinstance(traits, FormatTraits), name
    assert get_adapter("labels").traits.kind == "items"
    assert get_adapter("datt").traits.layer_aliases["Supp1"] == "Sup1"
    assert {get_adapter(n).traits.tokenizer for n in ("webanno-tsv", "conll-bio")} == {"given"}
    assert not get_adapter("brat").traits.count_rule and get_adapter("pdtb3").traits.check_boundaries


def test_a_group_by_option_defaults_to_the_formats_grouping():
    for name in available():
        adapter = get_adapter(name)
        if "group_by" in adapter.options:
            assert adapter.options["group_by"].default == adapter.traits.group_by, name


def test_the_corpus_carries_its_formats_traits():
    corpus = get_adapter("brat").read(annotations=EXAMPLES / "brat-mini" / "annotations", base=EXAMPLES / "brat-mini")
    assert corpus.traits is get_adapter("brat").traits
    assert Corpus(format="hand-made").traits == FormatTraits()


@pytest.mark.parametrize("how", ["positional", "keyword"])
def test_a_legacy_defaults_dict_becomes_traits(how):
    defaults = {"group_by": "none", "layers": ["X"], "default_layers": "found", "count_rule": False, "not_a_trait": 1}
    if how == "positional":
        adapter = Adapter("legacy", "a plugin of before", _read_nothing, {}, defaults)
    else:
        adapter = Adapter(name="legacy", description="a plugin of before", read=_read_nothing, options={}, defaults=defaults)
    assert adapter.traits == FormatTraits(group_by="none", layers=("X",), default_layers="found", count_rule=False)
    assert adapter.read().traits is adapter.traits


def test_traits_are_checked():
    with pytest.raises(ValueError, match="kind"):
        FormatTraits(kind="pairs")
    with pytest.raises(ValueError, match="default_layers"):
        FormatTraits(default_layers="all")


def test_pyproject_lists_every_builtin_adapter_and_the_registry_reads_that_list():
    """The entry points of pyproject.toml are the one list of built-ins: every adapter module's
    ADAPTER is there under its own name, and the installed metadata is not stale."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]["unitize.adapters"]
    modules = {p.stem for p in (ROOT / "unitize" / "adapters").glob("*.py") if "\nADAPTER = " in p.read_text(encoding="utf-8")}
    assert sorted(listed.values()) == sorted(f"unitize.adapters.{m}:ADAPTER" for m in modules)
    assert {name: target for name, target in available().items() if target.startswith("unitize.")} == listed
    assert all(get_adapter(name).name == name for name in listed)


def test_entry_points_are_scanned_once_per_process(monkeypatch):
    """Each registry's group once, however often adapters and writers are looked up; rescanning one
    group leaves the other's scan alone."""
    scans = []
    real = plugins.entry_points
    monkeypatch.setattr(plugins, "entry_points", lambda *, group: scans.append(group) or real(group=group))
    registry.rescan()
    writers.rescan()
    try:
        for _ in range(5):
            available()
            get_adapter("brat")
            writers.available()
            writers.get_target("brat")
        assert scans == ["unitize.adapters", "unitize.writers"]
        registry.rescan()
        assert "brat" in available() and "brat" in writers.available()
        assert scans == ["unitize.adapters", "unitize.writers", "unitize.adapters"]
    finally:
        monkeypatch.undo()
        registry.rescan()
        writers.rescan()


def test_a_required_option_is_asked_for_before_reading(tmp_path):
    from unitize.config import Settings
    from unitize.errors import RunError
    from unitize.run import read_corpus

    assert [k for k, o in get_adapter("span-table").options.items() if o.required] == ["annotations", "texts"]
    settings = Settings(format="span-table", input={"annotations": tmp_path / "spans.csv"}, base=tmp_path)
    with pytest.raises(RunError, match=r"needs \[input\] texts \(flags: --texts\)"):
        read_corpus(settings)


def test_a_legacy_plain_help_option_is_required_when_its_reader_says_so():
    def read(*, annotations, flavour=None, base=None, progress=None):
        return Corpus(format="legacy")

    adapter = Adapter("legacy", "a plugin of before", read, {"annotations": "the folder", "flavour": "layer name"}, {})
    assert adapter.options["annotations"].required and not adapter.options["flavour"].required


def test_settings_defaults_are_the_declared_unitize_options(tmp_path):
    from unitize.config import Settings, from_mapping
    from unitize.config.sections import UNITIZE_OPTIONS

    settings = Settings(base=tmp_path)
    for key, option in UNITIZE_OPTIONS.items():
        value = tuple(dict.fromkeys(a for _, a in settings.pairs)) if key == "approaches" else getattr(settings, key)
        assert value == (tuple(option.default) if isinstance(option.default, list) else option.default), key
    assert from_mapping({}, base=tmp_path) == settings


#: DESIGN.md §3's offset table, transcribed: format -> what its row states (what a row leaves open is absent)
DESIGN_OFFSETS = {
    "datt": {"newlines": "keep", "offsets": "codepoint"},
    "pdtb3": {"newlines": "normalize", "bom": "keep", "offsets": "utf16"},
    "pdtb2": {"newlines": "keep", "offsets": "codepoint", "encoding": "latin-1"},
    "conll16": {"newlines": "keep", "offsets": "codepoint"},
    "brat": {"newlines": "normalize", "bom": "keep", "offsets": "codepoint"},
    "webanno-tsv": {"offsets": "utf16"},
    "label-studio": {},
    "doccano": {},
}
#: the first words of a §3 row's source cell -> the formats of that row
DESIGN_ROWS = {
    "DATT": ("datt",),
    "PDTB annotation tool": ("pdtb3",),
    "PDTB-2": ("pdtb2",),
    "CoNLL-2016": ("conll16",),
    "brat": ("brat",),
    "WebAnno": ("webanno-tsv",),
    "Label Studio": ("label-studio", "doccano"),
}


def test_every_formats_text_conventions_are_those_of_design_section_3():
    for name, claims in DESIGN_OFFSETS.items():
        conventions = get_adapter(name).text
        assert {key: getattr(conventions, key) for key in claims} == claims, name
    assert [name for name in available() if get_adapter(name).text is None] == ["labels"]  # no text, no offsets


def _claims(newlines: str, bom: str, unit: str) -> dict[str, str]:
    """What the cells of a §3 row say, in TextConventions' terms."""
    claims = {}
    if "**2**" in newlines or newlines.startswith(("raw", "as in")):
        claims["newlines"] = "keep"
    if "**1**" in newlines or "universal" in newlines:
        claims["newlines"] = "normalize"
    if "Latin-1" in newlines:
        claims["encoding"] = "latin-1"
    if "kept" in bom:
        claims["bom"] = "keep"
    if unit.startswith(("code points", "bytes = chars")):
        claims["offsets"] = "codepoint"
    elif "UTF-16 code units" in unit and not unit.startswith("historically"):
        claims["offsets"] = "utf16"
    return claims


@pytest.mark.skipif(not (SHARED / "DESIGN.md").is_file(), reason="../shared/DESIGN.md is not beside the repository")
def test_the_transcription_is_design_section_3():
    text = (SHARED / "DESIGN.md").read_text(encoding="utf-8")
    section = text[text.index("## 3.") : text.index("## 4.")]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("|")][2:]
    found = {}
    for source, newlines, bom, unit in ([c.strip() for c in row] for row in rows):
        formats = next(names for start, names in DESIGN_ROWS.items() if source.startswith(start))
        found.update({name: _claims(newlines, bom, unit) for name in formats})
    assert found == DESIGN_OFFSETS
