#!/usr/bin/env python3
"""Peak memory of the alt-test against its instances: the bootstrap of ρ draws a block of replicates at a time.

One candidate and ``--humans`` humans labelling ``--instances`` items (binary labels, the accuracy score), the
alt-test with a 95 % interval on ``--replicates`` bootstrap replicates; run under ``/usr/bin/time -v`` to read the
peak (each size in its own process). A baseline in the same run: the same process with ``--replicates 0`` (no
interval), so the figure to read is the difference.

    /usr/bin/time -v python bench/alttest_memory.py --instances 50000
    /usr/bin/time -v python bench/alttest_memory.py --instances 50000 --replicates 0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=50_000)
    ap.add_argument("--humans", type=int, default=3)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from unitize.agree.alttest import _pairwise
    from unitize.metrics import ALT_TEST
    from unitize.metrics.alttest import Term, alt_test
    from unitize.metrics.bootstrap import Options

    rng = np.random.default_rng(args.seed)
    n = args.humans + 1
    truth = rng.integers(0, 2, args.instances)
    values = np.where(rng.random((args.instances, n)) < 0.85, truth[:, None], 1 - truth[:, None]).astype(np.float64)
    terms = _pairwise(values, Term.SAME)
    coded = np.ones((args.instances, n), bool)
    names = [f"h{k}" for k in range(args.humans)] + ["model"]
    start = time.process_time()
    result = alt_test(terms, coded, names, list(range(args.humans)), args.humans, ALT_TEST.score("accuracy"),
                      ci=Options(replicates=args.replicates, seed=args.seed) if args.replicates else None)
    print(f"{args.instances} instances, {args.humans} humans, {args.replicates} replicates: ω {result.winning_rate}, "
          f"ρ {result.advantage_probability:.4f} {result.advantage_ci}, {time.process_time() - start:.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
