"""Issue #14: a corrupt, truncated or crafted ``policy.onnx`` or ``policy.json`` raises
PolicyError naming the file, never a raw onnxruntime, JSON, attribute or recursion error.

Every broken file is made here, in tmp_path, from the shipped standard bot or from a
small network built with onnx.helper."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from matador_env.policy import (
    BOTS_DIR,
    MAX_SIDECAR_BYTES,
    PolicyError,
    PolicyMismatchError,
    load_policy,
)

SHIPPED = BOTS_DIR / "standard"
SIDECAR: dict[str, Any] = json.loads((SHIPPED / "policy.json").read_text())
OBS, ACTIONS = SIDECAR["obs_size"], SIDECAR["num_actions"]


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    """A copy of the shipped standard bot to break."""
    folder = tmp_path / "bot"
    shutil.copytree(SHIPPED, folder)
    return folder


def test_the_copy_loads(bot: Path) -> None:
    policy = load_policy(bot)
    assert policy.logits(np.zeros(OBS, dtype=np.float32)).shape == (ACTIONS,)


# -- the network -------------------------------------------------------------------------


def network(
    *,
    input_name: str = "obs",
    output_name: str = "logits",
    dtype: int = TensorProto.FLOAT,
    in_width: int | str = OBS,
    out_width: int | str = ACTIONS,
    weights: np.ndarray | None = None,
    extra_input: bool = False,
    reshape_to: list[int] | None = None,
) -> bytes:
    """A one-layer network ``obs @ W`` with the names, types and sizes asked for."""
    w = weights if weights is not None else np.ones((OBS, ACTIONS), dtype=np.float32) * 0.01
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    nodes = [helper.make_node("MatMul", [input_name, "W"], ["mm"])]
    initializers = [numpy_helper.from_array(w.astype(np_type), "W")]
    if reshape_to is not None:
        initializers.append(numpy_helper.from_array(np.array(reshape_to, dtype=np.int64), "S"))
        nodes.append(helper.make_node("Reshape", ["mm", "S"], [output_name]))
    else:
        nodes.append(helper.make_node("Identity", ["mm"], [output_name]))
    inputs = [helper.make_tensor_value_info(input_name, dtype, ["batch", in_width])]
    if extra_input:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 3]))
    graph = helper.make_graph(
        nodes,
        "policy",
        inputs,
        [helper.make_tensor_value_info(output_name, dtype, ["batch", out_width])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def test_a_network_built_here_loads(bot: Path) -> None:
    (bot / "policy.onnx").write_bytes(network())
    assert load_policy(bot).logits(np.ones(OBS)).shape == (ACTIONS,)


ONNX_CASES: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda good: b"",
    "truncated": lambda good: good[: len(good) // 2],
    "truncated_tail": lambda good: good[:-7],
    "garbage": lambda good: bytes(range(256)) * 40,
    "json": lambda good: b'{"format": "matador-policy"}',
    "flipped": lambda good: good[:100] + bytes(b ^ 0xFF for b in good[100:400]) + good[400:],
    "input_name": lambda good: network(input_name="x"),
    "output_name": lambda good: network(output_name="probs"),
    "two_inputs": lambda good: network(extra_input=True),
    "double": lambda good: network(dtype=TensorProto.DOUBLE),
    "input_width": lambda good: network(in_width=OBS - 1, weights=np.ones((OBS - 1, ACTIONS))),
    "output_width": lambda good: network(
        out_width=ACTIONS - 1, weights=np.ones((OBS, ACTIONS - 1))
    ),
    "output_width_hidden": lambda good: network(out_width="n", weights=np.ones((OBS, ACTIONS + 5))),
    "fails_when_run": lambda good: network(out_width="n", reshape_to=[7, -1, 5]),
    "not_finite": lambda good: network(weights=np.full((OBS, ACTIONS), np.nan)),
}


@pytest.mark.parametrize("case", list(ONNX_CASES))
def test_a_broken_network_is_a_policy_error_naming_the_file(bot: Path, case: str) -> None:
    onnx_file = bot / "policy.onnx"
    onnx_file.write_bytes(ONNX_CASES[case](onnx_file.read_bytes()))
    with pytest.raises(PolicyError) as info:
        load_policy(bot)
    assert str(onnx_file) in str(info.value)


def test_a_network_checked_by_onnx_itself_agrees() -> None:
    """The cases built with onnx.helper are valid models apart from what they break."""
    onnx.checker.check_model(onnx.load_from_string(network(input_name="x")))


# -- the sidecar -------------------------------------------------------------------------


def edited(**changes: Any) -> bytes:
    data = dict(SIDECAR)
    for key, value in changes.items():
        if value is KeyError:
            del data[key]
        else:
            data[key] = value
    return json.dumps(data).encode()


SIDECAR_CASES: dict[str, bytes] = {
    "empty": b"",
    "not_json": b"policy: standard\n",
    "not_utf8": b"\xff\xfe{",
    "truncated": json.dumps(SIDECAR).encode()[:-20],
    "nested_list": b"[" * 200_000 + b"]" * 200_000,
    "nested_object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "too_big": b" " * (MAX_SIDECAR_BYTES + 1) + b"{}",
    "long_integer": b'{"format": "matador-policy", "format_version": 1' + b"1" * 5000 + b"}",
    "a_list": b"[1, 2]",
    "a_string": b'"matador-policy"',
    "format": edited(format="matador-view"),
    "format_version_bool": edited(format_version=True),
    "format_version_2": edited(format_version=2),
    "format_version_str": edited(format_version="1"),
    "missing_rules": edited(rules=KeyError),
    "missing_obs_size": edited(obs_size=KeyError),
    "missing_num_actions": edited(num_actions=KeyError),
    "missing_encoding_version": edited(encoding_version=KeyError),
    "encoding_version_unknown": edited(encoding_version=99),
    "encoding_version_str": edited(encoding_version="1"),
    "encoding_version_float": edited(encoding_version=1.0),
    "encoding_version_list": edited(encoding_version=[1]),
    "obs_size_str": edited(obs_size="100"),
    "obs_size_null": edited(obs_size=None),
    "obs_size_zero": edited(obs_size=0),
    "obs_size_wrong": edited(obs_size=OBS + 1),
    "num_actions_bool": edited(num_actions=True),
    "num_actions_object": edited(num_actions={"n": ACTIONS}),
    "input": edited(input="x"),
    "output": edited(output=["logits"]),
    "provenance_list": edited(provenance=[1, 2]),
    "provenance_str": edited(provenance="train"),
    "rules_str": edited(rules="standard"),
    "rules_list": edited(rules=[["players", 2]]),
    "rules_null": edited(rules=None),
    "rules_unknown_field": edited(rules={**SIDECAR["rules"], "colour": "red"}),
    "rules_bad_value": edited(rules={**SIDECAR["rules"], "players": 1}),
    "rules_bad_type": edited(rules={**SIDECAR["rules"], "players": "2"}),
    "rules_bool_for_int": edited(rules={**SIDECAR["rules"], "set_max": True}),
    "rules_impossible": edited(
        rules={**SIDECAR["rules"], "match_end": "complete_round", "lead_tile": "double_not_blank"}
    ),
}


@pytest.mark.parametrize("case", list(SIDECAR_CASES))
def test_a_broken_sidecar_is_a_policy_error_naming_the_file(bot: Path, case: str) -> None:
    sidecar = bot / "policy.json"
    sidecar.write_bytes(SIDECAR_CASES[case])
    with pytest.raises(PolicyError) as info:
        load_policy(bot)
    assert str(sidecar) in str(info.value) or str(bot / "policy.onnx") in str(info.value)
    assert len(str(info.value)) < 2000  # a crafted file does not flood the message


def test_unknown_encoding_version_says_what_to_do(bot: Path) -> None:
    (bot / "policy.json").write_bytes(edited(encoding_version=99))
    with pytest.raises(PolicyMismatchError, match="version 99.*Retrain or re-export"):
        load_policy(bot)


def test_a_sidecar_that_is_a_folder_is_named(bot: Path) -> None:
    (bot / "policy.json").unlink()
    (bot / "policy.json").mkdir()
    with pytest.raises(PolicyError, match="has no sidecar"):
        load_policy(bot)


@pytest.mark.parametrize("path", [None, 5, b"bot", ["bot"]], ids=repr)
def test_a_path_that_is_no_path_is_refused(path: Any) -> None:
    with pytest.raises(PolicyError, match="str or Path"):
        load_policy(path)


def test_rules_that_are_not_rules_are_refused(bot: Path) -> None:
    with pytest.raises(PolicyError, match="rules must be a Rules"):
        load_policy(bot, rules="standard")  # type: ignore[arg-type]
