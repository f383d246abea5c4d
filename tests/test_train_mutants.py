"""Fast unit checks of the training recipe that mutation testing found unguarded.

Each test calls one function of ``train/pretrain.py``, ``train/selfplay.py`` or
``train/loop.py`` with small constructed inputs (a tiny network, scripted random
numbers, a stand-in trainer) instead of running a training, and pins a behaviour
whose change no other fast test noticed: the soft targets' arithmetic, which
decisions the behaviour-cloning fit trains on and with which step sizes, the
opponent pool's schedule, when the loop snapshots, evaluates and checkpoints, and
which policy a run keeps.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

import train.loop as loop
import train.pretrain as pretrain
from matador_env.encoding import encoding_for
from matador_env.engine import Rules
from train.args import ArgsError
from train.checkpoint import CheckpointError
from train.files import RunFolderError
from train.run import TrainArgs
from train.selfplay import BatchOpponentPool, OpponentPool, SelfPlayEnv, _Schedule

RULES = Rules.preset("standard")
ENC = encoding_for(RULES)


# -- soft targets ----------------------------------------------------------------------


def test_a_candidate_of_action_zero_keeps_its_share_of_the_target() -> None:
    # Action 0 is a real action: a candidate list holding it (and padded with -1, which
    # is clamped onto column 0 for the scatter) must still give it its softmax share,
    # not drop it as padding nor let the padding overwrite it.
    cands = torch.tensor([[0, 2, -1, -1]])
    values = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    target = pretrain.soft_targets(cands, values, torch.tensor([0]), 4, temperature=1.0)
    e = math.e
    expected = torch.tensor([[e / (e + 1), 0.0, 1 / (e + 1), 0.0]])
    assert torch.allclose(target, expected)


def test_a_single_candidate_that_is_not_the_teachers_action_gives_way_to_the_action() -> None:
    # Rows of one candidate are documented to fall back to the chosen action: the
    # target is the teacher's move even when the one recorded candidate differs.
    cands = torch.tensor([[4, -1, -1]])
    target = pretrain.soft_targets(cands, torch.tensor([[9.0, 0, 0]]), torch.tensor([1]), 6, 1.0)
    assert target.tolist() == [[0.0, 1.0, 0.0, 0.0, 0.0, 0.0]]


# -- discounted returns ----------------------------------------------------------------


def test_discounted_returns_discount_every_step_back_to_the_first() -> None:
    # The critic's target after each step, the first one included.
    assert pretrain._discounted([1.0, 0.0, 2.0], 0.5) == [1.5, 1.0, 2.0]
    assert pretrain._discounted([], 0.5) == []


# -- collection: chunks and their seeds --------------------------------------------------


def _jobs_of(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **kwargs: Any) -> list[Any]:
    """The chunk jobs :func:`pretrain.collect` hands out (nothing is played: the stand-in
    writes no file, so the collection then fails reading its first chunk)."""
    jobs: list[Any] = []

    def record(job: pretrain.ChunkJob) -> str:
        jobs.append(job)
        return job.path

    monkeypatch.setattr(pretrain, "CHUNK", 4)
    monkeypatch.setattr(pretrain, "_collect_chunk", record)
    settings: dict[str, Any] = {
        "rules": RULES,
        "teacher": "greedy",
        "opponent": "random",
        "decisions": 10,
        "seed": 3,
        "gamma": 0.9,
        "reward_scale": 0.5,
        "workers": 1,
        "progress": False,
    }
    settings.update(kwargs)
    with pytest.raises(RunFolderError, match="cannot be read"):
        pretrain.collect(tmp_path / "pre", **settings)
    return jobs


def test_a_collection_is_cut_into_chunks_each_with_its_own_seed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Ten decisions in chunks of four: 4, 4 and the remaining 2, each chunk seeded
    # apart (one seed for all would repeat the same hands in every chunk).
    jobs = _jobs_of(monkeypatch, tmp_path)
    assert [j.decisions for j in jobs] == [4, 4, 2]
    assert [Path(j.path).name for j in jobs] == [
        "chunk_0000_4.npz",
        "chunk_0001_4.npz",
        "chunk_0002_2.npz",
    ]
    assert [j.seed for j in jobs] == [3 * 10_007, 3 * 10_007 + 1, 3 * 10_007 + 2]


def test_each_dagger_round_collects_on_seeds_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Round r's chunks are seeded apart from the first collection and from every other
    # round: two rounds on one seed would label the same deals twice.
    first = {j.seed for j in _jobs_of(monkeypatch, tmp_path / "a", decisions=8)}
    rounds = [
        {
            j.seed
            for j in _jobs_of(
                monkeypatch, tmp_path / f"r{r}", decisions=8, driver="d", dagger_round=r
            )
        }
        for r in (1, 2, 3)
    ]
    seen = [first, *rounds]
    assert all(len(s) == 2 for s in seen)
    assert len(set().union(*seen)) == 8


def test_a_first_collection_of_one_decision_is_refused_before_collecting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(pretrain, "_collect_chunk", lambda job: pytest.fail("collected"))
    with pytest.raises(ArgsError, match="--bc-decisions: 1 is not allowed"):
        pretrain.collect(
            tmp_path / "pre", RULES, "greedy", "random", 1, seed=1, gamma=0.9,
            reward_scale=1.0, workers=1, progress=False,
        )  # fmt: skip
    assert not (tmp_path / "pre").exists()


def _collect(folder: Path, **changes: Any) -> dict[str, np.ndarray]:
    settings: dict[str, Any] = {
        "rules": Rules.preset("pagat"),
        "teacher": "greedy",
        "opponent": "random",
        "decisions": 40,
        "seed": 1,
        "gamma": 0.9,
        "reward_scale": 1.0,
        "workers": 1,
        "progress": False,
    }
    settings.update(changes)
    return pretrain.collect(folder, **settings)


def test_skipping_forced_moves_keeps_the_other_decisions_and_their_returns(
    tmp_path: Path,
) -> None:
    # The same hands are played whether or not forced moves are recorded (the teacher's
    # random numbers do not depend on it), so the skipping collection is the full one's
    # decisions with a choice, each with the return that followed it in its own hand.
    full = _collect(tmp_path / "full", decisions=120)
    chosen = _collect(tmp_path / "skip", decisions=30, skip_forced=True)
    choice = full["mask"].sum(axis=1) > 1
    assert choice.sum() >= 30 and not choice.all()
    assert (chosen["mask"].sum(axis=1) > 1).all()
    for key in ("obs", "mask", "action", "ret"):
        np.testing.assert_array_equal(chosen[key], full[key][choice][:30])


def test_the_returns_are_of_the_scaled_reward(tmp_path: Path) -> None:
    # The value head is fitted to what PPO sees: the reward times --reward-scale.
    one = _collect(tmp_path / "one", decisions=20)
    half = _collect(tmp_path / "half", decisions=20, reward_scale=0.5)
    assert np.abs(one["ret"]).max() > 0
    np.testing.assert_allclose(half["ret"], one["ret"] * 0.5, rtol=1e-6)


def test_every_hand_of_a_collection_is_a_new_deal(tmp_path: Path) -> None:
    # 40 decisions span several hands; the first observation of the first hand is not
    # met again (each hand is dealt from its own seed, not all from the chunk's).
    data = _collect(tmp_path / "pre", decisions=40)
    assert (data["obs"] == data["obs"][0]).all(axis=1).sum() == 1


def test_a_search_teacher_records_no_candidates_for_a_forced_move_and_pads_with_minus_one(
    tmp_path: Path,
) -> None:
    data = _collect(tmp_path / "pre", rules=RULES, teacher="search:samples=2,width=3", decisions=40)
    forced = data["mask"].sum(axis=1) == 1
    assert forced.any() and (~forced).any()
    assert (data["cand"][forced] == -1).all()
    assert (data["value"][forced] == 0).all()
    # The candidates the search valued, legal moves, then -1 to the end of the row.
    for row, mask in zip(data["cand"][~forced], data["mask"][~forced], strict=True):
        valid = row[row >= 0]
        assert len(valid) >= 1 and mask[valid].all() and (row[len(valid) :] == -1).all()


# -- chunk checks ----------------------------------------------------------------------


def test_a_negative_action_is_never_legal() -> None:
    # -1 must not wrap around to the last action's entry of the mask.
    mask = np.ones((1, 5), np.bool_)
    assert pretrain._legal(mask, np.array([[-1, 4, 5]])).tolist() == [[False, True, False]]


def _chunk(tmp_path: Path, **arrays: np.ndarray) -> Path:
    n = 3
    mask = np.zeros((n, ENC.num_actions), np.bool_)
    mask[:, :3] = True
    full: dict[str, Any] = {
        "obs": np.zeros((n, ENC.obs_size), np.float32),
        "mask": mask,
        "action": np.zeros(n, np.int64),
        "ret": np.zeros(n, np.float32),
        "cand": np.tile(np.array([[0, 1, -1]], np.int32), (n, 1)),
        "value": np.zeros((n, 3), np.float32),
    }
    full.update(arrays)
    path = tmp_path / "chunk_0000_3.npz"
    np.savez(path, **full)
    return path


def _job(path: Path, decisions: int = 3) -> pretrain.ChunkJob:
    return pretrain.ChunkJob(RULES.to_dict(), "search", "random", decisions, 1, 0.9, 1.0, str(path))


def test_chunk_checks_refuse_a_wrong_count_a_bad_padding_and_ragged_arrays(
    tmp_path: Path,
) -> None:
    good = _chunk(tmp_path)
    assert len(pretrain._load_chunk(good, _job(good))["action"]) == 3
    with pytest.raises(RunFolderError, match="holds 3 decisions, not the 4"):
        pretrain._load_chunk(good, _job(good, decisions=4))
    bad = _chunk(tmp_path, cand=np.tile(np.array([[0, 1, -2]], np.int32), (3, 1)))
    with pytest.raises(RunFolderError, match="candidates .* are not -1"):
        pretrain._load_chunk(bad, _job(bad))
    ragged = _chunk(tmp_path, ret=np.zeros(2, np.float32))
    with pytest.raises(RunFolderError, match="arrays differ in length"):
        pretrain._load_chunk(ragged)
    infinite = _chunk(tmp_path, value=np.full((3, 3), np.inf, np.float32))
    with pytest.raises(RunFolderError, match="'value' array holds a number that is not"):
        pretrain._load_chunk(infinite, _job(infinite))


# -- the behaviour-cloning fit ---------------------------------------------------------


def _policy() -> Any:
    """A tiny sb3-contrib policy of the standard table (one hidden layer of 16)."""
    from sb3_contrib import MaskablePPO

    from matador_env.gym_env import MatadorSingleEnv

    model = MaskablePPO(
        "MlpPolicy", MatadorSingleEnv(rules=RULES), n_steps=64, batch_size=64, seed=3,
        device="cpu", policy_kwargs={"net_arch": [16]},
    )  # fmt: skip
    return model.policy


def _data(n: int, seed: int = 0, ret: float = 0.0) -> dict[str, np.ndarray]:
    """``n`` made-up decisions: column 0 of each observation is its row number (so a
    spy can tell which rows a call saw), two to four legal actions among the first
    eight, the teacher's action the first of them, candidates the legal ones."""
    gen = np.random.default_rng(seed)
    obs = gen.normal(size=(n, ENC.obs_size)).astype(np.float32)
    obs[:, 0] = np.arange(n)
    mask = np.zeros((n, ENC.num_actions), np.bool_)
    cand = np.full((n, 4), -1, np.int32)
    for i in range(n):
        legal = np.sort(gen.choice(8, size=int(gen.integers(2, 5)), replace=False))
        mask[i, legal] = True
        cand[i, : len(legal)] = legal
    return {
        "obs": obs,
        "mask": mask,
        "action": cand[:, 0].astype(np.int64),
        "ret": np.full(n, ret, np.float32) + gen.normal(size=n).astype(np.float32),
        "cand": cand,
        "value": gen.normal(size=(n, 4)).astype(np.float32),
    }


