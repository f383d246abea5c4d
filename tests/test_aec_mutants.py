"""Behaviours of the AEC environment (``matador_env.matador_v0``) that mutation testing
found unguarded: each test fails on a small change to the source that the other fast
tests let through."""

from __future__ import annotations

import copy
import pickle
import random
from typing import Any

import numpy as np
import pytest

from matador_env import env, raw_env
from matador_env.engine import Rules
from matador_env.matador_v0 import hand_rewards


def _random_step(e: Any, rng: random.Random) -> None:
    """One random legal move of the agent to move."""
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    e.step(int(legal[rng.randrange(len(legal))]))


def _play_until_done(e: Any, rng: random.Random) -> None:
    """Random legal moves until the seat to move is terminated or truncated."""
    while not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
        _random_step(e, rng)


@pytest.mark.parametrize(("reward", "bonus"), [("score", 30.0), ("win", 1.0)])
def test_the_default_match_bonus_is_the_target_for_score_and_one_otherwise(
    reward: str, bonus: float
) -> None:
    # "match_bonus ... default: target_score for "score", 1 for "win" and "normalised"":
    # the last hand of a match pays its own rewards plus that default, shared out.
    rules = Rules.preset("standard", target_score=30)
    n = rules.players
    e = raw_env(rules=rules, episode="match", reward=reward)
    e.reset(seed=3)
    _play_until_done(e, random.Random(3))
    match = e.game.match
    outcome = e.game.hand.outcome
    assert match is not None and match.winners is not None and outcome is not None
    won = [rules.side_of(s) in match.winners for s in range(n)]
    if reward == "win":
        shares = [bonus if w else -bonus for w in won]
    else:
        shares = [bonus / sum(won) if w else -bonus / (n - sum(won)) for w in won]
    expected = [h + b for h, b in zip(hand_rewards(rules, outcome, reward), shares, strict=True)]
    assert [e.rewards[a] for a in e.possible_agents] == pytest.approx(expected)


def test_infos_and_hand_results_handed_out_are_copies() -> None:
    # game.info() and hand_result() give new dicts: a caller that edits what it was
    # given (a replay buffer adding keys, say) must not change what the next caller
    # reads from the environment.
    e = raw_env(preset="standard")
    e.reset(seed=1)
    _play_until_done(e, random.Random(1))
    result = e.hand_result()
    assert result is not None
    result["points"] = -999
    info = e.game.info(0)
    info["hands"] = -999
    assert e.hand_result()["points"] != -999  # type: ignore[index]
    assert e.game.info(0)["hands"] == 1


@pytest.mark.parametrize("kind", ["score", "win", "normalised"])
def test_a_match_every_side_wins_pays_no_bonus(kind: str) -> None:
    # Under match_end="complete_round" the highest totals share the win, so every side
    # can be a winner: nobody is left to pay, and the bonus is 0 for all (not a
    # division by zero losers, nor +bonus to every seat).
    from matador_env.matador_v0 import match_rewards

    rules = Rules.preset("standard")
    assert match_rewards(rules, (0, 1), kind, 5.0) == [0.0, 0.0]
    teams = Rules.preset("pagat", players=4, teams=True)
    assert match_rewards(teams, (0, 1), kind, 5.0) == [0.0] * 4


def test_team_match_infos_name_the_side_and_each_seat_knows_if_its_side_won() -> None:
    # With partnerships a seat and its side differ: "winning_side" is the winner's
    # team, "match_won" is 1 for both partners of a winning team and 0 for the others,
    # each agent getting its own info; hand_result() names the match winners.
    rules = Rules.preset("pagat", players=4, teams=True, target_score=20)
    e = raw_env(rules=rules, episode="match")
    e.reset(seed=5)
    rng = random.Random(5)
    winners_seen: set[int] = set()
    while not e.terminations[e.agent_selection]:
        _random_step(e, rng)
        result = e.hand_result()
        for info in e.infos.values():
            if info["winner"] >= 0:
                assert info["winning_side"] == rules.side_of(info["winner"])
                winners_seen.add(info["winner"])
        if result is not None and result["winner"] is not None:
            assert result["winning_side"] == rules.side_of(result["winner"])
    match = e.game.match
    assert match is not None and match.winners is not None
    assert e.hand_result()["match_winners"] == match.winners  # type: ignore[index]
    won = {a: int(rules.side_of(s) in match.winners) for s, a in enumerate(e.possible_agents)}
    assert {a: e.infos[a]["match_won"] for a in e.possible_agents} == won
    assert sorted(won.values()) == [0, 0, 1, 1]
    assert winners_seen & {2, 3}  # a seat whose number is not its side's did win


