"""Behaviours of the tensor contract (matador_env.encoding) and the single-learner env
(matador_env.gym_env) that no other fast test pinned down: each test here fails on a code
change the rest of the suite let through. Encoding: the end-kind order, the cannot-answer
columns of each kind of end and before the lead, the state tensor's own arguments and
leader, the signature's state size, duplicate moves in a mask, and the tracker's leader,
score cap and restart. Env: the opponents' stream and its seeding, unseeded deals, the
spaces' bounds, the masks handed out and kept, what opponents may answer, the list of
specs, rendering the learner's seat, and what a failed reset or step leaves."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from gymnasium import spaces

from matador_env import MatadorSingleEnv
from matador_env.encoding import KINDS, ObservationTracker, encoding_for
from matador_env.engine import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    PASS,
    PLAIN,
    SPINNER,
    End,
    HandState,
    Move,
    Rules,
    SeatView,
)
from tests.scripted import deal

# -- encoding: the ends piece and the cannot-answer columns ------------------------------


def test_the_ends_piece_lays_out_each_kind_in_the_documented_order() -> None:
    # The module docs fix the one-hot order (plain, crosswise, needs-a-blank, branch,
    # spinner): a saved model reads column 1 as "crosswise" whatever KINDS says.
    assert KINDS == (PLAIN, CROSS, BLANK, BRANCH, SPINNER)
    rules = Rules(matador_placement="branching", spinner="first_double")
    enc = encoding_for(rules)
    K, V = enc.end_width, enc.num_values
    ends = tuple(End.parse(t) for t in ("3", "2/5", "_", "4b", "6*"))
    out = np.zeros(len(ends) * K, np.float32)
    enc.ends_vector(ends, out)
    rows = out.reshape(len(ends), K)
    assert [int(np.flatnonzero(r[:5])[0]) for r in rows] == [0, 1, 2, 3, 4]
    shown = [np.flatnonzero(r[5:]).tolist() for r in rows]
    assert shown == [[3], [2, 5], [], [4], [6]]  # a crosswise end shows both values
    assert K == 5 + V


def _marks(rules: Rules, move: object, ends: str) -> list[int]:
    enc = encoding_for(rules)
    event = (1, move, tuple(End.parse(t) for t in ends.split()))
    return sorted(enc.cannot_answer_marks(event))  # type: ignore[arg-type]


def test_a_pass_at_a_needs_a_blank_end_marks_the_blank_column_not_the_matador_one() -> None:
    # Column V is "needs-a-blank", V + 1 "holds no matador": a pass marks both, each once.
    rules = Rules(matador_placement="crosswise_on_blank", draw_rule="none")
    V = encoding_for(rules).num_values
    assert _marks(rules, PASS, "_ 4") == [4, V, V + 1]


def test_a_pass_at_a_crosswise_end_marks_both_of_its_values() -> None:
    # A crosswise two-valued end links to either value: not answering it shows neither.
    rules = Rules(matador_placement="crosswise_choice", draw_rule="none")
    V = encoding_for(rules).num_values
    assert _marks(rules, PASS, "2/5 1") == [1, 2, 5, V + 1]


def test_nothing_is_marked_before_the_lead() -> None:
    # With no end on the table a pass or draw (a leader looking for a lead double under
    # leiden's rules) says nothing about what the seat could answer: not even "no matador".
    for rules in (Rules.preset("leiden"), Rules(voluntary_draw="never")):
        assert _marks(rules, PASS, "") == []
        assert _marks(rules, DRAW, "") == []


def test_a_first_double_spinner_does_not_narrow_the_marks_to_its_sides() -> None:
    # Only spinner="lead_double_cross" makes the spinner's sides the only playable ends;
    # under "first_double" every end counts, so a pass marks the plain end's value too.
    V = encoding_for(Rules(spinner="first_double")).num_values
    assert _marks(Rules(spinner="first_double", draw_rule="none"), PASS, "3* 5") == [3, 5, V + 1]
    cross = Rules(lead_tile="double_not_blank", spinner="lead_double_cross", draw_rule="none")
    assert _marks(cross, PASS, "3* 5") == [3, V + 1]


def test_once_the_cross_is_filled_every_end_is_marked_again() -> None:
    # "While the spinner's cross must be filled only spinner sides count": with no
    # spinner side open any more (plain ends only), a pass marks all of them.
    rules = Rules(lead_tile="double_not_blank", spinner="lead_double_cross", draw_rule="none")
    V = encoding_for(rules).num_values
    assert _marks(rules, PASS, "1 4") == [1, 4, V + 1]


# -- encoding: action masks and the state tensor ------------------------------------------


def test_a_move_listed_twice_is_marked_once() -> None:
    # The mask is int8 ones and zeros (MultiBinary): a repeated move must not count up.
    enc = encoding_for(Rules())
    mask = enc.action_mask(["3-3", "3-3", "draw", "draw"])
    assert mask.dtype == np.int8 and set(mask.tolist()) == {0, 1}
    assert int(mask.sum()) == 2


def test_state_tensor_refuses_a_state_of_other_rules() -> None:
    # Its pieces are sized by the encoding's rules: another configuration's state would
    # be written into the wrong slots (or past them), so it is refused by name.
    enc = encoding_for(Rules())
    other = HandState.deal(Rules(players=3), 0)
    with pytest.raises(ValueError, match="state_tensor: the state's rules differ"):
        enc.state_tensor(other)


def test_state_tensor_uses_the_cannot_answer_table_it_is_given() -> None:
    # The environments pass their tracker's table to save rebuilding it from the
    # history: whatever is given is what the piece holds.
    rules = Rules()
    enc = encoding_for(rules)
    state = HandState.deal(rules, 3)
    given = np.zeros((enc.players, enc.cannot_width), np.float32)
    given[1, [2, enc.num_values + 1]] = 1.0
    pieces = enc.split(enc.state_tensor(state, cannot=given), state=True)
    assert np.array_equal(pieces["cannot_answer"], given)
    rebuilt = enc.split(enc.state_tensor(state), state=True)
    assert not rebuilt["cannot_answer"].any()  # a fresh deal: nothing marked


def test_the_state_tensor_leader_is_the_leader_not_the_seat_to_move() -> None:
    # Both are absolute one-hots; after the lead they differ, and a critic must see each.
    rules = Rules(players=3)
    enc = encoding_for(rules)
    state = HandState.deal(rules, 5)
    state = state.apply(state.legal_moves()[0])
    assert state.leader != state.to_move
    pieces = enc.split(enc.state_tensor(state), state=True)
    assert np.flatnonzero(pieces["leader"]).tolist() == [state.leader]
    assert np.flatnonzero(pieces["to_move"]).tolist() == [state.to_move]


def test_the_signature_holds_the_state_size_and_checks_it() -> None:
    # A saved centralised critic reads state vectors: their size is part of what must match.
    enc = encoding_for(Rules())
    saved = enc.signature()
    assert saved["state_size"] == enc.state_size
    with pytest.raises(ValueError, match="state_size"):
        enc.check_signature({**saved, "state_size": enc.state_size + 1})


# -- encoding: the environments' incremental tracker --------------------------------------


def test_the_tracker_moves_the_leader_when_a_leader_without_a_lead_double_passes() -> None:
    # Under lead_tile="double_not_blank" a leader holding no such double passes and the
    # lead passes on: the one time the leader changes within a hand. The tracker's
    # leader one-hot must move (one 1, at the new leader), as the view's does.
    rules = Rules(lead_tile="double_not_blank", spinner="lead_double_cross", draw_rule="none")
    enc = encoding_for(rules)
    state = deal(rules, ["0-0 0-1 0-2 1-2 1-3 2-3 0-3", "1-1 2-4 3-4 0-4 1-4 2-5 3-5"])
    tracker = ObservationTracker(enc)
    tracker.start(state)
    assert state.leader == 0 and state.legal_moves() == (PASS,)
    after = state.apply(PASS)
    tracker.advance(state, 0, PASS, after)
    assert after.leader == 1
    for seat in (0, 1):
        obs = tracker.observation(seat)
        assert np.array_equal(obs, enc.observation(after.view(seat)))
        assert enc.split(obs)["leader"].sum() == 1.0


def test_the_tracker_caps_the_scores_it_is_given_as_the_view_does() -> None:
    # Match totals past 2 x target (one big hand under a small target) read 1.0, as
    # documented and as Encoding.observation writes them: the vector stays in [0, 1].
    rules = Rules(target_score=30)
    enc = encoding_for(rules)
    state = HandState.deal(rules, 2)
    tracker = ObservationTracker(enc)
    for scores in ((500, 12), (12, 61)):
        tracker.start(state, scores)
        for seat in (0, 1):
            obs = tracker.observation(seat)
            assert np.array_equal(obs, enc.observation(state.view(seat, scores=scores)))
            assert obs.max() <= 1.0
        tracker.set_scores((0, 1000))
        assert enc.split(tracker.observation(1))["scores"].tolist() == [1.0, 0.0]


def _forced_draw(rules: Rules) -> HandState:
    """The first state, in seeded random play, where a seat must draw after the lead."""
    rng = random.Random(0)
    for seed in range(200):
        state = HandState.deal(rules, seed)
        while not state.is_over:
            moves = state.legal_moves()
            if state.ends and moves == (DRAW,):
                return state
            state = state.apply(moves[rng.randrange(len(moves))])
    raise AssertionError("no forced draw found")


def test_a_draw_replayed_after_the_tracker_restarts_is_marked_again() -> None:
    # The envs restart the tracker from the state a failed step began in, then the same
    # draw may be made again before the same ends object: start() must forget the
    # last draw it marked, or that draw's cannot-answer marks are lost.
    rules = Rules(voluntary_draw="never")
    enc = encoding_for(rules)
    state = _forced_draw(rules)
    seat = state.to_move
    watcher = (seat + 1) % rules.players
    tracker = ObservationTracker(enc)
    tracker.start(state)
    tracker.advance(state, seat, DRAW, state.apply(DRAW))
    tracker.start(state)  # as after a restore
    after = state.apply(DRAW)
    tracker.advance(state, seat, DRAW, after)
    expected = enc.observation(after.view(watcher))
    assert enc.split(expected)["cannot_answer"].any()  # the draw did mark something
    assert np.array_equal(tracker.observation(watcher), expected)


# -- gym_env: opponents ---------------------------------------------------------------------


class _FlakyAgent:
    """An agent opponent (act(view, rng)) that picks a legal move with the stream, or
    raises, after drawing, while ``broken``."""

    def __init__(self) -> None:
        self.broken = False

    def act(self, view: SeatView, rng: random.Random) -> Move:
        pick = rng.randrange(len(view.legal_moves))
        if self.broken:
            raise RuntimeError("agent crashed")
        return view.legal_moves[pick]


def test_a_failed_step_puts_the_stream_back_when_only_agents_draw_from_it() -> None:
    # No "random" seat at all: the agent alone consumes the opponents' stream, and can
    # fail, so the stream is kept and put back like the game.
    agent = _FlakyAgent()
    env = MatadorSingleEnv(preset="standard", seat=0, opponents=agent)
    _, info = env.reset(seed=5)
    twin = pickle.loads(pickle.dumps(env))
    action = int(np.flatnonzero(info["action_mask"])[0])
    agent.broken = True
    with pytest.raises(RuntimeError, match="agent crashed"):
        env.step(action)
    agent.broken = False
    for _ in range(20):
        one, two = env.step(action), twin.step(action)
        assert np.array_equal(one[0], two[0]) and one[1:4] == two[1:4]
        if one[2] or one[3]:
            break
        action = int(np.flatnonzero(one[4]["action_mask"])[-1])
    assert env.hand_records() == twin.hand_records()


# -- gym_env: spaces and masks --------------------------------------------------------------


def test_the_observation_space_is_the_unit_box_of_the_encoding() -> None:
    # Every observation number lies in [0, 1] (the module docs): the Box says so
    # exactly, in both forms, so that normalising wrappers read the true bounds.
    for mask_in_obs in (False, True):
        env = MatadorSingleEnv(preset="kardinal", mask_in_obs=mask_in_obs)
        space = env.observation_space["obs"] if mask_in_obs else env.observation_space
        assert isinstance(space, spaces.Box) and space.dtype == np.float32
        assert space.shape == (env.encoding.obs_size,)
        assert (space.low == 0.0).all() and (space.high == 1.0).all()


def test_before_the_first_reset_no_action_is_legal() -> None:
    # action_masks() is read by MaskablePPO at any time: with no episode yet there is
    # nothing to choose, as after an episode ends.
    env = MatadorSingleEnv(preset="standard")
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.encoding.num_actions,)
    assert not mask.any()


# -- gym_env: seeding -----------------------------------------------------------------------


def _hands(env: MatadorSingleEnv) -> str:
    return str(env.game.hand.hands)


def test_unseeded_resets_after_a_seeded_one_deal_new_hands_reproducibly() -> None:
    # reset(seed=s) seeds the env's stream; the unseeded resets after it draw their deals
    # from that stream: different deals each time, the same sequence for the same s.
    def deals(seed: int) -> list[str]:
        env = MatadorSingleEnv(preset="standard", seat=0)
        env.reset(seed=seed)
        out = [_hands(env)]
        for _ in range(4):
            env.reset()
            out.append(_hands(env))
        return out

    first = deals(7)
    assert len(set(first)) == len(first)
    assert deals(7) == first


class _FirstDraw:
    """An agent opponent that records the first number it draws from its stream in each
    episode (``episode`` is bumped by the test before each reset)."""

    def __init__(self) -> None:
        self.episode = -1
        self.first: dict[int, float] = {}

    def act(self, view: SeatView, rng: random.Random) -> Move:
        value = rng.random()
        self.first.setdefault(self.episode, value)
        return view.legal_moves[0]


def test_the_opponents_stream_is_seeded_from_each_episodes_seed() -> None:
    # The agents' random.Random comes from the episode's seed: other seeds give other
    # streams (not one fixed stream every episode), the same seed the same stream.
    agent = _FirstDraw()
    env = MatadorSingleEnv(preset="standard", seat=1, opponents=agent)
    for episode, seed in enumerate([0, 1, 2, 3, 0]):
        agent.episode = episode
        env.reset(seed=seed)
        while episode not in agent.first:  # until the agent has moved once
            env.step(int(np.flatnonzero(env.action_masks())[0]))
    firsts = [agent.first[e] for e in range(5)]
    assert len(set(firsts[:4])) == 4
    assert firsts[4] == firsts[0]


def test_reset_reports_no_illegal_action() -> None:
    # info["illegal_action"] is 1 only after an illegal action; a new episode has had none.
    env = MatadorSingleEnv(preset="standard")
    _, info = env.reset(seed=0)
    assert info["illegal_action"] == 0


def test_the_masks_handed_out_are_copies_the_caller_may_change() -> None:
    # A replay buffer or a wrapper may write into the info's mask or the observation's
    # mask in place: the env's own legal actions must not change with them.
    for mask_in_obs in (False, True):
        env = MatadorSingleEnv(preset="standard", seat=0, mask_in_obs=mask_in_obs)
        obs, info = env.reset(seed=1)
        legal = env.action_masks().copy()
        info["action_mask"][:] = 0
        if mask_in_obs:
            obs["mask"][:] = 0
        assert np.array_equal(env.action_masks(), legal)
        obs, _, _, _, info = env.step(int(np.flatnonzero(legal)[0]))
        legal = env.action_masks().copy()
        assert legal.any()
        info["action_mask"][:] = 0
        if mask_in_obs:
            obs["mask"][:] = 0
        assert np.array_equal(env.action_masks(), legal)


# -- gym_env: what opponents may answer ----------------------------------------------------


def _opponent_choices(env: MatadorSingleEnv, seeds: range) -> list[tuple[int, int]]:
    """Over episodes of ``env`` (learner: its first legal action), the position in the
    legal-move list of each move the opponents made, and the list's length."""
    picks: list[tuple[int, int]] = []
    for seed in seeds:
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = term or trunc
        state = HandState.deal(env.rules, seed)
        for event in env.game.hand.history:
            if event[0] != env.seat:
                legal = state.legal_moves()
                picks.append((legal.index(event[1]), len(legal)))
            state = state.apply(event[1])
    return picks


