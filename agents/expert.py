"""``expert``: the strongest hand-written player, from the strategy of the rule texts.

The source texts (docs/rules.md, "Presets and their sources") and players give the
strategy this player follows; each idea is one term of a move's score:

- *Keep matadors for when they matter* (000: "es ist deshalb gut, sie so lange
  wie möglich zu behalten"; 002: "opłaca się trzymać matadory na specjalną
  okazję"): spending a matador costs a premium (0-0, which costs no pips to
  keep, the most), and where the rules let a seat draw instead
  (``voluntary_draw``) drawing is scored too: it keeps the matador and the ends,
  and pays off by the chance that the tile drawn answers an end (a draw that
  cannot help only adds pips, so the player does not draw into a block).
- *Count complements*: at an end showing v the answers are the tiles holding
  S - v. Every end the move leaves is scored by the chance that each other seat
  holds no answer there (from the unseen tiles and the voids inferred from its
  passes and draws, see :mod:`agents.knowledge`), and by the answers kept in
  hand for the next turn.
- *Turn a matador's outward number towards a value the opponents cannot answer*
  (000: "indem man den Matador mit einer Zahl spielt, die der Gegner nicht hat"):
  the outward half is one of the candidate moves, scored like any end.
- *Expose a blank when few matadors are unseen* (000: the blanks "ein Ende der
  Auslage zu sperren"; 002: "mydła pozwalają zablokować grę"): an end showing 0
  has no regular answer, so it blocks a seat exactly as often as that seat
  holds no matador.
- *Keep variety in hand* (002: "staraj się mieć w ręku zróżnicowane kamienie";
  000: two strong suits that sum to S): the number of end values the hand can
  still answer.
- *Shed weight when a block is near* or an opponent is close to going out: the
  pips of the tile played count for more as the danger grows.
- *Teams: help the partner*: the partner's chance to answer the ends counts
  for the team, the more so when the partner is close to going out.

Each term is a feature of :meth:`ExpertAgent.features`; the score is their
weighted sum. The weights depend on the configuration played: where
``agents/expert_weights.json`` holds a set fitted for it (``python -m
train.expert_fit``, see :func:`fitted_weights`), that set, else the base set
:class:`ExpertWeights`. The configuration is matched on the rules of the hand: the
match's own fields (:data:`MATCH_FIELDS`: the target, how a match ends, who leads
later hands) change no decision and are not compared, so a match to 150 under
polish rules plays polish's set; rules of no configuration in the hand's fields
play the base set. ``expert:weights=base`` plays the base set under every rules;
every weight is settable from the spec on top (e.g. ``expert:partner=8``).
The player works from the seat's view only (its estimates of the other hands
come from :class:`agents.knowledge.Knowledge`); it looks no further than the
ends its move leaves and takes well under a millisecond per move.
"""

from __future__ import annotations

import functools
import json
import math
import numbers
import random
from collections.abc import Mapping
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path
from typing import Any

from matador_env.configs import CONFIGURATIONS, Configuration
from matador_env.engine import Move, Rules, SeatView
from matador_env.engine.tiles import shown_value

from .base import Agent, AgentSpecError, checked_turn, register, spec_number
from .knowledge import Knowledge, bits, regular_fit

__all__ = [
    "FEATURES",
    "FITTED_WEIGHTS_PATH",
    "ExpertAgent",
    "ExpertWeights",
    "ExpertWeightsError",
    "MATCH_FIELDS",
    "configuration_played",
    "fitted_weights",
]


