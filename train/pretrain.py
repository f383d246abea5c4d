"""Warm start by behaviour cloning: the policy imitates a teacher before PPO starts.

Two steps, both run by :class:`train.loop.Trainer` before the first PPO update when
``--bc-decisions`` is above zero:

1. **Collect** (:func:`collect`): the teacher (``--bc-teacher``, an agent spec,
   by default the recipe's search agent, ``train.run.recipe_teacher``) plays the learner's seat of
   :class:`MatadorSingleEnv` against ``--bc-opponent``; every decision of the
   learner's seat is recorded as
   the observation, the action mask, the teacher's action and the discounted
   return that followed it (the reward times ``--reward-scale``, as PPO sees it),
   and for a search teacher its candidates with their mean playout results.
   The work is cut into chunks of :data:`CHUNK` decisions, each seeded from the
   run's seed and its index and written atomically to ``<run>/pretrain/`` as it
   is done, so an interrupted collection continues with the chunks it lacks and
   the data set is the same however often it was interrupted. A chunk records what
   it was collected under (the encoding's signature, with the rules, the teacher,
   the opponent, the seed, ...), and one that does not fit the run (another run's,
   or arrays of the wrong shape, type or values) is refused by name, not trained on.
2. **Fit** (:func:`fit`): ``--bc-epochs`` passes of Adam over the data, the loss
   the cross-entropy of the teacher's action under the *masked* policy
   (``evaluate_actions`` of sb3-contrib, the distribution PPO samples from) plus
   the squared error of the value head against the return. Pretraining the value
   head as well means PPO's first advantages are not noise, so the first updates
   refine the cloned policy instead of unlearning it. A twentieth of the decisions
   (at least one) is held out to report the agreement with the teacher on those
   with a choice (None when none has one); so a warm start takes at least
   :data:`MIN_DECISIONS`. With
   ``--bc-soft-temperature T`` the policy's target is spread over the search
   teacher's candidates instead (:func:`soft_targets`, a softmax of their mean
   playout results over ``T`` points, recorded with every search decision): two
   searches of one position agree on their move only 61-70% of the time, and a
   soft target does not teach the clone which of two near-equal moves one of them
   happened to pick.
3. **DAgger rounds** (``--bc-dagger-decisions``, optional, ``--bc-dagger-rounds`` of
   them): the fitted policy, exported to ``<run>/pretrain/dagger_driver/``, plays the
   learner's seat while the teacher labels each of its decisions (collected into
   ``<run>/pretrain/dagger/`` as in step 1); the policy is then fitted again, from its
   initial weights, on every collection so far. A further round is driven by that
   fit (``dagger_driver_2/`` collecting into ``dagger_2/``, and so on). A clone
   trained on the teacher's states alone meets states its own mistakes lead to and
   never saw; on Leiden one round of 60,000 decisions took the warm start from -2.58
   to +3.10 points per hand against ``expert`` (the runs' final evaluations, 1,000
   duplicate deals each).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaluate.stats import finite_or_none
from matador_env.encoding import Encoding, encoding_for
from matador_env.engine import Rules
from matador_env.engine.state import SEED_LIMIT
from matador_env.files import atomic_write
from matador_env.matador_v0 import reward_kind
from matador_env.streams import progress_bar
from matador_env.values import same_value

from .args import check_decisions
from .files import RunFolderError

CHUNK = 10_000
"""Decisions per collection chunk (one file, one seed, one unit of the progress bar)."""


@dataclass(frozen=True)
class ChunkJob:
    rules: dict[str, Any]
    """The rules (:meth:`Rules.to_dict`; plain data for the worker processes)."""
    teacher: str
    opponent: str
    decisions: int
    seed: int
    gamma: float
    reward_scale: float
    path: str
    driver: str | None = None
    """An exported policy that plays the learner's seat instead of the teacher (the
    DAgger round); the teacher still labels every decision."""
    skip_forced: bool = False
    """Record only decisions with more than one legal move."""
    reward: str = "score"
    """The environment's reward (``--reward``): the returns the value head is fitted
    to are PPO's."""

    def settings(self) -> dict[str, Any]:
        """The collection's settings that the chunk's decisions depend on, besides its
        table and encoding (:meth:`record`) and its reward (recorded on its own since
        before the record). The driver's path is left out: a moved run folder still
        holds its own chunks."""
        return {
            "teacher": self.teacher,
            "opponent": self.opponent,
            "decisions": self.decisions,
            "seed": self.seed,
            "gamma": self.gamma,
            "reward_scale": self.reward_scale,
            "skip_forced": self.skip_forced,
        }

    def record(self) -> dict[str, Any]:
        """What a chunk records of its collection: the encoding's signature (its rules
        and version) and :meth:`settings`."""
        return {
            "encoding": encoding_for(Rules.from_dict(self.rules)).signature(),
            **self.settings(),
        }


