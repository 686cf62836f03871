"""Raw-text decoding conventions and offset conversion."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CORPORA, needs_shared
from unitize.model.text import (
    DecodeError,
    collapse_whitespace,
    decode_raw,
    newline_style,
    utf16_to_codepoints,
)


def test_crlf_kept_or_normalized():
    raw = b"a\r\nb\rc\nd"
    assert decode_raw(raw).text == "a\r\nb\rc\nd"
    assert decode_raw(raw, newlines="normalize").text == "a\nb\nc\nd"
    assert decode_raw(raw).newline == "mixed"


def test_bom_kept_as_character_zero_or_stripped():
    raw = "\ufeffabc".encode("utf-8")
    kept = decode_raw(raw, bom="keep")
    assert kept.text == "\ufeffabc" and kept.bom
    assert decode_raw(raw, bom="strip").text == "abc"


def test_fallback_encoding_is_reported():
    raw = "Işık".encode("windows-1254")
    decoded = decode_raw(raw, fallback="windows-1254")
    assert (decoded.text, decoded.encoding, decoded.fallback_used) == ("Işık", "windows-1254", True)
    with pytest.raises(DecodeError, match="utf-8"):
        decode_raw(raw)


@pytest.mark.parametrize(
    "text, style",
    [("a\r\nb\r\n", "crlf"), ("a\nb", "lf"), ("a\rb", "cr"), ("ab", "none"), ("a\r\nb\n", "mixed")],
)
def test_newline_style(text, style):
    assert newline_style(text) == style


def test_collapse_whitespace():
    assert collapse_whitespace("  a\r\n      b\tc ") == "a b c"


def test_utf16_offsets_to_code_points():
    text = "a😀b😀c"
    # UTF-16 code units: a=0, 😀=1-2, b=3, 😀=4-5, c=6
    assert utf16_to_codepoints(text, np.array([0, 1, 3, 4, 6, 7])).tolist() == [0, 1, 2, 3, 4, 5]
    assert utf16_to_codepoints("abc", np.array([0, 3])).tolist() == [0, 3]


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_utf16_conversion_matches_python(text):
    units = [0]
    for ch in text:
        units.append(units[-1] + (2 if ord(ch) > 0xFFFF else 1))
    assert utf16_to_codepoints(text, np.array(units)).tolist() == list(range(len(text) + 1))


@needs_shared
def test_turkish_ted_text_has_crlf_and_datt_keeps_it():
    raw = (CORPORA / "ted-mdb" / "Turkish" / "raw" / "01" / "talk_1971_tr.txt").read_bytes()
    kept = decode_raw(raw)
    assert kept.newline == "crlf" and kept.text.startswith("\r\ntalkid: 1971\r\n")
    assert len(kept.text) - len(decode_raw(raw, newlines="normalize").text) == raw.count(b"\r\n")