@dataclass(frozen=True)
class ExpertWeights:
    """One weight per feature of a move (see :meth:`ExpertAgent.features`); the
    defaults are the base set, played where no set is fitted (:func:`fitted_weights`).

    The features are the strategy of the module docstring. The weights were first
    set by hand, then fitted by least squares to the move values that a large
    determinized search (``search:samples=300``, which sees no more than the seat)
    gave in 3,400 positions of standard-preset expert play, and kept where the
    arena confirmed them (the fit beat the hand-set weights by +4 points per hand on
    duplicate deals). ``partner`` and ``draw_instead``, which standard play never
    exercises, were set in the arena on the pagat-teams and leiden presets.
    """

    pips_left: float = -0.893
    """Pips left in hand after the move (a draw adds the mean unseen tile)."""
    pips_left_urgent: float = 0.0335
    """The same, times the urgency: 1 / (fewest tiles of an opponent) + a near block."""
    tiles_left: float = -2.09
    """Tiles left in hand after the move."""
    matador: float = -3.25
    """Spending a matador (not for a domino)."""
    matador_late: float = -1.25
    """Spending a matador, times 1 / (tiles in hand): late in the hand it matters less."""
    double_zero: float = -2.6
    """Spending 0-0, the most valuable tile (000): it costs no pips to keep."""
    block: float = 1.1
    """The chance that the next seat of the other side has no answer at all at the
    ends left (it must draw or pass); later seats of the other side count a third."""
    force: float = 11.2
    """The chance that it has no regular answer (it must spend a matador or draw)."""
    partner: float = 6.0
    """Teams: the chance that the partner can answer, more when it is near going out."""
    follow: float = 0.606
    """Regular answers kept in hand for the ends left (counted up to three)."""
    stuck: float = 0.48
    """No answer left in hand for the ends left, and no matador."""
    variety: float = 1.65
    """End values the hand can still answer."""
    doubles_left: float = -1.08
    """Doubles left in hand: each answers one value only."""
    blanks_left: float = 3.92
    """Blank tiles (0-x) left in hand: each fits only ends showing S - x."""
    matadors_left: float = 3.25
    """Matadors left in hand."""
    zero_ends: float = 1.65
    """Ends left that take no regular tile but a blank one or a matador (0 or needs-a-blank)."""
    draw: float = -1.05
    """Drawing by choice."""
    draw_fits: float = 25.8
    """Drawing, times the chance that the tile drawn answers an end."""
    draw_again: float = 0.0465
    """Drawing, times the draws already made this turn."""
    draw_instead: float = -10.0
    """Drawing although a non-matador tile could be placed (``voluntary_draw="always"``)."""

    def __post_init__(self) -> None:
        # A weight is multiplied into every move's score: a str or None would fail
        # mid-game, and a nan or an inf would leave no move scored above another.
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(
                    f"ExpertWeights: {f.name}={shown_value(value)} is not allowed; allowed: "
                    "a finite number (an int or a float, not a bool)"
                )
            if not math.isfinite(value):
                raise ValueError(
                    f"ExpertWeights: {f.name}={shown_value(value)} is not allowed; allowed: "
                    "a finite number"
                )
            object.__setattr__(self, f.name, float(value))


FEATURES: tuple[str, ...] = tuple(f.name for f in fields(ExpertWeights))

FITTED_WEIGHTS_PATH = Path(__file__).with_name("expert_weights.json")
"""The weights fitted per configuration, written by ``python -m train.expert_fit``."""


class ExpertWeightsError(ValueError):
    """The fitted-weights file is malformed (names the file and what is wrong)."""


WEIGHTS_FORMAT = 1
"""The ``format`` of the fitted-weights file that :func:`read_weights_file` reads."""


