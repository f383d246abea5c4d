"""Statistics of the arena: confidence intervals and a league rating.

- :func:`wilson`: the Wilson score interval of a proportion ``k / n``.
- :func:`mean_ci`: a mean with its normal-approximation interval,
  ``mean +- z * sd / sqrt(n)`` (sample standard deviation, ``n - 1``).
- :func:`paired`: the interval of a duplicate metric. The games of one deal are
  not independent (the same hands change seats), so each deal is reduced to the
  mean over its replays first and the interval is taken over the deals: the
  per-deal (paired) differences of the issue. A rate whose per-deal values
  show no spread (every deal alike) falls back to the Wilson interval of the
  games.
- :func:`bradley_terry`: ratings on the Elo scale (400 points = odds of 10 to 1)
  fitted by maximum likelihood to every game of every pairing, ties counted as
  half a win each way; a weak prior (one drawn game against an average
  player) keeps an unbeaten agent's rating finite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

__all__ = ["Estimate", "wilson", "mean_ci", "paired", "bradley_terry", "Z95"]

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval over ``n`` observations."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    def significant(self, than: float = 0.0) -> bool:
        """Whether the whole interval lies on one side of ``than``."""
        return self.lo > than or self.hi < than

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def wilson(k: float, n: int, z: float = Z95) -> Estimate:
    """Wilson score interval of the proportion ``k / n`` (``k`` may count halves)."""
    if n <= 0:
        raise ValueError("wilson: n must be positive")
    if not 0 <= k <= n:
        raise ValueError(f"wilson: k={k} outside 0..{n}")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # The interval always holds p; at p = 0 or 1 rounding can leave its end a hair
    # inside (30 of 30 gave hi = 0.9999999999999999), which broke the report's
    # error bars, so each end is clamped to p as well as to [0, 1].
    return Estimate(p, max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)), n)


def mean_ci(values: Sequence[float], z: float = Z95) -> Estimate:
    """The mean and its normal-approximation interval (zero width for one value)."""
    n = len(values)
    if n == 0:
        raise ValueError("mean_ci: no values")
    mean = sum(values) / n
    if n == 1:
        return Estimate(mean, mean, mean, 1)
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return Estimate(mean, mean - half, mean + half, n)


def paired(per_deal: Sequence[Sequence[float]], rate: bool = False, z: float = Z95) -> Estimate:
    """A duplicate metric: each inner sequence holds one deal's replays.

    The estimate is the mean over deals of the per-deal means, its interval taken
    over those per-deal means. ``rate`` clamps to [0, 1] and, when the per-deal
    means do not vary, uses the Wilson interval of all games instead.
    """
    means = [sum(d) / len(d) for d in per_deal if d]
    if not means:
        raise ValueError("paired: no deals")
    est = mean_ci(means, z)
    if not rate:
        return est
    games = [g for d in per_deal for g in d]
    if est.hi - est.lo <= 0:
        w = wilson(sum(games), len(games), z)
        return Estimate(est.mean, w.lo, w.hi, est.n)
    return Estimate(est.mean, max(0.0, est.lo), min(1.0, est.hi), est.n)


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
