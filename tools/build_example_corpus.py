#!/usr/bin/env python3
"""(Re)generate the hand-crafted DATT example corpus ``unitize/examples/tdb-mini``.

Everything in the corpus is derived from the declarative definitions below:

* ``TEXTS``: three excerpts of TED-MDB Turkish raw texts (CC BY 4.0), each cut
  right after a paragraph end. ``00001971`` keeps its CRLF line endings byte for
  byte; the other two are converted to LF. The SHA-256 of every excerpt is
  pinned. When the TED-MDB checkout is not available (``--ted-mdb``), the text
  files already in the corpus are verified against the pins and reused.
* ``ANNOTATIONS``: the relations of the three synthetic annotators. Every span is
  written as a quotation of the text (phrase, optional context, optional
  occurrence index, optional character trim), never as numbers. Offsets are
  computed as code-point offsets into the raw text decoded as UTF-8 *without*
  newline normalisation (``\\r\\n`` = two characters), ``EndOffset`` exclusive.
  Each span's raw slice is asserted to equal the intended phrase.

The script writes ``texts/``, ``annotations/``, ``study.toml`` and ``README.md``
(including the phenomenon table, generated from the same definitions), then runs
an independent check that re-reads every XML file with lxml. Running it twice
produces byte-identical files.

Usage::

    python tools/build_example_corpus.py [--ted-mdb DIR] [--out DIR] [--check-only]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "unitize" / "examples" / "tdb-mini"
DEFAULT_TED_MDB = Path(os.environ.get("TED_MDB_DIR", "/work/shared/corpora/ted-mdb"))

ANNOTATORS = ("ayse", "burak", "cem")

# ---------------------------------------------------------------------------
# Texts
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDef:
    doc: str
    source: str  # file name under <ted-mdb>/Turkish/raw/01/
    newline: str  # "crlf" (keep bytes) or "lf" (convert CRLF -> LF)
    cut_after: str  # the excerpt ends after the first paragraph ending with this
    sha256: str


TEXTS = (
    TextDef(
        "00001971",
        "talk_1971_tr.txt",
        "crlf",
        "kabul edilemez bir şey.",
        "eae9f5f005af57f835d3c0102b3d724fe1656b01c8b126139c3842607866c382",
    ),
    TextDef(
        "00002009",
        "talk_2009_tr.txt",
        "lf",
        "bir topluluğu tanımlıyor.",
        "78b257d1f6b62d50ad14ca85a310001d6d9cbd1d4778756ba10e894e09ff7e78",
    ),
    TextDef(
        "00001927",
        "talk_1927_tr.txt",
        "lf",
        "Bunu evde denemeyin. (Gülüşmeler)",
        "b8e78558437f25a9ad0f79af3b50a8a65a91a3c0d5493e479f3a1e149544866d",
    ),
)


def excerpt_from_source(td: TextDef, ted_mdb: Path) -> bytes:
    raw = (ted_mdb / "Turkish" / "raw" / "01" / td.source).read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), f"{td.source}: unexpected BOM"
    text = raw.decode("utf-8")
    if td.newline == "lf":
        text = text.replace("\r\n", "\n")
    nl = "\r\n" if td.newline == "crlf" else "\n"
    end = text.index(td.cut_after) + len(td.cut_after)
    assert text[end : end + len(nl)] == nl, f"{td.source}: cut is not at a paragraph end"
    text = text[: end + len(nl)]
    if td.newline == "lf":
        assert "\r" not in text
    else:
        assert "\n" not in text.replace("\r\n", ""), "lone LF in a CRLF text"
    assert 1200 <= len(text) <= 2500, (td.doc, len(text))
    return text.encode("utf-8")


def load_texts(out: Path, ted_mdb: Path | None, pins: bool = True) -> dict[str, bytes]:
    texts: dict[str, bytes] = {}
    for td in TEXTS:
        src = ted_mdb / "Turkish" / "raw" / "01" / td.source if ted_mdb else None
        if src is not None and src.is_file():
            data = excerpt_from_source(td, ted_mdb)
        else:
            existing = out / "texts" / f"{td.doc}.txt"
            if not existing.is_file():
                sys.exit(f"neither the TED-MDB source ({src}) nor {existing} is available; pass --ted-mdb")
            data = existing.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if pins and digest != td.sha256:
            sys.exit(f"{td.doc}: SHA-256 {digest} does not match the pinned {td.sha256}")
        texts[td.doc] = data
    return texts


# ---------------------------------------------------------------------------
# Declarative span / relation definitions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class S:
    """A span quoted from the text.

    ``phrase``    the exact raw text (``\\r\\n`` included where the span crosses a line end)
    ``ctx``       optional longer quotation that contains ``phrase`` (first occurrence inside it)
    ``occ``       which occurrence of ``ctx`` (or of ``phrase`` without ``ctx``); ``None`` = must be unique
    ``trim``      characters cut from the (left, right) end of ``phrase`` (sub-word selections)
    ``text``      what the annotation file stores in ``<Text>`` if it deliberately differs
    """

    phrase: str
    ctx: str | None = None
    occ: int | None = None
    trim: tuple[int, int] = (0, 0)
    text: str | None = None


@dataclass(frozen=True)
class Rel:
    conn: tuple[S, ...]
    arg1: tuple[S, ...]
    arg2: tuple[S, ...]
    attrs: dict
    mod: tuple[S, ...] = ()
    supp1: tuple[S, ...] = ()
    supp2: tuple[S, ...] = ()
    shared: tuple[S, ...] = ()
    supp_shared: tuple[S, ...] = ()


def sp(*spans: S | str) -> tuple[S, ...]:
    return tuple(s if isinstance(s, S) else S(s) for s in spans)


def R(conn, arg1, arg2, attrs, **kw) -> Rel:
    conv = {k: sp(*v) if isinstance(v, tuple) else sp(v) for k, v in kw.items()}
    return Rel(
        conn=sp(*conn) if isinstance(conn, tuple) else sp(conn),
        arg1=sp(*arg1) if isinstance(arg1, tuple) else sp(arg1),
        arg2=sp(*arg2) if isinstance(arg2, tuple) else sp(arg2),
        attrs=attrs,
        **conv,
    )


# --- attribute styles of the three annotators (vary like the real TDB file) ---


def A_ayse(sense, note, tag="intra", sense2=None):
    a = {"genre": "talk", "note": note, "pdtb3": "yes", "sense": sense, "tag": tag, "type": "EXPLICIT"}
    if sense2 is not None:
        a["sense2"] = sense2
    return a


def A_burak(sense, tag="intra"):
    return {"note": "", "pdtb3": "yes", "sense": sense, "sense2": "", "tag": tag, "type": "EXPLICIT"}


def A_cem(sense, note=None, tag="intra"):
    a = {"sense": sense, "tag": tag, "type": "EXPLICIT"}
    if note is not None:
        a["note"] = note
    return a


CONJ = "EXPANSION: Conjunction"
PURPOSE = "CONTINGENCY: Purpose"
REASON = "CONTINGENCY: Cause: Reason(Arg1-as-result)"
RESULT = "CONTINGENCY: Cause: Result(Arg2-as-result)"
DENIER = "COMPARISON: Concession: Arg2-as-denier"
CONTRAST = "COMPARISON: Contrast"
PRECEDENCE = "TEMPORAL: Asynchronous: Precedence"

# ---------------------------------------------------------------------------
# 00001971 (CRLF)
# ---------------------------------------------------------------------------

# icin: korumak için / oturmadığı için / yapmak için
_71_icin_conn = [S("için", ctx="korumak için"), S("için", ctx="oturmadığı için"), S("için", ctx="yapmak için")]
_71_icin = {
    "ayse": [
        R(_71_icin_conn[0], "elimden gelen her şeyi yapmaya karar verdim",
          "kendi çocuklarımı bizim yaşadıklarımızı yaşamaktan korumak", A_ayse(PURPOSE, "Purpose")),
        R(_71_icin_conn[1], "canlarını yakmasıymış",
          "protez soketlerinin düzgün oturmadığı", A_ayse(REASON, "reason")),
        R(_71_icin_conn[2], "hala kalıp çıkarma ve kalıba dökme gibi geleneksel yöntemler kullanıyor",
          "tek parça protez soketleri yapmak", A_ayse(PURPOSE, "Purpose"),
          shared=S("Protez kullananlar")),
    ],
    "burak": [
        R(_71_icin_conn[0], "elimden gelen her şeyi yapmaya karar verdim.",
          "kendi çocuklarımı bizim yaşadıklarımızı yaşamaktan korumak", A_burak(PURPOSE)),
        R(_71_icin_conn[1], "canlarını yakmasıymış",
          "düzgün oturmadığı", A_burak(REASON)),
        R(_71_icin_conn[2], "hala kalıp çıkarma ve kalıba dökme gibi geleneksel yöntemler kullanıyor",
          "Protez kullananlar tek parça protez soketleri yapmak", A_burak(PURPOSE)),
    ],
    "cem": [
        R(_71_icin_conn[0], "elimden gelen her şeyi yapmaya karar verdim",
          "kendi çocuklarımı bizim yaşadıklarımızı yaşamaktan korumak", A_cem(PURPOSE)),
        # sub-word selection: the subordinator -dığı is left out of Arg2 (part of the connective)
        R(_71_icin_conn[1], "canlarını yakmasıymış",
          S("protez soketlerinin düzgün oturmadığı", trim=(0, 4)),
          A_cem(REASON, note="-DIğI için: ek bağlaca dahil, Arg2 kökte bitiyor")),
        R(_71_icin_conn[2], "hala kalıp çıkarma ve kalıba dökme gibi geleneksel yöntemler kullanıyor",
          "tek parça protez soketleri yapmak", A_cem(PURPOSE)),
    ],
}

# ve: süren ve tüm / taktığı ve böylece / çıkarma ve kalıba (cem skips the phrasal one)
_71_ve_conn = [S("ve", ctx="süren ve tüm"), S("ve", ctx="taktığı ve böylece"), S("ve", ctx="çıkarma ve kalıba")]
_71_ve = {
    "ayse": [
        R(_71_ve_conn[0], "Sierra Leone'nun 90'lı yıllarda on yıl süren", "tüm köylerin yakılıp yıkıldığı",
          A_ayse(CONJ, "Conjunction")),
        R(_71_ve_conn[1], "kesik uzvuna taktığı", "böylece uzvu protez ayağa bağladığı",
          A_ayse(CONJ, "Conjunction")),
        R(_71_ve_conn[2], "kalıp çıkarma", "kalıba dökme", A_ayse(CONJ, "conjunctive")),
    ],
    "burak": [
        R(_71_ve_conn[0], "90'lı yıllarda on yıl süren", "tüm köylerin yakılıp yıkıldığı", A_burak(CONJ),
          shared=S("iç savaştan")),
        R(_71_ve_conn[1], "uzvu kesilmiş kişinin kesik uzvuna taktığı", "uzvu protez ayağa bağladığı",
          A_burak(CONJ)),
        R(_71_ve_conn[2], "kalıp çıkarma", "kalıba dökme", A_burak(CONJ)),
    ],
    "cem": [
        R(_71_ve_conn[0], "Sierra Leone'nun 90'lı yıllarda on yıl süren", "tüm köylerin yakılıp yıkıldığı",
          A_cem(CONJ)),
        R(_71_ve_conn[1], "kesik uzvuna taktığı", "böylece uzvu protez ayağa bağladığı", A_cem(CONJ)),
        # relation-count mismatch: cem does not annotate the phrasal "kalıp çıkarma ve kalıba dökme"
    ],
}

# ki: kullanamazsınız, ki bu da ... (last sentence of the excerpt; it ends with CRLF at EOF)
_71_ki_conn = S("ki", ctx="kullanamazsınız, ki")
_71_ki = {
    "ayse": [
        R(_71_ki_conn, "Eğer protez soketiniz rahat değilse bacağınızı kullanamazsınız",
          "bu da açıkça bizim çağımızda kabul edilemez bir şey", A_ayse(CONJ, "")),
    ],
    "burak": [
        R(_71_ki_conn,
          "Protez ayak ne kadar güçlü olursa olsun. Eğer protez soketiniz rahat değilse bacağınızı kullanamazsınız",
          "bu da açıkça bizim çağımızda kabul edilemez bir şey", A_burak(CONJ)),
    ],
    "cem": [
        # the selection runs past the end of the line: the span holds the final "\r\n" (2 characters)
        R(_71_ki_conn, "Eğer protez soketiniz rahat değilse bacağınızı kullanamazsınız",
          "bu da açıkça bizim çağımızda kabul edilemez bir şey.\r\n",
          A_cem(RESULT, note="sonuç mu ekleme mi? emin değilim"),
          supp1=S("Protez ayak ne kadar güçlü olursa olsun")),
    ],
}

# ---------------------------------------------------------------------------
# 00002009 (LF)
# ---------------------------------------------------------------------------

_PAREN_ARG = ("çocuk olarak hayalini kurduğum birçok macera -- benim dünyam dışındaki dünyalar arasında "
              "seyahat ederken ve yoluma dokunurken -- bir belgesel fotorafçısı olarak işim aracıyla bunlar gerçek oldu")
_HISSETTIRMEDI = ("hiçbir başka deneyim çocukluk rüyalarımı yaşayanlar arasında olmak kadar ve Birleşik Devlet "
                  "boyunca gezgin arkadaşların arasında yasamak kadar gerçek hissettirmedi")
_GEZICI = '"Gezici rençper" kelimesi bacakları vagondan sarkan kömürle kaplı yıpranmış yaşlı bir adamı çağrıştırıyor'
_FOTO = ("bu fotoraflar renkli ve onlar ülke çapında fırıl fırıl dönen, oldukça canlı ve yaratıcı bir şekilde "
         "özgür, Amerikan'ın kimsenin görmediği taraflarını gören bir topluluğu tanımlıyor")
_BIRCOGUMUZ = "Birçoğumuzun aklınızda, aylaklar-serseriler geçmişten gelen canavarlar"

_09_ama_conn = [S("ama", ctx="geçti, ama"), S("Ama", ctx="Ama hiçbir"), S("ama", ctx="ama bu fotoraflar")]
_09_ama = {
    "ayse": [
        R(_09_ama_conn[0], "Yıllar geçti", _PAREN_ARG, A_ayse(DENIER, "")),
        R(_09_ama_conn[1], "bir belgesel fotorafçısı olarak işim aracıyla bunlar gerçek oldu", _HISSETTIRMEDI,
          A_ayse(DENIER, "", tag="inter")),
        R(_09_ama_conn[2], _GEZICI, _FOTO, A_ayse(CONTRAST, "opposition", tag="inter"),
          supp1=S(_BIRCOGUMUZ)),
    ],
    "burak": [
        # stored-text mismatch: the <Text> copy of Arg1 has a typo ("Yılar")
        R(_09_ama_conn[0], S("Yıllar geçti", text="Yılar geçti"), _PAREN_ARG, A_burak(DENIER)),
        # shared argument: Arg1 of relation 2 == Arg2 of relation 1
        R(_09_ama_conn[1], _PAREN_ARG, _HISSETTIRMEDI, A_burak(DENIER, tag="inter")),
        R(_09_ama_conn[2], _GEZICI, "bu fotoraflar renkli", A_burak(DENIER, tag="inter")),
    ],
    "cem": [
        # discontinuous Arg2: the parenthetical "-- ... --" is left out
        R(_09_ama_conn[0], "Yıllar geçti",
          (S("çocuk olarak hayalini kurduğum birçok macera"),
           S("bir belgesel fotorafçısı olarak işim aracıyla bunlar gerçek oldu")),
          A_cem(DENIER, note="parantez içi Arg2'den çıkarıldı")),
        R(_09_ama_conn[1], "bir belgesel fotorafçısı olarak işim aracıyla bunlar gerçek oldu",
          _HISSETTIRMEDI + ".", A_cem(DENIER, tag="inter")),
        R(_09_ama_conn[2], _BIRCOGUMUZ + ". " + _GEZICI, _FOTO, A_cem(CONTRAST, tag="inter")),
    ],
}

_KORKU = "İçimde derin bir rahatsızlık var hayatın tek düzeliğine ve sıkkınlığa kurban düşeceğime dair ilkel bir korku"
_DOLAP = "Altı yaşından beri, bazı elbiselerimi davul toplu konserve yiyceklerimi de dolabın arkasında tutuyorum"
_HAYALLER = ("bu yüzden çocukluk dönemi hatıralarımın çoğu sınırlarda yürüyüp, çilek peşinde koştuğum ve farklı "
             "farklı insanlarla karşılaştığım yollarda sıradışı bir hayat sürdüğüm karma karışık hayallerdi")
_ONLAR = ("onlar ülke çapında fırıl fırıl dönen, oldukça canlı ve yaratıcı bir şekilde özgür, Amerikan'ın "
          "kimsenin görmediği taraflarını gören bir topluluğu tanımlıyor")

_09_ve_conn = [
    S("Ve", ctx="Ve bu yüzden"),
    S("ve", ctx="koştuğum ve farklı"),
    S("ve", ctx="ederken ve yoluma"),
    S("ve", ctx="olmak kadar ve Birleşik"),
    S("ve", ctx="renkli ve onlar"),
]
_09_ve = {
    "ayse": [
        # Arg1 starts a sentence earlier than the others (crosses the Arg1 of the implicit relation 3)
        R(_09_ve_conn[0], _DOLAP + ". " + _KORKU, _HAYALLER,
          A_ayse(CONJ, "Conjunction", tag="inter", sense2=RESULT)),
        R(_09_ve_conn[1], "sınırlarda yürüyüp, çilek peşinde koştuğum", "farklı farklı insanlarla karşılaştığım",
          A_ayse(CONJ, "Conjunction")),
        # the only IMPLICIT relation: placeholder Conn on the first character of Arg2
        R(S("Y", ctx="Yıllar geçti"), _KORKU + ". Ve " + _HAYALLER, "Yıllar geçti",
          {"genre": "talk", "note": "precedence: sonra", "pdtb3": "yes", "sense": PRECEDENCE, "type": "IMPLICIT"}),
        R(_09_ve_conn[2], "benim dünyam dışındaki dünyalar arasında seyahat ederken", "yoluma dokunurken",
          A_ayse(CONJ, "Conjunction")),
        R(_09_ve_conn[3], "çocukluk rüyalarımı yaşayanlar arasında olmak kadar",
          "Birleşik Devlet boyunca gezgin arkadaşların arasında yasamak kadar", A_ayse(CONJ, "Conjunction")),
        R(_09_ve_conn[4], "bu fotoraflar renkli", _ONLAR, A_ayse(CONJ, "Conjunction")),
    ],
    "burak": [
        # abutting Arg1s: [.. korku.) and [Ve bu yüzden ..) are separated by exactly one space
        R(_09_ve_conn[0], _KORKU + ".", _HAYALLER, A_burak(CONJ, tag="inter")),
        R(_09_ve_conn[1], "Ve bu yüzden çocukluk dönemi hatıralarımın çoğu sınırlarda yürüyüp, çilek peşinde koştuğum",
          "farklı farklı insanlarla karşılaştığım", A_burak(CONJ)),
        # the IMPLICIT relation, Arg1 one sentence only (so every annotator has 6 relations here)
        R(S("Y", ctx="Yıllar geçti"), "Ve " + _HAYALLER, "Yıllar geçti",
          {"note": "sonra", "pdtb3": "yes", "sense": PRECEDENCE, "sense2": "", "tag": "inter", "type": "IMPLICIT"}),
        R(_09_ve_conn[2], "benim dünyam dışındaki dünyalar arasında seyahat ederken", "yoluma dokunurken",
          A_burak(CONJ)),
        R(_09_ve_conn[3], "hiçbir başka deneyim çocukluk rüyalarımı yaşayanlar arasında olmak kadar",
          "Birleşik Devlet boyunca gezgin arkadaşların arasında yasamak kadar", A_burak(CONJ)),
        R(_09_ve_conn[4], "bu fotoraflar renkli", _ONLAR + ".", A_burak(CONJ)),
    ],
    "cem": [
        R(_09_ve_conn[0], _KORKU, _HAYALLER, A_cem(CONJ, tag="inter")),
        R(_09_ve_conn[1], "çilek peşinde koştuğum", "farklı farklı insanlarla karşılaştığım", A_cem(CONJ)),
        R(S("Y", ctx="Yıllar geçti"), _HAYALLER, "Yıllar geçti",
          {"sense": PRECEDENCE, "tag": "inter", "type": "IMPLICIT", "note": "örtük: sonra"}),
        R(_09_ve_conn[2], "benim dünyam dışındaki dünyalar arasında seyahat ederken", "yoluma dokunurken",
          A_cem(CONJ)),
        R(_09_ve_conn[3], "çocukluk rüyalarımı yaşayanlar arasında olmak kadar",
          "Birleşik Devlet boyunca gezgin arkadaşların arasında yasamak kadar gerçek hissettirmedi", A_cem(CONJ)),
        R(_09_ve_conn[4], "bu fotoraflar renkli", _ONLAR, A_cem(CONJ)),
    ],
}

# ---------------------------------------------------------------------------
# 00001927 (LF)
# ---------------------------------------------------------------------------

_27_ama_conn = S("ama", ctx="sorunlar, ama hepsi")
_27_ama = {
    "ayse": [R(_27_ama_conn, "Bunlar belli ki çevresel ve sosyal sorunlar", "hepsi bununla kalmıyor",
               A_ayse(DENIER, "contra-expectation"))],
    "burak": None,  # missing annotator file
    "cem": [R(_27_ama_conn, "Bunlar belli ki çevresel ve sosyal sorunlar", "hepsi bununla kalmıyor.",
              A_cem(DENIER))],
}

_BENCE = ("Bence bunları gözardı etmek kayıtsızlık olur, çünkü gözardı edilmesi ileriye dönük uzun vadeli "
          "kazançları riske atabilir")
_SIZI = ("sizi şaşırtabilecek bir şey: Sürdürülebilirliğe gerçekten etki edebilecek güç dengesi kurumsal "
         "yatırımcıların, emeklilik fonları, vakıflar ve bağış fonları gibi büyük yatırımcıların elinde")
_SURD = ("Sürdürülebilirlik derken anlatmak istediğim, çevresel ve sosyal sorunlar ve kurumsal yönetim gibi "
         "cazip konular")
_DOGAL = "doğal kaynakları yenilenebileceğinden daha hızlı şekilde tüketiyoruz"
_IKLIM = "iklimsel degişikliklerin esas sorumlusu olan gaz emisyonları artmaya devam etmekte"

_27_ve_conn = [
    S("Ve", ctx="Ve sizi"),
    S("ve", ctx="var ve hayal"),
    S("ve", ctx="tüketiyoruz ve de"),
    S("ve", ctx="sorunlar ve bu da"),
]
_27_ve = {
    "ayse": [
        R(_27_ve_conn[0], _BENCE, _SIZI, A_ayse(CONJ, "Conjunction", tag="inter")),
        R(_27_ve_conn[1], "sandığınızdan çok daha iyi performansı var", "hayal edebileceğimizden çok daha önemli",
          A_ayse(CONJ, "Conjunction"), shared=S("sürdürülebilir yatırım")),
        R(_27_ve_conn[2], _DOGAL, _IKLIM, A_ayse(CONJ, "Conjunction"), mod=S("de", ctx="ve de")),
        R(_27_ve_conn[3], "Bunlar ekonomik sorunlar", "bu da bu sorunları risk ve kazanç ile ilgili hâle getiriyor",
          A_ayse(CONJ, "Conjunction")),
    ],
    "burak": [
        R(_27_ve_conn[0], _BENCE, _SIZI, A_burak(CONJ, tag="inter")),
        R(_27_ve_conn[1],
          "sürdürülebilir yatırım düşündüğünüzden daha az karmaşık, sandığınızdan çok daha iyi performansı var",
          "hayal edebileceğimizden çok daha önemli", A_burak(CONJ)),
        R(S("ve de", ctx="tüketiyoruz ve de"), _DOGAL, _IKLIM + ".", A_burak(CONJ)),
        R(_27_ve_conn[3], "Bunlar ekonomik sorunlar", "bu da bu sorunları risk ve kazanç ile ilgili hâle getiriyor",
          A_burak(CONJ)),
    ],
    "cem": [
        R(_27_ve_conn[0], _SURD + ". " + _BENCE, _SIZI, A_cem(CONJ, tag="inter")),
        R(_27_ve_conn[1], "sandığınızdan çok daha iyi performansı var", "hayal edebileceğimizden çok daha önemli",
          A_cem(CONJ)),
        R(S("ve de", ctx="tüketiyoruz ve de"), _DOGAL, _IKLIM, A_cem(CONJ)),
        R(_27_ve_conn[3], "Bunlar ekonomik sorunlar", "bu da bu sorunları risk ve kazanç ile ilgili hâle getiriyor",
          A_cem(CONJ)),
    ],
}

_27_ki_conn = S("ki", ctx="görünebilirler, ki")
_KUMA = "bu da şunu yapmamızı cazip kılabilir: Kafamızı kuma gömüp, bunun hakkında düşünmemek"
_27_ki = {
    "ayse": [R(_27_ki_conn, "karmaşık ve uzak görünebilirler", _KUMA, A_ayse(RESULT, "result"))],
    "burak": [R(_27_ki_conn, "Gerçekten de karmaşık ve uzak görünebilirler", _KUMA, A_burak(RESULT))],
    "cem": [R(_27_ki_conn, "karmaşık ve uzak görünebilirler", "bu da şunu yapmamızı cazip kılabilir",
              A_cem(RESULT))],
}

#: (doc, connective file-name spelling) -> annotator -> relations (None: no file)
ANNOTATIONS: dict[tuple[str, str], dict[str, list[Rel] | None]] = {
    ("00001971", "icin"): _71_icin,
    ("00001971", "ve"): _71_ve,
    ("00001971", "ki"): _71_ki,
    ("00002009", "ama"): _09_ama,
    ("00002009", "ve"): _09_ve,
    ("00001927", "ama"): _27_ama,
    ("00001927", "ve"): _27_ve,
    ("00001927", "ki"): _27_ki,
}

#: annotators whose editor re-wrapped long <Text> copies (a space -> "\n" + 20 spaces), like the real file
REWRAP = {"ayse", "cem"}
#: annotators whose files spell the supplement elements <Sup1>/<Sup2>
SUP_SPELLING = {"cem"}

# ---------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------


def _occurrences(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while i != -1:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def resolve(s: S, text: str) -> tuple[int, int, str]:
    """-> (begin, end, expected slice); asserts the raw slice equals the intended phrase."""
    if s.ctx is not None:
        hits = _occurrences(text, s.ctx)
        if s.occ is None:
            assert len(hits) == 1, f"context {s.ctx!r} occurs {len(hits)} times; give occ="
            base = hits[0]
        else:
            base = hits[s.occ]
        inner = s.ctx.find(s.phrase)
        assert inner != -1, f"{s.phrase!r} not in context {s.ctx!r}"
        begin = base + inner
    else:
        hits = _occurrences(text, s.phrase)
        if s.occ is None:
            assert len(hits) == 1, f"{s.phrase!r} occurs {len(hits)} times; give ctx= or occ="
            begin = hits[0]
        else:
            begin = hits[s.occ]
    end = begin + len(s.phrase)
    left, right = s.trim
    expected = s.phrase[left : len(s.phrase) - right]
    begin, end = begin + left, end - right
    assert begin < end and text[begin:end] == expected, (s, text[begin:end])
    return begin, end, expected


ELEMENTS = ("Conn", "Mod", "Arg1", "Arg2", "Supp1", "Supp2", "Shared", "Supp_Shared")
_FIELD = {"Conn": "conn", "Mod": "mod", "Arg1": "arg1", "Arg2": "arg2", "Supp1": "supp1", "Supp2": "supp2",
          "Shared": "shared", "Supp_Shared": "supp_shared"}


@dataclass
class RSpan:
    begin: int
    end: int
    raw: str
    stored: str  # what goes into <Text> (before re-wrapping)


@dataclass
class RRel:
    attrs: dict
    elements: dict[str, list[RSpan]] = field(default_factory=dict)

    def extent(self, el: str) -> tuple[int, int] | None:
        spans = self.elements.get(el) or []
        return (spans[0].begin, spans[-1].end) if spans else None


def resolve_rel(rel: Rel, text: str) -> RRel:
    out = RRel(attrs=rel.attrs)
    for el in ELEMENTS:
        spans = []
        for s in getattr(rel, _FIELD[el]):
            b, e, expected = resolve(s, text)
            spans.append(RSpan(b, e, text[b:e], s.text if s.text is not None else expected))
        spans.sort(key=lambda x: x.begin)
        for a, b in zip(spans, spans[1:]):
            assert a.end <= b.begin, f"overlapping parts in one {el}"
        out.elements[el] = spans
    assert len(out.elements["Conn"]) >= 1 and out.elements["Arg1"] and out.elements["Arg2"]
    if rel.attrs["type"] == "IMPLICIT":
        c = out.elements["Conn"]
        assert len(c) == 1 and c[0].end - c[0].begin == 1 and c[0].begin == out.elements["Arg2"][0].begin
    return out


def resolve_all(texts: dict[str, str]):
    """-> {(doc, conn): {annotator: [RRel] | None}} with relations in document order (Conn begin)."""
    res = {}
    for (doc, conn), by_ann in ANNOTATIONS.items():
        res[(doc, conn)] = {}
        for ann in ANNOTATORS:
            rels = by_ann.get(ann)
            if rels is None:
                res[(doc, conn)][ann] = None
                continue
            rr = [resolve_rel(r, texts[doc]) for r in rels]
            rr.sort(key=lambda r: (r.elements["Conn"][0].begin, r.elements["Conn"][0].end))
            res[(doc, conn)][ann] = rr
    return res


# ---------------------------------------------------------------------------
# XML writing (by hand, for byte-level control)
# ---------------------------------------------------------------------------


def _esc_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(k: str, v: str) -> str:
    v = v.replace("&", "&amp;").replace("<", "&lt;")
    if '"' in v and "'" not in v:
        return f"{k}='{v}'"
    return f'{k}="{v.replace(chr(34), "&quot;")}"'


WRAP_FIRST, WRAP_NEXT, WRAP_INDENT = 50, 60, "\n" + " " * 20


def rewrap(s: str) -> str:
    """Mimic the editor that re-wrapped DATT <Text> copies: a space becomes newline + 20 spaces."""
    if len(s) <= WRAP_FIRST:
        return s
    words = s.split(" ")
    lines, cur, limit = [], words[0], WRAP_FIRST
    for w in words[1:]:
        if len(cur) + 1 + len(w) > limit:
            lines.append(cur)
            cur, limit = w, WRAP_NEXT
        else:
            cur += " " + w
    lines.append(cur)
    return WRAP_INDENT.join(lines)


def render_file(rels: list[RRel], annotator: str) -> bytes:
    out = ['<?xml version="1.0" encoding="utf-8"?>', "<Document>"]
    for r in rels:
        out.append("<Relation " + " ".join(_attr(k, r.attrs[k]) for k in sorted(r.attrs)) + ">")
        for el in ELEMENTS:
            name = el
            if annotator in SUP_SPELLING and el in ("Supp1", "Supp2"):
                name = {"Supp1": "Sup1", "Supp2": "Sup2"}[el]
            spans = r.elements[el]
            if not spans:
                out.append(f"<{name}/>")
                continue
            out.append(f"<{name}>")
            for s in spans:
                txt = rewrap(s.stored) if annotator in REWRAP else s.stored
                out += ["<Span>", f"<Text>{_esc_text(txt)}</Text>", f"<BeginOffset>{s.begin}</BeginOffset>",
                        f"<EndOffset>{s.end}</EndOffset>", "</Span>"]
            out.append(f"</{name}>")
        out.append("</Relation>")
    out.append("</Document>")
    return ("\n".join(out) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------
# Structural phenomena (computed, for the README and the self-check)
# ---------------------------------------------------------------------------


def fname(doc: str, ann: str, conn: str) -> str:
    return f"{doc}_{ann}_{conn}.xml"


def structural(res) -> dict[str, list[tuple]]:
    """All same-file pairs of Arg spans (same layer unless noted) by kind, with relation numbers 1-based."""
    kinds: dict[str, list[tuple]] = {"shared": [], "nested": [], "crossing": [], "abutting": []}
    for (doc, conn), by_ann in res.items():
        for ann, rels in by_ann.items():
            if not rels:
                continue
            f = fname(doc, ann, conn)
            for i, ri in enumerate(rels, 1):
                for j, rj in enumerate(rels, 1):
                    if i >= j:
                        continue
                    # shared: Arg2 of i == Arg1 of j (or the reverse)
                    for x, y in (("Arg2", "Arg1"), ("Arg1", "Arg2")):
                        si, sj = ri.elements[x], rj.elements[y]
                        if [(s.begin, s.end) for s in si] == [(s.begin, s.end) for s in sj]:
                            kinds["shared"].append((f, i, x, j, y, si[0].begin, si[-1].end))
                    for layer in ("Arg1", "Arg2"):
                        a, b = ri.extent(layer), rj.extent(layer)
                        if a == b:
                            continue
                        (a0, a1), (b0, b1) = a, b
                        if (a0 < b0 and b1 < a1) or (b0 < a0 and a1 < b1):
                            inner, outer = ((j, b), (i, a)) if a0 < b0 else ((i, a), (j, b))
                            kinds["nested"].append((f, layer, inner[0], inner[1], outer[0], outer[1]))
                        elif a0 < b0 < a1 < b1 or b0 < a0 < b1 < a1:
                            kinds["crossing"].append((f, layer, i, a, j, b))
                        # abutting: touch or separated by whitespace only, no overlap
                        for p, q, pi, qi in ((a, b, i, j), (b, a, j, i)):
                            if p[1] <= q[0] and doc_text_cache[doc][p[1]:q[0]].strip() == "" and q[0] - p[1] <= 1:
                                kinds["abutting"].append((f, layer, pi, p, qi, q))
    return kinds


doc_text_cache: dict[str, str] = {}

# ---------------------------------------------------------------------------
# README
# ---------------------------------------------------------------------------


def _fmt_spans(spans: list[RSpan]) -> str:
    return " + ".join(f"[{s.begin},{s.end})" for s in spans)


def phenomenon_rows(res, texts) -> list[tuple[str, str, str, str, str]]:
    """(phenomenon, file, relation, element, offsets/description) rows; all numbers computed."""
    rows = []

    def rel(doc, ann, conn, n):
        return res[(doc, conn)][ann][n - 1]

    # 1 shared argument
    r1, r2 = rel("00002009", "burak", "ama", 1), rel("00002009", "burak", "ama", 2)
    assert _fmt_spans(r1.elements["Arg2"]) == _fmt_spans(r2.elements["Arg1"])
    rows.append(("1 shared argument", "00002009_burak_ama.xml", "1 / 2", "Arg2 / Arg1",
                 f"{_fmt_spans(r1.elements['Arg2'])} in both (Arg2 of rel 1 == Arg1 of rel 2)"))
    # 2 nested
    a, b = rel("00002009", "ayse", "ve", 2), rel("00002009", "ayse", "ve", 3)
    rows.append(("2 nested (proper containment)", "00002009_ayse_ve.xml", "2 inside 3", "Arg1",
                 f"rel 2 {_fmt_spans(a.elements['Arg1'])} strictly inside rel 3 {_fmt_spans(b.elements['Arg1'])}"))
    # 3 crossing
    a, b = rel("00002009", "ayse", "ve", 1), rel("00002009", "ayse", "ve", 3)
    rows.append(("3 crossing", "00002009_ayse_ve.xml", "1 x 3", "Arg1",
                 f"rel 1 {_fmt_spans(a.elements['Arg1'])} partially overlaps rel 3 {_fmt_spans(b.elements['Arg1'])}"))
    # 4 discontinuous
    c = rel("00002009", "cem", "ama", 1)
    o = rel("00002009", "ayse", "ama", 1)
    rows.append(("4 discontinuous argument", "00002009_cem_ama.xml", "1", "Arg2",
                 f"two `<Span>`s {_fmt_spans(c.elements['Arg2'])} (parenthetical left out); "
                 f"ayse and burak rel 1 Arg2: one span {_fmt_spans(o.elements['Arg2'])}"))
    # 5 sub-word
    c = rel("00001971", "cem", "icin", 2)
    o = rel("00001971", "ayse", "icin", 2)
    s = c.elements["Arg2"][0]
    t = texts["00001971"]
    rows.append(("5 sub-word selection", "00001971_cem_icin.xml", "2", "Arg2",
                 f"{_fmt_spans(c.elements['Arg2'])} ends inside the word `{t[s.end - 6:s.end + 4]}` "
                 f"(…`{t[s.begin:s.end][-6:]}` + excluded `{t[s.end:s.end + 4]}`); "
                 f"ayse rel 2 Arg2 {_fmt_spans(o.elements['Arg2'])} takes the whole word"))
    # 6 CRLF
    c = rel("00001971", "cem", "ki", 1)
    s = c.elements["Arg2"][0]
    first = min(sp_.begin for (d, _), by in res.items() if d == "00001971"
                for rels in by.values() if rels for r in rels for el in ELEMENTS for sp_ in r.elements[el])
    n_crlf = t[:first].count("\r\n")
    rows.append(("6 CRLF text", "00001971_*.xml", "all", "all",
                 f"every span begins after >= {n_crlf} CRLFs (smallest BeginOffset in 00001971: {first}); "
                 f"counting CRLF as one character would shift every offset by {n_crlf} or more"))
    rows.append(("6 CRLF inside a span", "00001971_cem_ki.xml", "1", "Arg2",
                 f"[{s.begin},{s.end}) = {s.end - s.begin} chars, the last two are `\\r\\n` "
                 f"(at {s.end - 2},{s.end - 1}; the span ends at the end of the text)"))
    # 7 relation-count mismatch
    counts = {a: len(res[("00001971", "ve")][a]) for a in ANNOTATORS}
    rows.append(("7 relation-count mismatch", "00001971_{ayse,burak,cem}_ve.xml", "-", "-",
                 f"ayse {counts['ayse']}, burak {counts['burak']}, cem {counts['cem']} relations "
                 f"(cem skips the phrasal `kalıp çıkarma ve kalıba dökme`)"))
    # 8 missing file
    rows.append(("8 missing annotator file", "00001927_burak_ama.xml (absent)", "-", "-",
                 "ayse and cem have 00001927_*_ama.xml; burak has no file"))
    # 9 abutting
    a, b = rel("00002009", "burak", "ve", 1), rel("00002009", "burak", "ve", 2)
    ea, eb = a.elements["Arg1"][0], b.elements["Arg1"][0]
    rows.append(("9 abutting spans", "00002009_burak_ve.xml", "1 / 2", "Arg1",
                 f"rel 1 [{ea.begin},{ea.end}) and rel 2 [{eb.begin},{eb.end}), "
                 f"separated by exactly one space at {ea.end}"))
    # 10 implicit
    r = rel("00002009", "ayse", "ve", 3)
    rows.append(("10 implicit relation", "00002009_ayse_ve.xml (burak and cem too)", "3", "Conn",
                 f"type=IMPLICIT, note=\"{r.attrs['note']}\", placeholder Conn {_fmt_spans(r.elements['Conn'])} "
                 f"= first char of Arg2 {_fmt_spans(r.elements['Arg2'])}; Arg1 {_fmt_spans(r.elements['Arg1'])}"))
    # 11 text mismatch + re-wrapped
    r = rel("00002009", "burak", "ama", 1)
    s = r.elements["Arg1"][0]
    rows.append(("11 stored-text mismatch (the only one)", "00002009_burak_ama.xml", "1", "Arg1",
                 f"[{s.begin},{s.end}) raw `{s.raw}`, `<Text>` `{s.stored}`"))
    n_wrapped = sum(1 for (d, c), by in res.items() for ann, rels in by.items() if rels and ann in REWRAP
                    for r in rels for el in ELEMENTS for s in r.elements[el] if rewrap(s.stored) != s.stored)
    rows.append(("11 re-wrapped `<Text>` (not a mismatch)", "all ayse and cem files", "-", "all",
                 f"{n_wrapped} spans longer than {WRAP_FIRST} chars have a space replaced by newline + 20 spaces"))
    # 12 spelling variants and non-empty optional elements
    rows.append(("12 `<Sup1>`/`<Sup2>` spelling", "all *_cem_*.xml", "all", "Sup1, Sup2",
                 "cem's files use `<Sup1>`/`<Sup2>` (and `<Supp_Shared>`); ayse and burak use `<Supp1>`/`<Supp2>`"))
    r = rel("00001971", "cem", "ki", 1)
    rows.append(("12 non-empty `<Sup1>`", "00001971_cem_ki.xml", "1", "Sup1", _fmt_spans(r.elements["Supp1"])))
    r = rel("00002009", "ayse", "ama", 3)
    rows.append(("12 non-empty `<Supp1>`", "00002009_ayse_ama.xml", "3", "Supp1", _fmt_spans(r.elements["Supp1"])))
    r = rel("00001927", "ayse", "ve", 3)
    rows.append(("12 non-empty `<Mod>`", "00001927_ayse_ve.xml", "3", "Mod",
                 f"{_fmt_spans(r.elements['Mod'])} `de` (Conn `ve` {_fmt_spans(r.elements['Conn'])}); "
                 f"burak and cem: Conn `ve de` {_fmt_spans(res[('00001927', 've')]['burak'][2].elements['Conn'])}"))
    for doc, ann, conn, n in (("00001927", "ayse", "ve", 2), ("00001971", "ayse", "icin", 3),
                              ("00001971", "burak", "ve", 1)):
        r = rel(doc, ann, conn, n)
        rows.append(("12 non-empty `<Shared>`", fname(doc, ann, conn), str(n), "Shared",
                     _fmt_spans(r.elements["Shared"])))
    r = rel("00002009", "ayse", "ve", 1)
    rows.append(("12 non-empty sense2", "00002009_ayse_ve.xml", "1", "(attribute)", f"sense2=\"{r.attrs['sense2']}\""))
    return rows


def counts_table(res) -> list[str]:
    lines = ["| doc | connective | ayse | burak | cem |", "|---|---|---|---|---|"]
    for (doc, conn), by in res.items():
        cells = ["no file" if by[a] is None else str(len(by[a])) for a in ANNOTATORS]
        lines.append(f"| {doc} | {conn} | " + " | ".join(cells) + " |")
    return lines


STUDY_TOML = """\
[input]
format = "datt"
annotations = "annotations"
texts = "texts"
encoding_fallback = "windows-1254"

