"""Exported policies: an ONNX network plus a JSON sidecar, played with onnxruntime.

No torch is needed here (``pip install '.[bot]'`` in the checkout brings onnxruntime).
An exported policy is two files side by side::

    policy.onnx   input "obs" (batch x obs_size float32) -> output "logits" (batch x actions)
    policy.json   the sidecar: format, rules, encoding version, sizes, provenance

The sidecar is checked when the policy is loaded: the encoding version must be
this library's :data:`~matador_env.encoding.ENCODING_VERSION`, and when rules are
given they must be the rules the policy was trained for. A mismatch raises
:class:`PolicyMismatchError` naming both sides.

Both files are checked before a policy is handed out: a sidecar that is not
JSON, too large or too deeply nested, lacks a field (every :class:`Rules` field
among its rules too) or holds one of the wrong type; a network onnxruntime cannot
read, whose input is not ``obs`` (float32, batch x obs_size) or whose output is not
``logits`` (float32, batch x num_actions), or that fails or answers with the wrong
size on a probe observation. Each raises :class:`PolicyError` naming the file, never
a raw onnxruntime, JSON or attribute error.

Runtimes: onnxruntime loads and checks every network. A network that is a plain
chain of dense layers (every one ``python -m train`` exports) then plays one
observation at a time in numpy (:mod:`matador_env.onnx_mlp`): onnxruntime's own work
per call costs more than the arithmetic, and the numpy network reads only the rows
its observation and legal moves need. It is used only after its logits agree with
onnxruntime's on probe observations (:data:`PROBE_TOLERANCE`); batches and any other
network run in onnxruntime. ``load_policy(..., runtime="onnxruntime")`` keeps
onnxruntime for every call; :attr:`OnnxPolicy.runtime` says which one plays.

Shipped bots: ``matador_env/bots/<configuration>/`` holds the trained bot of one
configuration of :mod:`matador_env.configs` (``standard``, ``standard_4p``,
``pagat_teams`` ...). The environment variable ``MATADOR_BOTS_DIR``, when set,
names another folder of that layout to use instead (a frontend shipping bots of
its own; tests); :func:`bots_dir` reads it.

Paths: ``load_policy(p)`` accepts the ``.onnx`` file, the ``.json`` sidecar, a
directory holding ``policy.onnx``, or a stem (``runs/x/best`` ->
``runs/x/best/policy.onnx`` if that is a directory, else ``runs/x/best.onnx``).
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from .configs import CONFIGURATIONS, Configuration, configuration
from .encoding import ENCODING_VERSION, encoding_for
from .engine import Move, Rules, RulesError, SeatView
from .engine.rules import rules_differences
from .engine.state import check_rng
from .engine.tiles import is_json_int
from .files import lookup_problem
from .onnx_mlp import NumpyMLP, read_mlp

__all__ = [
    "MAX_SIDECAR_BYTES",
    "POLICY_FILE",
    "POLICY_FORMAT",
    "POLICY_FORMAT_VERSION",
    "SIDECAR_FILE",
    "PolicyError",
    "PolicyMismatchError",
    "PolicyInfo",
    "OnnxPolicy",
    "PROBE_TOLERANCE",
    "RUNTIMES",
    "load_policy",
    "policy_paths",
    "read_policy_info",
    "BOTS_DIR",
    "BOTS_DIR_VARIABLE",
    "bots_dir",
    "check_slip",
    "check_temperature",
    "default_policy",
    "shipped_configurations",
]

BOTS_DIR = Path(__file__).resolve().parent / "bots"
"""Trained policies shipped with the package, one folder per configuration."""
BOTS_DIR_VARIABLE = "MATADOR_BOTS_DIR"
"""The environment variable naming another folder of shipped bots."""

POLICY_FILE = "policy.onnx"
"""The network's file name in a policy folder (a run's ``best/``, a shipped bot's)."""
SIDECAR_FILE = Path(POLICY_FILE).with_suffix(".json").name
"""The sidecar's file name beside it: the network's with ``.json``, the rule
:func:`policy_paths` applies to any network path."""

POLICY_FORMAT = "matador-policy"
POLICY_FORMAT_VERSION = 1
MAX_SIDECAR_BYTES = 1 << 20
"""A sidecar is a few hundred bytes; anything past this is refused unread."""


