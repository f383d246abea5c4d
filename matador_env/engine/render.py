"""Text renderings: the layout, a whole table, and a hand record that replays.

The layout is drawn as one line per open end: the chain of tiles from the lead
out to that end, each tile written ``[touching|outward]``. Special lies:
``[2/5]`` crosswise, ``<3/4>`` a crosswise branching matador, ``[2^5]`` upright,
``[3+3]`` the spinner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .rules import Rules, a_type
from .state import SEED_LIMIT, Event, HandState, IllegalMoveError
from .tiles import Move, MoveParseError, Tile, is_text, parse_digits, shown_value

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
RESULT_PREFIX = "# result:"
"""How a finished hand's record opens its last line, the result in words (a comment:
:func:`parse_hand_record` skips it; ``python -m matador_env.replay`` checks it)."""


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
    hand (or its size), the boneyard size and the result once there is one.

    ``names``: None (``P0``, ``P1``...) or one ``str`` per seat, in seat order
    (``ValueError`` for anything else: a single string would name seats by its letters).
    """
    players = state.rules.players
    if names is not None and (
        isinstance(names, str)
        or not isinstance(names, Sequence)
        or len(names) != players
        or not all(isinstance(name, str) for name in names)
    ):
        raise ValueError(
            f"names must be None or a sequence of {players} str, one per seat, "
            f"got {shown_value(names)}"
        )
    lines = [(layout or render_layout)(state)]
    for seat, hand in enumerate(state.hands):
        name = names[seat] if names is not None else f"P{seat}"
        arrow = "->" if seat == state.to_move and not state.is_over else "  "
        shown = " ".join(str(t) for t in hand) if reveal else f"{len(hand)} tiles"
        lines.append(f"{arrow} {name}: {shown}")
    lines.append(f"   boneyard: {state.boneyard_size}")
    if state.outcome is not None:
        lines.append(f"   result: {state.outcome}")
    return "\n".join(lines)


@dataclass(frozen=True)
class HandRecord:
    """A hand as data: the rules, the deal (hands and boneyard order) and the moves.

    The constructor checks the deal as :meth:`HandState.from_deal` does (and takes
    what it takes: tiles as :class:`Tile` s or their text, a seed and a leader as
    integers) and holds it as tuples of :class:`Tile` s; each move is a :class:`Move`
    or its text (``"2-5@0"``). Whether the moves are legal is :meth:`replay`'s to say.
    Raises the errors of ``from_deal``, and :class:`MoveParseError` for a move that
    does not read.
    """

    rules: Rules
    seed: int
    leader: int
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    moves: tuple[Move, ...]

    def __post_init__(self) -> None:
        start = HandState.from_deal(self.rules, self.hands, self.boneyard, self.leader, self.seed)
        # The checked deal, as the state holds it: a record of text tiles or lists
        # compares equal to (and hashes as) the same record read from its text.
        object.__setattr__(self, "seed", start.seed)
        object.__setattr__(self, "leader", start.dealt_leader)
        object.__setattr__(self, "hands", tuple(tuple(hand) for hand in start.hands))
        object.__setattr__(self, "boneyard", tuple(start.boneyard))
        object.__setattr__(self, "moves", _record_moves(self.moves))

    def start(self) -> HandState:
        return HandState.from_deal(self.rules, self.hands, self.boneyard, self.leader, self.seed)

    def replay(self) -> HandState:
        """The hand after every recorded move; errors as :func:`replay`'s."""
        return _apply_moves(self.start(), self.moves)


def _record_moves(moves: object) -> tuple[Move, ...]:
    """A record's moves as :class:`Move` s: a list or tuple of moves or their text."""
    if not isinstance(moves, (list, tuple)):
        raise MoveParseError(
            f"a hand record's moves are a list or tuple of moves, got {a_type(moves)}"
        )
    out = []
    for k, move in enumerate(moves):
        if isinstance(move, str):
            try:
                move = Move.parse(move)
            except MoveParseError as e:
                raise MoveParseError(f"moves[{k}]: {e}") from None
        elif type(move) is not Move:
            raise MoveParseError(f"moves[{k}]: expected a Move or its text, got {a_type(move)}")
        out.append(move)
    return tuple(out)


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
        lines.append(f"{RESULT_PREFIX} {state.outcome}")
    return "\n".join(lines) + "\n"


def hand_records(finished: Sequence[HandState], current: HandState) -> list[str]:
    """The record of each hand of ``finished``, then of ``current`` as far as it went
    if it is under way with a move made (a game's hands so far)."""
    hands = list(finished)
    if current.outcome is None and current.moves:
        hands.append(current)
    return [hand_record(h) for h in hands]


_RECORD_KEYS = ("rules", "seed", "leader", "boneyard", "moves")
T = TypeVar("T")


