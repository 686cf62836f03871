#!/usr/bin/env python3
"""Coverage of agree's interval methods: simulated studies against the population value of their model.

    python bench/coverage.py                      # every cell, 300 studies each (a few minutes)
    python bench/coverage.py --studies 100 --cells small   # the small-sample cells only

Each cell is a generating model: ``coders`` annotators code ``units`` units into ``codes`` categories
(probabilities ``shares``); a coder gives the unit's true category with probability ``1 - error``, else
a category drawn uniformly (it may be the true one); ``missing`` is the chance a coder skips a unit.
The population alpha of that model is exact (the limit of the sample alpha). For every study, each method
of ``--ci-method`` gives a 95 % interval of Krippendorff's alpha (nominal, or interval for the rating-scale
cells); the table
is the share of intervals holding the population value (coverage; 93–97 % is what a 95 % interval should
give, ±2.5 points of Monte-Carlo error at 300 studies), their mean width, and the cost of an interval,
paired with the point estimate of the same study (its time, and how many point estimates it costs).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from unitize.metrics import bootstrap as B  # noqa: E402
from unitize.metrics import coefficients as C  # noqa: E402
from unitize.metrics import stats as S  # noqa: E402
from unitize.metrics.value import Value  # noqa: E402


@dataclass(frozen=True)
class Cell:
    name: str
    units: int
    coders: int
    shares: tuple[float, ...]
    error: float
    missing: float = 0.0
    level: str = "nominal"  # or "interval": the codes 0, 1, … as numbers


CELLS = {
    "small": [
        Cell("2 coders, 3 codes, 20 units", 20, 2, (1 / 3, 1 / 3, 1 / 3), 0.3),
        Cell("4 coders, binary p=0.2, 20 units", 20, 4, (0.8, 0.2), 0.2),
        Cell("4 coders, binary p=0.2, 12 units", 12, 4, (0.8, 0.2), 0.2),
        Cell("2 coders, 3 codes, 12 units", 12, 2, (1 / 3, 1 / 3, 1 / 3), 0.3),
    ],
    "larger": [
        Cell("2 coders, 3 codes, 50 units", 50, 2, (1 / 3, 1 / 3, 1 / 3), 0.3),
        Cell("4 coders, binary p=0.2, 50 units", 50, 4, (0.8, 0.2), 0.2),
        Cell("3 coders, 4 codes skewed, 100 units, 10% missing", 100, 3, (0.55, 0.25, 0.15, 0.05), 0.25, 0.1),
        Cell("6 coders, 3 codes, 100 units", 100, 6, (0.5, 0.3, 0.2), 0.3),
        Cell("2 coders, binary p=0.1, 500 units", 500, 2, (0.9, 0.1), 0.15),
        Cell("3 coders, 5-point scale (interval), 20 units", 20, 3, (0.1, 0.2, 0.4, 0.2, 0.1), 0.4, level="interval"),
        Cell("3 coders, 5-point scale (interval), 50 units", 50, 3, (0.1, 0.2, 0.4, 0.2, 0.1), 0.4, level="interval"),
    ],
}


def population_alpha(cell: Cell) -> float:
    """Alpha of the model: 1 − the expected difference of two coders of one unit / that of two pairable values
    (nominal: whether they differ; interval: the squared difference of the codes as numbers)."""
    k = len(cell.shares)
    pi = np.asarray(cell.shares)
    q = (1 - cell.error) * np.eye(k) + cell.error / k  # q[t, v]: a coder gives v to a unit of true category t
    codes = np.arange(k, dtype=float)
    delta = (codes[:, None] - codes[None, :]) ** 2 if cell.level == "interval" else 1.0 - np.eye(k)
    observed = float(sum(pi[t] * q[t] @ delta @ q[t] for t in range(k)))
    m = pi @ q
    return 1 - observed / float(m @ delta @ m)


def study(cell: Cell, rng: np.random.Generator) -> S.Stats:
    k = len(cell.shares)
    truth = rng.choice(k, size=cell.units, p=cell.shares)
    wrong = rng.random((cell.units, cell.coders)) < cell.error
    values = np.where(wrong, rng.integers(0, k, size=(cell.units, cell.coders)), truth[:, None]).astype(float)
    values[rng.random(values.shape) < cell.missing] = np.nan
    columns, domain = S.codes(values)
    return S.from_codes(columns, domain, [f"c{i}" for i in range(cell.coders)])


def run(cells: list[Cell], studies: int, replicates: int, methods: tuple[str, ...]) -> list[dict]:
    rows = []
    for cell in cells:
        truth = population_alpha(cell)
        rng = np.random.default_rng(2026)
        hits = {m: [] for m in methods}
        widths = {m: [] for m in methods}
        seconds = {m: 0.0 for m in methods}
        point = 0.0
        for k in range(studies):
            s = study(cell, rng)
            started = time.perf_counter()
            v = C.alpha(s, cell.level)
            point += time.perf_counter() - started
            if not np.isfinite(v.value):
                continue
            for m in methods:
                opts = B.Options(level=0.95, replicates=replicates, seed=k, method=m)
                started = time.perf_counter()
                got = B.interval(B.alpha_replicates, s, v, cell.level, opts)
                seconds[m] += time.perf_counter() - started
                if got.ci is None:
                    hits[m].append(False)
                    continue
                low, high = got.ci
                hits[m].append(low <= truth <= high)
                widths[m].append(high - low)
        for m in methods:
            rows.append({"cell": cell.name, "alpha": truth, "method": m, "studies": len(hits[m]),
                         "coverage": float(np.mean(hits[m])) if hits[m] else float("nan"),
                         "width": float(np.mean(widths[m])) if widths[m] else float("nan"),
                         "ms": 1000 * seconds[m] / max(1, len(hits[m])), "x_point": seconds[m] / point if point else float("nan")})
    return rows


def span_study(rng: np.random.Generator, n_docs: int, copy: float = 0.6):
    """Two annotators on documents of 20 positions (as tests/metrics/test_spanboot.py): each marks one span of a
    value (x or y); the second copies the first's with probability ``copy``, else marks its own at random."""
    from unitize.metrics.placed import Placed

    rows, starts = [], []
    for d in range(n_docs):
        base = 20 * d
        starts.append(base)
        b = int(rng.integers(0, 15))
        first = (base + b, base + b + int(rng.integers(2, 6)), int(rng.integers(0, 2)))
        second = first if rng.random() < copy else (lambda b2: (base + b2, base + b2 + int(rng.integers(2, 6)), int(rng.integers(0, 2))))(
            int(rng.integers(0, 15)))
        rows += [(0, *first), (1, *second)]
    a = np.array(rows, dtype=np.int64)
    return Placed(("a0", "a1"), tuple(f"d{i}" for i in range(n_docs)), np.array(starts, np.int64), 20 * n_docs, ("x", "y"),
                  a[:, 0], a[:, 1], a[:, 2], a[:, 3])