[unitize]
units = ["char", "word"]
approaches = ["interval", "boundary"]
layers = ["Arg1", "Arg2"]
tokenizer = "spacy:tr"
discontinuous = "extend"

[output]
dir = "out"
"""


def render_readme(res, texts) -> str:
    rows = phenomenon_rows(res, texts)
    kinds = structural(res)
    n_files = sum(1 for by in res.values() for r in by.values() if r is not None)
    n_rel = sum(len(r) for by in res.values() for r in by.values() if r)
    L = []
    L.append("# tdb-mini: a hand-crafted DATT example corpus\n")
    L.append(
        "A small corpus in the stand-off XML of DATT (the Turkish Discourse Bank annotation tool) with three "
        "synthetic annotators (`ayse`, `burak`, `cem`), built to exercise `unitize` on every phenomenon listed "
        "below. All files are generated by `tools/build_example_corpus.py`; do not edit them by hand "
        "(run `python tools/build_example_corpus.py` instead; it is deterministic and checks itself).\n"
    )
    L.append("## Attribution and licence\n")
    L.append(
        "* `texts/*.txt` are excerpts (from the beginning of each talk up to a paragraph end) of the Turkish raw "
        "texts of the **TED Multilingual Discourse Bank (TED-MDB)**, Zeyrek, Mendes, Grishina, Kurfalı, Gibbon and "
        "Ogrodniczuk (2019), *TED Multilingual Discourse Bank (TED-MDB): a parallel corpus annotated in the PDTB "
        "style*, Language Resources and Evaluation; https://github.com/MurathanKurfali/Ted-MDB-Annotations "
        "(commit b2300f4), licensed under **CC BY 4.0** (https://creativecommons.org/licenses/by/4.0/). "
        "Changes: cut after a paragraph end; `00002009` and `00001927` converted from CRLF to LF line endings; "
        "renamed to 8-digit TDB-style document ids. Typos of the original transcripts are kept.\n"
        "* The annotations in `annotations/` are **synthetic**, written for this project. They are loosely "
        "modelled on TED-MDB's adjudicated argument extents but are not TED-MDB annotations, and the three "
        "annotators are invented.\n"
    )
    L.append("## Contents\n")
    L.append("| doc id | source (TED-MDB `Turkish/raw/01/`) | characters | line endings |")
    L.append("|---|---|---|---|")
    for td in TEXTS:
        t = texts[td.doc]
        L.append(f"| {td.doc} | `{td.source}` | {len(t)} | {'CRLF (kept byte for byte)' if td.newline == 'crlf' else 'LF'} |")
    L.append("")
    L.append(
        f"Connectives (file-name spelling): `ama`, `icin` (için), `ki`, `ve`. {n_files} annotation files, "
        f"{n_rel} relations. Files are named `<doc>_<annotator>_<connective>.xml`; relations inside a file are in "
        "document order (by Conn begin offset) and are numbered from 1 in the tables below. All relations are "
        "EXPLICIT except the IMPLICIT relation of `00002009`/`ve` that all three annotators annotated "
        "(phenomenon 10).\n"
    )
    L.append("Relations per annotator:\n")
    L += counts_table(res)
    L.append("")
    L.append(
        "One (doc, connective) pair has unequal counts: `00001971`/`ve`, the deliberate relation-count "
        "mismatch (phenomenon 7, cem has one fewer), which RAT's rule excludes from the `ve` matrices. "
        "`00001927`/`ama` has no file for burak (phenomenon 8) and is excluded from the `ama` matrices. "
        "Everything else enters the matrices, including the shared, nested, crossing and abutting arguments "
        "of `00002009`.\n"
    )
    L.append("## Offsets\n")
    L.append(
        "`BeginOffset`/`EndOffset` are code-point offsets into `texts/<doc>.txt` decoded as UTF-8 **without** "
        "newline normalisation (open in binary, `.decode('utf-8')`); `\\r\\n` counts as two characters; "
        "`EndOffset` is exclusive. Offsets below are written `[begin,end)`; a discontinuous element is "
        "`[a,b) + [c,d)`. `<Text>` is a copy of the raw slice and must only be compared after collapsing "
        "whitespace runs to one space (XML parsing turns `\\r\\n` into `\\n`; long copies are re-wrapped).\n"
    )
    L.append("## Deliberate phenomena\n")
    L.append("| phenomenon | file | relation | element | offsets / details |")
    L.append("|---|---|---|---|---|")
    for p, f, r, e, d in rows:
        L.append(f"| {p} | `{f}` | {r} | {e} | {d} |")
    L.append("")
    L.append("## Every structural configuration in the corpus (computed)\n")
    L.append(
        "For tests that need the complete list: all same-file, same-annotator pairs of relations whose Arg1 or "
        "Arg2 extents (first begin to last end) are shared, properly nested (both ends strictly inside), crossing, "
        "or abutting (touching, or separated by one whitespace character). The deliberate cases above are "
        "among them; the others arise naturally.\n"
    )
    L.append("| kind | file | layer | relations | extents |")
    L.append("|---|---|---|---|---|")
    for f, i, x, j, y, b, e in kinds["shared"]:
        L.append(f"| shared | `{f}` | {x} of {i} = {y} of {j} | {i}, {j} | [{b},{e}) |")
    for f, layer, i, a, j, b in kinds["nested"]:
        L.append(f"| nested | `{f}` | {layer} | {i} inside {j} | [{a[0]},{a[1]}) inside [{b[0]},{b[1]}) |")
    for f, layer, i, a, j, b in kinds["crossing"]:
        L.append(f"| crossing | `{f}` | {layer} | {i} x {j} | [{a[0]},{a[1]}) x [{b[0]},{b[1]}) |")
    for f, layer, i, a, j, b in kinds["abutting"]:
        L.append(f"| abutting | `{f}` | {layer} | {i} then {j} | [{a[0]},{a[1]}) then [{b[0]},{b[1]}) |")
    L.append("")
    L.append("## Other deliberate differences between annotators\n")
    L.append(
        "Besides the phenomena above, the annotators disagree mildly and realistically: one starts Arg1 a clause "
        "or sentence earlier (e.g. `00001927_cem_ve.xml` rel 1, `00001927_burak_ki.xml` rel 1), one stops Arg2 "
        "before a final predicate or elaboration (`00002009_ayse_ve.xml`/`00002009_burak_ve.xml` rel 4 vs cem; "
        "`00001927_cem_ki.xml` rel 1), trailing full stops are sometimes included (burak, cem), and `ve de` is "
        "either Conn `ve` + Mod `de` (ayse) or one Conn span (burak, cem). Senses differ occasionally "
        "(`00002009_*_ama.xml` rel 3; `00001971_*_ki.xml`).\n"
    )
    L.append("## Study configuration\n")
    L.append("`study.toml` (paths relative to it):\n")
    L.append("```toml\n" + STUDY_TOML + "```\n")
    return "\n".join(L)


# ---------------------------------------------------------------------------
# Independent check of the written files
# ---------------------------------------------------------------------------


def check(out: Path, res) -> None:
    from lxml import etree

    raw = {p.stem: p.read_bytes().decode("utf-8") for p in sorted((out / "texts").glob("*.txt"))}
    for doc, t in raw.items():
        assert not t.startswith("\ufeff"), doc
    assert "\r\n" in raw["00001971"] and "\r" not in raw["00002009"] + raw["00001927"]
    files = sorted((out / "annotations").glob("*.xml"))
    expected = {fname(d, a, c) for (d, c), by in res.items() for a, r in by.items() if r is not None}
    assert {f.name for f in files} == expected, "unexpected set of annotation files"
    ws = re.compile(r"\s+")
    mismatches, n_spans, n_wrapped = [], 0, 0
    for f in files:
        doc, ann, conn = f.stem.split("_")
        data = f.read_bytes()
        assert data.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<Document>')
        root = etree.fromstring(data)
        assert root.tag == "Document"
        rels = root.findall("Relation")
        assert len(rels) == len(res[(doc, conn)][ann]), f.name
        for k, rel in enumerate(rels, 1):
            names = [c.tag for c in rel]
            want = ["Conn", "Mod", "Arg1", "Arg2", "Supp1", "Supp2", "Shared", "Supp_Shared"]
            if ann in SUP_SPELLING:
                want = ["Conn", "Mod", "Arg1", "Arg2", "Sup1", "Sup2", "Shared", "Supp_Shared"]
            assert names == want, (f.name, names)
            for el in rel:
                for s in el.findall("Span"):
                    n_spans += 1
                    b, e = int(s.findtext("BeginOffset")), int(s.findtext("EndOffset"))
                    stored = s.findtext("Text")
                    if "\n" + " " * 20 in stored:
                        n_wrapped += 1
                    assert 0 <= b < e <= len(raw[doc])
                    if ws.sub(" ", raw[doc][b:e]) != ws.sub(" ", stored):
                        mismatches.append((f.name, k, el.tag, b, e))
    assert mismatches == [("00002009_burak_ama.xml", 1, "Arg1", 547, 559)], mismatches
    assert n_wrapped >= 20, n_wrapped
    print(f"check ok: {len(files)} files, {n_spans} spans, {n_wrapped} re-wrapped <Text>, "
          f"1 deliberate <Text> mismatch {mismatches[0]}")


# ---------------------------------------------------------------------------


def write_if_changed(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ted-mdb", type=Path, default=DEFAULT_TED_MDB,
                    help="TED-MDB checkout (default: $TED_MDB_DIR or /work/shared/corpora/ted-mdb); "
                         "if absent, the existing texts are verified and reused")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check-only", action="store_true", help="only verify the existing corpus")
    ap.add_argument("--print-hashes", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(list(argv) if argv is not None else None)
    out: Path = args.out

    if args.print_hashes:
        for td in TEXTS:
            print(td.doc, hashlib.sha256(excerpt_from_source(td, args.ted_mdb)).hexdigest())
        return 0

    text_bytes = load_texts(out, None if args.check_only else args.ted_mdb)
    texts = {d: b.decode("utf-8") for d, b in text_bytes.items()}
    doc_text_cache.update(texts)
    res = resolve_all(texts)

    if not args.check_only:
        for doc, data in text_bytes.items():
            write_if_changed(out / "texts" / f"{doc}.txt", data)
        ann_dir = out / "annotations"
        wanted = set()
        for (doc, conn), by in res.items():
            for ann, rels in by.items():
                if rels is None:
                    continue
                name = fname(doc, ann, conn)
                wanted.add(name)
                write_if_changed(ann_dir / name, render_file(rels, ann))
        for stale in ann_dir.glob("*.xml"):
            if stale.name not in wanted:
                stale.unlink()
        write_if_changed(out / "study.toml", STUDY_TOML.encode("utf-8"))
        write_if_changed(out / "README.md", render_readme(res, texts).encode("utf-8"))
    else:
        assert (out / "README.md").read_text(encoding="utf-8") == render_readme(res, texts), "README is stale"
        for (doc, conn), by in res.items():
            for ann, rels in by.items():
                if rels is not None:
                    p = out / "annotations" / fname(doc, ann, conn)
                    assert p.read_bytes() == render_file(rels, ann), f"{p.name} is stale"
    check(out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