def parse_hand_record(text: str) -> HandRecord:
    """Read a :class:`HandRecord` back from :func:`hand_record`'s text.

    Each line is ``key: value`` (blank lines and lines starting with ``#`` are
    skipped); the keys are ``rules``, ``seed``, ``leader``, ``boneyard``, ``moves``
    and ``hand 0`` ... ``hand N-1`` for the rules' N players, each exactly once. The
    seed (0 to 2**64 - 1) and the leader (a seat) are written in the digits 0-9 alone:
    no sign, spaces, underscores or other scripts' digits.

    Raises :class:`MoveParseError` (a ``ValueError``) for text that is not a hand
    record (or not text at all), naming the line at fault for a duplicate, unknown or
    out-of-range key or a seed or leader that does not read; :class:`RulesError` for
    rules that do not parse.
    """
    if not isinstance(text, str):
        raise MoveParseError(f"hand record: expected text, got a {type(text).__name__}")
    fields: dict[str, str] = {}
    line_of: dict[str, str] = {}  # where each key was read, for messages
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise MoveParseError(f"hand record: cannot read line {line!r} (expected 'key: value')")
        key = key.strip()
        where = f"line {number} {shown_value(line)}"
        if key in fields:
            # Two values for one key: neither may silently win.
            raise MoveParseError(f"hand record: {where} repeats {key!r} (from {line_of[key]})")
        if key not in _RECORD_KEYS and not key.startswith("hand "):
            raise MoveParseError(
                f"hand record: {where} has an unknown key {shown_value(key)}; the keys are "
                f"{', '.join(_RECORD_KEYS)} and 'hand 0' ... one per seat"
            )
        fields[key] = value.strip()
        line_of[key] = where
    missing = [k for k in _RECORD_KEYS if k not in fields]
    if missing:
        raise MoveParseError(f"hand record: missing {', '.join(missing)}")
    rules = Rules.from_text(fields["rules"])
    hand_keys = [f"hand {seat}" for seat in range(rules.players)]
    for key in fields:
        if key.startswith("hand ") and key not in hand_keys:
            raise MoveParseError(
                f"hand record: {line_of[key]} is no seat's hand: a {rules.players}-player "
                f"record has {hand_keys[0]!r} to {hand_keys[-1]!r}"
            )
    for key in ("seed", "leader"):
        # isascii first: str.isdigit alone takes other scripts' digits ("٧"), which int reads.
        if not (fields[key].isascii() and fields[key].isdigit()):
            raise MoveParseError(
                "hand record: seed and leader must be integers in the digits 0-9 (no sign, "
                f"spaces or underscores); {line_of[key]} is not one"
            )
    # parse_digits answers None only past the 4,300 digits int reads: out of range too.
    seed = parse_digits(fields["seed"])
    if seed is None or seed >= SEED_LIMIT:
        raise MoveParseError(
            f"hand record: the seed must be from 0 to {SEED_LIMIT - 1}; {line_of['seed']} is above"
        )
    leader = parse_digits(fields["leader"])
    if leader is None or leader >= rules.players:
        shown = shown_value(leader) if leader is not None else "<a number that long>"
        raise MoveParseError(
            f"hand record: leader {shown} is not a seat (0 to {rules.players - 1})"
        )
    hands = []
    for key in hand_keys:
        if key not in fields:
            raise MoveParseError(f"hand record: missing {key}")
        hands.append(tuple(_read_line(Tile.parse, fields[key], line_of[key])))
    boneyard = tuple(_read_line(Tile.parse, fields["boneyard"], line_of["boneyard"]))
    moves = tuple(_read_line(Move.parse, fields["moves"], line_of["moves"]))
    return HandRecord(rules, seed, leader, tuple(hands), boneyard, moves)


def _read_line(parse: Callable[[str], T], value: str, where: str) -> list[T]:
    """Each space-separated word of a record line's ``value`` read by ``parse``; a
    :class:`MoveParseError` names the line (``where``) and the word's place."""
    out = []
    for k, word in enumerate(value.split()):
        try:
            out.append(parse(word))
        except MoveParseError as exc:
            raise MoveParseError(f"hand record: {where}, word {k + 1}: {exc}") from None
    return out


def replay(rules: Rules, seed: int, leader: int | None, moves: Sequence[Move | str]) -> HandState:
    """Deal from ``(rules, seed, leader)`` and apply ``moves`` in order.

    The deal raises as :meth:`HandState.deal` does. ``moves`` must be a list (any
    iterable but a string) of :class:`Move` s or their text forms, else
    :class:`MoveParseError`; a move that does not parse or is not legal where it comes
    raises :class:`MoveParseError` or :class:`IllegalMoveError` (both ``ValueError`` s)
    whose message starts with its place, ``moves[3]: ...``, as
    :func:`~matador_env.engine.public_view` names a history's.
    """
    return _apply_moves(HandState.deal(rules, seed, leader=leader), moves)


def _apply_moves(state: HandState, moves: Iterable[Move | str]) -> HandState:
    if is_text(moves) or not isinstance(moves, Iterable):
        raise MoveParseError(
            "moves: expected a list of moves (Move or text like '2-5@1>5'), got "
            f"{a_type(moves)}: {shown_value(moves)}"
        )
    for k, move in enumerate(moves):
        try:
            state = state.apply(move)
        except (IllegalMoveError, MoveParseError) as exc:
            # The same error, its message led by the move's place (public_view's wording):
            # its class and fields (the legal moves) stay for callers that read them.
            exc.args = (f"moves[{k}]: {exc}",)
            raise
    return state