def _discounted(rewards: list[float], gamma: float) -> list[float]:
    """The discounted return after each step of an episode (as PPO's critic sees it)."""
    out = [0.0] * len(rewards)
    ret = 0.0
    for i in range(len(rewards) - 1, -1, -1):
        ret = rewards[i] + gamma * ret
        out[i] = ret
    return out


def _collect_chunk(job: ChunkJob) -> str:
    """Play whole hands until ``job.decisions`` decisions of the learner's seat are
    recorded; the last hand's surplus decisions are dropped."""
    from agents import make_agent
    from agents.search import SearchAgent
    from matador_env.gym_env import MatadorSingleEnv

    torch.set_num_threads(1)
    from matador_env.policy import load_policy

    teacher = make_agent(job.teacher)
    opponent = make_agent(job.opponent)
    rules = Rules.from_dict(job.rules)
    driver = load_policy(job.driver, rules=rules) if job.driver else None
    env = MatadorSingleEnv(rules=rules, opponents=opponent, reward=job.reward)
    rng = random.Random(job.seed)
    # A search values up to ``width`` candidates per decision; other teachers only choose.
    width = teacher.width if isinstance(teacher, SearchAgent) else 0
    obs_rows: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    cand_rows: list[list[int]] = []
    value_rows: list[list[float]] = []
    episode = 0
    while len(actions) < job.decisions:
        # Wrapped into the engine's seeds: a run's --seed goes up to 2**32 - 1, and the
        # plain product passed 2**64 from about 1.8e9 on (its collection crashed).
        obs, _ = env.reset(seed=(job.seed * 1_000_003 + episode) % SEED_LIMIT)
        episode += 1
        rewards: list[float] = []
        done = False
        recorded: list[int] = []  # the steps of this hand that are recorded
        while not done:
            view = env.game.view(env.seat)
            cands: list[int] = []
            values: list[float] = []
            if width and len(view.legal_moves) > 1:
                # The same search act() runs (the same random numbers), keeping the
                # candidates' values as well as the choice.
                assert isinstance(teacher, SearchAgent)
                result = teacher.search(view, rng)
                move = result.move
                cands = [env.encoding.encode_action(m) for m in result.candidates]
                values = result.ranked_means()
            else:
                move = teacher.act(view, rng)
            action = env.encoding.encode_action(move)
            mask = env.action_masks()
            if not job.skip_forced or mask.sum() > 1:
                recorded.append(len(rewards))
                obs_rows.append(obs)
                masks.append(mask)
                actions.append(action)
                pad = width - len(cands)
                cand_rows.append(cands + [-1] * pad)
                value_rows.append(values + [0.0] * pad)
            if driver is not None:
                # The states come from the cloned policy's own play, the labels from the
                # teacher: the clone learns to recover from its own mistakes.
                action = driver.act(obs, mask)
            obs, reward, done, _, _ = env.step(action)
            rewards.append(float(reward) * job.reward_scale)
        discounted = _discounted(rewards, job.gamma)
        returns.extend(discounted[step] for step in recorded)
    n = job.decisions
    arrays: dict[str, Any] = {
        "obs": np.asarray(obs_rows[:n], np.float32),
        "mask": np.asarray(masks[:n], np.bool_),
        "action": np.asarray(actions[:n], np.int64),
        "ret": np.asarray(returns[:n], np.float32),
        # The teacher's candidates (actions, -1 past the last) and their mean playout
        # results, for soft targets; zero columns for a teacher that only chooses.
        "cand": np.asarray(cand_rows[:n], np.int32).reshape(n, width),
        "value": np.asarray(value_rows[:n], np.float32).reshape(n, width),
        "reward": np.asarray(job.reward),
        "collection": np.asarray(json.dumps(job.record(), sort_keys=True)),
    }

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    atomic_write(job.path, write)
    return job.path


