"""One learner's episode, recorded, for tests that compare two ways of playing it."""

from __future__ import annotations

from typing import Any

import numpy as np


def learner_trace(env: Any, seed: int) -> list[bytes]:
    """One episode of ``env`` (a ``MatadorSingleEnv``, or a one-slot ``VectorEnv`` in
    learner mode) from ``seed``, the learner playing its last legal action: what it saw
    at each turn and the reward that ended it."""
    batched = hasattr(env, "num_envs")
    if batched:
        obs, masks, _ = env.reset([seed])
        seen, mask = obs[0], masks[0]
    else:
        seen, info = env.reset(seed=seed)
        mask = info["action_mask"]
    trace = [seen.tobytes()]
    while True:
        action = int(np.flatnonzero(mask)[-1])
        if batched:
            obs, masks, _, rewards, term, trunc, _ = env.step(np.array([action]))
            seen, mask, reward, done = obs[0], masks[0], rewards[0], term[0] or trunc[0]
        else:
            seen, reward, term, trunc, info = env.step(action)
            mask, done = info["action_mask"], term or trunc
        if done:
            return [*trace, np.float32(reward).tobytes()]
        trace.append(seen.tobytes())
