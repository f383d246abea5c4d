"""Text renderings: the layout, a whole table, and a hand record that replays.

The layout is drawn as one line per open end: the chain of tiles from the lead
out to that end, each tile written ``[touching|outward]``. Special lies:
``[2/5]`` crosswise, ``<3/4>`` a crosswise branching matador, ``[2^5]`` upright,
``[3+3]`` the spinner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .rules import Rules
from .state import Event, HandState
from .tiles import Move, MoveParseError, Tile

__all__ = [
    "HandRecord",
    "render_layout",
    "render_table",
    "hand_record",
    "hand_records",
    "parse_hand_record",
    "replay",
]

RECORD_HEADER = "# Matador hand record v1"


def _arms(rules: Rules, history: Sequence[Event]) -> list[list[str]]:
    """For each open end, the tiles from the lead out to it."""
    arms: list[list[str]] = []
    spinner_done = False
    for event in history:
        move = event.move
        if move.kind != "play":
            continue
        tile = move.tile
        assert tile is not None
        lo, hi = tile
        if move.mode == "lead":
            if rules.spinner != "none" and lo == hi:
                arms = [[f"[{lo}+{hi}]"] for _ in range(4)]
                spinner_done = True
            else:
                arms = [[f"[{hi}|{lo}]"], [f"[{lo}|{hi}]"]]
            continue
        i = move.end
        assert i is not None
        base = arms[i]
        if move.mode == "inline":
            if lo == hi and rules.spinner == "first_double" and not spinner_done:
                spinner_done = True
                new = [[*base, f"[{lo}+{hi}]"] for _ in range(3)]
            else:
                shows = move.shows
                assert shows is not None
                new = [[*base, f"[{lo + hi - shows}|{shows}]"]]
        elif move.mode == "upright":
            new = [[*base, f"[{lo}^{hi}]"]]
        elif rules.matador_placement == "branching":
            new = [[*base, f"<{lo}/{hi}>"], [*base, f"<{lo}/{hi}>"]]
        else:
            new = [[*base, f"[{lo}/{hi}]"]]
        arms[i : i + 1] = new
    return arms


def render_layout(state: HandState) -> str:
    """The layout: one line per open end, from the lead outward."""
    ends = state.ends
    if not ends:
        return "layout: empty (no lead yet)"
    arms = _arms(state.rules, state.history)
    lines = [f"layout: {len(state.layout)} tiles, {len(ends)} open ends"]
    for i, (end, arm) in enumerate(zip(ends, arms, strict=True)):
        lines.append(f"  end {i} shows {str(end):>4} : {''.join(arm)}")
    return "\n".join(lines)


def render_table(
    state: HandState,
    reveal: bool = True,
    names: Sequence[str] | None = None,
    layout: Callable[[HandState], str] | None = None,
) -> str:
    """The layout (drawn by ``layout``, default :func:`render_layout`), every seat's
    hand (or its size), the boneyard size and the result once there is one."""
    lines = [(layout or render_layout)(state)]
    for seat, hand in enumerate(state.hands):
        name = names[seat] if names else f"P{seat}"
        arrow = "->" if seat == state.to_move and not state.is_over else "  "
        shown = " ".join(str(t) for t in hand) if reveal else f"{len(hand)} tiles"
        lines.append(f"{arrow} {name}: {shown}")
    lines.append(f"   boneyard: {state.boneyard_size}")
    if state.outcome is not None:
        lines.append(f"   result: {state.outcome}")
    return "\n".join(lines)


@dataclass(frozen=True)
class HandRecord:
    """A hand as data: the rules, the deal (hands and boneyard order) and the moves."""

    rules: Rules
    seed: int
    leader: int
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    moves: tuple[Move, ...]

    def start(self) -> HandState:
        return HandState.from_deal(self.rules, self.hands, self.boneyard, self.leader, self.seed)

    def replay(self) -> HandState:
        """The hand after every recorded move."""
        s = self.start()
        for move in self.moves:
            s = s.apply(move)
        return s


def hand_record(state: HandState) -> str:
    """A full record of the hand: rules, the deal, and every move.

    :func:`parse_hand_record` reads it back; lines starting with ``#`` are for people.
    """
    first = state.dealt()
    lines = [
        RECORD_HEADER,
        f"rules: {state.rules.to_text()}",
        f"seed: {state.seed}",
        f"leader: {state.dealt_leader}",
    ]
    for seat, hand in enumerate(first.hands):
        lines.append(f"hand {seat}: {' '.join(str(t) for t in hand)}")
    lines.append(f"boneyard: {' '.join(str(t) for t in first.boneyard)}")
    lines.append(f"moves: {' '.join(str(m) for m in state.moves)}")
    s = first
    for k, move in enumerate(state.moves, 1):
        seat = s.to_move
        note = f" ({s.boneyard[0]})" if move.kind == "draw" else ""
        s = s.apply(move)
        lines.append(f"# {k:3d}. P{seat} {move}{note}   ends: {' '.join(map(str, s.ends))}")
    if state.outcome is not None:
        lines.append(f"# result: {state.outcome}")
    return "\n".join(lines) + "\n"


def hand_records(finished: Sequence[HandState], current: HandState) -> list[str]:
    """The record of each hand of ``finished``, then of ``current`` as far as it went
    if it is under way with a move made (a game's hands so far)."""
    hands = list(finished)
    if current.outcome is None and current.moves:
        hands.append(current)
    return [hand_record(h) for h in hands]


def parse_hand_record(text: str) -> HandRecord:
    """Read a :class:`HandRecord` back from :func:`hand_record`'s text.

    Raises :class:`MoveParseError` (a ``ValueError``) for text that is not a hand
    record (or not text at all) and :class:`RulesError` for rules that do not parse.
    """
    if not isinstance(text, str):
        raise MoveParseError(f"hand record: expected text, got a {type(text).__name__}")
    fields: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise MoveParseError(f"hand record: cannot read line {line!r} (expected 'key: value')")
        fields[key.strip()] = value.strip()
    missing = [k for k in ("rules", "seed", "leader", "boneyard", "moves") if k not in fields]
    if missing:
        raise MoveParseError(f"hand record: missing {', '.join(missing)}")
    rules = Rules.from_text(fields["rules"])
    try:
        seed, leader = int(fields["seed"]), int(fields["leader"])
    except ValueError:
        raise MoveParseError("hand record: seed and leader must be integers") from None
    if not 0 <= leader < rules.players:
        raise MoveParseError(
            f"hand record: leader {leader} is not a seat (0 to {rules.players - 1})"
        )
    hands = []
    for seat in range(rules.players):
        key = f"hand {seat}"
        if key not in fields:
            raise MoveParseError(f"hand record: missing {key}")
        hands.append(tuple(Tile.parse(x) for x in fields[key].split()))
    boneyard = tuple(Tile.parse(x) for x in fields["boneyard"].split())
    moves = tuple(Move.parse(m) for m in fields["moves"].split())
    return HandRecord(rules, seed, leader, tuple(hands), boneyard, moves)


def replay(rules: Rules, seed: int, leader: int | None, moves: Sequence[Move | str]) -> HandState:
    """Deal from ``(rules, seed, leader)`` and apply ``moves`` in order."""
    s = HandState.deal(rules, seed, leader=leader)
    for m in moves:
        s = s.apply(m)
    return s