def read_weights_file(path: Path) -> dict[str, dict[str, Any]]:
    """Every configuration's entry of the fitted-weights file ``path`` (kept or not),
    checked whole: ``format`` :data:`WEIGHTS_FORMAT`, each name a configuration's,
    ``kept`` true or false and ``weights`` a finite number for each of
    :data:`FEATURES`. Anything else raises :class:`ExpertWeightsError` naming the
    file and what is wrong, so that a damaged or hand-edited file is never played in
    part (a ``"kept": "false"`` was played, a weight ``"2.5"`` or ``true`` read as a
    number, a set of one weight filled in from the base set). The one check of the
    file, for the expert and for ``python -m train.expert_fit``, which keeps the
    entries it does not refit."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ExpertWeightsError(f"{path} cannot be read ({e.strerror})") from None
    except ValueError as e:
        raise ExpertWeightsError(f"{path}: not JSON ({e}); {_REBUILD}") from None

    def wrong(what: str) -> ExpertWeightsError:
        return ExpertWeightsError(f"{path}: {what}; {_REBUILD}")

    if not isinstance(data, dict) or not isinstance(data.get("configurations"), dict):
        raise wrong('not a fitted-weights file (no "configurations" object)')
    if data.get("format") != WEIGHTS_FORMAT:
        raise wrong(
            f"format {shown_value(data.get('format'))}; this code reads format {WEIGHTS_FORMAT}"
        )
    entries: dict[str, dict[str, Any]] = data["configurations"]
    for name, entry in entries.items():
        if name not in CONFIGURATIONS:
            raise wrong(
                f"{shown_value(name)} is no configuration; known: {', '.join(CONFIGURATIONS)}"
            )
        if not isinstance(entry, dict) or not isinstance(entry.get("kept"), bool):
            raise wrong(f'{name}: no "kept" true or false')
        weights = entry.get("weights")
        if not isinstance(weights, dict):
            raise wrong(f'{name}: no "weights" object')
        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise wrong(f"{name}: unknown weights {unknown}; known: {', '.join(FEATURES)}")
        missing = [f for f in FEATURES if f not in weights]
        if missing:
            raise wrong(f"{name}: no value for the weights {missing}")
        for feature, value in weights.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise wrong(f"{name}: {feature}={shown_value(value)} is no number")
            if not math.isfinite(value):
                raise wrong(f"{name}: {feature}={shown_value(value)} is not finite")
    return entries


_REBUILD = "rebuild it with python -m train.expert_fit"


@functools.cache
def fitted_weights(path: Path = FITTED_WEIGHTS_PATH) -> dict[str, ExpertWeights]:
    """Configuration name -> the weights fitted for it and kept (confirmed in the arena).

    A missing file means no fitted set: every configuration plays the base set.
    A malformed one raises :class:`ExpertWeightsError` (:func:`read_weights_file`):
    it is never half read.
    """
    if not path.exists():
        return {}
    return {
        name: ExpertWeights(**{k: float(v) for k, v in entry["weights"].items()})
        for name, entry in read_weights_file(path).items()
        if entry["kept"]
    }


MATCH_FIELDS: tuple[str, ...] = ("target_score", "match_end", "next_leader")
"""The rules fields of the match around a hand, never of a hand in play (docs/rules.md,
"Partnerships and matches" and ``next_leader``: who leads the *later* hands). The
expert reads none of them (nor the match scores): its decisions depend on the hand
alone, so they do not decide which fitted set it plays. ``tie`` and ``first_leader``
are of the hand (how a blocked hand scores, who leads it) and do."""


@functools.cache
def configuration_played(rules: Rules) -> Configuration | None:
    """The configuration whose rules equal ``rules`` in every field of the hand
    (:data:`MATCH_FIELDS` aside): ``Rules.preset("polish", target_score=150)`` plays
    polish's hands, and its fitted weights. None for the rules of no configuration."""
    hand = _hand_fields(rules)
    for config in CONFIGURATIONS.values():
        if _hand_fields(config.rules()) == hand:
            return config
    return None


def _hand_fields(rules: Rules) -> tuple[Any, ...]:
    return tuple(getattr(rules, f.name) for f in fields(rules) if f.name not in MATCH_FIELDS)