def _spy(policy: Any) -> dict[str, list[list[int]]]:
    """The rows (by their number in column 0) of every batch the policy is called on,
    under ``train`` while it is in training mode, else under ``eval``."""
    seen: dict[str, list[list[int]]] = {"train": [], "eval": []}
    for name in ("evaluate_actions", "get_distribution"):
        original = getattr(policy, name)

        def spy(obs: torch.Tensor, *args: Any, _original: Any = original, **kw: Any) -> Any:
            seen["train" if policy.training else "eval"].append(obs[:, 0].long().tolist())
            return _original(obs, *args, **kw)

        object.__setattr__(policy, name, spy)
    return seen


def test_the_fit_trains_each_epoch_on_every_decision_but_the_held_out_twentieth() -> None:
    # 45 decisions: 2 (a twentieth) held out, never trained on; the other 43 each
    # epoch, in batches of 8 with the last one short, shuffled anew every epoch.
    policy = _policy()
    seen = _spy(policy)
    pretrain.fit(policy, _data(45), 2, 8, 1e-3, 0.5, seed=7, progress=False)
    order = np.random.default_rng(7).permutation(45)
    held, trained = sorted(order[:2].tolist()), sorted(order[2:].tolist())
    batches = seen["train"]
    assert [len(b) for b in batches] == [8, 8, 8, 8, 8, 3] * 2
    epochs = [sum(batches[:6], []), sum(batches[6:], [])]
    assert [sorted(e) for e in epochs] == [trained, trained]
    assert epochs[0] != epochs[1]
    assert all(sorted(rows) == held for rows in seen["eval"])


