"""Checkpoints of a training run: tensors and plain JSON, never a pickle of objects.

A checkpoint is the learner *between two PPO updates* (at the start of a rollout):
its weights, optimizer, counters and random generators, and the environments as
they stand then (each self-play environment's game as its seed and actions, its
random generators and its episode's opponent; or the batched vector environment's
arrays and its opponents' generator), with SB3's last observations and the
monitor's episode counters. So a resumed run plays the same games and does the same
updates as an uninterrupted one, and ends with the same policy to the bit (on the
same machine and library versions). It is taken in memory at every update
boundary (:func:`capture`) and written (:func:`write`) when due, and on an
interrupt: the policy's weights do not change while a rollout is being
collected, so the last boundary is always a consistent state to save.

On disk, in ``<run>/checkpoint/``::

    weights_<steps>.pt   torch tensors only: {"policy": state_dict, "optimizer": state_dict},
                         read back with torch.load(..., weights_only=True)
    state.json           format, steps, PPO updates, the random generators'
                         states as lists of integers, the rules, the pool's snapshots,
                         the evaluations so far, the environments ("envs"; null
                         before learning began); it names its weights file

The weights file is written first and state.json (atomically) last, so state.json
always names a complete weights file of the same step.

Resuming rebuilds MaskablePPO from the run's arguments (``args.json``) and loads
the tensors into it (:func:`restore`). Nothing here unpickles arbitrary objects:
``weights_only=True`` lets torch rebuild tensors and plain containers only, and
a file holding anything else is refused with a :class:`CheckpointError`.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from matador_env.engine import Rules, RulesError
from matador_env.engine.tiles import is_json_int
from matador_env.files import atomic_write, atomic_write_json

from .files import RunFolderError

FORMAT = 1
"""Version of the checkpoint layout above (``state.json``'s ``"format"``)."""

STATE = "state.json"


class CheckpointError(RunFolderError):
    """A checkpoint that cannot be resumed; the message names the file and what to do."""


@dataclass
class Checkpoint:
    """The learner at an update boundary, held in memory until it is written."""

    steps: int
    n_updates: int
    tensors: dict[str, Any]
    rng: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    """Plain data of the trainer (best score, evaluations, warm start figures, pool)."""


# torch is imported inside the functions: ``python -m train --help`` needs none of it.


def capture(model: Any, extra: dict[str, Any]) -> Checkpoint:
    """Copy the model's weights, optimizer, counters and random generators now."""
    policy = model.policy
    return Checkpoint(
        steps=int(model.num_timesteps),
        n_updates=int(model._n_updates),
        tensors={
            "policy": {k: v.detach().clone() for k, v in policy.state_dict().items()},
            "optimizer": copy.deepcopy(policy.optimizer.state_dict()),
        },
        rng=_rng_state(),
        extra=copy.deepcopy(extra),
    )


def write(folder: Path, ckpt: Checkpoint, rules: Rules) -> Path:
    """Write ``ckpt`` into ``folder``; returns the path of its state.json."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    weights = f"weights_{ckpt.steps}.pt"
    atomic_write(folder / weights, lambda tmp: torch.save(ckpt.tensors, tmp))
    state = {
        "format": FORMAT,
        "weights": weights,
        "steps": ckpt.steps,
        "n_updates": ckpt.n_updates,
        "rng": ckpt.rng,
        "rules": rules.to_dict(),
        **ckpt.extra,
    }
    path = atomic_write_json(folder / STATE, state)
    # Only now are older weights unreferenced.
    for old in folder.glob("weights_*.pt"):
        if old.name != weights:
            old.unlink(missing_ok=True)
    return path


def read_state(folder: Path, rules: Rules) -> dict[str, Any]:
    """The checked contents of ``folder/state.json`` (for the run's ``rules``)."""
    path = folder / STATE
    if (folder / "model.zip").is_file() and not path.is_file():
        raise CheckpointError(_old_format(folder))
    try:
        state = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path} cannot be read ({e}); {what_to_do(folder)}") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} is not a JSON object; {what_to_do(folder)}")
    if state.get("format") != FORMAT:
        if (folder / "model.zip").is_file():
            raise CheckpointError(_old_format(folder))
        raise CheckpointError(
            f"{path}: checkpoint format {state.get('format')!r} is not the format {FORMAT} "
            f"this version reads; {what_to_do(folder)}"
        )
    for key, kind in (("steps", int), ("n_updates", int), ("weights", str)):
        value = state.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise CheckpointError(
                f"{path}: {key!r} is {value!r}, not a {kind.__name__}; {what_to_do(folder)}"
            )
    if state["steps"] < 0 or state["n_updates"] < 0:
        raise CheckpointError(f"{path}: negative step or update count; {what_to_do(folder)}")
    spent = state.get("seconds", 0.0)
    if isinstance(spent, bool) or not isinstance(spent, int | float) or not spent >= 0:
        raise CheckpointError(
            f"{path}: 'seconds' is {spent!r}, not a number of seconds >= 0; set it to 0 (the "
            "run's clock then starts again) or remove it"
        )
    weights = state["weights"]
    if Path(weights).name != weights or not weights.endswith(".pt"):
        raise CheckpointError(
            f"{path}: 'weights' must name a .pt file inside {folder}, got {weights!r}; "
            f"{what_to_do(folder)}"
        )
    rules_data = state.get("rules")
    if not isinstance(rules_data, dict):
        raise CheckpointError(f"{path}: 'rules' is not a JSON object; {what_to_do(folder)}")
    try:
        saved_rules = Rules.from_dict(rules_data)
    except (RulesError, TypeError) as e:
        raise CheckpointError(
            f"{path}: its 'rules' are not valid ({e}); {what_to_do(folder)}"
        ) from None
    if saved_rules != rules:
        raise CheckpointError(
            f"{path} was trained on {saved_rules.to_text()}, but the run's arguments give "
            f"{rules.to_text()}; restore the run's args.json"
        )
    _check_rng(state.get("rng"), path, folder)
    return state