def test_random_opponents_choose_among_all_legal_moves() -> None:
    # "random": uniform over the legal moves, not always the first of them.
    env = MatadorSingleEnv(preset="standard", seat=0)
    picks = _opponent_choices(env, range(4))
    assert any(p > 0 for p, _ in picks) and any(p == 0 < n - 1 for p, n in picks)


class _TextAgent:
    """An agent whose act returns the text form of the last legal move."""

    def act(self, view: SeatView, rng: random.Random) -> str:
        return str(view.legal_moves[-1])


class _CheatingAgent:
    """An agent that, once ``armed``, answers a lead where it must follow."""

    armed = False

    def act(self, view: SeatView, rng: random.Random) -> Move:
        if self.armed and view.ends:
            return Move.lead(next(iter(view.hand)))
        return view.legal_moves[0]


def test_an_agent_may_answer_a_move_in_its_text_form() -> None:
    # Moves are read as the engine reads them: a Move or its text form.
    env = MatadorSingleEnv(preset="standard", seat=0, opponents=_TextAgent())
    picks = _opponent_choices(env, range(2))
    assert picks and all(p == n - 1 for p, n in picks)


def test_an_agent_answering_an_illegal_move_is_refused_and_the_step_undone() -> None:
    cheat = _CheatingAgent()
    env = MatadorSingleEnv(preset="standard", seat=0, opponents=cheat)
    env.reset(seed=4)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # a lead lies after it
    assert env.game.hand.ends and env.game.to_move == 0
    cheat.armed = True
    action = int(np.flatnonzero(env.action_masks())[0])
    while action == env.encoding.draw_action:  # a play, so that the agent answers it
        env.step(action)
        action = int(np.flatnonzero(env.action_masks())[0])
    obs, mask = env.game.observe(0)["observation"], env.action_masks()
    with pytest.raises(ValueError, match=r"opponent .* at seat 1 chose .*, which is not legal"):
        env.step(action)
    assert np.array_equal(env.action_masks(), mask)
    assert np.array_equal(env.game.observe(0)["observation"], obs)