def collect(
    folder: Path,
    rules: Rules,
    teacher: str,
    opponent: str,
    decisions: int,
    seed: int,
    gamma: float,
    reward_scale: float,
    workers: int,
    progress: bool,
    driver: str | None = None,
    skip_forced: bool = False,
    dagger_round: int = 1,
    reward: str = "score",
) -> dict[str, np.ndarray]:
    """The teacher's decisions (collected into ``folder``, reusing chunks already there);
    with ``driver`` (an exported policy) that policy plays the learner's seat and the
    teacher labels its decisions (DAgger round ``dagger_round``, each round seeded apart
    from the first collection and from the other rounds).

    :class:`ArgsError` for a first collection (no ``driver``) of fewer than
    :data:`MIN_DECISIONS`, before anything is collected; a DAgger round adds to it,
    so it may be smaller. ``reward`` is the environment's reward (``--reward``), whose
    discounted returns the value head is fitted to; a chunk collected under another
    is a :class:`RunFolderError` (chunks without the record were collected under
    ``score``, before it was kept)."""
    if driver is None:
        check_decisions(decisions, none_ok=False)
    reward = reward_kind(reward)
    folder.mkdir(parents=True, exist_ok=True)
    chunks = math.ceil(decisions / CHUNK)
    jobs = []
    for i in range(chunks):
        size = min(CHUNK, decisions - i * CHUNK)
        path = folder / f"chunk_{i:04d}_{size}.npz"
        jobs.append(
            ChunkJob(
                rules.to_dict(),
                teacher,
                opponent,
                size,
                seed * 10_007 + i + (5_000_011 * dagger_round if driver else 0),
                gamma,
                reward_scale,
                str(path),
                driver,
                skip_forced,
                reward,
            )
        )
    todo = [j for j in jobs if not Path(j.path).is_file()]
    desc = "collect (DAgger)" if driver else "collect"
    bar = _bar(progress, len(jobs), len(jobs) - len(todo), desc, "chunk")
    if todo:
        if workers > 1 and len(todo) > 1:
            with mp.get_context("spawn").Pool(min(workers, len(todo))) as pool:
                for _ in pool.imap_unordered(_collect_chunk, todo):
                    if bar is not None:
                        bar.update(1)
        else:
            for job in todo:
                _collect_chunk(job)
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    parts = [_load_chunk(Path(j.path), j) for j in jobs]
    for job, part in zip(jobs, parts, strict=True):
        if part["reward"] != reward:
            raise RunFolderError(
                f"{job.path} holds returns of the {part['reward']!r} reward, and this run "
                f"trains on {reward!r}; delete the run's pretrain/ folder to collect its "
                "decisions again"
            )
    keys = [k for k in (*_KEYS, *_VALUE_KEYS) if all(k in p for p in parts)]
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


_KEYS = ("obs", "mask", "action", "ret")
_VALUE_KEYS = ("cand", "value")
"""Recorded since soft targets (``--bc-soft-temperature``); chunks collected before lack them."""


