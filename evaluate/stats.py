"""Statistics of the arena: confidence intervals and a league rating.

- :func:`wilson`: the Wilson score interval of a proportion ``k / n``.
- :func:`mean_ci`: a mean with its Student t interval,
  ``mean +- t * sd / sqrt(n)`` (sample standard deviation, ``n - 1`` degrees of
  freedom). The arena's runs often have few deals (a quick look, a 15-deal field
  run), where the normal quantile 1.96 would cover only 70% (2 deals) to 94%
  (30 deals) of the time for normal data. One value gives no interval: ``(-inf, +inf)``.
- :func:`t_quantile`: the quantile of Student's t behind it, computed here (no
  SciPy in the dependencies).
- :func:`paired`: the interval of a duplicate metric. The games of one deal are
  not independent (the same hands change seats), so each deal is reduced to the
  mean over its replays first and the interval is taken over the deals: the
  per-deal (paired) differences of the issue. Points take the t interval of those
  means. A rate takes the Wilson interval at the deals' effective sample size
  (Korn and Graubard's, t-adjusted; see :func:`paired`), which keeps its 95% near
  0 and 1, where a t interval on the means covers as little as 88% (a rate of 0.95
  over 50 deals); with one deal, or when every deal came out alike, the Wilson
  interval of the deals, each deal counting its mean as its successes.
- :func:`bradley_terry`: ratings on the Elo scale (400 points = odds of 10 to 1)
  fitted by maximum likelihood to every game of every pairing, ties counted as
  half a win each way; a weak prior (one drawn game against an average
  player) keeps an unbeaten agent's rating finite.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "Estimate",
    "wilson",
    "mean_ci",
    "paired",
    "bradley_terry",
    "t_quantile",
    "finite_or_none",
    "json_ready",
    "unbounded_if_none",
    "interval_text",
    "Z95",
]

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""

# Above this many degrees of freedom t_quantile uses the Cornish-Fisher series
# (error below 1e-12 there) instead of summing df / 2 terms per step.
_T_SERIES_DF = 1000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval over ``n`` observations."""

    mean: float
    lo: float
    hi: float
    n: int

    def significant(self, than: float = 0.0) -> bool:
        """Whether the whole interval lies on one side of ``than`` (never with no
        interval, as from one deal)."""
        return self.lo > than or self.hi < than

    def to_dict(self) -> dict[str, float | int | None]:
        """The fields, with an unbounded end (one deal: no interval) as None, so
        that the JSON holds no ``Infinity``, which strict parsers refuse."""
        return {
            k: finite_or_none(v) if isinstance(v, float) else v for k, v in asdict(self).items()
        }


def finite_or_none(value: float | None) -> float | None:
    """``value`` for JSON: None for an unbounded or undefined one (an interval's end
    from one deal), since strict JSON parsers refuse ``Infinity`` and ``NaN``."""
    return None if value is None or not math.isfinite(value) else value


