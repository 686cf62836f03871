#!/usr/bin/env python3
"""Generate a crowd-scale study, deterministically: flat labels and short-text spans.

Default scale (``--scale 1``):

- **labels**: 1,000,000 items, each labelled by 5 workers drawn from a pool of 20,000;
  ``labels/labels.csv`` is the long flat-labels CSV ``item,worker,label`` (format
  ``labels``, docs/labels.md): five nominal classes, about 2 % empty cells
  (annotator saw the item, gave no label). 5,000,000 label records, ≈ 110 MB.
- **spans**: 200,000 short texts (12–40 words) × 3 span annotators drawn from a pool of
  2,000 workers; format ``span-table`` as Parquet (read without CSV decoding):
  ``spans/texts.parquet`` (``doc_id, text``), ``spans/roster.parquet`` (``key, doc_id,
  annotator``: who was assigned which text, so a worker who marked nothing has *not
  annotated* it rather than being missing) and ``spans/spans.parquet`` (``key, label,
  begin, end``): 0–3 spans per assignment around a "toxic" phrase the text holds,
  boundaries moved by a word now and then, now and then a cut word.

``--scale F`` generates the first ``F`` of the items and of the texts: the random streams
are per item / per text, so a smaller scale is a prefix of a larger one. Each part has a
``study.toml`` beside it and ``crowd.json`` holds the parameters and counts.

    python bench/make_crowd.py --out bench/.data/crowd-1 --scale 1
    python bench/make_crowd.py --out /tmp/c --scale 0.125 --parts spans

Needs pyarrow (for the Parquet span tables): run it with the project's interpreter.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import time
from pathlib import Path

ITEMS, POOL, PER_ITEM = 1_000_000, 20_000, 5
TEXTS, SPAN_POOL, SPAN_ANNOTATORS = 200_000, 2_000, 3
LABELS = ["none", "insult", "threat", "identity", "profanity"]
SPAN_LABELS = ["toxic", "insult"]
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "ve", "zu", "do", "pe", "an", "or", "is", "el", "ba"]
TOXIC_WORDS = ["idiot", "stupid", "moron", "trash", "loser", "pathetic", "dumb", "clown"]


def _labels(folder: Path, items: int, pool: int, per_item: int, seed: int) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "labels.csv"
    tmp = path.with_suffix(".tmp")
    rows = 0
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item", "worker", "label"])
        for item in range(items):
            rng = random.Random(seed * 1_000_003 + item)  # per item: a smaller scale is a prefix
            bias = rng.random()  # items differ in how clear they are
            truth = rng.choice(LABELS)
            for worker in rng.sample(range(pool), per_item):
                r = rng.random()
                label = "" if r < 0.02 else truth if r < 0.55 + 0.4 * bias else rng.choice(LABELS)
                out.writerow([f"i{item:07d}", f"w{worker:05d}", label])
                rows += 1
    os.replace(tmp, path)
    (folder / "study.toml").write_text(
        '[input]\nformat = "labels"\nannotations = "labels.csv"\nitem = "item"\nannotator = "worker"\nlabels = ["label"]\n\n'
        '[output]\ndir = "out"\n',  # the default layout: auto must choose long for a crowd
        encoding="utf-8",
    )
    return {"items": items, "pool": pool, "per_item": per_item, "label_records": rows, "bytes": path.stat().st_size}


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))


def _spans(folder: Path, texts: int, pool: int, per_text: int, seed: int) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    doc_ids, bodies = [], []
    keys, r_docs, r_annotators = [], [], []
    s_keys, s_labels, s_begin, s_end = [], [], [], []
    for t in range(texts):
        rng = random.Random(seed * 1_000_003 + 7 + t * 2)
        n = rng.randint(12, 40)
        words = [_word(rng) for _ in range(n)]
        # a toxic phrase of 1–4 words somewhere in the text
        at, length = rng.randrange(n), rng.randint(1, 4)
        for j in range(at, min(at + length, n)):
            words[j] = rng.choice(TOXIC_WORDS)
        starts, pos = [], 0
        for w in words:
            starts.append(pos)
            pos += len(w) + 1
        text = " ".join(words) + rng.choice([".", "!", "?"])
        doc = f"t{t:06d}"
        doc_ids.append(doc)
        bodies.append(text)
        end_word = min(at + length, n) - 1
        for k, worker in enumerate(rng.sample(range(pool), per_text)):
            key = f"{doc}-{k}"
            keys.append(key)
            r_docs.append(doc)
            r_annotators.append(f"w{worker:04d}")
            for _ in range(rng.choice([0, 1, 1, 1, 1, 2, 2, 3])):
                b_word = max(0, min(n - 1, at + rng.choice([0, 0, 0, 0, -1, 1])))
                e_word = max(b_word, min(n - 1, end_word + rng.choice([0, 0, 0, 0, -1, 1])))
                if rng.random() < 0.3:  # another phrase of the text
                    b_word = rng.randrange(n)
                    e_word = min(n - 1, b_word + rng.randint(0, 3))
                begin = starts[b_word]
                end = starts[e_word] + len(words[e_word])
                if rng.random() < 0.02 and end - begin > 2:  # a cut word
                    end -= 1
                s_keys.append(key)
                s_labels.append(rng.choice(SPAN_LABELS))
                s_begin.append(begin)
                s_end.append(end)
    opts = dict(compression="zstd", row_group_size=256_000)
    pq.write_table(pa.table({"doc_id": doc_ids, "text": bodies}), folder / "texts.parquet", **opts)
    pq.write_table(pa.table({"key": keys, "doc_id": r_docs, "annotator": r_annotators}), folder / "roster.parquet", **opts)
    pq.write_table(
        pa.table({"key": s_keys, "label": s_labels, "begin": pa.array(s_begin, pa.int32()), "end": pa.array(s_end, pa.int32())}),
        folder / "spans.parquet",
        **opts,
    )
    (folder / "study.toml").write_text(
        '[input]\nformat = "span-table"\nannotations = "spans.parquet"\ntexts = "texts.parquet"\nroster = "roster.parquet"\n'
        'columns = {doc = "doc_id", text = "text", annotator = "annotator", key = "key", label = "label", begin = "begin", end = "end"}\n'
        'layer = "toxic"\n\n[unitize]\nunits = ["char", "word"]\napproaches = ["interval"]\ntokenizer = "whitespace"\n\n'
        '[output]\ndir = "out"\n',
        encoding="utf-8",
    )
    return {
        "texts": texts,
        "pool": pool,
        "annotators_per_text": per_text,
        "assignments": len(keys),
        "spans": len(s_keys),
        "characters": sum(map(len, bodies)),
        "bytes": sum((folder / f).stat().st_size for f in ("texts.parquet", "roster.parquet", "spans.parquet")),
    }


def generate(out: Path, scale: float = 1.0, parts: tuple[str, ...] = ("labels", "spans"), seed: int = 0) -> dict:
    """Write the parts asked for under ``out``; return what was made."""
    t0 = time.perf_counter()
    info: dict = {"scale": scale, "seed": seed}
    if "labels" in parts:
        info["labels"] = _labels(out / "labels", max(1, round(ITEMS * scale)), POOL, PER_ITEM, seed)
    if "spans" in parts:
        info["spans"] = _spans(out / "spans", max(1, round(TEXTS * scale)), SPAN_POOL, SPAN_ANNOTATORS, seed)
    info["seconds"] = round(time.perf_counter() - t0, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "crowd.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the default size (0.125 = 1/8)")
    ap.add_argument("--parts", default="labels,spans", help="labels, spans or both")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    info = generate(args.out, args.scale, tuple(args.parts.split(",")), args.seed)
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
