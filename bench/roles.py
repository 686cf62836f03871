#!/usr/bin/env python3
"""Benchmark roles: what ``[roles]`` (every human pair, every candidate with every human) adds to ``unitize agree``.

A study the shape of the public LLM span benchmark's ``iaa`` split — 29 humans, 6 model candidates, one human
(h28) who coded 5 of the 12 texts — is generated from the twelve texts of ``unitize/examples/models-mini`` (spans
drawn from ana's, each dropped, shifted or relabelled at random; ``--copies K`` repeats the texts K times), and
converted twice: without ``[roles]`` (plain) and with ``candidates = ["llm0..5"]`` (roles). ``agree`` is then timed
in this process, after the imports, plain and roles in turn ``--repeat`` times (paired), per metric set; the
figure is the median CPU time of each and their ratio (the issue asks ≤ 1.2).

    python bench/roles.py                      # span-f1, and the default metrics
    python bench/roles.py --copies 10 --repeat 7

Results go to stdout and ``bench/results/roles-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
EXAMPLE = REPO / "unitize" / "examples" / "models-mini"
HUMANS, MODELS = 29, 6
STUDY = """[input]
format = "quotes"
annotations = "annotations"
texts = "texts"

[unitize]
units = ["word"]
approaches = ["interval"]
modes = ["labels"]
tokenizer = "regex"
keep_missing = true
"""


def make_study(root: Path, copies: int, seed: int) -> None:
    """The study's texts and annotations (see the module docstring), and plain.toml and roles.toml."""
    rng = random.Random(seed)
    source = [json.loads(line) for line in (EXAMPLE / "annotations" / "ana.jsonl").read_text(encoding="utf-8").splitlines()]
    (root / "texts").mkdir(parents=True)
    (root / "annotations").mkdir()
    docs = []
    for k in range(copies):
        for rec in source:
            doc = f"{rec['doc']}-{k}"
            shutil.copyfile(EXAMPLE / "texts" / f"{rec['doc']}.txt", root / "texts" / f"{doc}.txt")
            docs.append((doc, rec["spans"]))
    names = [f"h{i:02d}" for i in range(HUMANS)] + [f"llm{i}" for i in range(MODELS)]
    for name in names:
        lines = []
        for n, (doc, spans) in enumerate(docs):
            if name == "h28" and n % 12 >= 5:
                continue  # the partial annotator: 5 of every 12 texts
            marked = []
            for s in spans:
                if rng.random() < 0.15:
                    continue
                begin, end = max(0, s["start"] + rng.choice([0, 0, 0, -1, 2])), s["end"] + rng.choice([0, 0, 0, 1, -2])
                if end > begin:
                    marked.append({"start": begin, "end": end, "label": rng.choice([s["label"]] * 4 + ["MISC"])})
            lines.append(json.dumps({"doc": doc, "spans": marked}))
        (root / "annotations" / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "plain.toml").write_text(STUDY, encoding="utf-8")
    (root / "roles.toml").write_text(STUDY + '\n[roles]\ncandidates = ["llm0..5"]\n', encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=1, help="the twelve texts this many times (default 1)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--metrics", default="span-f1;default", help="metric sets, ';'-separated (default: span-f1;default)")
    args = ap.parse_args(argv)
    from unitize.agree import DEFAULT_METRICS, agree
    from unitize.config import load_toml, override
    from unitize.run import convert

    root = Path(tempfile.mkdtemp(prefix="unitize-roles-bench-"))
    try:
        make_study(root, args.copies, args.seed)
        outs = {}
        for kind in ("plain", "roles"):
            outs[kind] = root / f"out-{kind}"
            convert(override(load_toml(root / f"{kind}.toml"), out=outs[kind]))
        report = []
        for spec in args.metrics.split(";"):
            metrics = list(DEFAULT_METRICS) if spec == "default" else spec.split(",")
            cpu: dict[str, list[float]] = {"plain": [], "roles": []}
            for _ in range(args.repeat):
                for kind in ("plain", "roles"):
                    start = time.process_time()
                    agree(outs[kind], metrics=metrics)
                    cpu[kind].append(time.process_time() - start)
            plain, roles = statistics.median(cpu["plain"]), statistics.median(cpu["roles"])
            pairs = [r / p for p, r in zip(cpu["plain"], cpu["roles"])]
            report.append({"metrics": ",".join(metrics), "plain_cpu_s": plain, "roles_cpu_s": roles, "ratio": roles / plain,
                           "paired_ratios": pairs, "texts": 12 * args.copies})
            print(f"{','.join(metrics):<40} plain {plain:6.2f} s  roles {roles:6.2f} s  ratio {roles / plain:5.2f} "
                  f"(paired: {min(pairs):.2f}–{max(pairs):.2f}; {12 * args.copies} texts, {HUMANS} humans, {MODELS} candidates)")
        results = REPO / "bench" / "results"
        results.mkdir(exist_ok=True)
        (results / "roles-latest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
