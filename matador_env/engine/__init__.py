"""The Matador rules engine: pure Python, stdlib only, immutable states.

Quick tour::

    from matador_env.engine import Rules, HandState
    s = HandState.deal(Rules.preset("standard"), seed=7)
    while not s.is_over:
        s = s.apply(s.legal_moves()[0])
    print(s.outcome)
"""

from .match import MatchState, derive_seed
from .perft import Perft, perft, perft_divide
from .public import HistoryError, public_view
from .render import (
    HandRecord,
    hand_record,
    hand_records,
    parse_hand_record,
    render_layout,
    render_table,
    replay,
)
from .rules import PRESETS, Rules, RulesError
from .state import (
    Event,
    HandState,
    IllegalMoveError,
    Outcome,
    SeatView,
    Termination,
    blocked_points,
    side_counts,
)
from .tiles import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    PASS,
    PLAIN,
    SPINNER,
    End,
    Move,
    MoveParseError,
    Tile,
    set_tiles,
    tile_count,
)

__all__ = [
    "BLANK",
    "BRANCH",
    "CROSS",
    "DRAW",
    "PASS",
    "PLAIN",
    "PRESETS",
    "SPINNER",
    "End",
    "Event",
    "HandRecord",
    "HandState",
    "HistoryError",
    "IllegalMoveError",
    "MatchState",
    "Move",
    "MoveParseError",
    "Outcome",
    "Perft",
    "Rules",
    "RulesError",
    "SeatView",
    "Termination",
    "Tile",
    "derive_seed",
    "hand_record",
    "hand_records",
    "parse_hand_record",
    "perft",
    "perft_divide",
    "public_view",
    "render_layout",
    "render_table",
    "replay",
    "blocked_points",
    "side_counts",
    "set_tiles",
    "tile_count",
]