class PolicyError(ValueError):
    """A policy file that is missing, unreadable or not a Matador policy."""


class PolicyMismatchError(PolicyError):
    """A policy made for other rules or another observation encoding."""


_RULES_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Rules))
"""Every field of :class:`Rules`: a sidecar's ``rules`` names each one (the export writes
:meth:`Rules.to_dict`), since :meth:`Rules.from_dict` would fill a missing one with its
default and so play the network under rules it was not trained for."""


@dataclass(frozen=True)
class PolicyInfo:
    """The JSON sidecar of an exported policy."""

    rules: Rules
    encoding_version: int
    obs_size: int
    num_actions: int
    format_version: int = POLICY_FORMAT_VERSION
    provenance: dict[str, Any] | None = None
    """Where the policy came from: run name, steps, command... (free-form)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": POLICY_FORMAT,
            "format_version": self.format_version,
            "rules": self.rules.to_dict(),
            "encoding_version": self.encoding_version,
            "obs_size": self.obs_size,
            "num_actions": self.num_actions,
            "input": "obs",
            "output": "logits",
            "provenance": self.provenance or {},
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "sidecar") -> PolicyInfo:
        """The sidecar's JSON object, every field checked; :class:`PolicyError` naming
        ``source`` (the file) and the field otherwise."""
        if not isinstance(data, dict) or data.get("format") != POLICY_FORMAT:
            raise PolicyError(
                f"{source}: not a Matador policy sidecar (format != {POLICY_FORMAT!r})"
            )
        version = data.get("format_version")
        if not is_json_int(version) or version != POLICY_FORMAT_VERSION:
            raise PolicyError(
                f"{source}: sidecar format_version {_short(version)}; this library reads "
                f"{POLICY_FORMAT_VERSION}"
            )
        for key in ("rules", "encoding_version", "obs_size", "num_actions"):
            if key not in data:
                raise PolicyError(f"{source}: the sidecar lacks {key!r}")
        for key, low in (("encoding_version", 0), ("obs_size", 1), ("num_actions", 1)):
            if not is_json_int(data[key]) or data[key] < low:
                raise PolicyError(
                    f"{source}: {key} must be an integer >= {low}, got {_short(data[key])}"
                )
        for key, expected in (("input", "obs"), ("output", "logits")):
            if key in data and data[key] != expected:
                raise PolicyError(f"{source}: {key} must be {expected!r}, got {_short(data[key])}")
        provenance = data.get("provenance")
        if provenance is not None and not isinstance(provenance, dict):
            raise PolicyError(
                f"{source}: provenance must be an object (or absent), got {_short(provenance)}"
            )
        if not isinstance(data["rules"], dict):
            raise PolicyError(
                f"{source}: rules must be an object of Rules fields, got {_short(data['rules'])}"
            )
        # A missing field would load as its default: a pagat network stripped of the
        # fields where pagat differs would load for standard rules, {} as standard.
        missing = [name for name in _RULES_FIELDS if name not in data["rules"]]
        if missing:
            raise PolicyError(
                f"{source}: rules lack {', '.join(missing)}; a sidecar of format_version "
                f"{POLICY_FORMAT_VERSION} names every Rules field (the export writes them "
                "all): re-export the policy"
            )
        try:
            rules = Rules.from_dict(data["rules"])
        except RulesError as exc:
            raise PolicyError(f"{source}: rules do not parse: {exc}") from None
        return cls(
            rules=rules,
            encoding_version=data["encoding_version"],
            obs_size=data["obs_size"],
            num_actions=data["num_actions"],
            format_version=version,
            provenance=dict(provenance or {}),
        )


def _short(value: object) -> str:
    """A value for an error message, cut short (a crafted file may hold megabytes)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def policy_paths(path: str | Path) -> tuple[Path, Path]:
    """The ``(onnx, sidecar)`` files a policy path names (see the module docstring);
    :class:`PolicyError` for a path the system cannot look up (a name too long)."""
    if not isinstance(path, (str, Path)):
        raise PolicyError(f"a policy path is a str or Path, got {_short(path)}")
    p = Path(path)
    why = lookup_problem(p)
    if why is None:
        if p.suffix == ".onnx":
            onnx_path = p
        elif p.suffix == ".json":
            onnx_path = p.with_suffix(".onnx")
        elif p.is_dir():
            onnx_path = p / POLICY_FILE
        else:
            onnx_path = p.with_name(p.name + ".onnx")
        sidecar = onnx_path.with_suffix(".json")
        # The files it names may be out of reach where it is not (NAME.onnx, too long).
        why = lookup_problem(onnx_path) or lookup_problem(sidecar)
    if why is not None:
        raise PolicyError(f"no exported policy at {path}: it cannot be looked up ({why})")
    return onnx_path, sidecar