def test_the_fit_holds_out_at_least_one_decision() -> None:
    policy = _policy()
    seen = _spy(policy)
    figures = pretrain.fit(policy, _data(3), 1, 8, 1e-3, 0.5, seed=7, progress=False)
    assert figures["held_out"] == 1 and figures["decisions"] == 3
    held = np.random.default_rng(7).permutation(3)[:1].tolist()
    assert seen["eval"] and all(rows == held for rows in seen["eval"])
    assert sorted(seen["train"][0]) == sorted(set(range(3)) - set(held))


def test_the_fit_refuses_a_single_decision() -> None:
    with pytest.raises(ArgsError, match="--bc-decisions: 1 is not allowed"):
        pretrain.fit(_policy(), _data(1), 1, 8, 1e-3, 0.5, seed=7, progress=False)


def test_soft_targets_are_refused_for_decisions_without_candidate_values() -> None:
    # A teacher that only chooses records zero candidate columns: a soft fit on them
    # would silently train on the hard choices instead.
    chooser = {**_data(8), "cand": np.zeros((8, 0), np.int32), "value": np.zeros((8, 0))}
    with pytest.raises(RunFolderError, match="a teacher that values its candidates"):
        pretrain.fit(_policy(), chooser, 1, 8, 1e-3, 0.5, 1, False, soft_temperature=1.0)
    older = {k: v for k, v in _data(8).items() if k not in ("cand", "value")}
    with pytest.raises(RunFolderError, match="which these decisions lack"):
        pretrain.fit(_policy(), older, 1, 8, 1e-3, 0.5, 1, False, soft_temperature=1.0)


def test_the_step_size_decays_on_a_cosine_over_the_whole_fit_and_gradients_are_clipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Returns far from the untrained value head's outputs: gradients well above the
    # clipping norm of 0.5, which each step must have been cut to.
    lrs: list[float] = []
    norms: list[float] = []
    step = torch.optim.Adam.step

    def spy(self: torch.optim.Adam, *args: Any, **kw: Any) -> Any:
        lrs.append(self.param_groups[0]["lr"])
        grads = [
            p.grad.norm() for g in self.param_groups for p in g["params"] if p.grad is not None
        ]
        norms.append(torch.stack(grads).norm().item())
        return step(self, *args, **kw)

    monkeypatch.setattr(torch.optim.Adam, "step", spy)
    pretrain.fit(_policy(), _data(45, ret=50.0), 3, 16, 2e-3, 0.5, seed=1, progress=False)
    total = 3 * math.ceil(43 / 16)
    assert lrs == pytest.approx(
        [2e-3 * 0.5 * (1 + math.cos(math.pi * k / total)) for k in range(total)]
    )
    assert max(norms) == pytest.approx(0.5, rel=1e-3)


def _value_side(policy: Any) -> dict[str, torch.Tensor]:
    return {
        k: v.detach().clone()
        for k, v in policy.state_dict().items()
        if k.startswith(("value_net.", "mlp_extractor.value_net."))
    }


@pytest.mark.parametrize("soft", [0.0, 1.0], ids=["hard", "soft"])
def test_the_value_head_learns_by_vf_coef_under_either_target(soft: float) -> None:
    # The value loss is weighted by vf_coef: 0 leaves the value side as it was (Adam
    # moves nothing without a gradient), above 0 fits it, with hard or soft targets.
    def fitted(vf_coef: float) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        policy = _policy()
        before = _value_side(policy)
        data = _data(40, ret=5.0)
        pretrain.fit(policy, data, 1, 8, 1e-2, vf_coef, 2, False, soft_temperature=soft)
        return before, _value_side(policy)

    before, after = fitted(0.0)
    assert all(torch.equal(before[k], after[k]) for k in before)
    before, after = fitted(0.5)
    assert all(not torch.equal(before[k], after[k]) for k in before)


def _probs(policy: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(obs), action_masks=mask)
        return dist.distribution.probs.numpy()  # type: ignore[no-any-return]


def _one_position(n: int) -> dict[str, np.ndarray]:
    """``n`` copies of one position: three legal actions (1, 2, 3), the teacher
    choosing 1 and valuing its candidates 2, 0 and -2 points."""
    mask = np.zeros((n, ENC.num_actions), np.bool_)
    mask[:, 1:4] = True
    return {
        "obs": np.zeros((n, ENC.obs_size), np.float32),
        "mask": mask,
        "action": np.ones(n, np.int64),
        "ret": np.zeros(n, np.float32),
        "cand": np.tile(np.array([[1, 2, 3]], np.int32), (n, 1)),
        "value": np.tile(np.array([[2.0, 0.0, -2.0]], np.float32), (n, 1)),
    }


def test_a_soft_fit_converges_on_the_softmax_of_values_over_the_temperature() -> None:
    # The clone's distribution goes to softmax(values / T) = softmax(1, 0, -1) at
    # T = 2 points: not that of another temperature, nor all on the best candidate.
    data = _one_position(40)
    policy = _policy()
    pretrain.fit(policy, data, 40, 8, 2e-2, 0.0, 1, False, soft_temperature=2.0)
    probs = _probs(policy, data["obs"][:1], data["mask"][:1])[0, 1:4]
    target = np.exp([1.0, 0.0, -1.0]) / np.exp([1.0, 0.0, -1.0]).sum()
    assert probs == pytest.approx(target, abs=0.03)


def test_a_hard_fit_moves_the_policy_onto_the_teachers_action() -> None:
    data = _one_position(40)
    policy = _policy()
    before = pretrain.fit(policy, data, 0, 8, 2e-2, 0.0, 1, False)
    after = pretrain.fit(policy, data, 20, 8, 2e-2, 0.0, 1, False)
    assert _probs(policy, data["obs"][:1], data["mask"][:1])[0, 1] > 0.9
    assert before["held_out_cross_entropy"] is not None
    assert after["held_out_cross_entropy"] is not None
    assert after["held_out_cross_entropy"] < before["held_out_cross_entropy"]


def test_the_held_out_figures_are_measured_as_documented() -> None:
    # 60 decisions, 3 held out: one forced, one where the teacher chose the policy's
    # favourite, one where it did not. The agreement counts only the two with a choice
    # (1/2), the cross-entropy is -mean log p(teacher's action), the value error a mean
    # square; an epoch-0 fit leaves the policy as it was, so the test can recompute them.
    data = _data(60, ret=1.0)
    policy = _policy()
    held = np.random.default_rng(4).permutation(60)[:3]
    data["mask"][held[0]] = False
    data["mask"][held[0], 6] = True
    data["action"][held[0]] = 6
    probs = _probs(policy, data["obs"][held], data["mask"][held])
    data["action"][held[1]] = int(probs[1].argmax())
    legal = np.flatnonzero(data["mask"][held[2]])
    data["action"][held[2]] = int(legal[legal != probs[2].argmax()][0])
    figures = pretrain.fit(policy, data, 0, 8, 1e-3, 0.5, seed=4, progress=False)
    assert figures["held_out"] == 3
    assert figures["held_out_agreement"] == 0.5
    taught = probs[np.arange(3), data["action"][held]]
    assert figures["held_out_cross_entropy"] == pytest.approx(-np.log(taught).mean(), abs=1e-4)
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(data["obs"][held])).flatten().numpy()
    mse = float(((values - data["ret"][held]) ** 2).mean())
    assert figures["held_out_value_mse"] == pytest.approx(mse, abs=1e-4)


