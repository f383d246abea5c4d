"""matador-env: rules engine, RL environments and bots for Matador dominoes.

``import matador_env`` stays light (the engine is stdlib only): the environments
and the encoding, which need numpy, gymnasium and PettingZoo, are imported on
first use of their names here, e.g. ``from matador_env import env``. Importing
:mod:`matador_env.matador_v0` (the environment's documentation page) registers
``matador_v0`` with PettingZoo, so that ``pettingzoo.make("aec", "matador_v0")``
works after it.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> submodule that defines it, imported on first access (PEP 562).
_LAZY = {
    "env": "matador_v0",
    "raw_env": "matador_v0",
    "MatadorSingleEnv": "gym_env",
    "ENCODING_VERSION": "encoding",
    "Encoding": "encoding",
    "encoding_for": "encoding",
    "encode_action": "encoding",
    "decode_action": "encoding",
    "action_mask": "encoding",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