def json_ready(data: Any) -> Any:
    """``data`` with every float that is not finite (an interval's end or half width
    from one deal) made None, in nested dicts and lists alike: :func:`finite_or_none`
    for a whole record that goes to a JSON file."""
    if isinstance(data, float):
        return finite_or_none(data)
    if isinstance(data, dict):
        return {key: json_ready(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [json_ready(value) for value in data]
    return data


def unbounded_if_none(value: float | None, unbounded: float) -> float:
    """An interval's figure read back from JSON, where :func:`json_ready` wrote an
    unbounded one as null: ``unbounded`` (``-math.inf`` for a lower end,
    ``math.inf`` for an upper end or a half width) for None, else ``value``."""
    return unbounded if value is None else value


def interval_text(mean: float, lo: float | None, hi: float | None, width: int = 0) -> str:
    """``"+1.23 [-0.45, +2.91]"``: a signed figure (points per hand) and its 95%
    interval, the mean padded to ``width``; an end written as null (one deal: no
    interval) shows as ``-inf``/``+inf``, as it does before it is written."""
    low, high = unbounded_if_none(lo, -math.inf), unbounded_if_none(hi, math.inf)
    return f"{mean:+{width}.2f} [{low:+.2f}, {high:+.2f}]"


def wilson(k: float, n: int, z: float = Z95) -> Estimate:
    """Wilson score interval of the proportion ``k / n`` (``k`` may count halves)."""
    if n <= 0:
        raise ValueError("wilson: n must be positive")
    if not 0 <= k <= n:
        raise ValueError(f"wilson: k={k} outside 0..{n}")
    lo, hi = _wilson_bounds(k / n, n, z)
    return Estimate(k / n, lo, hi, n)


def _wilson_bounds(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson interval of a proportion ``p`` over ``n`` trials (an effective
    sample size need not be a whole number: :func:`paired`)."""
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # The interval always holds p; at p = 0 or 1 rounding can leave its end a hair
    # inside (30 of 30 gave hi = 0.9999999999999999), which broke the report's
    # error bars, so each end is clamped to p as well as to [0, 1].
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


@functools.lru_cache(maxsize=256)
def t_quantile(df: int, level: float = 0.95) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom:
    ``P(|T| < t) = level`` (12.7062 at df 1, 2.2281 at df 10, 1.96 as df grows).

    Exact for every integer ``df``: bisection on the closed form of the t
    distribution (Abramowitz and Stegun 26.7.3-4, a finite sum in ``cos(theta)``
    with ``t = sqrt(df) tan(theta)``); past ``_T_SERIES_DF`` the Cornish-Fisher
    series of 26.7.5."""
    if not isinstance(df, int) or isinstance(df, bool) or df < 1:
        raise ValueError(f"t_quantile: df must be a positive integer, got {df!r}")
    if not 0 < level < 1:
        raise ValueError(f"t_quantile: level must lie strictly between 0 and 1, got {level!r}")
    if df > _T_SERIES_DF:
        z = statistics.NormalDist().inv_cdf((1 + level) / 2)
        z3, z5, z7, z9 = z**3, z**5, z**7, z**9
        return (
            z
            + (z3 + z) / (4 * df)
            + (5 * z5 + 16 * z3 + 3 * z) / (96 * df**2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df**3)
            + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * df**4)
        )
    lo, hi = 0.0, math.pi / 2
    for _ in range(60):  # 60 halvings of pi/2 reach the spacing of doubles near pi/2
        mid = (lo + hi) / 2
        if _t_central(mid, df) < level:
            lo = mid
        else:
            hi = mid
    return math.sqrt(df) * math.tan((lo + hi) / 2)


def _t_central(theta: float, df: int) -> float:
    """``P(|T| < sqrt(df) tan(theta))`` for Student's t with ``df`` degrees of freedom."""
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:
        # sin(theta) (1 + 1/2 c^2 + (1*3)/(2*4) c^4 + ... up to c^(df-2))
        term = total = 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total
    # 2/pi (theta + sin(theta) (c + 2/3 c^3 + (2*4)/(3*5) c^5 + ... up to c^(df-2)))
    total = 0.0
    if df > 1:
        term = total = math.cos(theta)
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
    return 2 / math.pi * (theta + s * total)


def mean_ci(values: Sequence[float]) -> Estimate:
    """The mean and its 95% Student t interval over ``n - 1`` degrees of freedom;
    one value has no interval: ``(-inf, +inf)``."""
    n = len(values)
    if n == 0:
        raise ValueError("mean_ci: no values")
    mean = sum(values) / n
    if n == 1:
        return Estimate(mean, -math.inf, math.inf, 1)
    half = t_quantile(n - 1) * math.sqrt(sample_variance(values, mean) / n)
    return Estimate(mean, mean - half, mean + half, n)


def sample_variance(values: Sequence[float], mean: float) -> float:
    """The variance of ``values`` (two or more) over ``n - 1``; exactly 0 when they are
    all equal, which the rounding of a mean such as 1/3 would otherwise leave at about
    1e-33 (an interval of width 1e-16 instead of none)."""
    if max(values) == min(values):
        return 0.0
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def paired(per_deal: Sequence[Sequence[float]], rate: bool = False) -> Estimate:
    """A duplicate metric: each inner sequence holds one deal's replays.

    The estimate is the mean over deals of the per-deal means, its interval taken
    over those per-deal means: for points the t interval (:func:`mean_ci`). A
    ``rate`` (means in [0, 1]) takes the Wilson interval at the effective sample
    size ``n_eff = m (1 - m) / (s^2 / n)`` (m the mean, s^2 the means' variance):
    the number of independent 0/1 games that would vary as the deals' means do
    (more than ``n`` when a deal's replays even each other out). It is scaled by
    ``(1.96 / t)^2``, t the quantile over ``n - 1`` degrees of freedom, so that few
    deals widen it as they widen the t interval (Korn and Graubard 1998). Unlike a
    t interval on the means it stays inside [0, 1] and keeps its coverage near 0
    and 1. With one deal, or when every deal's mean is the same, there is no
    spread to measure, and the Wilson interval takes the deals as trials and the
    sum of their means as successes: the deal stays the unit of independence, and
    a mean in [0, 1] varies at most as a 0/1 game does.
    """
    means = [sum(d) / len(d) for d in per_deal if d]
    if not means:
        raise ValueError("paired: no deals")
    est = mean_ci(means)
    if not rate:
        return est
    n = est.n
    variance = 0.0 if n < 2 else sample_variance(means, est.mean)
    if variance == 0.0:
        w = wilson(min(float(n), sum(means)), n)
        return Estimate(est.mean, w.lo, w.hi, n)
    mean = min(1.0, max(0.0, est.mean))
    effective = mean * (1 - mean) * n / variance * (Z95 / t_quantile(n - 1)) ** 2
    lo, hi = _wilson_bounds(mean, effective)
    return Estimate(est.mean, lo, hi, n)


def bradley_terry(
    players: Sequence[str],
    results: Sequence[tuple[int, int, float, int]],
    prior: float = 1.0,
    iterations: int = 10_000,
    tol: float = 1e-10,
) -> dict[str, float]:
    """Elo-scale ratings (mean 1500) from ``(i, j, score_i, games)`` records.

    ``score_i`` is player ``i``'s total against ``j`` over ``games`` games (a win 1,
    a tie 1/2). Fitted by the minorization-maximization iteration of Hunter (2004)
    for the Bradley-Terry model P(i beats j) = g_i / (g_i + g_j), with ``prior``
    drawn games of each player against a fixed average player (``prior=0``: the
    plain maximum-likelihood fit, which is infinite for an unbeaten player).
    """
    k = len(players)
    wins = [prior / 2] * k
    # n[i][j]: games between i and j; index k is the average player (strength 1).
    n = [[0.0] * (k + 1) for _ in range(k)]
    for i, j, score, games in results:
        if i == j:
            raise ValueError("bradley_terry: a player cannot play itself")
        if not 0 <= score <= games:
            raise ValueError(f"bradley_terry: score {score} outside 0..{games}")
        wins[i] += score
        wins[j] += games - score
        n[i][j] += games
        n[j][i] += games
    for i in range(k):
        n[i][k] = prior
    g = [1.0] * (k + 1)
    for _ in range(iterations):
        new = g[:]
        for i in range(k):
            denom = sum(n[i][j] / (g[i] + g[j]) for j in range(k + 1) if n[i][j])
            if denom > 0:
                new[i] = max(wins[i], 1e-300) / denom
        if prior == 0:
            # Without the anchor the scale is free: fix the geometric mean at 1.
            gm = math.exp(sum(math.log(x) for x in new[:k]) / k)
            new = [x / gm for x in new[:k]] + [1.0]
        delta = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, g, strict=True))
        g = new
        if delta < tol:
            break
    logs = [400 * math.log10(x) for x in g[:k]]
    mean = sum(logs) / k
    return {p: 1500 + v - mean for p, v in zip(players, logs, strict=True)}
