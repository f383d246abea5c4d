"""A policy network that is a plain MLP, read from its ONNX file and run in numpy.

Exported policies are a chain of dense layers (``Gemm``), each optionally followed
by ``Tanh`` or ``Relu``, after the no-op ``Cast`` and ``Flatten`` that the torch
export puts in front; an ``Identity`` node that copies a stored weight (the export
shares equal tensors so) names that weight. :func:`read_mlp` recognises exactly that
chain and returns its weights as a :class:`NumpyMLP`; any other graph (another
operator, a branch, weights kept outside the file) gives ``None``, and the caller
keeps onnxruntime.

Why: a bot plays one observation at a time, where onnxruntime's own per-call
work costs more than the arithmetic, and with cold caches (the search's playouts
running between the bot's moves, as in the strength matrix) more still. For one
observation :meth:`NumpyMLP.legal_logits` reads only the first layer's rows of the
observation's nonzero inputs and only the last layer's rows of the legal actions.
A shipped bot's whole move takes about a fifth less time so, with cold caches and warm
(``python -m benchmarks.runtime``; ``docs/strength-record.md``, "bot speed").

The file is read with a small reader of the protocol-buffer wire format (the few
fields of ``onnx.proto`` used here), so the bot runtime needs nothing beyond
onnxruntime and numpy. The reader only has to be right about files onnxruntime
has already accepted: :class:`matador_env.policy.OnnxPolicy` checks the numpy
network against onnxruntime on probe observations before it plays with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["NumpyMLP", "read_mlp"]

# Field numbers of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto,
# TensorProto), the only ones read.
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_OUTPUT = 1, 5, 12
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 4, 5, 7
_ATTR_NAME, _ATTR_F, _ATTR_I = 1, 2, 3
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_FLOAT_DATA = 1, 2, 4
_TENSOR_NAME, _TENSOR_RAW_DATA, _TENSOR_DATA_LOCATION = 8, 9, 14
_VALUE_INFO_NAME = 1
_FLOAT = 1  # TensorProto.DataType.FLOAT


def _relu(h: np.ndarray) -> np.ndarray:
    return np.maximum(h, np.float32(0))


def _identity(h: np.ndarray) -> np.ndarray:
    return h


_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"Tanh": np.tanh, "Relu": _relu}


class _NotAnMlp(Exception):
    """The graph is not the chain of dense layers this module runs."""


@dataclass(frozen=True)
class _Layer:
    weight: np.ndarray
    """float32: ``[inputs, outputs]`` for every layer but the last, which is kept as
    ``[outputs, inputs]`` so that the rows of the legal actions are contiguous."""
    bias: np.ndarray
    activate: Callable[[np.ndarray], np.ndarray]


class NumpyMLP:
    """A chain of dense layers, for one observation or a batch."""

    def __init__(self, layers: list[_Layer], obs_size: int) -> None:
        self.layers = layers
        self.last = len(layers) - 1
        self.obs_size = obs_size
        self.num_actions = layers[-1].bias.shape[0]

    def logits(self, x: np.ndarray) -> np.ndarray:
        """All logits of observations ``x`` (``[batch, obs_size]`` float32)."""
        h = x
        for i, layer in enumerate(self.layers):
            h = layer.activate(
                (h @ layer.weight.T if i == self.last else h @ layer.weight) + layer.bias
            )
        return h

    def legal_logits(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The logits of the actions ``legal`` for one observation (``[obs_size]``)."""
        h = obs
        for i, layer in enumerate(self.layers):
            if i == self.last:  # the legal actions' rows only
                out = layer.weight[legal] @ h + layer.bias[legal]
            elif i == 0:  # the rows of the nonzero inputs only
                inputs = np.flatnonzero(h)
                out = h[inputs] @ layer.weight[inputs] + layer.bias
            else:
                out = h @ layer.weight + layer.bias
            h = layer.activate(out)
        return h


def read_mlp(onnx_path: Path, obs_size: int, num_actions: int) -> NumpyMLP | None:
    """The network of ``onnx_path`` as a :class:`NumpyMLP` from ``obs`` to ``logits``,
    or ``None`` when it is not a plain chain of dense layers of those sizes."""
    try:
        data = onnx_path.read_bytes()
        return _build(memoryview(data), obs_size, num_actions)
    except Exception:  # not one (_NotAnMlp), unreadable, or crafted: onnxruntime plays it
        return None