def _load_chunk(path: Path, job: ChunkJob | None = None) -> dict[str, Any]:
    """One chunk's arrays (plain arrays only: never a pickle), and under ``reward`` the
    reward kind (a str) its returns were collected under.

    With ``job``, the chunk must be that job's: collected under its record (when the
    chunk has one: chunks collected before it was kept do not) and holding its number
    of decisions, each array of the type and shape the job's rules give, the actions
    and candidates legal under their masks and the numbers finite; else a
    :class:`RunFolderError` naming the file and what does not fit."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in _KEYS}
            arrays.update({k: data[k] for k in _VALUE_KEYS if k in data.files})
            # Recorded since the run's reward was passed on; "score" before.
            kind = str(data["reward"]) if "reward" in data.files else "score"
            record = str(data["collection"]) if "collection" in data.files else None
    except Exception as e:  # numpy reports a damaged file in several types
        raise RunFolderError(
            f"{path} cannot be read ({type(e).__name__}: {e}); delete it and the run "
            "collects that chunk again"
        ) from None
    if len({len(a) for a in arrays.values()}) != 1:
        raise RunFolderError(
            f"{path}: its arrays differ in length; delete it and the run collects it again"
        )
    if job is not None:
        problem = _chunk_problem(arrays, record, job)
        if problem is not None:
            raise RunFolderError(
                f"{path}: {problem}; delete it and the run collects that chunk again"
            )
    arrays["reward"] = kind
    return arrays


_DTYPES = {
    "obs": np.float32,
    "mask": np.bool_,
    "action": np.int64,
    "ret": np.float32,
    "cand": np.int32,
    "value": np.float32,
}
"""The type of each array, as :func:`_collect_chunk` writes it."""


def _chunk_problem(arrays: dict[str, np.ndarray], record: str | None, job: ChunkJob) -> str | None:
    """What in a chunk's ``arrays`` (and its ``record``, None for a chunk collected
    before chunks kept one) does not fit ``job``, or None."""
    encoding = encoding_for(Rules.from_dict(job.rules))
    if record is not None:
        problem = _record_problem(record, job, encoding)
        if problem is not None:
            return problem
    n = job.decisions
    if len(arrays["action"]) != n:
        return f"it holds {len(arrays['action'])} decisions, not the {n} of its name"
    for key, array in arrays.items():
        if array.dtype != _DTYPES[key]:
            return f"its {key!r} array is of {array.dtype}, not {np.dtype(_DTYPES[key])}"
    # The teacher's width (0 for one that only chooses) is whatever the chunk's is.
    cand = arrays.get("cand")
    width = cand.shape[-1] if cand is not None and cand.ndim == 2 else 0
    shapes = {
        "obs": (n, encoding.obs_size),
        "mask": (n, encoding.num_actions),
        "action": (n,),
        "ret": (n,),
        "cand": (n, width),
        "value": (n, width),
    }
    for key, array in arrays.items():
        if array.shape != shapes[key]:
            return f"its {key!r} array has the shape {array.shape}, not {shapes[key]}"
    for key in ("obs", "ret", "value"):
        if key in arrays and not np.isfinite(arrays[key]).all():
            return f"its {key!r} array holds a number that is not finite"
    mask, actions = arrays["mask"], arrays["action"]
    legal = _legal(mask, actions[:, None])[:, 0]
    if not legal.all():
        row = int(np.flatnonzero(~legal)[0])
        return f"decision {row}'s action {int(actions[row])} is not legal under its mask"
    if "cand" in arrays:
        cands = arrays["cand"]
        fits = (cands == -1) | _legal(mask, cands)
        if not fits.all():
            row = int(np.flatnonzero(~fits.all(axis=1))[0])
            return (
                f"decision {row}'s candidates {cands[row].tolist()} are not -1 or actions "
                "legal under its mask"
            )
    return None


def _legal(mask: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Whether each of ``actions`` (a row of them per decision) is an action its row of
    ``mask`` allows; False for a number outside the actions."""
    inside = (actions >= 0) & (actions < mask.shape[1])
    allowed = np.take_along_axis(mask, np.where(inside, actions, 0).astype(np.int64), 1)
    return inside & allowed


def _record_problem(text: str, job: ChunkJob, encoding: Encoding) -> str | None:
    """What in a chunk's record of its collection differs from ``job``'s, or None."""
    try:
        record = json.loads(text)
        saved = record.get("encoding") if isinstance(record, dict) else None
        if not isinstance(saved, dict):
            raise ValueError("its record names no encoding")
        encoding.check_signature(saved)
    except ValueError as e:
        return f"it was collected for another table or encoding ({e})"
    for key, wanted in job.settings().items():
        was = record.get(key, "<missing>")
        if not same_value(was, wanted):
            return f"it was collected with {key} {was!r}, and this collection's is {wanted!r}"
    return None


