#!/usr/bin/env python3
"""Benchmark the span writers against their floor, on real data: ToxicSpans (16,100 posts, 59,214 (post, worker)
submissions) read once, then each target written ``--repeat`` times in this process, paired with a floor.

The floor of the Hugging Face writer is the same rows (a row per document: id, text, each annotator's spans with
code-point offsets, sorted) made by a plain-Python loop over the spans and written by ``pa.Table.from_pylist`` and
``pq.write_table``: no holdability check, no offset conversion, no manifest. The figure is the median CPU time of
each and their ratio (issue 33 measured 7.2× at 5,000 documents). The spaCy writer's floor is the same Docs made
by spaCy's blank tokenizer and ``char_span``, added to one ``DocBin`` (``floor_spacy``).

    python bench/writers.py                     # needs ../shared/corpora/toxic-spans
    python bench/writers.py --repeat 5 --targets huggingface,spacy

Results go to stdout and ``bench/results/writers-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DATA = REPO.parent / "shared" / "corpora" / "toxic-spans"
STUDY = """[input]
format = "span-table"
annotations = "{data}/spans.csv"
texts = "{data}/comments.csv"
roster = "{data}/annotations.csv"
columns = {{doc = "comment_id", text = "comment_text", annotator = "worker", key = "annotation", label = "type", begin = "start", end = "end"}}

[unitize]
tokenizer = "regex"
"""


def floor(corpus: Any, path: Path) -> None:
    """The Hugging Face writer's rows, made and written the plainest way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from unitize.writers.huggingface import SCHEMA

    per_doc: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for sub in corpus.submissions:
        per_doc[sub.doc_id].setdefault(sub.annotator, [])
    for s in corpus.spans:
        per_doc[s.doc_id].setdefault(s.annotator, []).append({"id": s.record, "group": s.group, "layer": s.layer, "label": s.label,
                                                              "start": s.begin, "end": s.end})
    rows = [{"id": doc, "text": corpus.documents[doc].text,
             "annotations": [{"annotator": a, "spans": sorted(spans, key=lambda x: (x["start"], x["end"]))} for a, spans in sorted(who.items())]}
            for doc, who in sorted(per_doc.items())]
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)


def floor_spacy(corpus: Any, path: Path) -> None:
    """The spaCy writer's DocBin (a Doc per document and annotator, its spans in doc.spans, who in user_data) made the
    plainest way: spaCy's blank tokenizer, ``char_span`` for each span, ``DocBin.add``, one file."""
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("xx")
    spans: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for s in corpus.spans:
        spans[(s.annotator, s.doc_id)].append(s)
    docs = DocBin(store_user_data=True)
    for sub in corpus.submissions:
        doc = nlp.make_doc(corpus.documents[sub.doc_id].text)
        groups: dict[str, list[Any]] = defaultdict(list)
        for s in spans[(sub.annotator, sub.doc_id)]:
            span = doc.char_span(s.begin, s.end, label=s.label or "", alignment_mode="expand")
            if span is not None:
                groups[s.layer].append(span)
        for layer, found in groups.items():
            doc.spans[layer] = found
        doc.user_data["unitize"] = {"doc_id": sub.doc_id, "annotator": sub.annotator}
        docs.add(doc)
    path.write_bytes(docs.to_bytes())


FLOORS = {"huggingface": floor, "spacy": floor_spacy}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the toxic-spans folder (comments.csv, annotations.csv, spans.csv)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--targets", default="huggingface,spacy")
    args = ap.parse_args(argv)
    if not (args.data / "spans.csv").is_file():
        print(f"no ToxicSpans at {args.data}", file=sys.stderr)
        return 2
    from unitize import load_toml, read_corpus
    from unitize.run.conversion import write_corpus

    root = Path(tempfile.mkdtemp(prefix="unitize-writers-bench-"))
    try:
        (root / "study.toml").write_text(STUDY.format(data=args.data.resolve().as_posix()), encoding="utf-8")
        settings = load_toml(root / "study.toml")
        corpus = read_corpus(settings)
        report = []
        for to in args.targets.split(","):
            cpu: dict[str, list[float]] = {"writer": [], "floor": []}
            for k in range(args.repeat):
                start = time.process_time()
                write_corpus(corpus, to, root / f"{to}-{k}", settings=settings)
                cpu["writer"].append(time.process_time() - start)
                if to in FLOORS:
                    start = time.process_time()
                    FLOORS[to](corpus, root / f"floor-{k}")
                    cpu["floor"].append(time.process_time() - start)
                shutil.rmtree(root / f"{to}-{k}", ignore_errors=True)
            writer = statistics.median(cpu["writer"])
            base = statistics.median(cpu["floor"]) if cpu["floor"] else None
            report.append({"target": to, "writer_cpu_s": writer, "floor_cpu_s": base, "ratio": writer / base if base else None,
                           "documents": len(corpus.documents), "submissions": len(corpus.submissions)})
            shown = f"  floor {base:6.2f} s  ratio {writer / base:5.2f}" if base else ""
            print(f"{to:<12} writer {writer:6.2f} s{shown}  ({len(corpus.documents):,} documents, {len(corpus.submissions):,} submissions)")
        results = REPO / "bench" / "results"
        results.mkdir(exist_ok=True)
        (results / "writers-latest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