def restore(model: Any, folder: Path, state: dict[str, Any]) -> None:
    """Load the weights file named by ``state`` into ``model`` (built from the run's
    arguments), then its counters and random generators."""
    import torch

    path = folder / state["weights"]
    try:
        tensors = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(
            f"{path}, named by {folder / STATE}, is missing; {what_to_do(folder)}"
        ) from None
    except Exception as e:  # torch reports a refused or damaged file in several types
        raise CheckpointError(
            f"{path} is not a file of tensors ({type(e).__name__}: {_first_line(e)}); it was "
            f"not loaded. {what_to_do(folder)}"
        ) from None
    if not isinstance(tensors, dict) or set(tensors) != {"policy", "optimizer"}:
        raise CheckpointError(
            f"{path} does not hold the policy and optimizer state; {what_to_do(folder)}"
        )
    try:
        model.policy.load_state_dict(tensors["policy"])
        model.policy.optimizer.load_state_dict(tensors["optimizer"])
    except (RuntimeError, ValueError, KeyError, TypeError) as e:
        raise CheckpointError(
            f"{path} does not fit the network of the run's arguments ({_first_line(e)}); "
            "restore the run's args.json (--net-arch and the rules must be those of the run)"
        ) from None
    model.num_timesteps = state["steps"]
    model._n_updates = state["n_updates"]
    _set_rng_state(state["rng"])


def what_to_do(folder: Path) -> str:
    """What to do about a damaged checkpoint in ``folder`` (the end of its errors)."""
    return (
        f"restore {folder} from a copy, or delete that folder to restart the run "
        "from its warm start"
    )


def _old_format(folder: Path) -> str:
    return (
        f"{folder} holds a model.zip checkpoint of an older version, which loading would "
        "unpickle (a pickle can run any code), so it is not loaded; start a new run "
        "(python -m train --out NEW_FOLDER with the same arguments)"
    )


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


# -- random generators as plain lists -------------------------------------------------