def _build(model: memoryview, obs_size: int, num_actions: int) -> NumpyMLP:
    weights: dict[str, np.ndarray] = {}
    outputs: list[str] = []
    nodes: list[memoryview] = []
    for field, _, value in _fields(_only(model, _MODEL_GRAPH, "graph")):
        if field == _GRAPH_INITIALIZER:
            name, array = _tensor(_view(value))
            weights[name] = array
        elif field == _GRAPH_OUTPUT:
            outputs.append(_string(_only(_view(value), _VALUE_INFO_NAME, "output name")))
        elif field == _GRAPH_NODE:
            nodes.append(_view(value))
    if outputs != ["logits"]:
        raise _NotAnMlp(f"outputs {outputs}")
    current = "obs"
    layers: list[_Layer] = []
    pending: tuple[np.ndarray, np.ndarray] | None = None  # a Gemm awaiting its activation
    activation: str | None = None
    for node in nodes:
        op, domain, inputs, outputs_, attrs = _node(node)
        if (
            op == "Identity"
            and domain in ("", "ai.onnx")
            and len(inputs) == len(outputs_) == 1
            and inputs[0] in weights
        ):
            # The torch export stores equal tensors once (an untrained network's zero
            # biases of equal size) and names the copy by an Identity node; nodes come
            # in order, so the copy is known before a Gemm reads it.
            weights[outputs_[0]] = weights[inputs[0]]
            continue
        if domain not in ("", "ai.onnx") or not inputs or inputs[0] != current:
            raise _NotAnMlp(f"node {op} off the chain")
        if len(outputs_) != 1:
            raise _NotAnMlp(f"node {op} with outputs {outputs_}")
        before_dense = pending is None
        if op == "Cast" and len(inputs) == 1 and attrs.get("to") == _FLOAT and before_dense:
            pass  # float32 observations cast to float32: nothing to do
        elif op == "Flatten" and len(inputs) == 1 and attrs.get("axis", 1) == 1 and before_dense:
            pass  # the observations are already [batch, obs_size]
        elif op == "Gemm" and len(inputs) in (2, 3):
            if pending is not None:
                layers.append(_dense(pending, activation))
            pending, activation = _gemm(inputs, attrs, weights), None
        elif op in _ACTIVATIONS and len(inputs) == 1 and pending is not None and activation is None:
            activation = op
        else:
            raise _NotAnMlp(f"node {op}")
        current = outputs_[0]
    if pending is None or current != "logits":
        raise _NotAnMlp("no chain of dense layers from obs to logits")
    layers.append(_dense(pending, activation))
    sizes = [obs_size] + [layer.bias.shape[0] for layer in layers]
    if sizes[-1] != num_actions:
        raise _NotAnMlp(f"{sizes[-1]} outputs for {num_actions} actions")
    for i, layer in enumerate(layers):  # weights as [outputs, inputs] so far
        if layer.weight.shape != (sizes[i + 1], sizes[i]):
            raise _NotAnMlp(f"a layer of shape {layer.weight.shape} in a chain of {sizes}")
    last = len(layers) - 1
    return NumpyMLP(
        [
            _Layer(
                layer.weight if i == last else np.ascontiguousarray(layer.weight.T),
                layer.bias,
                layer.activate,
            )
            for i, layer in enumerate(layers)
        ],
        obs_size,
    )


def _dense(gemm: tuple[np.ndarray, np.ndarray], activation: str | None) -> _Layer:
    """A ``Gemm``'s weight (``[outputs, inputs]``) and bias with the activation after it."""
    return _Layer(*gemm, _ACTIVATIONS[activation] if activation else _identity)


def _gemm(
    inputs: list[str], attrs: dict[str, float | int], weights: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """A ``Gemm``'s weight as ``[outputs, inputs]`` and its bias."""
    if attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0):
        raise _NotAnMlp(f"Gemm attributes {attrs}")
    if inputs[1] not in weights or (len(inputs) == 3 and inputs[2] not in weights):
        raise _NotAnMlp("Gemm weights that are not initializers")
    w = weights[inputs[1]]
    if w.ndim != 2:
        raise _NotAnMlp(f"Gemm weight of shape {w.shape}")
    w = w if attrs.get("transB", 0) else w.T
    b = weights[inputs[2]] if len(inputs) == 3 else np.zeros(w.shape[0], np.float32)
    if b.size != w.shape[0] or b.ndim > 2:
        raise _NotAnMlp(f"Gemm bias of shape {b.shape} for {w.shape[0]} outputs")
    return np.ascontiguousarray(w), np.ascontiguousarray(b.reshape(-1))