RUNTIMES = ("auto", "onnxruntime")
"""How :class:`OnnxPolicy` plays one observation: ``auto`` runs a network that is a
plain chain of dense layers in numpy (:mod:`matador_env.onnx_mlp`) once it agrees with
onnxruntime on probe observations, any other network in onnxruntime; ``onnxruntime``
always uses onnxruntime."""

PROBE_TOLERANCE = 1e-4
"""How far (absolute and relative) the numpy network's logits may lie from
onnxruntime's on the probe observations; float32 rounding is about 1e-5 there."""


class OnnxPolicy:
    """An exported policy: observation and mask in, action out."""

    def __init__(self, onnx_path: Path, info: PolicyInfo, runtime: str = "auto") -> None:
        """Open and check the network (:class:`PolicyError` naming ``onnx_path``)."""
        if runtime not in RUNTIMES:
            raise PolicyError(f"runtime {_short(runtime)}: expected one of {', '.join(RUNTIMES)}")
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise PolicyError(
                "playing an exported policy needs onnxruntime: pip install '.[bot]' in the checkout"
            ) from exc
        options = ort.SessionOptions()
        # One thread: a policy this small is latency-bound, and callers parallelise
        # over processes (arena workers, vectorised environments) themselves.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.path = onnx_path
        self.info = info
        self.encoding = encoding_for(info.rules)
        try:
            self._session = ort.InferenceSession(
                str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's own errors share no base class but Exception
            raise PolicyError(
                f"{onnx_path}: onnxruntime cannot load it as a network "
                f"({type(exc).__name__}: {_short(str(exc))}); re-export the policy"
            ) from None
        self._check_signature()
        self._outputs = ["logits"]
        # One observation at a time (a bot's move) runs through an I/O binding onto
        # buffers kept per thread (the HTTP server moves in a thread pool on one policy).
        # Not converting the input and not allocating the output on every call saves a
        # tenth to a seventh of a move (docs/strength-record.md, "bot speed").
        self._bound = threading.local()
        # One probe catches a graph that fails or answers with the wrong size at run
        # time. It runs unbound: a binding fixes the output's shape, so only the plain
        # run shows a wrong width as the network's own answer.
        self._checked(np.zeros((1, info.obs_size), dtype=np.float32), self._run_batch)
        self._mlp = self._numpy_network() if runtime == "auto" else None

    def _numpy_network(self) -> NumpyMLP | None:
        """The network in numpy, when it is a plain MLP whose logits agree with
        onnxruntime's on probe observations (none, all ones, and fixed random ones of
        0/1 and of [0, 1) values, as observations are); else ``None``."""
        mlp = read_mlp(self.path, self.info.obs_size, self.info.num_actions)
        if mlp is None:
            return None
        rng = np.random.default_rng(0)
        size = self.info.obs_size
        probes = np.concatenate(
            [
                np.zeros((1, size), np.float32),
                np.ones((1, size), np.float32),
                (rng.random((8, size)) < 0.25).astype(np.float32),
                rng.random((8, size), dtype=np.float32),
            ]
        )
        try:
            reference = self._checked(probes, self._run_batch)
        except PolicyError:
            # The numpy network only speeds a policy up: it never decides which files
            # load, so a network that fails on these probes stays in onnxruntime.
            return None
        legal = np.arange(self.info.num_actions)
        for rows in (mlp.logits(probes), np.stack([mlp.legal_logits(x, legal) for x in probes])):
            if not np.allclose(rows, reference, rtol=PROBE_TOLERANCE, atol=PROBE_TOLERANCE):
                return None
        return mlp

    @property
    def runtime(self) -> str:
        """What plays one observation: ``numpy`` or ``onnxruntime`` (see :data:`RUNTIMES`)."""
        return "onnxruntime" if self._mlp is None else "numpy"

    def _check_signature(self) -> None:
        info = self.info
        for what, read, name, size in (
            ("input", self._session.get_inputs, "obs", info.obs_size),
            ("output", self._session.get_outputs, "logits", info.num_actions),
        ):
            names, kind, shape = self._read_signature(what, read)
            if names != [name]:
                raise PolicyError(
                    f"{self.path}: the network's {what}s are {names}; a policy has one "
                    f"{what}, {name!r}"
                )
            # A symbolic or unknown width is left to the probe run; a fixed one must fit.
            fixed_width = len(shape) == 2 and isinstance(shape[1], int)
            if kind != "tensor(float)" or len(shape) != 2 or (fixed_width and shape[1] != size):
                raise PolicyError(
                    f"{self.path}: {what} {name!r} is {kind} of shape {shape}; "
                    f"expected tensor(float) of shape [batch, {size}]"
                )

    def _read_signature(
        self, what: str, read: Callable[[], list[Any]]
    ) -> tuple[list[str], str, list[Any]]:
        """The names of the network's ``what`` (its inputs or outputs, as ``read`` lists
        them), and the type and shape of the first (``""`` and ``[]`` where there is
        none). onnxruntime decodes names and symbolic dimensions as text only when they
        are read, so a damaged file that loads can fail here (``UnicodeDecodeError``): a
        :class:`PolicyError` naming the file."""
        try:
            args = read()
            names = [a.name for a in args]
            if not args:
                return names, "", []
            return names, args[0].type, list(args[0].shape)
        except Exception as exc:  # onnxruntime's own errors share no base class but Exception
            raise PolicyError(
                f"{self.path}: onnxruntime cannot read the network's {what}s "
                f"({type(exc).__name__}: {_short(str(exc))}); re-export the policy"
            ) from None

    @property
    def rules(self) -> Rules:
        return self.info.rules

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Raw action logits for a batch (or a single) observation.

        Raises ``ValueError`` for an observation of the wrong shape or with values that
        are not finite, and :class:`PolicyError` when the network fails or answers with
        anything but finite logits of ``num_actions`` per observation.
        """
        x, single = self._rows(obs, "logits")
        self._finite(x, "logits")
        if x.shape[0] != 1:
            out = self._checked(x, self._run_batch)
        elif self._mlp is not None:
            out = self._checked(x, self._mlp.logits)
        else:
            out = self._checked(x, self._run_bound)
        return out[0] if single else out

    def _rows(self, obs: np.ndarray, caller: str) -> tuple[np.ndarray, bool]:
        """``obs`` as float32 rows of ``obs_size`` values, and whether it was one
        observation (1-D); ``ValueError`` naming ``caller`` for any other shape."""
        x = np.asarray(obs, dtype=np.float32)
        single = x.ndim == 1
        if single:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != self.info.obs_size:
            raise ValueError(
                f"{caller}: observations of {self.info.obs_size} values expected, "
                f"got shape {np.shape(obs)}"
            )
        return x, single

    @staticmethod
    def _finite(x: np.ndarray, caller: str) -> None:
        """``ValueError`` naming ``caller`` when the observations ``x`` (float32) hold a
        value that is not finite: the network's logits would not be finite either (or an
        inf saturate to finite nonsense), and the error would blame the file."""
        if not np.isfinite(x).all():
            raise ValueError(
                f"{caller}: the observation holds values that are not finite (nan or inf "
                "as float32); allowed: finite numbers, as the encoding writes them"
            )

    def _legal(self, mask: np.ndarray) -> np.ndarray:
        """The legal actions (ascending indices) of an action mask: ``ValueError`` unless
        it is 1-D with one entry per action, of bools or of integers 0 and 1, and marks
        at least one (a longer mask would index past the network's logits, a shorter
        one leave actions out, and any nonzero float would count as legal)."""
        m = np.asarray(mask)
        n = self.info.num_actions
        if m.shape != (n,):
            raise ValueError(
                f"act: the mask must have one entry per action, shape ({n},); got shape {m.shape}"
            )
        legal = np.flatnonzero(m)
        # Numbers other than 0 and 1 are refused (any nonzero would count as legal), in
        # any numeric type: RLlib and others hand masks over as float32 ones and zeros.
        if m.dtype != np.bool_ and (
            m.dtype.kind not in "iuf" or np.count_nonzero(m == 1) != legal.size
        ):
            what = f"{m.dtype} values" if m.dtype.kind not in "iuf" else "values other than 0 and 1"
            raise ValueError(
                f"act: the mask holds {what}; allowed: bools, or the numbers 0 (illegal) "
                "and 1 (legal)"
            )
        if legal.size == 0:
            raise ValueError("act: the mask marks no legal action")
        return legal

    def _checked(
        self, x: np.ndarray, run: Callable[[np.ndarray], Any], caller: str = "logits"
    ) -> np.ndarray:
        """``run(x)``, or :class:`PolicyError` when it fails or answers with anything but
        finite logits of ``num_actions`` for each row of ``x`` (``ValueError`` naming
        ``caller`` instead when ``x`` itself is not finite: then the input is at fault)."""
        try:
            out = run(x)
        except Exception as exc:  # onnxruntime's errors share no base class but Exception
            raise PolicyError(
                f"{self.path}: the network failed ({type(exc).__name__}: {_short(str(exc))})"
            ) from None
        shaped = isinstance(out, np.ndarray) and out.shape == (x.shape[0], self.info.num_actions)
        if not shaped or not np.isfinite(out).all():
            if shaped:
                self._finite(x, caller)
            raise PolicyError(
                f"{self.path}: the network answered {getattr(out, 'shape', type(out).__name__)} "
                f"{getattr(out, 'dtype', '')}; expected finite logits of shape "
                f"({x.shape[0]}, {self.info.num_actions})"
            )
        return out

    def _run_batch(self, x: np.ndarray) -> Any:
        """The network's answer to the observations ``x``, by a plain run."""
        return self._session.run(self._outputs, {"obs": x})[0]

    def _run_bound(self, x: np.ndarray) -> np.ndarray:
        """The logits of one observation (``x`` of shape ``(1, obs_size)``) through the
        calling thread's binding: a fresh array, so callers may keep it."""
        slot = self._bound
        binding = getattr(slot, "binding", None)
        if binding is None:
            slot.obs = np.zeros((1, self.info.obs_size), dtype=np.float32)
            slot.out = np.zeros((1, self.info.num_actions), dtype=np.float32)
            binding = self._session.io_binding()
            binding.bind_cpu_input("obs", slot.obs)
            binding.bind_output(
                "logits", "cpu", 0, np.float32, list(slot.out.shape), slot.out.ctypes.data
            )
            slot.binding = binding
        slot.obs[...] = x
        self._session.run_with_iobinding(binding)
        return slot.out.copy()

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: random.Random | None = None) -> int:
        """The action: the most likely legal one, or sampled when ``rng`` is given.

        Raises ``ValueError`` for a mask that is not one entry per action of bools or
        the numbers 0 and 1 marking at least one legal action, and, unless the mask
        forces the move (one legal action: the network is not run), for an observation
        of the wrong shape or with values that are not finite.
        """
        legal = self._legal(mask)
        if legal.size == 1:
            # A forced move (a draw, a pass, a single fit): nothing for the network to
            # choose, so it is not run, as the search and expert agents skip it too.
            return int(legal[0])
        self._finite(self._rows(obs, "act")[0], "act")
        return self._pick(obs, legal, rng)

    def legal_logits(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The logits of the actions ``legal`` (indices) for one observation: what a move
        runs. In numpy only the rows those need are read (:mod:`matador_env.onnx_mlp`).

        Raises ``ValueError`` for an observation of the wrong shape, and when the logits
        are not finite, for an observation with values that are not finite; else
        :class:`PolicyError` (the network is at fault). Every bot move runs this, so the
        observation's values are checked only then: :meth:`act` and :meth:`logits`
        check them before running the network, and :meth:`choose`'s come from the
        encoding, finite by construction.
        """
        x, _ = self._rows(obs, "legal_logits")
        if x.shape[0] != 1:
            raise ValueError(f"legal_logits: one observation expected, got shape {np.shape(obs)}")
        mlp = self._mlp
        if mlp is None:
            return self._checked(x, self._run_bound, "legal_logits")[0].take(legal)
        out = mlp.legal_logits(x[0], legal)
        if not np.isfinite(out).all():
            self._finite(x, "legal_logits")
            raise PolicyError(f"{self.path}: the network answered logits that are not finite")
        return out

    def _pick(
        self,
        obs: np.ndarray,
        legal: np.ndarray,
        rng: random.Random | None,
        temperature: float = 1.0,
    ) -> int:
        """The action among ``legal`` (two or more, ascending) as :meth:`act` plays it,
        sampled at ``temperature`` (checked; 0: the most likely) when ``rng`` is given."""
        logits = self.legal_logits(obs, legal)
        if rng is None or temperature == 0:
            # float32 -> float64 is exact and order-preserving, and argmax keeps the
            # first of equal maxima in both, so there is no need to widen here.
            return int(legal[logits.argmax()])
        logits = logits.astype(np.float64)
        weights = np.exp((logits - logits.max()) / temperature)
        return int(rng.choices(legal.tolist(), weights=weights.tolist())[0])

    def choose(
        self, view: SeatView, rng: random.Random | None = None, temperature: float = 1.0
    ) -> Move:
        """The move for a seat's view (argmax, or sampled at ``temperature`` when ``rng``
        is given; 0 is the most likely move, as :class:`~matador_env.bot.PolicyBot`
        takes it). ``ValueError`` for a temperature that is not a finite number >= 0
        (:func:`check_temperature`), ``TypeError`` for an ``rng`` that is neither None
        nor a ``random.Random``."""
        check_temperature(temperature)
        check_rng(rng, f"policy {self.path}", none_allowed=True)
        enc = self.encoding
        if not enc.encodes(view.rules):
            raise PolicyMismatchError(_rules_mismatch(self.info.rules, view.rules, str(self.path)))
        moves = view.legal_moves
        if len(moves) == 1:
            return moves[0]  # forced: see act()
        obs = enc.observation(view)
        # The mask of the view's own legal moves needs none of act()'s checks.
        legal = enc.action_mask(moves).nonzero()[0]  # two or more: not forced
        return enc.moves[self._pick(obs, legal, rng, temperature)]


def check_temperature(temperature: object, error: type[ValueError] = ValueError) -> None:
    """``error`` unless ``temperature`` is a finite number >= 0, the temperatures a policy
    samples at (0: its most likely move): a negative one would favour the least likely
    moves, and nan or inf make no weights at all."""
    # Exact types first: the check runs on every move, and isinstance of numpy's
    # abstract number types costs a bot move about a microsecond (bool is refused).
    number = type(temperature) in (float, int) or isinstance(temperature, np.integer | np.floating)
    # The chained comparison is false for nan as well as for negatives and inf.
    if not (number and 0 <= temperature < math.inf):  # type: ignore[operator]
        raise error(f"temperature must be a finite number >= 0, got {_short(temperature)}")


def check_slip(slip: object, error: type[ValueError] = ValueError) -> None:
    """``error`` unless ``slip`` is a number from 0 to 1, the share of its decisions at
    which a bot plays a random legal move (a bool is refused: True would read as
    always, nan as never)."""
    number = type(slip) in (float, int) or isinstance(slip, np.integer | np.floating)
    if not (number and 0 <= slip <= 1):  # type: ignore[operator]  # false for nan
        raise error(f"slip must be a number from 0 to 1, got {_short(slip)}")


def load_policy(path: str | Path, rules: Rules | None = None, runtime: str = "auto") -> OnnxPolicy:
    """Load an exported policy, checking its sidecar (and ``rules``, when given);
    ``runtime`` is one of :data:`RUNTIMES`.

    Raises :class:`PolicyError` naming the file for a missing, unreadable,
    corrupt or crafted sidecar or network (see the module docstring), and
    :class:`PolicyMismatchError` for a policy of other rules or another encoding.
    """
    if rules is not None and not isinstance(rules, Rules):
        raise PolicyError(f"load_policy: rules must be a Rules or None, got {_short(rules)}")
    onnx_path, sidecar = policy_paths(path)
    if not onnx_path.is_file():
        raise PolicyError(f"no exported policy at {path}: {onnx_path} does not exist")
    if not sidecar.is_file():
        raise PolicyError(f"policy {onnx_path} has no sidecar {sidecar}")
    info = read_policy_info(sidecar)
    if info.encoding_version != ENCODING_VERSION:
        raise PolicyMismatchError(
            f"{onnx_path} was exported with observation encoding version "
            f"{info.encoding_version}; this library uses version {ENCODING_VERSION}. "
            "Retrain or re-export the policy with this version."
        )
    try:
        enc = encoding_for(info.rules)
    except ValueError as exc:
        raise PolicyError(f"{sidecar}: no observation encoding for its rules: {exc}") from None
    if (info.obs_size, info.num_actions) != (enc.obs_size, enc.num_actions):
        raise PolicyMismatchError(
            f"{onnx_path}: sizes obs={info.obs_size} actions={info.num_actions} differ from "
            f"this library's obs={enc.obs_size} actions={enc.num_actions} for the same rules"
        )
    if rules is not None and rules != info.rules:
        raise PolicyMismatchError(_rules_mismatch(info.rules, rules, str(onnx_path)))
    return OnnxPolicy(onnx_path, info, runtime)


def read_policy_info(sidecar: Path) -> PolicyInfo:
    """The checked contents of a policy's sidecar (``policy.json``); :class:`PolicyError`
    naming the file when it cannot be read or is not a policy sidecar."""
    return PolicyInfo.from_json(_read_sidecar(sidecar), str(sidecar))


def _read_sidecar(sidecar: Path) -> Any:
    try:
        with sidecar.open("rb") as f:
            raw = f.read(MAX_SIDECAR_BYTES + 1)
    except OSError as exc:
        raise PolicyError(f"cannot read the sidecar {sidecar}: {exc}") from None
    if len(raw) > MAX_SIDECAR_BYTES:
        raise PolicyError(
            f"the sidecar {sidecar} is over {MAX_SIDECAR_BYTES} bytes; a sidecar is a small "
            "JSON object (python -m train's export writes one)"
        )
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyError(f"the sidecar {sidecar} is not JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:  # nested too deep; an integer too long
        raise PolicyError(
            f"the sidecar {sidecar} is not a policy sidecar: {type(exc).__name__}: "
            f"{_short(str(exc))}"
        ) from None


def _rules_mismatch(trained: Rules, asked: Rules, where: str) -> str:
    diffs = rules_differences(trained.to_dict(), asked.to_dict(), ("policy", "game"))
    name = trained.preset_name() or "custom rules"
    return f"{where} was trained for {name} and cannot play these rules (" + "; ".join(diffs) + ")"


def bots_dir() -> Path:
    """The folder of shipped bots: ``$MATADOR_BOTS_DIR`` when set, else :data:`BOTS_DIR`."""
    override = os.environ.get(BOTS_DIR_VARIABLE)
    return Path(override) if override else BOTS_DIR


def shipped_configurations() -> list[Configuration]:
    """The configurations a trained bot is shipped for (a folder of :func:`bots_dir`
    named after the configuration, holding ``policy.onnx``), in the order of
    :data:`~matador_env.configs.CONFIGURATIONS`."""
    folder = bots_dir()
    return [c for c in CONFIGURATIONS.values() if (folder / c.name / POLICY_FILE).is_file()]


def default_policy(name: str = "standard") -> OnnxPolicy:
    """The trained bot shipped for the configuration ``name`` (a preset's name is its
    two-seat configuration; see ``matador_env/bots/README.md``)."""
    config = configuration(name)
    if config not in shipped_configurations():
        shipped = ", ".join(c.name for c in shipped_configurations()) or "none"
        raise PolicyError(
            f"no trained bot is shipped for {name} ({config.describe()}); shipped: {shipped}"
        )
    return load_policy(bots_dir() / config.name, rules=config.rules())
