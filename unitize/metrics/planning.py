"""How many codings a study needs before any pilot exists: Bloch & Kraemer (1989), as Krippendorff (2019) tabulates it.

For alpha to be significantly above a required minimum ``alpha_min`` (one-sided, at ``significance``),
with ``codes`` categories whose smallest has probability ``p`` (equiprobable codes: ``1 / codes``) and
``coders`` coders, the number of pairable values needed is (Bloch & Kraemer 1989, eq. 3.7)::

    N = coders · z² · [(1 + α_min)(3 − α_min) / (4 (1 − α_min) p (1 − p)) − α_min]

rounded up; z is the normal quantile at ``1 − significance``. Krippendorff's worked values: 4
equiprobable codes, 2 coders, significance 0.05 → 139 for α_min 0.800, 81 for 0.667. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist


@dataclass(frozen=True)
class Minimum:
    """The closed-form minimum: pairable values, and the units they are with every coder coding each."""

    values: int
    units: int
    alpha_min: float
    codes: int
    coders: int
    significance: float
    smallest_share: float


def minimum_codings(alpha_min: float, codes: int, *, coders: int = 2, significance: float = 0.05,
                    smallest_share: float | None = None) -> Minimum:
    """The least number of pairable values (and units) for alpha ≥ ``alpha_min`` to be significant."""
    if not 0 < alpha_min < 1:
        raise ValueError(f"alpha_min must be between 0 and 1, not {alpha_min}")
    if codes < 2 or coders < 2:
        raise ValueError("a study needs two codes or more and two coders or more")
    if not 0 < significance < 1:
        raise ValueError(f"significance must be between 0 and 1, not {significance}")
    p = 1 / codes if smallest_share is None else smallest_share
    if not 0 < p <= 1 / codes + 1e-12:
        raise ValueError(f"the smallest code's share must be above 0 and at most 1/codes = {1 / codes:.3g}, not {p}")
    z = NormalDist().inv_cdf(1 - significance)
    a = alpha_min
    n = coders * z**2 * ((1 + a) * (3 - a) / (4 * (1 - a) * p * (1 - p)) - a)
    values = math.ceil(n - 1e-9)
    return Minimum(values, math.ceil(values / coders), alpha_min, codes, coders, significance, p)