def random_state(rng: Any) -> list[Any]:
    """The state of ``rng`` (a ``random.Random``, or the ``random`` module's own
    generator) as plain JSON data; :func:`set_random_state` reads it back."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


# A Mersenne Twister's state: 624 words of 32 bits and a position 0 to 624 among them.
_MT_WORDS = 624


def _mt_words_ok(words: Any) -> bool:
    return (
        isinstance(words, list)
        and len(words) == _MT_WORDS
        and all(is_json_int(x) and 0 <= x < 2**32 for x in words)
    )


def random_state_ok(data: Any) -> bool:
    """Whether ``data`` is a :func:`random_state`: this Python's state version, a
    Mersenne Twister's 624 words and its position, and a Gaussian cached or ``None``.
    Checked here because ``random.Random.setstate`` cuts a word above 32 bits to its low
    bits, so a damaged state would resume with another stream instead of failing."""
    return (
        isinstance(data, list)
        and len(data) == 3
        and is_json_int(data[0])
        and data[0] == random.Random.VERSION
        and isinstance(data[1], list)
        and len(data[1]) == _MT_WORDS + 1
        and _mt_words_ok(data[1][:_MT_WORDS])
        and is_json_int(data[1][_MT_WORDS])
        and 0 <= data[1][_MT_WORDS] <= _MT_WORDS
        and (data[2] is None or isinstance(data[2], float))
    )


def set_random_state(rng: Any, data: list[Any]) -> None:
    """Put ``rng`` in the state :func:`random_state` gave (checked by :func:`random_state_ok`)."""
    version, internal, gauss = data
    rng.setstate((version, tuple(internal), gauss))


def generator_from_state(state: Any) -> np.random.Generator:
    """A numpy generator in the state ``bit_generator.state`` gave (a PCG64's, as
    gymnasium's and ``np.random.default_rng``'s are); ``ValueError`` for anything else.
    Checked here because numpy's setter cuts a float word to an integer and takes any
    ``has_uint32``, so a damaged state would resume with another stream."""
    words = state.get("state") if isinstance(state, dict) else None
    if not (
        isinstance(state, dict)
        and set(state) == {"bit_generator", "state", "has_uint32", "uinteger"}
        and state["bit_generator"] == "PCG64"
        and isinstance(words, dict)
        and set(words) == {"state", "inc"}
        and all(is_json_int(words[k]) and 0 <= words[k] < 2**128 for k in ("state", "inc"))
        and is_json_int(state["has_uint32"])
        and state["has_uint32"] in (0, 1)
        and is_json_int(state["uinteger"])
        and 0 <= state["uinteger"] < 2**32
    ):
        raise ValueError(
            "not the state of a PCG64 generator (bit_generator 'PCG64', state and inc "
            "integers 0 to 2**128 - 1, has_uint32 0 or 1, uinteger 0 to 2**32 - 1)"
        )
    generator = np.random.Generator(np.random.PCG64())
    try:
        generator.bit_generator.state = state
    except (ValueError, TypeError, KeyError, OverflowError) as e:
        raise ValueError(f"not the state of a PCG64 generator ({e})") from None
    return generator


def _rng_state() -> dict[str, Any]:
    import torch

    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)  # type: ignore[misc]
    return {
        "python": random_state(random),
        "numpy": [str(name), [int(k) for k in keys], int(pos), int(has_gauss), float(cached)],
        "torch": [int(b) for b in torch.get_rng_state().tolist()],
    }


def _check_rng(rng: Any, path: Path, folder: Path) -> None:
    import torch

    def bad(part: str) -> CheckpointError:
        return CheckpointError(f"{path}: the {part} random state is damaged; {what_to_do(folder)}")

    if not isinstance(rng, dict):
        raise bad("saved")
    if not random_state_ok(rng.get("python")):
        raise bad("python")
    npy = rng.get("numpy")
    # numpy takes a position past the words without a word of complaint.
    if not (
        isinstance(npy, list)
        and len(npy) == 5
        and npy[0] == "MT19937"
        and _mt_words_ok(npy[1])
        and is_json_int(npy[2])
        and 0 <= npy[2] <= _MT_WORDS
        and npy[3] in (0, 1)
        and is_json_int(npy[3])
        and isinstance(npy[4], float)
    ):
        raise bad("numpy")
    tch = rng.get("torch")
    if not (isinstance(tch, list) and all(is_json_int(x) and 0 <= x < 256 for x in tch)):
        raise bad("torch")
    if len(tch) != torch.get_rng_state().numel():
        raise bad("torch")
    try:  # torch checks the generator's own fields; a scratch generator takes the blow
        torch.Generator().set_state(torch.tensor(tch, dtype=torch.uint8))
    except RuntimeError:
        raise bad("torch") from None


def _set_rng_state(rng: dict[str, Any]) -> None:
    import torch

    set_random_state(random, rng["python"])
    name, keys, pos, has_gauss, cached = rng["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(torch.tensor(rng["torch"], dtype=torch.uint8))


__all__ = [
    "Checkpoint",
    "CheckpointError",
    "FORMAT",
    "capture",
    "generator_from_state",
    "random_state",
    "random_state_ok",
    "read_state",
    "restore",
    "set_random_state",
    "what_to_do",
    "write",
]