class _CrashingOpponent:
    """A callable opponent: its lowest legal action, or RuntimeError while ``crash``."""

    crash = False

    def __call__(self, obs: dict[str, np.ndarray]) -> int:
        if self.crash:
            raise RuntimeError("opponent crashed")
        return int(np.flatnonzero(obs["action_mask"])[0])


def test_a_reset_that_fails_after_an_episode_leaves_the_env_as_never_reset() -> None:
    # A reset that raises leaves no episode, whatever came before it: step() says to
    # reset, as before the first reset, not that an episode ended.
    probe = MatadorSingleEnv(preset="standard", seat=1)
    seed = next(s for s in range(100) if probe.reset(seed=s) and probe.game.hand.moves)
    opponent = _CrashingOpponent()  # seat 0, which leads the hand of ``seed``
    env = MatadorSingleEnv(preset="standard", seat=1, opponents=opponent)
    _, info = env.reset(seed=seed)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    opponent.crash = True
    with pytest.raises(RuntimeError, match="opponent crashed"):
        env.reset(seed=seed)
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
        env.step(0)


@pytest.mark.parametrize("answer", ["illegal", "negative"])
def test_a_callable_answering_an_action_it_may_not_take_is_refused(answer: str) -> None:
    # In range but masked out, or a negative number that numpy would read as a legal
    # position counted from the end: neither is the opponent's action, so the step fails
    # naming the opponent, and the env is as before it.
    def opponent(obs: dict[str, np.ndarray]) -> int:
        mask = obs["action_mask"]
        if answer == "illegal":
            return int(np.flatnonzero(mask == 0)[0])
        return int(np.flatnonzero(mask)[0]) - len(mask)

    env = MatadorSingleEnv(preset="standard", seat=0, opponents=opponent)
    env.reset(seed=next(s for s in range(50) if _learner_leads(s)))
    obs, mask = env.game.observe(0)["observation"], env.action_masks()
    with pytest.raises(ValueError, match=r"opponent .* at seat 1 chose action -?\d+, which is not"):
        env.step(int(np.flatnonzero(mask)[0]))
    assert np.array_equal(env.action_masks(), mask) and env.game.to_move == 0
    assert np.array_equal(env.game.observe(0)["observation"], obs)