class ExpertAgent(Agent):
    """The strongest hand-written player: a one-ply score of every legal move."""

    name = "expert"

    def __init__(
        self,
        weights: ExpertWeights | None = None,
        overrides: Mapping[str, float] | None = None,
    ) -> None:
        """``weights``: one set for every rules; None: the set fitted for the view's
        configuration (:func:`fitted_weights`), else the base set. ``overrides``
        replaces single weights of whichever set applies: names of :data:`FEATURES`,
        finite numbers. Anything else is refused here (``TypeError`` or
        ``ValueError`` naming it), not at the first move."""
        if weights is not None and not isinstance(weights, ExpertWeights):
            raise TypeError(
                f"ExpertAgent: weights={shown_value(weights)} is not allowed; allowed: an "
                "ExpertWeights, or None for the set fitted for the configuration played"
            )
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, Mapping):
            raise TypeError(
                f"ExpertAgent: overrides={shown_value(overrides)} is not allowed; allowed: a "
                "mapping of weight names to numbers, or None"
            )
        unknown = [key for key in overrides if key not in FEATURES]
        if unknown:
            raise ValueError(
                f"ExpertAgent: overrides name no weight: {shown_value(unknown)}; "
                f"weights: {', '.join(FEATURES)}"
            )
        # ExpertWeights checks each value (a finite number) and holds it as a float.
        checked = replace(ExpertWeights(), **overrides)
        self.fixed = weights
        self.overrides = {key: getattr(checked, key) for key in overrides}
        self._vectors: dict[Rules, tuple[float, ...]] = {}

    def weights_for(self, rules: Rules) -> ExpertWeights:
        """The weights this player uses under ``rules``: the set fitted for the
        configuration those rules play (:func:`configuration_played`), if any."""
        weights = self.fixed
        if weights is None:
            config = configuration_played(rules)
            weights = fitted_weights().get(config.name) if config else None
        return replace(weights or ExpertWeights(), **self.overrides)

    def _vector(self, rules: Rules) -> tuple[float, ...]:
        vector = self._vectors.get(rules)
        if vector is None:
            vector = self._vectors[rules] = astuple(self.weights_for(rules))
        return vector

    def act(self, view: SeatView, rng: random.Random) -> Move:
        moves = checked_turn(view, rng, self.name)
        if len(moves) == 1:
            return moves[0]
        scores = self.scores(view)
        best = max(scores)
        top = [m for m, s in zip(moves, scores, strict=True) if s >= best - 1e-9]
        return top[rng.randrange(len(top))] if len(top) > 1 else top[0]

    def scores(self, view: SeatView, knowledge: Knowledge | None = None) -> list[float]:
        """The score of each of ``view.legal_moves`` (higher is better; a domino is best)."""
        w = self._vector(view.rules)
        out = []
        for f in self.features(view, knowledge):
            if f is None:
                out.append(1e6)  # domino: the hand is won
            else:
                out.append(sum(a * b for a, b in zip(w, f, strict=True)))
        return out

    def features(
        self, view: SeatView, knowledge: Knowledge | None = None
    ) -> list[tuple[float, ...] | None]:
        """The :data:`FEATURES` of each legal move (None for a move that goes out)."""
        kn = knowledge or Knowledge(view)
        ctx = _Context(kn)
        world = (
            kn.any_world() if view.ends or any(m.kind == "play" for m in view.legal_moves) else None
        )
        out: list[tuple[float, ...] | None] = []
        for m in view.legal_moves:
            if m.kind == "play":
                assert world is not None
                out.append(ctx.play(m, world.apply(m).ends))
            elif m.kind == "draw":
                out.append(ctx.draw())
            else:
                out.append((0.0,) * len(FEATURES))
        return out


