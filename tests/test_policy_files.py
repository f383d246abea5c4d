"""Issue #14: a corrupt, truncated or crafted ``policy.onnx`` or ``policy.json`` raises
PolicyError naming the file, never a raw onnxruntime, JSON, attribute or recursion error.

Every broken file is made here, in tmp_path, from the shipped standard bot or from a
small network built with onnx.helper."""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from matador_env.engine import HandState, Rules
from matador_env.policy import (
    BOTS_DIR,
    MAX_SIDECAR_BYTES,
    PolicyError,
    PolicyMismatchError,
    load_policy,
    read_policy_info,
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


def _dimension_name_not_text(good: bytes, which: int) -> bytes:
    """``good`` with the first letter of its input's (``which=0``) or output's (1)
    symbolic dimension ``batch`` made a byte that is no UTF-8, as one damaged byte
    would: onnxruntime loads the file and fails only when the name is read."""
    at = [m.start() for m in re.finditer(b"batch", good)]
    assert len(at) == 2, at  # the input's and the output's
    return good[: at[which]] + b"\xb5" + good[at[which] + 1 :]


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
    # Found by the fuzz campaign (seed 131313, policy trial 3434): it raised the
    # UnicodeDecodeError itself.
    "input_dimension_not_text": lambda good: _dimension_name_not_text(good, 0),
    "output_dimension_not_text": lambda good: _dimension_name_not_text(good, 1),
}


@pytest.mark.parametrize("case", list(ONNX_CASES))
def test_a_broken_network_is_a_policy_error_naming_the_file(bot: Path, case: str) -> None:
    onnx_file = bot / "policy.onnx"
    onnx_file.write_bytes(ONNX_CASES[case](onnx_file.read_bytes()))
    with pytest.raises(PolicyError) as info:
        load_policy(bot)
    assert str(onnx_file) in str(info.value)


SIGNATURE_MESSAGES = {
    "input_name": "the network's inputs are ['x']; a policy has one input, 'obs'",
    "output_name": "the network's outputs are ['probs']; a policy has one output, 'logits'",
    "two_inputs": "the network's inputs are ['obs', 'mask']; a policy has one input, 'obs'",
    "double": f"input 'obs' is tensor(double) of shape ['batch', {OBS}]; "
    f"expected tensor(float) of shape [batch, {OBS}]",
    "input_width": f"input 'obs' is tensor(float) of shape ['batch', {OBS - 1}]; "
    f"expected tensor(float) of shape [batch, {OBS}]",
    "output_width": f"output 'logits' is tensor(float) of shape ['batch', {ACTIONS - 1}]; "
    f"expected tensor(float) of shape [batch, {ACTIONS}]",
    "input_dimension_not_text": "onnxruntime cannot read the network's inputs "
    "(UnicodeDecodeError: \"'utf-8' codec can't decode byte 0xb5 in position 0",
    "output_dimension_not_text": "onnxruntime cannot read the network's outputs "
    "(UnicodeDecodeError: \"'utf-8' codec can't decode byte 0xb5 in position 0",
}


@pytest.mark.parametrize("case", list(SIGNATURE_MESSAGES))
def test_a_network_of_the_wrong_signature_is_refused_saying_what_is_wrong(
    bot: Path, case: str
) -> None:
    """The signature is checked before the network runs: the error names the input or
    output at fault and what a policy has, not the failure of a run it would cause."""
    onnx_file = bot / "policy.onnx"
    onnx_file.write_bytes(ONNX_CASES[case](onnx_file.read_bytes()))
    with pytest.raises(PolicyError, match=re.escape(f"{onnx_file}: {SIGNATURE_MESSAGES[case]}")):
        load_policy(bot)


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