def _learner_leads(seed: int) -> bool:
    return HandState.deal(Rules(), seed).to_move == 0


def test_one_opponent_spec_per_other_seat_exactly() -> None:
    # A list longer than the other seats is as wrong as a shorter one.
    with pytest.raises(ValueError, match="one per other seat"):
        MatadorSingleEnv(preset="standard", opponents=["random", "random"])
    with pytest.raises(ValueError, match="got a list of 3"):
        MatadorSingleEnv(rules=Rules(players=3), opponents=["random"] * 3)


# -- gym_env: rendering the learner's seat -------------------------------------------------


def test_renders_show_the_learners_seat_not_seat_0() -> None:
    # The learner holds seat 1 here: the text names its hand, the picture shows its tiles.
    text_env = MatadorSingleEnv(preset="standard", seat=1, render_mode="ansi")
    picture_env = MatadorSingleEnv(preset="standard", seat=1, render_mode="rgb_array")
    for env in (text_env, picture_env):
        env.reset(seed=2)
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    text = text_env.render()
    hand = " ".join(str(t) for t in text_env.game.hand.hand(1))
    assert isinstance(text, str) and f"P1 to move, holds: {hand}" in text
    frame = picture_env.render()
    assert isinstance(frame, np.ndarray)
    assert np.array_equal(frame, picture_env.game.frame(seat=1))
    assert not np.array_equal(frame, picture_env.game.frame(seat=0))