def _node(node: memoryview) -> tuple[str, str, list[str], list[str], dict[str, float | int]]:
    op = domain = ""
    inputs: list[str] = []
    outputs: list[str] = []
    attrs: dict[str, float | int] = {}
    for field, _, value in _fields(node):
        if field == _NODE_INPUT:
            inputs.append(_string(value))
        elif field == _NODE_OUTPUT:
            outputs.append(_string(value))
        elif field == _NODE_OP_TYPE:
            op = _string(value)
        elif field == _NODE_DOMAIN:
            domain = _string(value)
        elif field == _NODE_ATTRIBUTE:
            name, number = "", None
            for f, wire, v in _fields(_view(value)):
                if f == _ATTR_NAME:
                    name = _string(v)
                elif f == _ATTR_F and wire == 5:
                    number = float(np.frombuffer(_view(v), "<f4")[0])
                elif f == _ATTR_I and wire == 0:
                    number = _signed(int(v))  # type: ignore[arg-type]
            if number is not None:
                attrs[name] = number
    return op, domain, inputs, outputs, attrs


def _tensor(tensor: memoryview) -> tuple[str, np.ndarray]:
    name = ""
    dims: list[int] = []
    dtype = None
    raw: memoryview | None = None
    floats: list[memoryview] = []
    for field, wire, value in _fields(tensor):
        if field == _TENSOR_NAME:
            name = _string(value)
        elif field == _TENSOR_DIMS:
            if wire == 0:
                dims.append(_signed(int(value)))  # type: ignore[arg-type]
            else:
                dims.extend(_signed(d) for d in _varints(_view(value)))
        elif field == _TENSOR_DATA_TYPE:
            dtype = value
        elif field == _TENSOR_RAW_DATA:
            raw = _view(value)
        elif field == _TENSOR_FLOAT_DATA:
            if wire != 2:  # a single unpacked float
                raise _NotAnMlp("unpacked float_data")
            floats.append(_view(value))
        elif field == _TENSOR_DATA_LOCATION and value:
            raise _NotAnMlp(f"tensor {name!r} kept outside the file")
    if dtype != _FLOAT:
        raise _NotAnMlp(f"tensor {name!r} of data type {dtype}")
    payload = raw if raw is not None else memoryview(b"".join(bytes(f) for f in floats))
    if any(d < 0 for d in dims) or len(dims) > 2:
        raise _NotAnMlp(f"tensor {name!r} of shape {dims}")
    count = int(np.prod(dims, dtype=object)) if dims else 1
    if len(payload) != 4 * count:
        raise _NotAnMlp(f"tensor {name!r}: {len(payload)} bytes for shape {dims}")
    return name, np.frombuffer(payload, "<f4").astype(np.float32).reshape(dims)


def _fields(message: memoryview) -> Iterator[tuple[int, int, int | memoryview]]:
    """``(field number, wire type, value)`` of each field of a protocol-buffer message:
    an int for varint and fixed-width fields (wire types 0, 1, 5: fixed widths as
    their bytes' view), a view of the bytes for length-delimited ones (type 2)."""
    pos, end = 0, len(message)
    while pos < end:
        key, pos = _varint(message, pos)
        field, wire = key >> 3, key & 7
        value: int | memoryview
        if wire == 0:
            value, pos = _varint(message, pos)
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, pos = message[pos : pos + width], pos + width
        elif wire == 2:
            length, pos = _varint(message, pos)
            value, pos = message[pos : pos + length], pos + length
        else:
            raise _NotAnMlp(f"wire type {wire}")
        if pos > end or field == 0:
            raise _NotAnMlp("a truncated or corrupt message")
        yield field, wire, value


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise _NotAnMlp("a truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _varints(buf: memoryview) -> Iterator[int]:
    pos = 0
    while pos < len(buf):
        value, pos = _varint(buf, pos)
        yield value


def _signed(value: int) -> int:
    """A 64-bit varint as the signed integer it encodes (int64 fields)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _view(value: int | memoryview) -> memoryview:
    if not isinstance(value, memoryview):
        raise _NotAnMlp("a number where a message was expected")
    return value


def _string(value: int | memoryview) -> str:
    try:
        return bytes(_view(value)).decode("utf-8")
    except UnicodeDecodeError:
        raise _NotAnMlp("a name that is not UTF-8") from None


def _only(message: memoryview, number: int, what: str) -> memoryview:
    found = [v for f, _, v in _fields(message) if f == number]
    if len(found) != 1:
        raise _NotAnMlp(f"{len(found)} fields {what}")
    return _view(found[0])