@pytest.mark.parametrize("key", ["obs_size", "num_actions"])
def test_sizes_other_than_the_encoding_s_are_a_mismatch_naming_both(bot: Path, key: str) -> None:
    """A sidecar's sizes are compared with the encoding of its rules before the network is
    opened: a PolicyMismatchError with both sides, not a complaint about the network."""
    (bot / "policy.json").write_bytes(edited(**{key: SIDECAR[key] + 1}))
    with pytest.raises(PolicyMismatchError, match=f"differ from this library's obs={OBS} "):
        load_policy(bot)


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("obs_size", 0, "obs_size must be an integer >= 1, got 0"),
        ("num_actions", 0, "num_actions must be an integer >= 1, got 0"),
        ("encoding_version", -1, "encoding_version must be an integer >= 0, got -1"),
    ],
)
def test_the_sidecar_reader_checks_each_size_itself(
    bot: Path, key: str, value: int, says: str
) -> None:
    # read_policy_info is public (frontends and the demo read provenance with it): it must
    # refuse what load_policy would, not lean on load_policy's later comparisons.
    sidecar = bot / "policy.json"
    sidecar.write_bytes(edited(**{key: value}))
    with pytest.raises(PolicyError, match=f"{re.escape(str(sidecar))}: {says}"):
        read_policy_info(sidecar)


def test_the_sidecar_size_limit_is_exact(bot: Path) -> None:
    """A sidecar of MAX_SIDECAR_BYTES loads; one byte more is refused unparsed, even when
    the bytes up to the limit would have been a whole sidecar (trailing blanks are JSON)."""
    sidecar = bot / "policy.json"
    text = json.dumps(SIDECAR).encode()
    sidecar.write_bytes(text + b" " * (MAX_SIDECAR_BYTES - len(text)))
    assert load_policy(bot).info.obs_size == OBS
    sidecar.write_bytes(text + b" " * (MAX_SIDECAR_BYTES + 1 - len(text)))
    with pytest.raises(PolicyError, match=f"is over {MAX_SIDECAR_BYTES} bytes"):
        load_policy(bot)


def test_a_policy_loads_by_its_network_its_sidecar_or_its_stem(tmp_path: Path) -> None:
    """The path forms of the module docstring: the .onnx file, the .json sidecar, and the
    stem, which stays a stem with a dot in its name (best.v2 names best.v2.onnx)."""
    for suffix in (".onnx", ".json"):
        shutil.copy(SHIPPED / f"policy{suffix}", tmp_path / f"best.v2{suffix}")
    network_file = tmp_path / "best.v2.onnx"
    for given in (network_file, tmp_path / "best.v2.json", tmp_path / "best.v2"):
        assert load_policy(given).path == network_file, given
        assert load_policy(str(given)).path == network_file, given


def test_sampling_is_stable_for_logits_far_from_zero(bot: Path) -> None:
    """act() with an rng samples the softmax of the legal logits. Logits in the thousands
    are finite float32: exp() of them overflows (and of their negatives underflows to no
    weight at all) unless the largest is subtracted first; here the larger one, 50 ahead,
    is the only move with any weight."""
    weights = np.zeros((OBS, ACTIONS), np.float32)
    weights[:, 3], weights[:, 7] = 10.0, 10.5  # an observation of ones: logits 1000, 1050
    obs = np.ones(OBS, np.float32)
    mask = np.zeros(ACTIONS, bool)
    mask[[3, 7]] = True
    for sign, best in ((1, 7), (-1, 3)):
        (bot / "policy.onnx").write_bytes(network(weights=sign * weights))
        policy = load_policy(bot)
        assert {policy.act(obs, mask, random.Random(seed)) for seed in range(20)} == {best}


def test_choose_refuses_a_view_of_other_rules_naming_the_difference() -> None:
    """OnnxPolicy.choose checks the view's rules itself (a caller need not go through a
    Bot): the same table to another target is other rules, named field by field."""
    policy = load_policy(SHIPPED)
    rules = Rules.preset("standard").replace(target_score=50)
    state = HandState.deal(rules, 1)
    says = "trained for standard and cannot play these rules (target_score: policy 100, game 50)"
    with pytest.raises(PolicyMismatchError, match=re.escape(says)):
        policy.choose(state.view(state.to_move))
    with pytest.raises(PolicyMismatchError, match=re.escape(says)):
        load_policy(SHIPPED, rules=rules)


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