def run_documents(sizes: tuple[int, ...], studies: int, replicates: int) -> list[dict]:
    """Coverage of the documents-resampled percentile bootstrap of span F1 and uα (the population value: a
    20,000-document study's)."""
    from unitize.metrics import spanboot, spanf1, unitizing

    big = span_study(np.random.default_rng(7), 20_000)
    truth = {"span-f1": spanf1.f1_rows(spanf1.counts(big), spanf1.EXACT)[0].value,
             "u-alpha": unitizing.u_alpha(unitizing.statistics(big)).value}
    rows = []
    for n_docs in sizes:
        rng = np.random.default_rng(2026 + n_docs)
        hits: dict[str, list[bool]] = {m: [] for m in truth}
        hits_t: dict[str, list[bool]] = {m: [] for m in truth}
        hits_j: dict[str, list[bool]] = {m: [] for m in truth}
        for k in range(studies):
            p = span_study(rng, n_docs)
            w = spanboot.weights(spanboot.draws(B.Options(replicates=replicates, seed=k), n_docs), n_docs)
            reps = {"span-f1": spanboot.f1_replicates(spanf1.counts(p), spanf1.EXACT, w, False)[("a0|a1", None)],
                    "u-alpha": spanboot.unitizing_replicates(unitizing.Variant.U, [s for _, s in unitizing.by_document(p)], w)[(None, None)]}
            counts, per_doc = spanf1.counts(p), [s for _, s in unitizing.by_document(p)]
            at = {"span-f1": lambda w: spanboot.f1_replicates(counts, spanf1.EXACT, w, False)[("a0|a1", None)],
                  "u-alpha": lambda w: spanboot.unitizing_replicates(unitizing.Variant.U, per_doc, w)[(None, None)]}
            for metric, r in reps.items():
                ok = r[np.isfinite(r)]
                low, high = np.percentile(ok, [2.5, 97.5]) if ok.size else (np.nan, np.nan)
                hits[metric].append(bool(low <= truth[metric] <= high))
                one = np.ones(n_docs)
                point = float(at[metric](one[None, :])[0])
                got = B.with_studentized(Value(point), at[metric], one, one > 0, at[metric](one[None, :] - np.eye(n_docs)),
                                         B.Options(replicates=replicates, seed=k))
                hits_t[metric].append(got.ci is not None and got.ci[0] <= truth[metric] <= got.ci[1])
                jack_opts = B.Options(method="jackknife")
                jack = at[metric](spanboot.weights(spanboot.draws(spanboot.resampling(jack_opts, n_docs), n_docs), n_docs))
                (row,) = spanboot.attach([Value(point)], {(None, None): jack}, jack_opts, n_docs)
                hits_j[metric].append(row.ci is not None and row.ci[0] <= truth[metric] <= row.ci[1])
        rows += [{"cell": f"2 annotators, {n_docs} documents", "metric": m, "population": truth[m], "studies": len(h),
                  "coverage": float(np.mean(h)), "studentized": float(np.mean(hits_t[m])),
                  "jackknife": float(np.mean(hits_j[m]))} for m, h in hits.items()]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=300)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--cells", choices=("small", "larger", "all"), default="all")
    parser.add_argument("--methods", default=",".join(B.METHODS))
    parser.add_argument("--documents", action="store_true", help="the segment metrics' documents bootstrap at 10, 30 and 100 documents instead")
    args = parser.parse_args(argv)
    if args.documents:
        print("| cell | metric | population | studies | percentile bootstrap | bootstrap-t | jackknife |")
        print("|---|---|---|---|---|---|---|")
        for r in run_documents((10, 30, 100), args.studies, args.replicates):
            print(f"| {r['cell']} | {r['metric']} | {r['population']:.3f} | {r['studies']} | {100 * r['coverage']:.1f} % "
                  f"| {100 * r['studentized']:.1f} % | {100 * r['jackknife']:.1f} % |")
        return 0
    cells = CELLS["small"] + CELLS["larger"] if args.cells == "all" else CELLS[args.cells]
    rows = run(cells, args.studies, args.replicates, tuple(args.methods.split(",")))
    print("| cell | population α | method | studies | coverage | mean width | ms per interval | × the point estimate |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cell']} | {r['alpha']:.3f} | {r['method']} | {r['studies']} | {100 * r['coverage']:.1f} % | {r['width']:.3f} "
              f"| {r['ms']:.2f} | {r['x_point']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