# -- the opponent pool's schedule ------------------------------------------------------


def _scripted(*draws: float) -> Any:
    """A ``uniform()`` that returns ``draws`` in turn."""
    left = list(draws)
    return lambda: left.pop(0)


SNAPS = [Path("step_1"), Path("step_2"), Path("step_3")]


def test_a_snapshot_share_of_0_never_draws_a_snapshot_and_1_always_does() -> None:
    never = _Schedule(None, 0.0, 0.5, 3)
    assert never._draw_snapshot(SNAPS, _scripted(0.0), lambda r: pytest.fail("drew")) is None
    always = _Schedule(None, 1.0, 1.0, 3)
    assert always._draw_snapshot(SNAPS, _scripted(0.999, 0.5), lambda r: r[0]) == SNAPS[-1]
    assert always._draw_snapshot([], _scripted(), lambda r: r[0]) is None


def test_a_snapshot_is_the_newest_by_latest_share_else_one_of_the_newest_pool_size() -> None:
    schedule = _Schedule(None, 1.0, 0.25, 2)
    offered: list[list[Path]] = []

    def choose(recent: list[Path]) -> Path:
        offered.append(recent)
        return recent[0]

    # Below latest_share: the newest snapshot.
    assert schedule._draw_snapshot(SNAPS, _scripted(0.0, 0.1), choose) == SNAPS[-1]
    assert offered == []
    # At latest_share or above: a choice among the newest pool_size (2) snapshots.
    assert schedule._draw_snapshot(SNAPS, _scripted(0.0, 0.25), choose) == SNAPS[1]
    assert offered == [SNAPS[1:]]


def test_the_shares_may_be_0_or_1_and_the_pool_must_hold_one_snapshot() -> None:
    for share in (0.0, 1.0):
        _Schedule(None, share, share, 1)
    with pytest.raises(ValueError, match="pool_size must be >= 1, got 0"):
        _Schedule(None, 0.5, 0.5, 0)


def test_baselines_are_drawn_by_their_weights() -> None:
    rng = random.Random(0)
    pool = OpponentPool(None, baseline_weights={"random": 0.0, "greedy": 1.0})
    assert {pool.resample(rng) for _ in range(40)} == {"greedy"}
    both = OpponentPool(None, baseline_weights={"random": 1.0, "greedy": 1.0})
    assert {both.resample(rng) for _ in range(40)} == {"random", "greedy"}


def test_playing_as_a_baseline_makes_it_the_current_opponent() -> None:
    # A resumed run goes on against the opponent its episode had drawn: play_as must
    # change ``current`` (the first baseline is current before any draw).
    pool = OpponentPool(None, baseline_weights={"random": 1.0, "greedy": 1.0})
    pool.play_as("greedy")
    assert pool.current == "greedy"


def test_envs_of_different_seeds_draw_different_opponents() -> None:
    # The pool's random numbers come from the env's seed (two runs, or two environments
    # of one run, must not meet the same sequence of opponents).
    def opponents(seed: int) -> list[str]:
        pool = OpponentPool(None, baseline_weights={"greedy": 1.0, "random": 1.0})
        env = SelfPlayEnv(pool=pool, rules=RULES)
        drawn = []
        for i in range(40):
            env.reset(seed=seed if i == 0 else None)
            drawn.append(pool.current)
        return drawn

    assert opponents(1) != opponents(2)
    assert opponents(1) == opponents(1)