def test_a_negative_action_is_illegal_even_where_numpy_would_wrap_it_to_a_legal_one() -> None:
    # -k must not be read as mask position num_actions - k: it is out of the action range,
    # so the episode ends with the illegal reward, as for any integer that is no action.
    env = MatadorSingleEnv(preset="standard", seat=0, illegal_reward=-4)
    _, info = env.reset(seed=0)
    n = env.action_space.n
    wrapped = int(np.flatnonzero(info["action_mask"])[0]) - n
    _, reward, terminated, _, info = env.step(wrapped)
    assert (reward, terminated, info["illegal_action"]) == (-4.0, True, 1)


def test_a_step_that_fails_while_rendering_puts_the_mask_back_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A step is all or nothing: if the human render at its end raises (a closed stdout),
    # the game is put back, and the legal actions must be the old ones with it.
    env = MatadorSingleEnv(preset="standard", seat=0, render_mode="human")
    monkeypatch.setattr(env, "render", lambda: None)
    env.reset(seed=3)
    mask = env.action_masks().copy()
    action = int(np.flatnonzero(mask)[0])

    def broken() -> None:
        raise OSError("stdout closed")

    monkeypatch.setattr(env, "render", broken)
    with pytest.raises(OSError, match="stdout closed"):
        env.step(action)
    assert np.array_equal(env.action_masks(), mask) and env.game.to_move == 0
    monkeypatch.setattr(env, "render", lambda: None)
    _, _, _, _, info = env.step(action)  # and the same step can be taken again
    assert info["illegal_action"] == 0


def test_a_cannot_table_of_another_shape_is_refused_by_name() -> None:
    # numpy's broadcast error named no argument; a (1, C) table was spread to every seat.
    enc = encoding_for(Rules.preset("standard"))
    state = HandState.deal(enc.rules, 1)
    for shape in ((3,), (1, enc.cannot_width), (enc.players, enc.cannot_width + 1)):
        with pytest.raises(ValueError, match=r"state_tensor: cannot has shape .*; allowed: the"):
            enc.state_tensor(state, None, np.zeros(shape, np.float32))
    table = enc.cannot_answer_table(state.history)
    assert np.array_equal(enc.state_tensor(state, cannot=table), enc.state_tensor(state))
