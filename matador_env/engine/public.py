"""A seat's view rebuilt from what the seat knows: its hand now and the public history.

A frontend that keeps its own game state (another program, another language)
knows, for the seat a bot plays: the rules, the tiles that seat holds, who acted
first and every public action since (``P1 6-6``, ``P2 draw``, ``P0 1-6@0>1``...).
:func:`public_view` replays that history and returns the
:class:`~matador_env.engine.SeatView` the engine itself would give the seat, so
a bot cannot tell the two apart.

The history is checked as far as public information allows: each action is by
the seat whose turn it was, a tile is placed once and where the rules let it
lie, a draw only while the boneyard (above the reserve) and the draw limit allow,
a pass only when no draw is possible, nothing after the hand ended, and the
seat's hand ends up the size the history leaves it. What only the hidden hands
could confirm (that a seat which drew really had no placement, that a tile
placed was really held) is taken on trust. A history that breaks a checkable
rule raises :class:`HistoryError` naming the field and, for the history, the
position of the first bad action; nothing is built from it.

How: the replay runs on a stand-in deal. Before each placement the tile is
swapped into the mover's stand-in hand; the placement is checked against a
hand holding only that tile (so "could it lie there" is asked, not "would the
player have chosen it"). At the end the seat's real hand is put back and the
other hands and the boneyard are filled with the unseen tiles, which the view
does not show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .rules import Rules
from .state import (
    Event,
    HandState,
    SeatView,
    _bits,
    _checked_scores,
    _move_problem,
    _tables,
    _tile_index,
    _tile_problem,
    seat_number,
)
from .tiles import DRAW, INTEGER_KINDS, PASS, Move, MoveParseError, Tile, is_text, shown_value

__all__ = ["HistoryError", "public_view"]


class HistoryError(ValueError):
    """A seat's hand or public history that no game under the rules could produce.

    ``field`` names the argument at fault (``"hand"``, ``"history"``, ``"first"``,
    ``"seat"``), ``index`` the position of the first bad history action, if any, and
    ``part`` what of that action is wrong (``"seat"``: not its turn, else ``"move"``);
    ``message`` is the text without the location.
    """

    def __init__(
        self, field: str, message: str, index: int | None = None, part: str = "move"
    ) -> None:
        self.field = field
        self.index = index
        self.part = part
        self.message = message
        where = f"{field}[{index}]" if index is not None else field
        super().__init__(f"{where}: {message}")


def _checked_tile_index(rules: Rules, tile: object, field: str, index: int | None = None) -> int:
    try:
        t = Tile.parse(tile) if isinstance(tile, str) else tile
    except MoveParseError as exc:
        raise HistoryError(field, str(exc), index) from None
    problem = _tile_problem(t, rules.set_max)
    if problem is not None:
        raise HistoryError(field, problem, index)
    assert isinstance(t, Tile)
    return _tile_index(t)


def _sequence(value: object, field: str) -> Sequence[object]:
    if is_text(value) or not isinstance(value, Iterable):
        raise HistoryError(field, f"expected a list, got {shown_value(value)}")
    return value if isinstance(value, Sequence) else list(value)


def public_view(
    rules: Rules,
    seat: int,
    hand: Iterable[Tile | str],
    history: Sequence[Event | tuple[int, Move | str]],
    first: int,
    scores: tuple[int, ...] | None = None,
) -> SeatView:
    """The view of ``seat`` holding ``hand`` after the public ``history``.

    ``history`` lists ``(seat, move)`` pairs (or :class:`Event` s) from the first
    action of the hand; ``first`` is the seat that was to act first (the dealt
    leader, which the history's first action must match). ``scores`` are match
    totals to carry in the view. Raises :class:`HistoryError` (a ``ValueError``)
    when the inputs cannot come from one hand under ``rules``, when they are not
    of the types above (``field`` then names the argument), or when the history
    ends the hand (a finished hand has no move to make); :class:`RulesError` when
    ``rules`` is not a :class:`Rules`.

    Seats (``seat``, ``first``, each action's) are integers (see
    :data:`~.tiles.INTEGER_KINDS`; a numpy integer is read as its ``int``) from 0 to
    ``players - 1``; a move is a :class:`Move` or its text form, whose numbers are
    integers too (a bool or a float is refused, even where it equals a legal move's)
    and whose tile is a :class:`Tile`; a draw or pass carries nothing else; scores
    are as :meth:`HandState.view` takes them.
    """
    t = _tables(rules)  # refuses anything but a Rules
    n = t.n
    numbers = []
    for name, value in (("seat", seat), ("first", first)):
        number = seat_number(value, n)
        if number is None:
            raise HistoryError(name, _no_seat(value, n))
        numbers.append(number)
    seat, first = numbers
    if scores is not None:
        try:
            _checked_scores(scores, rules)
        except ValueError as exc:
            raise HistoryError("scores", str(exc)) from None
    own = 0
    for tile in _sequence(hand, "hand"):
        i = _checked_tile_index(rules, tile, "hand")
        if (own >> i) & 1:
            raise HistoryError("hand", f"{t.tiles[i]} is listed twice")
        own |= 1 << i

    # A stand-in deal with the rules' hand sizes; the tiles in it do not matter.
    total = len(t.tiles)
    dealt = sum(rules.tiles_per_seat)
    hands = [0] * n
    for k in range(dealt):
        hands[k % n] |= 1 << k
    s = object.__new__(HandState)
    s._t = t
    s._seed = 0
    s._hands = tuple(hands)
    s._stock = tuple(range(dealt, total))
    s._pos = 0
    s._ends = ()
    s._spinner_done = False
    s._to_move = s._leader = s._dealt_leader = first
    s._passes = s._lead_passes = s._draws = 0
    s._history = None
    s._n_actions = 0
    s._outcome = None
    s._legal = None

    placed = 0
    for k, item in enumerate(_sequence(history, "history")):
        if isinstance(item, Event):
            who, move = item.seat, item.move
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            who, move = item
        else:
            raise HistoryError(
                "history", f"expected a (seat, move) pair, got {shown_value(item)}", k
            )
        actor = seat_number(who, n)
        if actor is None:
            raise HistoryError("history", _no_seat(who, n), k, "seat")
        who = actor
        if isinstance(move, str):
            try:
                move = Move.parse(move)
            except MoveParseError as exc:
                raise HistoryError("history", str(exc), k) from None
        problem = _move_problem(move, t.S - 1)
        if problem is not None:
            raise HistoryError("history", problem, k)
        assert isinstance(move, Move)
        if s._outcome is not None:
            raise HistoryError("history", f"the hand ended before this action ({s._outcome})", k)
        if who != s._to_move:
            raise HistoryError(
                "history", f"seat {who} acted, but seat {s._to_move} was to act", k, "seat"
            )
        can_draw = s._draws < t.draw_limit and len(s._stock) - s._pos > t.reserve
        if move.kind == "play":
            played = move.tile
            i = _checked_tile_index(rules, played, "history", k)
            if (placed >> i) & 1:
                raise HistoryError("history", f"{played} is on the table already", k)
            if (own >> i) & 1:
                raise HistoryError(
                    "history", f"{played} is placed here but is also in the seat's hand", k
                )
            # Could the tile lie there? Asked of a hand that holds only this tile.
            probe = s._copy()
            probe._n_actions = s._n_actions
            probe._outcome = s._outcome
            probe._hands = tuple(1 << i if j == who else h for j, h in enumerate(s._hands))
            allowed = probe._compute_legal()
            if move not in allowed:
                options = [str(m) for m in allowed if m.kind == "play"]
                hint = f"it may lie as {', '.join(options)}" if options else "it fits nowhere"
                raise HistoryError("history", f"{move} is not a legal placement: {hint}", k)
            move = allowed[allowed.index(move)]  # the engine's own instance goes on
            s = _swap_in(s, who, i)
            s = s._play(move)
            placed |= 1 << i
        elif move.kind == "draw":
            if not can_draw:
                raise HistoryError("history", _no_draw_reason(s), k)
            s = s._draw(DRAW)  # the engine's own move goes into the history
        else:
            if can_draw:
                raise HistoryError("history", "a pass is allowed only when no draw is possible", k)
            s = s._pass(PASS)
    if s._outcome is not None:
        raise HistoryError(
            "history",
            f"the history ends the hand ({s._outcome.termination}); no move is to be made",
        )
    expected = s._hands[seat].bit_count()
    if own.bit_count() != expected:
        raise HistoryError(
            "hand",
            f"seat {seat} holds {own.bit_count()} tiles, but the history leaves it {expected}",
        )

    # Put the real hand back; the unseen tiles fill the other hands and the boneyard.
    unseen = [i for i in _bits(((1 << total) - 1) & ~placed & ~own)]
    final_hands = []
    for j, h in enumerate(s._hands):
        if j == seat:
            final_hands.append(own)
            continue
        size = h.bit_count()
        final_hands.append(sum(1 << i for i in unseen[:size]))
        unseen = unseen[size:]
    final = s._copy()
    final._n_actions = s._n_actions
    final._hands = tuple(final_hands)
    final._stock = tuple(unseen)
    final._pos = 0
    return final.view(seat, scores)


def _no_seat(value: object, players: int) -> str:
    return (
        f"a seat number is needed: {INTEGER_KINDS} from 0 to {players - 1}; "
        f"got {shown_value(value)}"
    )


def _swap_in(s: HandState, who: int, i: int) -> HandState:
    """``s`` with tile ``i`` in seat ``who``'s stand-in hand (traded for one of its tiles)."""
    hands = list(s._hands)
    if (hands[who] >> i) & 1:
        return s
    give = hands[who] & -hands[who]  # any tile of the mover's hand goes where ``i`` was
    out = s._copy()
    out._n_actions = s._n_actions
    out._outcome = s._outcome
    holder = next((j for j, h in enumerate(hands) if (h >> i) & 1), None)
    if holder is not None:
        hands[holder] = (hands[holder] & ~(1 << i)) | give
    else:
        stock = list(s._stock)
        stock[stock.index(i, s._pos)] = give.bit_length() - 1
        out._stock = tuple(stock)
    hands[who] = (hands[who] & ~give) | (1 << i)
    out._hands = tuple(hands)
    return out


def _no_draw_reason(s: HandState) -> str:
    t = s._t
    left = len(s._stock) - s._pos
    if s._draws >= t.draw_limit:
        return f"no draw is possible: {s._draws} drawn this turn, the limit is {t.draw_limit}"
    return f"no draw is possible: {left} tiles in the boneyard and {t.reserve} must stay there"