def fit(
    policy: Any,
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    vf_coef: float,
    seed: int,
    progress: bool,
    soft_temperature: float = 0.0,
) -> dict[str, float | None]:
    """Behaviour cloning of ``policy`` (an sb3-contrib MaskableActorCriticPolicy) on
    ``data``; returns held-out figures (agreement with the teacher, value error), each a
    finite number or None (the agreement when no held-out decision has a choice), so
    that the checkpoint's state.json that records them is strict JSON.

    :class:`ArgsError` for fewer than :data:`MIN_DECISIONS` decisions.

    ``soft_temperature`` above 0: the target of a decision is spread over the
    teacher's candidates, a softmax of their mean playout results divided by this
    many points (:func:`soft_targets`), instead of the teacher's single choice.
    """
    if soft_temperature > 0 and "cand" not in data:
        raise RunFolderError(
            "soft targets need the teacher's candidate values, which these decisions lack "
            "(collected before they were recorded); delete the run's pretrain/ folder to "
            "collect them again"
        )
    if soft_temperature > 0 and data["cand"].shape[1] == 0:
        raise RunFolderError(
            "soft targets need a teacher that values its candidates (the search agent); "
            "this teacher only chooses"
        )
    n = len(data["action"])
    check_decisions(n, none_ok=False)
    gen = np.random.default_rng(seed)
    order = gen.permutation(n)
    held = order[: max(1, n // 20)]
    train_idx = order[max(1, n // 20) :]
    obs = torch.as_tensor(data["obs"])
    masks = torch.as_tensor(data["mask"])
    actions = torch.as_tensor(data["action"])
    returns = torch.as_tensor(data["ret"])
    cands = torch.as_tensor(data["cand"]).long() if soft_temperature > 0 else None
    cand_values = torch.as_tensor(data["value"]) if soft_temperature > 0 else None
    optimiser = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    steps_per_epoch = math.ceil(len(train_idx) / batch_size)
    total = epochs * steps_per_epoch
    bar = _bar(progress, total, 0, "clone", "batch")
    policy.set_training_mode(True)
    step = 0
    for _ in range(epochs):
        perm = train_idx[gen.permutation(len(train_idx))]
        for b in range(steps_per_epoch):
            idx = torch.as_tensor(perm[b * batch_size : (b + 1) * batch_size])
            # Cosine decay of the step size over the whole fit.
            for group in optimiser.param_groups:
                group["lr"] = learning_rate * 0.5 * (1 + math.cos(math.pi * step / total))
            if cands is None:
                values, log_prob, _ = policy.evaluate_actions(
                    obs[idx], actions[idx], action_masks=masks[idx].numpy()
                )
                policy_loss = -log_prob.mean()
            else:
                assert cand_values is not None
                target = soft_targets(
                    cands[idx], cand_values[idx], actions[idx], masks.shape[1], soft_temperature
                )
                dist = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy())
                log_probs = torch.log_softmax(dist.distribution.logits, dim=1)
                policy_loss = -(target * log_probs).sum(dim=1).mean()
                values = policy.predict_values(obs[idx])
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            loss = policy_loss + vf_coef * value_loss
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimiser.step()
            step += 1
            if bar is not None:
                bar.update(1)
                if step % 50 == 0:
                    bar.set_postfix(ce=f"{policy_loss.item():.3f}", vf=f"{value_loss.item():.3f}")
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.as_tensor(held)
        values, log_prob, _ = policy.evaluate_actions(
            obs[idx], actions[idx], action_masks=masks[idx].numpy()
        )
        dist = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy())
        chosen = dist.distribution.probs.argmax(dim=1)
        choice = masks[idx].sum(dim=1) > 1
        # Forced moves agree by construction, so only decisions with a choice count;
        # when none of the held-out ones has one there is no agreement to report.
        agree = (chosen == actions[idx])[choice].float().mean().item() if choice.any() else None
        value_mse = torch.nn.functional.mse_loss(values.flatten(), returns[idx]).item()
    figures = {
        "held_out_agreement": agree,
        "held_out_cross_entropy": -log_prob.mean().item(),
        "held_out_value_mse": value_mse,
    }
    return {
        "decisions": int(n),
        "held_out": int(len(held)),
        # None, not NaN: json.dumps would write a bare NaN, which strict JSON refuses.
        **{k: finite_or_none(None if v is None else round(v, 4)) for k, v in figures.items()},
    }


def soft_targets(
    cands: torch.Tensor,
    values: torch.Tensor,
    actions: torch.Tensor,
    num_actions: int,
    temperature: float,
) -> torch.Tensor:
    """Target distributions over the actions: for a decision whose teacher valued
    several candidates (``cands``, -1 past the last, with their mean results
    ``values``), a softmax of the values over ``temperature``; else all on the
    teacher's action. Near-equal candidates share the target, so the clone is not
    taught which of two equally good moves a noisy search happened to pick."""
    valid = cands >= 0
    scaled = torch.where(valid, values / temperature, torch.full_like(values, -torch.inf))
    several = valid.sum(dim=1) > 1
    # Rows of one candidate (or none recorded) fall back to the chosen action.
    probs = torch.softmax(torch.where(several[:, None], scaled, torch.zeros_like(scaled)), dim=1)
    target = torch.zeros(len(actions), num_actions, dtype=torch.float32)
    target.scatter_add_(1, cands.clamp(min=0), torch.where(valid, probs, 0.0).float())
    hard = torch.zeros_like(target)
    hard[torch.arange(len(actions)), actions] = 1.0
    return torch.where(several[:, None], target, hard)


def _bar(progress: bool, total: int, initial: int, desc: str, unit: str) -> Any:
    if not progress:
        return None
    return progress_bar(total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True)
