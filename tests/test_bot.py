"""The bot runtime: every level plays only legal moves, errors are clear, bots are
reproducible and thread-safe, and the runtime works with torch absent."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from matador_env.bot import (
    CASUAL_SLIP,
    LEVELS,
    Bot,
    BotError,
    PolicyBot,
    encoding_examples,
    load_bot,
    load_level,
    shipped_configurations,
)
from matador_env.engine import PRESETS, HandState, Rules
from matador_env.policy import (
    BOTS_DIR,
    BOTS_DIR_VARIABLE,
    PolicyError,
    PolicyMismatchError,
    default_policy,
    load_policy,
)
from matador_env.protocol import ProtocolError, move_from_json, view_to_json

ROOT = Path(__file__).resolve().parent.parent
STANDARD = Rules.preset("standard")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def play_hand(rules: Rules, bots: list, seed: int) -> HandState:  # type: ignore[type-arg]
    state = HandState.deal(rules, seed)
    rng = random.Random(seed)
    while state.outcome is None:
        view = state.view(state.to_move)
        move = bots[state.to_move].choose(view, rng)
        assert move in view.legal_moves
        state = state.apply(move)
    return state


def test_levels_are_documented_weakest_first() -> None:
    assert list(LEVELS) == ["random", "greedy", "casual", "trained"]
    assert "standard" in [c.name for c in shipped_configurations()]


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("level", ["random", "greedy"])
def test_heuristic_levels_play_every_preset(preset: str, level: str) -> None:
    rules = Rules.preset(preset)
    bot = load_bot(level, seed=1)
    for seed in range(25):
        assert play_hand(rules, [bot] * rules.players, seed).outcome is not None


@pytest.mark.parametrize("level", ["casual", "trained"])
def test_trained_levels_play_their_preset(level: str) -> None:
    bot = load_bot(level, seed=2)
    assert bot.rules == STANDARD and bot.describe()["level"] == level
    for seed in range(60):
        play_hand(STANDARD, [bot, load_bot("greedy")], seed)


def test_default_bot_is_the_shipped_policy() -> None:
    bot = load_bot()
    assert isinstance(bot, PolicyBot) and bot.level == "trained"
    policy = default_policy()
    state = HandState.deal(STANDARD, 9)
    while state.outcome is None:
        view = state.view(state.to_move)
        assert bot.choose(view) == policy.choose(view)
        state = state.apply(policy.choose(view))
    # The folder of an exported policy loads as a bot, too.
    assert isinstance(load_bot(str(BOTS_DIR / "standard")), PolicyBot)


def test_forced_moves_skip_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view with one legal move is answered without running the network (in the
    bot levels and in OnnxPolicy.choose/act); a real choice still runs it, but for
    casual's slips."""
    from matador_env.policy import OnnxPolicy

    runs: list[int] = []
    real = OnnxPolicy.legal_logits

    def counted(self: OnnxPolicy, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        runs.append(1)
        return real(self, obs, legal)

    monkeypatch.setattr(OnnxPolicy, "legal_logits", counted)
    policy = default_policy()
    # casual runs it unless it slips (a random move needs no network), so a sampling
    # bot stands beside it for the sampled path.
    sampling = PolicyBot(default_policy(), "sampling", None, 2.0, seed=1)
    bots = [load_bot("trained"), sampling, load_bot("casual", seed=1)]
    forced = chosen = slipped = 0
    for seed in range(40):
        state = HandState.deal(STANDARD, seed)
        while state.outcome is None:
            view = state.view(state.to_move)
            before = len(runs)
            moves = [bot.choose(view) for bot in bots] + [policy.choose(view)]
            enc = policy.encoding
            obs, mask = enc.observation(view), enc.action_mask(view.legal_moves)
            moves.append(enc.decode_action(policy.act(obs, mask, random.Random(0))))
            assert all(m in view.legal_moves for m in moves)
            if len(view.legal_moves) == 1:
                forced += 1
                assert len(runs) == before and set(moves) == {view.legal_moves[0]}
            else:
                chosen += 1
                assert len(runs) - before in (4, 5)  # 4: casual slipped
                slipped += len(runs) == before + 4
            state = state.apply(moves[0])
    assert forced > 50 and chosen > 50
    assert 0.1 < slipped / chosen < 0.3  # casual's slips: about one choice in five


def test_casual_is_reproducible_from_its_seed() -> None:
    def moves(seed: int) -> list[str]:
        bot = load_bot("casual", seed=seed)
        state = HandState.deal(STANDARD, 3)
        out = []
        while state.outcome is None:
            move = bot.choose(state.view(state.to_move))
            out.append(str(move))
            state = state.apply(move)
        return out

    assert moves(5) == moves(5)
    assert any(moves(5) != moves(s) for s in range(6, 12))


def test_casual_slips_to_a_random_legal_move_at_one_decision_in_five() -> None:
    """casual plays the trained move, except at CASUAL_SLIP = 0.2 of its decisions with
    a choice, where every legal move is equally likely (README of the bots: "a random
    legal move at one decision in five"): over 4,000 fixed seeds in a position of
    several moves, the trained move takes 0.8 + 0.2 / k and each other 0.2 / k, which
    a slip of 0.1 or 0.3 would visibly miss."""
    assert CASUAL_SLIP == 0.2
    policy = default_policy()
    for seed in range(20):
        state = HandState.deal(STANDARD, seed)
        view = state.view(state.to_move)
        if len(view.legal_moves) >= 3:
            break
    moves = view.legal_moves
    assert len(moves) >= 3
    best = policy.choose(view)
    casual = load_bot("casual")
    assert isinstance(casual, PolicyBot) and casual.slip == CASUAL_SLIP
    assert casual.temperature == 0
    draws = 4000
    counts = Counter(casual.choose(view, random.Random(seed)) for seed in range(draws))

    def shares(slip: float) -> np.ndarray:
        return np.array([(1 - slip) * (m == best) + slip / len(moves) for m in moves])

    got = np.array([counts[m] for m in moves]) / draws
    # About 3.5 standard errors of the trained move's share (near 0.85) over 4,000 draws.
    np.testing.assert_allclose(got, shares(0.2), atol=0.02)
    assert min(np.abs(shares(x) - shares(0.2)).max() for x in (0.1, 0.3)) > 0.06


def test_a_slip_happens_only_where_there_is_a_choice() -> None:
    """A forced move draws nothing from the generator (so a slip is a real choice gone
    astray), and slip 1 is a uniformly random legal move at every choice."""
    state = HandState.deal(STANDARD, 3)
    forced = None
    while state.outcome is None:
        view = state.view(state.to_move)
        if len(view.legal_moves) == 1:
            forced = view
            break
        state = state.apply(view.legal_moves[0])
    assert forced is not None
    rng = random.Random(5)
    before = rng.getstate()
    assert load_bot("casual").choose(forced, rng) == forced.legal_moves[0]
    assert rng.getstate() == before
    state = HandState.deal(STANDARD, 6)
    view = state.view(state.to_move)
    always = PolicyBot(default_policy(), "mine", None, slip=1)
    assert {always.choose(view, random.Random(s)) for s in range(300)} == set(view.legal_moves)


def test_an_exported_policy_by_path_plays_its_most_likely_move(tmp_path: Path) -> None:
    """load_bot(path) plays like trained (the module docstring), whatever rng it is
    handed: by the folder, and by a stem naming stem.onnx beside its sidecar."""
    for suffix in (".onnx", ".json"):
        shutil.copy(BOTS_DIR / "standard" / f"policy{suffix}", tmp_path / f"mine{suffix}")
    policy = default_policy()
    for given in (str(BOTS_DIR / "standard"), str(tmp_path / "mine")):
        bot = load_bot(given)
        assert isinstance(bot, PolicyBot) and bot.level is None and bot.temperature == 0
        for seed in range(20):
            state = HandState.deal(STANDARD, seed)
            view = state.view(state.to_move)
            assert bot.choose(view, random.Random(seed)) == policy.choose(view), (given, seed)


def test_a_bots_folder_ships_only_networks_for_their_own_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A configuration is shipped when its folder holds policy.onnx (a sidecar alone is
    not a bot), and a shipped folder is loaded for its configuration's rules only: a
    standard network in the pagat folder is refused, never played as pagat."""
    folder = tmp_path / "bots"
    shutil.copytree(BOTS_DIR / "standard", folder / "standard")
    shutil.copytree(BOTS_DIR / "standard", folder / "pagat")  # misplaced
    (folder / "kardinal").mkdir()
    shutil.copy(BOTS_DIR / "kardinal" / "policy.json", folder / "kardinal")
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(folder))
    assert [c.name for c in shipped_configurations()] == ["standard", "pagat"]
    with pytest.raises(PolicyError, match="shipped for kardinal .*; shipped: standard, pagat$"):
        default_policy("kardinal")
    with pytest.raises(PolicyMismatchError, match="trained for standard and cannot play these"):
        default_policy("pagat")
    with pytest.raises(BotError, match="bot pagat cannot be loaded: .*trained for standard"):
        load_bot("trained", rules="pagat")
    assert load_bot("trained", rules="standard").rules == STANDARD


def test_load_level_takes_only_the_trained_levels() -> None:
    # A heuristic level over the shipped bots would play their networks under its name.
    for level in ("greedy", "random", "expert"):
        with pytest.raises(BotError, match=rf"load_level: '{level}' is not a trained level"):
            load_level(level)


def test_errors_are_clear() -> None:
    with pytest.raises(BotError, match="unknown bot 'expert'.*random, greedy, casual, trained"):
        load_bot("expert")
    # Leiden for three is no configuration: no bot is ever shipped for it.
    with pytest.raises(BotError, match="no trained bot is shipped for leiden, 3 players.*standard"):
        load_bot("trained", rules=Rules.preset("leiden", players=3))
    with pytest.raises(
        BotError, match="unknown rules 'leiden_3p': a preset .*kardinal.*pagat_teams"
    ):
        load_bot("trained", rules="leiden_3p")
    with pytest.raises(BotError, match="no exported policy"):
        load_bot(str(ROOT / "missing.onnx"))
    bot = load_bot()
    leiden = HandState.deal(Rules.preset("leiden"), 1)
    with pytest.raises(BotError, match="plays standard only, not leiden"):
        bot.choose(leiden.view(leiden.to_move))
    state = HandState.deal(STANDARD, 1)
    with pytest.raises(BotError, match=f"seat {1 - state.to_move} is not to act"):
        bot.choose(state.view(1 - state.to_move))
    finished = play_hand(STANDARD, [bot, bot], 1)
    with pytest.raises(BotError, match="the hand is over"):
        load_bot("greedy").choose(finished.view(0))
    with pytest.raises(TypeError, match="SeatView"):
        bot.choose({"seat": 0})  # type: ignore[arg-type]


def test_move_json_checks_the_message() -> None:
    state = HandState.deal(STANDARD, 2)
    message = view_to_json(state.view(state.to_move))
    for level in LEVELS:
        reply = load_bot(level, seed=0).move_json(json.loads(json.dumps(message)))
        assert move_from_json(reply) in state.legal_moves()
    with pytest.raises(ProtocolError) as info:
        load_bot().move_json({**message, "rules": "pagat"})
    assert info.value.field == "rules"
    with pytest.raises(ProtocolError) as info:
        load_bot("greedy").move_json({**message, "hand": ["9-9"]})
    assert info.value.field == "hand[0]"


def test_move_json_reads_json_text_strictly() -> None:
    state = HandState.deal(STANDARD, 2)
    message = view_to_json(state.view(state.to_move))
    text = json.dumps(message)
    greedy = load_bot("greedy")
    assert greedy.move_json(text) == greedy.move_json(text.encode()) == greedy.move_json(message)
    # json.loads would keep the last seat; the bot would move for a seat nobody meant.
    twice = text.replace('"seat": ', '"seat": 0, "seat": ', 1)
    with pytest.raises(ProtocolError) as info:
        greedy.move_json(twice)
    assert info.value.field == "(message)" and '"seat" appears twice' in info.value.message
    with pytest.raises(ProtocolError) as info:
        greedy.move_json("{")
    assert info.value.field == "(message)" and "not JSON" in info.value.message


def test_move_json_errors_as_documented() -> None:
    """ProtocolError for a message the protocol refuses (the bot's own rules and a
    history that ends the hand included); BotError for a well-formed view the bot
    cannot move in: another seat is to act, or a trained level has no bot for its rules
    (the docstring and the README say so)."""
    state = HandState.deal(STANDARD, 2)
    message = view_to_json(state.view(state.to_move))
    with pytest.raises(BotError, match=f"seat {1 - state.to_move} is not to act"):
        load_bot("greedy").move_json(view_to_json(state.view(1 - state.to_move)))
    with pytest.raises(BotError, match="no trained bot is shipped for standard, 2 players"):
        load_level("trained").move_json(
            {**message, "rules": {"preset": "standard", "target_score": 50}}
        )
    with pytest.raises(ProtocolError):
        load_bot("trained").move_json({**message, "rules": "pagat"})
    # In process the finished hand's view is a BotError (test_errors_are_clear); as a
    # message it is no view to move in, so the reader refuses its history.
    finished = play_hand(STANDARD, [load_bot("greedy")] * 2, 2)
    with pytest.raises(ProtocolError, match="the history ends the hand") as info:
        load_bot("greedy").move_json(view_to_json(finished.view(0)))
    assert info.value.field == "history"
    docstring = " ".join((Bot.move_json.__doc__ or "").split())
    assert "a ``history`` that ends the hand" in docstring
    assert "Raises :class:`BotError` for a well-formed view the bot cannot move in" in docstring
    readme = " ".join(README.split())
    assert "a history that ends the hand) raises `ProtocolError`" in readme
    assert "cannot move in raises `BotError` instead" in readme


def test_heuristic_levels_play_any_rules_but_check_the_name() -> None:
    # load_bot's docstring: the rules must still be rules for a heuristic level.
    assert load_bot("greedy", rules="leiden").rules is None
    assert load_bot("random", rules=Rules.preset("leiden", players=3)).rules is None
    with pytest.raises(BotError, match="unknown rules 'bogus'"):
        load_bot("greedy", rules="bogus")


def test_a_shared_bot_serves_threads() -> None:
    bot = load_bot("casual", seed=0)
    views = []
    for seed in range(40):
        state = HandState.deal(STANDARD, seed)
        for _ in range(seed % 7):
            if state.outcome is None:
                state = state.apply(state.legal_moves()[0])
        if state.outcome is None:
            views.append(state.view(state.to_move))
    with ThreadPoolExecutor(8) as pool:
        moves = list(pool.map(bot.choose, views * 5))
    assert all(m in v.legal_moves for m, v in zip(moves, views * 5, strict=True))


def test_one_observation_at_a_time_matches_the_batch_across_threads() -> None:
    """A single observation runs through a per-thread I/O binding: its logits equal the
    batch's row, come back as a fresh array, and threads never see each other's."""
    policy = default_policy()
    rng = np.random.default_rng(0)
    obs = rng.random((64, policy.info.obs_size), dtype=np.float32)
    batch = policy.logits(obs)
    first = policy.logits(obs[0])
    first_copy = first.copy()
    second = policy.logits(obs[1])
    # Kept results are not overwritten by the next call (no shared output buffer).
    assert np.array_equal(first, first_copy) and not np.array_equal(first, second)
    np.testing.assert_allclose(first, batch[0], rtol=1e-5, atol=1e-5)
    with ThreadPoolExecutor(8) as pool:
        rows = list(pool.map(policy.logits, list(obs) * 8))
    for i, row in enumerate(rows):
        np.testing.assert_allclose(row, batch[i % len(obs)], rtol=1e-5, atol=1e-5)


BLOCKED = (
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "tensorboard",
    "agents",
    "train",
    "evaluate",
)


def test_runtime_plays_with_torch_absent() -> None:
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {BLOCKED!r}:
                    raise ImportError(f"blocked for the test: {{name}}")
                return None

        sys.meta_path.insert(0, Block())
        import random
        from matador_env.bot import LEVELS, load_bot
        from matador_env.engine import HandState, Rules
        from matador_env.protocol import move_from_json, view_to_json

        rules = Rules.preset("standard")
        for level in LEVELS:
            bot = load_bot(level, seed=1)
            state = HandState.deal(rules, 5)
            while state.outcome is None:
                reply = bot.move_json(view_to_json(state.view(state.to_move)))
                state = state.apply(move_from_json(reply))
        blocked = [m for m in sys.modules if m.split(".")[0] in {BLOCKED!r}]
        print("ok", blocked)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok []"


def test_encoding_examples_are_test_vectors() -> None:
    import numpy as np

    from matador_env.encoding import encoding_for
    from matador_env.protocol import view_from_json

    data = encoding_examples("standard", count=6, seed=3)
    enc = encoding_for(STANDARD)
    policy = default_policy()
    assert len(data["actions"]) == data["num_actions"] == enc.num_actions
    assert sum(int(np.prod(p["shape"])) for p in data["pieces"]) == data["obs_size"]
    for pos in data["positions"]:
        view = view_from_json(pos["view"])
        assert np.allclose(enc.observation(view), pos["observation"])
        assert sorted(pos["legal_actions"]) == sorted(
            enc.encode_action(m) for m in view.legal_moves
        )
        # The logits a frontend's own runtime must reproduce: the policy's, to 5 decimals.
        obs = np.asarray(pos["observation"], np.float32)
        np.testing.assert_allclose(pos["logits"], policy.logits(obs), rtol=0, atol=1e-5)
        legal = pos["legal_actions"]
        best = max(legal, key=lambda a: pos["logits"][a])
        assert pos["action"] == best and data["actions"][best] == pos["move"]
    greedy = encoding_examples("leiden", count=2, seed=1, level="greedy")
    assert "logits" not in greedy["positions"][0]


def test_bot_command_line(tmp_path: Path) -> None:
    import os

    from tests.test_shipped_bots import export_untrained

    run = [sys.executable, "-m", "matador_env.bot"]
    done = subprocess.run([*run, "levels"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and "casual" in done.stdout
    assert re.search(r"^  standard +standard, 2 players$", done.stdout, re.M), done.stdout
    # Another folder of bots (MATADOR_BOTS_DIR): every configuration in it is listed.
    env = {**os.environ, BOTS_DIR_VARIABLE: str(export_untrained(tmp_path / "bots"))}
    done = subprocess.run(
        [*run, "levels"], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env
    )
    assert "shipped for 2 of the 11 configurations" in done.stdout, done.stdout
    assert re.search(r"^  standard_4p +standard, 4 players, each for himself$", done.stdout, re.M)
    assert re.search(r"^  pagat_teams +pagat, 4 players in two partnerships$", done.stdout, re.M)
    assert re.search(r"^not shipped .*: standard, pagat, .*standard_3p$", done.stdout, re.M)
    done = subprocess.run(
        [*run, "examples", "--count", "1"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0 and json.loads(done.stdout)["positions"][0]["move"]
    # --config names a configuration as in play and evaluate (the same flag as --preset)
    done = subprocess.run(
        [*run, "examples", "--count", "1", "--config", "pagat_teams"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rules = json.loads(done.stdout)["rules"]
    assert (rules["players"], rules["teams"]) == (4, True)
    done = subprocess.run(
        [*run, "examples", "--preset", "leiden"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )
    assert done.returncode == 2 and "no trained bot is shipped for leiden" in done.stderr
    assert "shipped for: standard_4p, pagat_teams" in done.stderr


def test_levels_are_arena_agents() -> None:
    from agents import AgentSpecError, make_agent

    agent = make_agent("bot:casual")
    state = HandState.deal(STANDARD, 4)
    view = state.view(state.to_move)
    assert agent.act(view, random.Random(1)) == agent.act(view, random.Random(1))
    with pytest.raises(AgentSpecError, match="random, greedy, casual, trained"):
        make_agent("bot:expert")


def test_examples_errors_name_the_subcommand_and_refuse_an_empty_level() -> None:
    run = [sys.executable, "-m", "matador_env.bot", "examples"]
    prog = "python -m matador_env.bot examples"
    for argv, says in (
        (["--count", "0"], f"usage: {prog} [-h]"),  # the subcommand's usage, then its error
        (["--count", "-1"], f"\n{prog}: error: --count must be from 1 to 10,000\n"),
        # It ran for ever before printing anything.
        (["--count", "9" * 20], f"\n{prog}: error: --count must be from 1 to 10,000\n"),
        (["--level", ""], f"{prog}: error: no bot named: give a level (random, greedy,"),
        (["--level", str(ROOT / "missing.onnx")], f"{prog}: error: no exported policy at "),
    ):
        done = subprocess.run([*run, *argv], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert "no exported policy at ." not in done.stderr
    for empty in ("", "  "):
        with pytest.raises(BotError, match="not an empty text"):
            load_bot(empty)


@pytest.mark.parametrize("tail", ["", ".onnx", "/policy.json"])
def test_a_policy_path_too_long_to_look_up_is_a_bot_error_naming_why(
    tmp_path: Path, tail: str
) -> None:
    # Looking such a name up raises OSError (ENAMETOOLONG): it escaped as a traceback
    # from load_bot, load_policy, --agents policy:PATH and serve --bots mine=PATH.
    long = f"{tmp_path / ('x' * 300)}{tail}"
    with pytest.raises(BotError, match=r": it cannot be looked up \(File name too long\)$"):
        load_bot(long)
    with pytest.raises(PolicyError, match=r": it cannot be looked up \(File name too long\)$"):
        load_policy(long)
