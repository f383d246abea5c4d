"""matador-env: rules engine, RL environments and bots for Matador dominoes.

``import matador_env`` stays light (the engine is stdlib only): the environments
and the encoding, which need numpy, gymnasium and PettingZoo, are imported on
first use of their names here, e.g. ``from matador_env import env``.

``import matador_env`` also registers ``matador_v0`` with PettingZoo's registry, so
that ``pettingzoo.make("aec", "matador_v0", preset="leiden")`` works after it, and
``Matador-v0`` (:class:`MatadorSingleEnv`) with Gymnasium's, so that
``gymnasium.make("Matador-v0", preset="leiden")`` does (and ``gymnasium.make_vec``
builds :class:`~matador_env.gym_vector.MatadorVectorEnv`); ``gymnasium.make(
"matador_env:Matador-v0", ...)`` imports this package itself, for tools that take
an environment id as a string. It does so without importing either library: one
not imported yet gets its registration right after its own import, whenever that
happens.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

__version__ = "0.1.0"

ENV_ID = "matador_v0"
"""The PettingZoo AEC environment's name in PettingZoo's registry."""
GYM_ID = "Matador-v0"
"""The single-learner environment's id in Gymnasium's registry."""

# name -> submodule that defines it, imported on first access (PEP 562).
_LAZY = {
    "env": "matador_v0",
    "raw_env": "matador_v0",
    "MatadorSingleEnv": "gym_env",
    "MatadorVectorEnv": "gym_vector",
    "ENCODING_VERSION": "encoding",
    "Encoding": "encoding",
    "encoding_for": "encoding",
    "encode_action": "encoding",
    "decode_action": "encoding",
    "action_mask": "encoding",
}

__all__ = ["__version__", "ENV_ID", "GYM_ID", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def _register_with_pettingzoo() -> None:
    """Put ``matador_v0`` in the imported PettingZoo's registry, once."""
    pettingzoo = sys.modules["pettingzoo"]
    register = getattr(pettingzoo, "register", None)
    registry = getattr(pettingzoo, "aec_registry", None)
    if register is None or registry is None:  # PettingZoo before 1.25 has no registry
        return
    # PettingZoo files "name_vN" under its own form of the id, "name-vN"; a second
    # registration (a reload of this package) would warn that it overrides the first.
    if not {ENV_ID, ENV_ID.replace("_v", "-v")} & registry.keys():
        # A "module:attribute" entry point: the environment is imported by make().
        register("aec", ENV_ID, entry_point=f"{__name__}.matador_v0:env")


def _register_with_gymnasium() -> None:
    """Put ``Matador-v0`` in the imported Gymnasium's registry, once."""
    gymnasium = sys.modules["gymnasium"]
    register = getattr(gymnasium, "register", None)
    registry = getattr(gymnasium, "registry", None)
    if register is None or registry is None:  # a half-imported or very old Gymnasium
        return
    if GYM_ID not in registry:
        register(
            id=GYM_ID,
            entry_point=f"{__name__}.gym_env:MatadorSingleEnv",
            # gymnasium.make_vec's default: the compiled vector env (needs numba).
            vector_entry_point=f"{__name__}.gym_vector:MatadorVectorEnv",
        )


# library -> its registration, run once the library is imported.
_REGISTRATIONS = {"pettingzoo": _register_with_pettingzoo, "gymnasium": _register_with_gymnasium}


class _AfterImport(importlib.abc.Loader):
    """Runs a module's own loader, then a registration."""

    def __init__(self, loader: importlib.abc.Loader, registration: Callable[[], None]) -> None:
        self.loader = loader
        self.registration = registration

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its own loader (importlib.resources and pkgutil ask it).
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.registration()


class _ImportHook(importlib.abc.MetaPathFinder):
    """Wraps the loader of the first import of each library still to register with,
    then steps aside once there is none left."""

    def __init__(self, pending: dict[str, Callable[[], None]]) -> None:
        self.pending = pending

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        registration = self.pending.pop(fullname, None)
        if registration is None:
            return None
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _AfterImport(spec.loader, registration)
        return spec


def _register_everywhere() -> None:
    """Register now with each library already imported, and with each other one
    right after its import."""
    pending: dict[str, Callable[[], None]] = {}
    for library, registration in _REGISTRATIONS.items():
        if library in sys.modules:
            registration()
        else:
            pending[library] = registration
    if pending:
        sys.meta_path.insert(0, _ImportHook(pending))


_register_everywhere()