def test_a_live_state_must_name_a_seat_of_the_table_and_the_one_to_move() -> None:
    from train.selfplay import check_live_state

    def env() -> SelfPlayEnv:
        return SelfPlayEnv(pool=OpponentPool(None, {"random": 1.0}), rules=RULES)

    saved = env()
    saved.reset(seed=1)
    state = json.loads(json.dumps(saved.live_state()))
    check_live_state(state, env())
    with pytest.raises(ValueError, match="'seat' is 2, not a seat from 0 to 1"):
        check_live_state({**state, "seat": RULES.players}, env())
    other = 1 - state["seat"]
    with pytest.raises(ValueError, match=f"to move, not the learner's {other}"):
        check_live_state({**state, "seat": other}, env())


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny policy exported as a run exports its snapshots."""
    from train.export import export_policy

    folder = tmp_path_factory.mktemp("export") / "policy"
    export_policy(_policy(), RULES, folder, {"steps": 5})
    return folder


def _pool_dir(tmp_path: Path, exported: Path, *steps: int) -> Path:
    pool = tmp_path / "pool"
    for step in steps:
        shutil.copytree(exported, pool / f"step_{step}")
    return pool


def test_a_drawn_snapshot_is_the_current_opponent_by_name_and_plays(
    tmp_path: Path, exported: Path
) -> None:
    pool = OpponentPool(
        _pool_dir(tmp_path, exported, 5), {"random": 1.0}, snapshot_share=1.0, latest_share=1.0
    )
    assert pool.resample(random.Random(0)) == "snapshot:step_5"
    assert pool.current == "snapshot:step_5"
    # The snapshot plays the other seats (a policy chooses from a seat view).
    env = SelfPlayEnv(pool=pool, rules=RULES)
    rng = random.Random(1)
    env.reset(seed=3)
    for _ in range(30):
        action = rng.choice(np.flatnonzero(env.action_masks()).tolist())
        if any(env.step(action)[2:4]):
            env.reset()
    assert pool.current == "snapshot:step_5"


def test_batch_slots_draw_among_the_pools_snapshots_and_keep_them_for_the_episode(
    tmp_path: Path, exported: Path
) -> None:
    pool_dir = _pool_dir(tmp_path, exported, 1, 2, 3)
    pool = BatchOpponentPool(pool_dir, snapshot_share=0.5, latest_share=0.0, pool_size=3)
    slots = np.arange(32)
    obs = np.zeros((32, ENC.obs_size), np.float32)
    masks = np.ones((32, ENC.num_actions), np.bool_)
    pool(obs, masks, slots, np.zeros(32, np.int64))
    first = dict(pool.current)
    assert {n for n in first.values()} == {"random", *(f"snapshot:step_{s}" for s in (1, 2, 3))}
    for _ in range(5):  # the same episodes: no slot draws again
        pool(obs, masks, slots, np.zeros(32, np.int64))
    assert pool.current == first


@pytest.mark.parametrize(
    "name",
    ["snapshot:../elsewhere/step_7", "snapshot:{outside}", "snapshot:step_5/", "snapshot:step_"],
)
def test_a_saved_opponent_names_a_snapshot_of_its_pool_never_a_path(
    tmp_path: Path, exported: Path, name: str
) -> None:
    """An opponent named in a checkpoint's file loads only the pool's own step_<N>
    folders: a policy elsewhere on the disk (of other rules, say) is refused, though
    it is a complete export."""
    pool_dir = _pool_dir(tmp_path, exported, 5)
    shutil.copytree(exported, tmp_path / "elsewhere" / "step_7")
    name = name.format(outside=tmp_path / "elsewhere" / "step_7")
    words = "is not a snapshot's name; allowed: snapshot:step_<N>"
    with pytest.raises(ValueError, match=re.escape(words)):
        OpponentPool(pool_dir, {"random": 1.0}).play_as(name)
    batch = BatchOpponentPool(pool_dir)
    state = json.loads(json.dumps(batch.live_state()))
    with pytest.raises(ValueError, match=re.escape(words)):
        batch.restore_live_state({**state, "slots": [[0, 1, name]]})
    assert batch.live_state() == state
    # The pool's own snapshot is taken by both.
    OpponentPool(pool_dir, {"random": 1.0}).play_as("snapshot:step_5")
    batch.restore_live_state({**state, "slots": [[0, 1, "snapshot:step_5"]]})


def test_a_batch_pool_goes_on_from_its_live_state_and_refuses_unknown_opponents() -> None:
    pool = BatchOpponentPool(None, snapshot_share=0.5, seed=4)
    pool(np.zeros((2, ENC.obs_size), np.float32), np.ones((2, ENC.num_actions), np.bool_),
         np.arange(2), np.zeros(2, np.int64))  # fmt: skip
    state = json.loads(json.dumps(pool.live_state()))
    other = BatchOpponentPool(None, seed=99)
    other.restore_live_state(state)
    assert other.current == pool.current
    assert other.rng.random() == pool.rng.random()
    bad = {**state, "slots": [[0, 1, "expert"]]}
    with pytest.raises(ValueError, match="opponent 'expert'; allowed: random"):
        BatchOpponentPool(None).restore_live_state(bad)
    # Rows no run writes: taken, they would be read back otherwise (the last row of a
    # slot kept) or name no slot.
    kept = other.live_state()
    for rows, words in (
        ([[0, 1, "random"], [0, 0, "random"]], "'slots' lists slot 0 twice; allowed: each"),
        ([[-1, 0, "random"]], r"'slots' has the row \[-1, 0, ...\]; allowed: a slot and its"),
        ([[0, -3, "random"]], r"'slots' has the row \[0, -3, ...\]; allowed"),
    ):
        with pytest.raises(ValueError, match=words):
            other.restore_live_state({**state, "slots": rows})
        assert other.live_state() == kept


# -- the loop: rewards, seeds and rollouts ---------------------------------------------


def _legal_action(mask: np.ndarray, rng: random.Random) -> int:
    return int(rng.choice(np.flatnonzero(mask).tolist()))


def test_the_learners_rewards_are_scaled_in_either_kind_of_environment() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    def make(scale: float) -> loop.ScaledSelfPlayEnv:
        pool = OpponentPool(None, baseline_weights={"random": 1.0})
        return loop.ScaledSelfPlayEnv(reward_scale=scale, pool=pool, rules=RULES)

    env, rng = make(0.5), random.Random(0)
    env.reset(seed=1)
    seen = []
    for _ in range(200):
        _, reward, terminated, truncated, info = env.step(_legal_action(env.action_masks(), rng))
        seen.append((reward, info["raw_reward"]))
        if terminated or truncated:
            env.reset()
    assert any(raw != 0 for _, raw in seen)
    assert all(reward == raw * 0.5 for reward, raw in seen)
    venv = loop.ScaledVecEnv(DummyVecEnv([lambda: make(1.0)]), reward_scale=0.25)
    venv.reset()
    vec_seen = []
    for _ in range(200):
        mask = venv.env_method("action_masks")[0]
        _, rewards, _, infos = venv.step(np.array([_legal_action(mask, rng)]))
        vec_seen.append((float(rewards[0]), infos[0]["raw_reward"]))
    assert any(raw != 0 for _, raw in vec_seen)
    assert all(reward == pytest.approx(raw * 0.25) for reward, raw in vec_seen)


def test_each_environment_of_a_run_deals_from_its_own_seed(tmp_path: Path) -> None:
    args = TrainArgs(seed=1, baselines="random")
    seeds = [loop._env_factory(args, RULES, tmp_path, rank)().game.seed for rank in (0, 1)]
    assert seeds[0] != seeds[1]


def test_a_vector_run_splits_the_rollout_among_its_slots() -> None:
    assert loop.rollout_steps_per_env(TrainArgs(n_steps=256, n_envs=4, vector_envs=8)) == 128
    assert loop.rollout_steps_per_env(TrainArgs(n_steps=256, n_envs=4)) == 256


# -- the loop: when to snapshot, evaluate and checkpoint --------------------------------


def test_the_next_due_step_is_the_next_multiple_and_never_for_0() -> None:
    # Multiples of the interval, wherever the run is (a resumed run, or a rollout that
    # passed the due step): not the current step plus the interval.
    assert loop.Trainer._after(SimpleNamespace(steps=2560), 1000) == 3000  # type: ignore[arg-type]
    assert loop.Trainer._after(SimpleNamespace(steps=3000), 1000) == 4000  # type: ignore[arg-type]
    assert loop.Trainer._after(SimpleNamespace(steps=5), 0) == math.inf  # type: ignore[arg-type]


def _boundary_trainer(monkeypatch: pytest.MonkeyPatch, steps: int) -> Any:
    monkeypatch.setattr(loop.checkpoint, "capture", lambda model, extra: "captured")
    calls: list[str] = []
    fake: Any = SimpleNamespace(
        steps=steps,
        args=SimpleNamespace(snapshot_every=1000, eval_every=500, checkpoint_every=1000),
        model=None,
        calls=calls,
        _boundary=None,
        _plain_state=dict,
        snapshot=lambda: calls.append("snapshot"),
        periodic_evaluation=lambda: calls.append("eval"),
        save_checkpoint=lambda: calls.append("checkpoint"),
    )
    fake._after = lambda every: loop.Trainer._after(fake, every)
    fake._next = {"snapshot": 1000, "eval": 1000, "checkpoint": 1000}
    return fake


def test_a_boundary_on_the_due_step_snapshots_evaluates_and_checkpoints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _boundary_trainer(monkeypatch, 1000)
    loop.Trainer.on_update_boundary(fake)
    assert fake.calls == ["snapshot", "eval", "checkpoint"]
    assert fake._boundary == "captured"
    # Each is next due by its own interval.
    assert fake._next == {"snapshot": 2000, "eval": 1500, "checkpoint": 2000}
    fake.steps = 1200
    loop.Trainer.on_update_boundary(fake)
    assert fake.calls == ["snapshot", "eval", "checkpoint"]
    # The last boundary of learn() writes its checkpoint whether due or not.
    loop.Trainer.on_update_boundary(fake, checkpoint_now=True)
    assert fake.calls == ["snapshot", "eval", "checkpoint", "checkpoint"]
    assert fake._next["checkpoint"] == 2000


def test_no_checkpoint_is_written_before_the_warm_start_is_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loop.checkpoint, "write", lambda *a: pytest.fail("written"))
    fake: Any = SimpleNamespace(warm=False, _boundary="captured")
    assert loop.Trainer.save_checkpoint(fake) is None


def test_the_best_policy_is_replaced_only_by_more_points_against_expert(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Judged by the points against expert, never against random; a tie keeps the
    # earlier best (its evaluation came first).
    results = iter(
        [
            {"random": 0.0, "expert": -1.0},  # the first: best
            {"random": 9.0, "expert": -2.0},  # better against random only
            {"random": 0.0, "expert": -1.0},  # a tie
            {"random": 0.0, "expert": 0.5},  # better
        ]
    )

    def evaluate(*args: Any) -> dict[str, dict[str, float]]:
        return {opp: {"points": p, "win_rate": 0.5} for opp, p in next(results).items()}

    monkeypatch.setattr(loop, "export_policy", lambda *a: None)
    monkeypatch.setattr(loop, "evaluate_policy", evaluate)
    saved: list[float] = []
    fake: Any = SimpleNamespace(
        run_dir=tmp_path, rules=RULES, steps=0, started=0.0, evaluations=[], best=None,
        _bar=None, provenance=dict,
        args=SimpleNamespace(eval_hands=1, seed=1, eval_workers=1),
        model=SimpleNamespace(
            policy=None, logger=SimpleNamespace(record=lambda *a: None, dump=lambda *a: None)
        ),
    )  # fmt: skip
    fake.save_model_atomic = lambda name: saved.append(fake.best)
    for _ in range(4):
        loop.Trainer.periodic_evaluation(fake)
    assert saved == [-1.0, 0.5] and fake.best == 0.5
    assert len((tmp_path / "evaluations.jsonl").read_text().splitlines()) == 4


def test_a_warm_start_evaluation_already_made_is_not_made_again() -> None:
    fake: Any = SimpleNamespace(
        steps=0, pretrain={}, args=SimpleNamespace(eval_every=10), evaluations=[]
    )
    assert loop.Trainer._warm_start_unevaluated(fake)
    fake.evaluations = [{"steps": 0}]
    assert not loop.Trainer._warm_start_unevaluated(fake)


def test_episode_points_are_shown_unscaled() -> None:
    fake: Any = SimpleNamespace(
        args=SimpleNamespace(reward_scale=0.05), _episode_rewards=[], _bar=None
    )
    loop.Trainer.on_step(fake, [{"episode": {"r": 0.5}}, {}])
    assert fake._episode_rewards == [pytest.approx(10.0)]


# -- the loop: the warm start and its DAgger rounds --------------------------------------


def test_dagger_rounds_collect_on_their_own_seeds_and_refit_from_the_first_weights(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import train.export

    collected: list[tuple[str, int, str | None, int]] = []
    fits: list[tuple[torch.Tensor, list[float]]] = []

    def collect(folder: Path, **kw: Any) -> dict[str, np.ndarray]:
        tag = len(collected)
        collected.append((folder.name, kw["decisions"], kw["driver"], kw["dagger_round"]))
        return {"obs": np.full(kw["decisions"], float(tag))}

    def fit(policy: Any, data: dict[str, np.ndarray], **kw: Any) -> dict[str, Any]:
        fits.append((policy.weight.detach().clone(), data["obs"].tolist()))
        with torch.no_grad():
            policy.weight += 1.0  # every fit moves the weights
        return {"held_out_agreement": len(fits) / 10}

    monkeypatch.setattr(pretrain, "collect", collect)
    monkeypatch.setattr(pretrain, "fit", fit)
    monkeypatch.setattr(train.export, "export_policy", lambda *a: None)
    monkeypatch.setattr(loop.checkpoint, "capture", lambda model, extra: "captured")
    evaluated: list[bool] = []
    fake: Any = SimpleNamespace(
        args=TrainArgs(bc_decisions=10, bc_dagger_decisions=4, bc_dagger_rounds=2,
                       eval_every=100, progress=False),
        model=SimpleNamespace(policy=torch.nn.Linear(2, 1)), rules=RULES, run_dir=tmp_path,
        started=0.0, pretrain=None, warm=False, _boundary=None, provenance=dict,
        _plain_state=dict, save_model_atomic=lambda name: None,
        save_checkpoint=lambda: None, _evaluate_warm_start=lambda: evaluated.append(True),
    )  # fmt: skip
    initial = fake.model.policy.weight.detach().clone()
    loop.Trainer.warm_start(fake)
    driver = str(tmp_path / "pretrain" / "dagger_driver")
    assert collected == [
        ("pretrain", 10, None, 1),
        ("dagger", 4, driver, 1),
        ("dagger_2", 4, driver + "_2", 2),
    ]
    # Every fit starts from the initial weights, on every collection so far.
    assert all(torch.equal(weights, initial) for weights, _ in fits)
    assert [data for _, data in fits] == [[0.0] * 10, [0.0] * 10 + [1.0] * 4,
                                          [0.0] * 10 + [1.0] * 4 + [2.0] * 4]  # fmt: skip
    assert fake.pretrain["first_round_agreement"] == 0.1
    assert fake.pretrain["held_out_agreement"] == 0.3
    assert fake.pretrain["dagger_rounds"] == 2 and fake.warm and evaluated == [True]


def test_no_warm_start_collects_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pretrain, "collect", lambda *a, **k: pytest.fail("collected"))
    fake: Any = SimpleNamespace(args=TrainArgs(bc_decisions=0), warm=False)
    loop.Trainer.warm_start(fake)
    assert fake.warm


# -- the loop: resuming ----------------------------------------------------------------


def test_a_resumed_pool_keeps_the_checkpoints_own_snapshot_and_checks_only_the_newest(
    tmp_path: Path, exported: Path
) -> None:
    # The snapshot taken at the checkpoint's step is the checkpoint's (only later
    # ones are written again); only the newest pool_size of the saved pool are played,
    # so an older one that is gone does not stop the run.
    pool = _pool_dir(tmp_path, exported, 512, 1024)
    fake: Any = SimpleNamespace(
        pool_dir=pool, ckpt_dir=tmp_path / "checkpoint", rules=RULES,
        args=SimpleNamespace(pool_size=1),
    )  # fmt: skip
    loop.Trainer._check_pool(fake, {"steps": 512, "pool": ["step_256", "step_512"]})
    assert sorted(p.name for p in pool.iterdir()) == ["step_512"]
    with pytest.raises(CheckpointError, match="step_600, a snapshot of the pool"):
        loop.Trainer._check_pool(fake, {"steps": 512, "pool": ["step_512", "step_600"]})


def test_a_saved_pool_names_snapshot_folders_never_paths(tmp_path: Path, exported: Path) -> None:
    # A path named as a snapshot that does not load would be named as a folder to delete.
    pool = _pool_dir(tmp_path, exported, 512)
    fake: Any = SimpleNamespace(
        pool_dir=pool, ckpt_dir=tmp_path / "checkpoint", rules=RULES,
        args=SimpleNamespace(pool_size=10),
    )  # fmt: skip
    for names in (["../pool/step_512"], [str(pool / "step_512")], ["step_512", 5], "step_512"):
        with pytest.raises(CheckpointError, match=r"'pool' is not a list of snapshot folder names"):
            loop.Trainer._check_pool(fake, {"steps": 512, "pool": names})
    loop.Trainer._check_pool(fake, {"steps": 512, "pool": ["step_512"]})


def _evaluation(steps: int, points: float, without: str = "") -> dict[str, Any]:
    """An evaluation record as a run writes it (figures against each opponent), less
    the figure ``without``."""
    record: dict[str, Any] = {"steps": steps, "elapsed": 1.5}
    for opp in loop.EVAL_OPPONENTS:
        figures = {"deals": 4, "win_rate": 0.5, "win_rate_lo": 0.1, "win_rate_hi": 0.9}
        figures |= {"points": points, "points_lo": -math.inf, "points_hi": math.inf}
        record |= {f"{opp}/{key}": value for key, value in figures.items()}
    record.pop(without, None)
    return record


@pytest.mark.parametrize(
    "change, words",
    [
        ({"best": "x"}, "'best' is 'x', where the evaluations' best score against expert is 3.5"),
        ({"best": math.nan}, "'best' is nan, where"),
        ({"best": 2.0}, "'best' is 2.0, where the evaluations' best score against expert is 3.5"),
        ({"best": None}, "'best' is None, where"),
        ({"best": True, "evaluations": []}, "'best' is True, where the evaluations' best "
         "score against expert is None"),
        ({"evaluations": "x"}, "'evaluations' is not a list"),
        ({"evaluations": [1]}, "evaluation 0 is not an object of numbers with 'steps'"),
        ({"evaluations": [{**_evaluation(0, 3.5), "random/deals": None}]},
         "evaluation 0 is not an object of numbers"),
        ({"evaluations": [_evaluation(600, 3.5)]}, "evaluation 0 is at step 600; allowed: a "
         "whole number from 0 (the evaluation before) to 512 (the checkpoint's steps)"),
        ({"evaluations": [_evaluation(256, 1.0), _evaluation(0, 3.5)]},
         "evaluation 1 is at step 0; allowed: a whole number from 256"),
        ({"evaluations": [{**_evaluation(0, 3.5), "steps": 0.0}]}, "evaluation 0 is at step 0.0"),
        ({"evaluations": [{**_evaluation(0, 3.5), "random/points": math.inf}]},
         "evaluation 0's 'random/points' is not a figure with its interval"),
        ({"evaluations": [_evaluation(0, 3.5, without="expert/win_rate_hi")]},
         "evaluation 0's 'expert/win_rate' is not a figure with its interval"),
        ({"pretrain": 5}, "'pretrain' is neither null nor the warm start's record"),
    ],
)  # fmt: skip
def test_a_checkpoints_evaluations_and_best_score_are_what_a_run_writes(
    tmp_path: Path, change: dict[str, Any], words: str
) -> None:
    fake: Any = SimpleNamespace(ckpt_dir=tmp_path / "checkpoint")
    state = {
        "steps": 512,
        "evaluations": [_evaluation(0, 1.0), _evaluation(256, 3.5), _evaluation(512, -2.0)],
        "best": 3.5,
        "pretrain": {"held_out_agreement": 0.5},
    }
    loop.Trainer._check_progress(fake, state)
    loop.Trainer._check_progress(fake, {"steps": 0})  # a run that has not evaluated yet
    with pytest.raises(CheckpointError, match=re.escape(words)):
        loop.Trainer._check_progress(fake, {**state, **change})


def test_saved_counters_are_lists_of_exactly_n_of_the_kind() -> None:
    assert loop._list_of([1.0, 2], float, 2)
    assert not loop._list_of([True], int, 1)
    assert not loop._list_of([1, 2], int, 1)
    assert loop._list_of([True], bool, 1)


@pytest.mark.parametrize(
    "where, value",
    [
        ("info r", "x"), ("info r", math.nan), ("info l", 0), ("info l", 2.0), ("info t", -1.0),
        ("info t", math.inf), ("returns", math.nan), ("lengths", -1), ("count", -1),
    ],
)  # fmt: skip
def test_saved_episode_counters_are_what_the_monitor_counts(
    tmp_path: Path, where: str, value: Any
) -> None:
    # SB3 logs their means after the first rollout: a text there ended a resumed run in
    # a traceback, a NaN logged NaN for the rest of it.
    fake: Any = SimpleNamespace(args=SimpleNamespace(n_envs=1, vector_envs=2), ckpt_dir=tmp_path)
    fake._saved_envs_error = lambda what: loop.Trainer._saved_envs_error(fake, what)
    envs: dict[str, Any] = {
        "states": {"vector": {}, "opponents": {}},
        "episode_starts": [True, False],
        "monitor": {"returns": [0.0, 1.5], "lengths": [0, 3], "count": 4},
        "episode_infos": [{"r": -2.5, "l": 7, "t": 0.25}],
    }
    loop.Trainer._check_saved_envs(fake, {"envs": envs})
    if where.startswith("info"):
        envs["episode_infos"][0][where[-1]] = value
    elif where == "count":
        envs["monitor"]["count"] = value
    else:
        envs["monitor"][where][1] = value
    with pytest.raises(CheckpointError, match="do not hold the episode counters of 2"):
        loop.Trainer._check_saved_envs(fake, {"envs": envs})


def test_a_vector_runs_saved_environments_are_counted_by_its_slots(tmp_path: Path) -> None:
    fake: Any = SimpleNamespace(args=SimpleNamespace(n_envs=1, vector_envs=3), ckpt_dir=tmp_path)
    fake._saved_envs_error = lambda what: loop.Trainer._saved_envs_error(fake, what)

    def envs(n: int) -> dict[str, Any]:
        return {
            "states": {"vector": {}, "opponents": {}},
            "episode_starts": [True] * n,
            "monitor": {"returns": [0.0] * n, "lengths": [0] * n, "count": 0},
            "episode_infos": [],
        }

    loop.Trainer._check_saved_envs(fake, {"envs": envs(3)})
    with pytest.raises(CheckpointError, match="episode counters of 3 environments"):
        loop.Trainer._check_saved_envs(fake, {"envs": envs(1)})


# -- the loop: which policy is kept, and the run's record ------------------------------


def _sidecar(folder: Path, step: int, marker: str) -> None:
    folder.mkdir(parents=True)
    (folder / "policy.json").write_text(json.dumps({"provenance": {"steps": step}}))
    (folder / "marker").write_text(marker)


def test_no_deals_or_an_earlier_check_means_no_play(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(loop, "run", lambda *a, **k: pytest.fail("played"))
    _sidecar(tmp_path / "best", 5, "ppo")
    _sidecar(tmp_path / "warm_start", 0, "warm")
    assert loop.check_best_against_warm_start(tmp_path, RULES, 0, 1, 1) is None
    assert not (tmp_path / "selection.json").exists()
    # The warm start is best already: the earlier check's record, without playing.
    shutil.rmtree(tmp_path / "best")
    _sidecar(tmp_path / "best", 0, "warm")
    record = {"candidate_step": 5, "kept": "warm start"}
    (tmp_path / "selection.json").write_text(json.dumps(record))
    assert loop.check_best_against_warm_start(tmp_path, RULES, 10, 1, 1) == record


def test_a_ppo_policy_behind_the_warm_start_is_replaced_by_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from evaluate.stats import Estimate

    # The lead is the PPO policy's (pairing 0) over the warm start's (pairing 1).
    results = [SimpleNamespace(pairing=p) for p in (0, 1, 0, 1)]
    monkeypatch.setattr(loop, "run", lambda plan, workers: results)

    def lead(first: list[Any], second: list[Any]) -> Estimate:
        behind = all(r.pairing == 0 for r in first) and all(r.pairing == 1 for r in second)
        return Estimate(-1.0 if behind else 1.0, -2.0, 0.5, 2)

    monkeypatch.setattr(loop, "duplicate_lead", lead)
    _sidecar(tmp_path / "best", 5, "ppo")
    _sidecar(tmp_path / "warm_start", 0, "warm")
    record = loop.check_best_against_warm_start(tmp_path, RULES, 2, 1, 1)
    assert record is not None and record["kept"] == "warm start"
    assert record["lead_points"] == -1.0 and record["candidate_step"] == 5
    assert (tmp_path / "best" / "marker").read_text() == "warm"


def test_the_finish_checks_and_evaluates_on_fresh_deals_of_their_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The best-policy check plays seed + 2, the final evaluation seed + 1: neither the
    # periodic evaluations' deals (seed) nor each other's. A best/ the evaluations made
    # is kept; final/ becomes best/ only when there is none.
    seeds: dict[str, int] = {}

    def check(run_dir: Path, rules: Rules, deals: int, seed: int, workers: int) -> None:
        seeds["check"] = seed

    def evaluate(folder: Path, rules: Rules, hands: int, seed: int, workers: int) -> Any:
        seeds["final"] = seed
        fig = {"deals": hands, "win_rate": 0.5, "win_rate_lo": 0.4, "win_rate_hi": 0.6,
               "points": 1.0, "points_lo": 0.0, "points_hi": 2.0}  # fmt: skip
        return {"random": fig, "expert": fig}

    monkeypatch.setattr(loop, "check_best_against_warm_start", check)
    monkeypatch.setattr(loop, "evaluate_policy", evaluate)
    monkeypatch.setattr(loop, "plot_learning_curve", lambda *a: None)

    def finish(run_dir: Path) -> None:
        fake: Any = SimpleNamespace(
            run_dir=run_dir, rules=RULES, steps=100, n_updates=2, started=0.0,
            pretrain=None, evaluations=[],
            args=SimpleNamespace(select_hands=10, final_eval_hands=20, seed=7, eval_workers=1),
            save_model=lambda folder: _sidecar(folder, 100, "final"),
        )  # fmt: skip
        loop.Trainer.finish(fake)

    _sidecar(tmp_path / "a" / "best", 50, "earlier best")
    finish(tmp_path / "a")
    assert seeds == {"check": 9, "final": 8}
    assert (tmp_path / "a" / "best" / "marker").read_text() == "earlier best"
    finish(tmp_path / "b")
    assert (tmp_path / "b" / "best" / "marker").read_text() == "final"


def test_the_command_line_names_only_what_differs_from_the_defaults() -> None:
    assert loop._command_line(TrainArgs()) == ""
    args = TrainArgs(seed=3, teams=False, bc_skip_forced=True, out="x", progress=False)
    assert loop._command_line(args).split() == ["--no-teams", "--seed", "3", "--bc-skip-forced"]


def test_a_new_trainer_deals_from_the_runs_seed_and_owes_its_warm_start(tmp_path: Path) -> None:
    # MaskablePPO seeds its environments with --seed itself; the trainer re-seeds them
    # with env_seed (runs of adjacent seeds would share deals), and a fresh run is not
    # warm until its warm start is done (a checkpoint before it would skip the cloning).
    args = TrainArgs(
        out=str(tmp_path / "run"), bc_decisions=8, progress=False, eval_every=0, seed=2,
        n_steps=64, batch_size=64, net_arch="16", baselines="random", n_envs=1,
    )  # fmt: skip
    trainer = loop.Trainer(args, tmp_path / "run", RULES)
    try:
        assert not trainer.warm and trainer.resumed_from == 0
        trainer.venv.reset()  # what learn() does first
        dealt = trainer.venv.env_method("live_state")[0]["game"]["seed"]
    finally:
        trainer.venv.close()
    alone = SelfPlayEnv(pool=OpponentPool(None, baseline_weights={"random": 1.0}), rules=RULES)
    alone.reset(seed=loop.env_seed(args))
    assert dealt == alone.game.seed


def test_a_checkpoint_without_saved_environments_resumes_on_deals_of_its_step() -> None:
    # An older version's checkpoint kept no environments: the resumed run deals anew,
    # from a seed that moves with the step (not the deals of an earlier resume).
    seeded: list[int] = []
    fake: Any = SimpleNamespace(
        args=SimpleNamespace(seed=3), steps=4096, ckpt_dir=Path("checkpoint"),
        venv=SimpleNamespace(seed=seeded.append),
    )  # fmt: skip
    loop.Trainer._restore_envs(fake, {})
    assert seeded == [3 * 1_000_003 + 4096]