class _Context:
    """Everything a decision's features share, computed once."""

    def __init__(self, kn: Knowledge) -> None:
        self.kn = kn
        tb = self.tb = kn.tb
        view = kn.view
        rules = tb.rules
        self.me = me = kn.me
        n = tb.n
        self.side = rules.side_of(me)
        self.p = kn.marginals()
        self.hand = kn.hand
        self.hand_size = view.hand_sizes[me]
        unseen = kn.unseen
        self.unseen_reg = unseen & tb.regular
        self.unseen_mat = unseen & tb.matador
        self.order = [(me + d) % n for d in range(1, n)]
        self.partners = [s for s in self.order if rules.side_of(s) == self.side]
        self.no_matador = {s: self._none_of(s, self.unseen_mat) for s in self.order}
        opponents = [s for s in self.order if rules.side_of(s) != self.side]
        fewest = min(view.hand_sizes[s] for s in opponents) if opponents else 7
        drawable = view.drawable
        block_near = 1.0 if drawable == 0 else 1.0 / (1.0 + drawable)
        self.urgency = 1.0 / max(fewest, 1) + 0.5 * block_near
        self.mean_unseen_pips = (
            tb.pips_of(unseen) / unseen.bit_count() if unseen else float(tb.S - 1)
        )
        self.hand_pips = tb.pips_of(self.hand)
        self.unseen = unseen
        self.regular_play = any(
            m.kind == "play" and not (tb.matador >> m.tile.index) & 1  # type: ignore[union-attr]
            for m in view.legal_moves
        )

    def _none_of(self, seat: int, mask: int) -> float:
        q = 1.0
        row = self.p[seat]
        for t in bits(mask):
            q *= 1.0 - row[t]
        return q

    def _ends_terms(self, ends: tuple, hand: int) -> tuple[float, float, float, float, float, int]:
        """block, force, partner, follow, stuck, zero ends: how good ``ends`` are for me."""
        tb = self.tb
        fit = regular_fit(tb, ends)
        block = force = partner = 0.0
        first = True
        for s in self.order:
            if s in self.partners:
                no_reg = self._none_of(s, fit & self.unseen_reg)
                can = 1.0 - no_reg * self.no_matador[s]
                partner += can * (1.0 + 2.0 / max(self.kn.sizes[s], 1))
                continue
            weight = 1.0 if first else 1.0 / 3.0
            first = False
            no_reg = self._none_of(s, fit & self.unseen_reg)
            block += weight * no_reg * self.no_matador[s]
            force += weight * no_reg
        mine = (fit & hand).bit_count()
        stuck = 1.0 if mine == 0 and not (hand & tb.matador) else 0.0
        zero = sum(1 for e in ends if e.value == 0 or e.value is None)
        return block, force, partner, float(min(mine, 3)), stuck, zero

    def _hand_terms(self, hand: int) -> tuple[float, float, float, float]:
        tb = self.tb
        variety = sum(1 for v in range(1, tb.S) if hand & tb.accepts[v])
        doubles = (hand & tb.double & tb.regular).bit_count()
        blanks = (hand & tb.blank).bit_count()
        mats = (hand & tb.matador).bit_count()
        return float(variety), float(doubles), float(blanks), float(mats)

    def play(self, move: Move, ends: tuple) -> tuple[float, ...] | None:
        tb = self.tb
        tile = move.tile
        assert tile is not None
        idx = tile.index
        hand = self.hand & ~(1 << idx)
        if not hand:
            return None
        pips_left = float(self.hand_pips - tile.pips)
        is_mat = float((tb.matador >> idx) & 1)
        block, force, partner, follow, stuck, zero = self._ends_terms(ends, hand)
        variety, doubles, blanks, mats = self._hand_terms(hand)
        return (
            pips_left,
            pips_left * self.urgency,
            float(self.hand_size - 1),
            is_mat,
            is_mat / self.hand_size,
            1.0 if idx == 0 else 0.0,
            block,
            force,
            partner,
            follow,
            stuck,
            variety,
            doubles,
            blanks,
            mats,
            float(zero),
            0.0,
            0.0,
            0.0,
            0.0,
        )

    def draw(self) -> tuple[float, ...]:
        """Drawing by choice: the ends stay, and a tile more comes into the hand."""
        tb = self.tb
        view = self.kn.view
        ends = view.ends
        hand = self.hand
        pips_left = self.hand_pips + self.mean_unseen_pips
        if ends:
            block, force, partner, follow, stuck, zero = self._ends_terms(ends, hand)
            fits = (regular_fit(tb, ends) & self.unseen).bit_count() / max(
                self.unseen.bit_count(), 1
            )
        else:
            block = force = partner = follow = stuck = 0.0
            zero = 0
            fits = (tb.leadable & self.unseen).bit_count() / max(self.unseen.bit_count(), 1)
        variety, doubles, blanks, mats = self._hand_terms(hand)
        return (
            pips_left,
            pips_left * self.urgency,
            float(self.hand_size + 1),
            0.0,
            0.0,
            0.0,
            block,
            force,
            partner,
            follow,
            stuck,
            variety,
            doubles,
            blanks,
            mats,
            float(zero),
            1.0,
            fits,
            float(view.draws_this_turn),
            1.0 if self.regular_play else 0.0,
        )


def _build(options: dict[str, str]) -> Agent:
    weights = options.pop("weights", "fitted")
    if weights not in ("fitted", "base"):
        raise AgentSpecError(
            f"expert option weights={weights!r}: expected fitted (the set fitted for the "
            "configuration played, the default) or base (the base set under every rules)"
        )
    values = {}
    for key, raw in options.items():
        if key not in FEATURES:
            raise AgentSpecError(
                f"expert has no option {key!r}; options: weights, {', '.join(FEATURES)}"
            )
        values[key] = spec_number("expert", key, raw)
    agent = ExpertAgent(ExpertWeights() if weights == "base" else None, values)
    # The canonical spec: the base set is known whole; a fitted set depends on the
    # rules played, so only the weights set on top of it are named.
    chosen = (
        astuple(replace(ExpertWeights(), **values))
        if weights == "base"
        else tuple(values.get(f) for f in FEATURES)
    )
    agent.spec = f"expert:weights={weights}" + "".join(
        f",{f}={v + 0.0!r}" for f, v in zip(FEATURES, chosen, strict=True) if v is not None
    )
    return agent


register("expert", _build, "expert[:weights=fitted|base,<weight>=<number>]")