def test_a_copy_in_mid_match_truncates_after_the_same_hands_as_the_original() -> None:
    # The hands counter, the finished hands and the seed travel with a copy: a match
    # episode copied after its first hand truncates, like the original, when its
    # second hand ends (max_hands=2), and a copy of the copy is marked truncated too.
    e = raw_env(preset="standard", episode="match", max_hands=2, target_score=10_000)
    e.reset(seed=2)
    rng = random.Random(2)
    while e.game.hands < 1:
        _random_step(e, rng)
    for clone in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert clone.infos == e.infos
        assert clone.hand_records() == e.hand_records()  # the finished hand too
        moves = random.Random(9)
        while not (clone.truncations[clone.agent_selection] or any(clone.terminations.values())):
            _random_step(clone, moves)
        assert clone.game.hands == 2 and clone.game.truncated
        assert all(clone.truncations.values()) and not any(clone.terminations.values())
        again = pickle.loads(pickle.dumps(clone))
        assert again.game.truncated and again.game.seed == e.game.seed == 2


def test_a_copy_made_as_a_hand_ends_clears_its_rewards_on_the_next_step() -> None:
    # Rewards are non-zero only on the step that ended a hand; the next step puts them
    # back to 0. A copy made in between must do the same (the flag that says rewards
    # are set travels with it), else it would pay the hand twice.
    e = raw_env(preset="standard", episode="match", target_score=10_000)
    e.reset(seed=4)
    rng = random.Random(4)
    while e.game.hands < 1:
        _random_step(e, rng)
    assert any(e.rewards.values())
    clone = pickle.loads(pickle.dumps(e))
    action = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    for game in (e, clone):
        game.step(action)
        assert not any(game.rewards.values())


def test_a_copy_keeps_the_seed_stream_of_unseeded_resets() -> None:
    # reset(seed=s) seeds the stream unseeded resets draw from; a copy carries the
    # stream on, so its next unseeded deal is the original's.
    e = raw_env(preset="standard")
    e.reset(seed=11)
    clone = pickle.loads(pickle.dumps(e))
    e.reset()
    clone.reset()
    assert clone.game.hand == e.game.hand and clone.game.seed == e.game.seed


def test_the_rgb_frame_of_a_match_draws_its_totals_and_target() -> None:
    # render_mode="rgb_array" draws a match's totals with its target beside them; the
    # frame is draw_frame's with both, and differs from the one without the target.
    from matador_env.picture import draw_frame

    e = raw_env(preset="standard", episode="match", target_score=70, render_mode="rgb_array")
    e.reset(seed=1)
    frame = e.render()
    match = e.game.match
    assert match is not None and isinstance(frame, np.ndarray)
    assert np.array_equal(frame, draw_frame(e.game.hand, None, match.totals, 70))
    assert not np.array_equal(frame, draw_frame(e.game.hand, None, match.totals, None))


def test_replay_refuses_an_action_after_the_end_a_bool_and_an_illegal_one() -> None:
    # Game.replay (the game as seed + actions) names the first action that does not
    # fit: one after the game ended, a bool (True is no action, though an int), or one
    # the mask forbids; and the actions of a finished game list each move once.
    e = raw_env(preset="standard")
    e.reset(seed=6)
    _play_until_done(e, random.Random(6))
    game = e.game
    actions = game.actions
    assert len(actions) == len(game.hand.moves)
    again = raw_env(preset="standard").game
    again.replay(game.seed, actions)
    assert again.hand == game.hand
    with pytest.raises(ValueError, match="after the game ended"):
        again.replay(game.seed, [*actions, actions[-1]])
    again.start(game.seed)
    illegal = int(np.flatnonzero(again.mask(again.to_move) == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        again.replay(game.seed, [illegal])
    # A deal where action 1 (lead 0-1) is legal: True would pass for it if bools were
    # taken as actions.
    seed = next(s for s in range(200) if _leads_action_one(again, s))
    again.replay(seed, [1])
    with pytest.raises(ValueError, match="not legal"):
        again.replay(seed, [True])


def _leads_action_one(game: Any, seed: int) -> bool:
    game.start(seed)
    return bool(game.mask(game.to_move)[1])


def test_raw_env_refuses_none_from_the_seat_to_move_as_a_value_error() -> None:
    # None is the dead step of a finished seat; from a seat that is to move raw_env
    # refuses it with the ValueError env() gives (not the TypeError of a non-integer).
    e = raw_env(preset="standard")
    e.reset(seed=0)
    hand = e.game.hand
    with pytest.raises(ValueError, match="is to move: None is an action only for a finished"):
        e.step(None)
    assert e.game.hand == hand


@pytest.mark.parametrize("make", [raw_env, env])
def test_actions_just_outside_the_space_are_refused_and_nothing_changes(make: Any) -> None:
    # The space is 0 .. n-1: n and -1 are out of range for raw_env and env() alike (a
    # -1 must not index the last action, the pass, from the end).
    e = make(preset="standard")
    e.reset(seed=0)
    n = e.action_space(e.agent_selection).n
    hand = e.unwrapped.game.hand
    for bad in (n, -1):
        with pytest.raises(ValueError, match="out of range"):
            e.step(bad)
    assert e.unwrapped.game.hand == hand and not any(e.terminations.values())


def test_the_us_spelling_normalized_is_the_normalised_reward() -> None:
    assert raw_env(reward="normalized").game.reward == "normalised"
