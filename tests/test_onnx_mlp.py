"""The numpy runtime of plain MLP policies (matador_env.onnx_mlp): it plays every shipped
bot exactly as onnxruntime does, recognises only the chain of dense layers it can run,
and anything else (or a network it would misread) is left to onnxruntime."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from benchmarks.runtime import compare, decisions
from matador_env import onnx_mlp
from matador_env.configs import CONFIGURATIONS
from matador_env.onnx_mlp import NumpyMLP, read_mlp
from matador_env.policy import BOTS_DIR, PolicyError, load_policy

SHIPPED = BOTS_DIR / "standard"


@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_every_shipped_bot_plays_in_numpy_as_in_onnxruntime(name: str) -> None:
    fast = load_policy(BOTS_DIR / name)
    reference = load_policy(BOTS_DIR / name, runtime="onnxruntime")
    assert (fast.runtime, reference.runtime) == ("numpy", "onnxruntime")
    enc = fast.encoding
    views = decisions(name, 150, seed=3)
    for view in views:
        assert fast.choose(view) == reference.choose(view)
        obs = enc.observation(view)
        np.testing.assert_allclose(fast.logits(obs), reference.logits(obs), rtol=1e-5, atol=1e-5)
        rng_a, rng_b = random.Random(7), random.Random(7)
        # Sampled play (the casual level) draws the same moves from the same numbers.
        assert fast.choose(view, rng_a, temperature=2.0) == reference.choose(
            view, rng_b, temperature=2.0
        )
    batch = np.stack([enc.observation(v) for v in views[:32]])
    np.testing.assert_allclose(fast.logits(batch), reference.logits(batch), rtol=1e-5, atol=1e-5)


def test_legal_rows_equal_the_whole_output() -> None:
    policy = load_policy(SHIPPED)
    mlp = policy._mlp
    assert isinstance(mlp, NumpyMLP)
    rng = np.random.default_rng(1)
    for _ in range(20):
        obs = (rng.random(mlp.obs_size) < 0.3).astype(np.float32)
        legal = np.sort(rng.choice(mlp.num_actions, size=5, replace=False))
        whole = mlp.logits(obs[None, :])[0]
        np.testing.assert_allclose(mlp.legal_logits(obs, legal), whole[legal], rtol=1e-5, atol=1e-5)


def test_act_refuses_an_observation_of_the_wrong_shape_in_both_runtimes() -> None:
    for runtime in ("auto", "onnxruntime"):
        policy = load_policy(SHIPPED, runtime=runtime)
        mask = np.zeros(policy.info.num_actions, dtype=bool)
        mask[:2] = True
        with pytest.raises(ValueError, match="observation"):
            policy.act(np.zeros(policy.info.obs_size + 1, np.float32), mask)
        one = np.ones(policy.info.obs_size, np.float32)
        # A batch of one is taken as onnxruntime takes it.
        np.testing.assert_array_equal(
            policy.legal_logits(one[None, :], np.array([0, 1])),
            policy.legal_logits(one, np.array([0, 1])),
        )


def test_an_unknown_runtime_is_refused_by_name() -> None:
    with pytest.raises(PolicyError, match="runtime 'torch'.*auto, onnxruntime"):
        load_policy(SHIPPED, runtime="torch")


# -- networks built here -------------------------------------------------------------------

OBS, HIDDEN, ACTIONS = 12, 8, 5


def mlp_model(
    *,
    activation: str | None = "Tanh",
    last_op: str | None = None,
    alpha: float = 1.0,
    trans_b: int = 1,
    bias: bool = True,
    prefix_ops: tuple[str, ...] = ("Cast", "Flatten"),
    seed: int = 0,
    beta: float = 1.0,
    flatten_axis: int = 1,
    half_precision: bool = False,
    extra_activation: str | None = None,
    skip_activation: bool = False,
    extra_output: bool = False,
) -> tuple[bytes, list[np.ndarray]]:
    """A two-layer network obs -> HIDDEN -> ACTIONS as the torch export writes it (Gemm with
    transB=1), with the variations asked for; and its weights as [outputs, inputs].

    ``half_precision`` rounds the observations through float16 first (a Cast there and one
    back), ``extra_activation`` follows the hidden activation with another,
    ``skip_activation`` feeds the second layer the first's output before its activation
    (which is computed but unused), and ``extra_output`` makes that hidden output a second
    graph output."""
    rng = np.random.default_rng(seed)
    w0 = rng.normal(size=(HIDDEN, OBS)).astype(np.float32)
    w1 = rng.normal(size=(ACTIONS, HIDDEN)).astype(np.float32)
    b0 = rng.normal(size=HIDDEN).astype(np.float32)
    b1 = rng.normal(size=ACTIONS).astype(np.float32)
    nodes = []
    current = "obs"
    if half_precision:
        nodes.append(helper.make_node("Cast", [current], ["half"], to=TensorProto.FLOAT16))
        nodes.append(helper.make_node("Cast", ["half"], ["full"], to=TensorProto.FLOAT))
        current = "full"
    for i, op in enumerate(prefix_ops):
        attrs = {"to": TensorProto.FLOAT} if op == "Cast" else {"axis": flatten_axis}
        nodes.append(helper.make_node(op, [current], [f"p{i}"], **attrs))
        current = f"p{i}"
    initializers = []
    for i, (w, b) in enumerate(((w0, b0), (w1, b1))):
        stored = w if trans_b else w.T
        initializers.append(numpy_helper.from_array(stored, f"W{i}"))
        inputs = [current, f"W{i}"]
        if bias:
            initializers.append(numpy_helper.from_array(b, f"B{i}"))
            inputs.append(f"B{i}")
        last = i == 1
        out = "logits" if last and last_op is None else f"g{i}"
        nodes.append(
            helper.make_node("Gemm", inputs, [out], alpha=alpha, beta=beta, transB=trans_b)
        )
        current = out
        if not last and activation is not None:
            nodes.append(helper.make_node(activation, [current], [f"a{i}"]))
            current = f"a{i}" if not skip_activation else current
        if not last and extra_activation is not None:
            nodes.append(helper.make_node(extra_activation, [current], [f"e{i}"]))
            current = f"e{i}"
    if last_op is not None:
        nodes.append(helper.make_node(last_op, [current], ["logits"]))
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", ACTIONS])]
    if extra_output:
        outputs.append(helper.make_tensor_value_info("g0", TensorProto.FLOAT, ["batch", HIDDEN]))
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", OBS])],
        outputs,
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), [w0, b0, w1, b1]


def expected_logits(weights: list[np.ndarray], x: np.ndarray, activation: str | None) -> np.ndarray:
    w0, b0, w1, b1 = weights
    h = x @ w0.T + b0
    if activation == "Tanh":
        h = np.tanh(h)
    elif activation == "Relu":
        h = np.maximum(h, 0)
    return h @ w1.T + b1


@pytest.mark.parametrize("activation", ["Tanh", "Relu", None])
@pytest.mark.parametrize("trans_b", [1, 0])
@pytest.mark.parametrize("prefix_ops", [("Cast", "Flatten"), ()])
def test_a_chain_of_dense_layers_is_read(
    tmp_path: Path, activation: str | None, trans_b: int, prefix_ops: tuple[str, ...]
) -> None:
    data, weights = mlp_model(activation=activation, trans_b=trans_b, prefix_ops=prefix_ops)
    path = tmp_path / "policy.onnx"
    path.write_bytes(data)
    mlp = read_mlp(path, OBS, ACTIONS)
    assert mlp is not None
    x = np.random.default_rng(2).random((4, OBS), dtype=np.float32)
    want = expected_logits(weights, x, activation)
    np.testing.assert_allclose(mlp.logits(x), want, rtol=1e-5, atol=1e-5)
    legal = np.array([1, 3])
    np.testing.assert_allclose(mlp.legal_logits(x[0], legal), want[0, legal], rtol=1e-5, atol=1e-5)


def test_a_gemm_without_bias_is_read(tmp_path: Path) -> None:
    data, (w0, _, w1, _) = mlp_model(bias=False)
    path = tmp_path / "policy.onnx"
    path.write_bytes(data)
    mlp = read_mlp(path, OBS, ACTIONS)
    assert mlp is not None
    x = np.ones((1, OBS), np.float32)
    np.testing.assert_allclose(mlp.logits(x), np.tanh(x @ w0.T) @ w1.T, rtol=1e-5, atol=1e-5)


def test_an_activation_after_the_last_layer_is_run_on_the_legal_rows_too(tmp_path: Path) -> None:
    """The reader takes an activation after the last layer; a move's legal rows must pass
    through it as the whole output does."""
    data, weights = mlp_model(last_op="Tanh")
    path = tmp_path / "policy.onnx"
    path.write_bytes(data)
    mlp = read_mlp(path, OBS, ACTIONS)
    assert mlp is not None
    x = np.random.default_rng(3).random((2, OBS), dtype=np.float32)
    want = np.tanh(expected_logits(weights, x, "Tanh"))
    np.testing.assert_allclose(mlp.logits(x), want, rtol=1e-5, atol=1e-5)
    legal = np.array([0, 2, 4])
    np.testing.assert_allclose(mlp.legal_logits(x[1], legal), want[1, legal], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "variation",
    [
        {"last_op": "Softmax"},  # another operator
        {"activation": "Sigmoid"},  # an activation it does not run
        {"alpha": 2.0},  # a scaled product
        {"last_op": "Flatten"},  # a no-op the reader takes only before the first layer
        {"beta": 2.0},  # a scaled bias
        {"flatten_axis": 0},  # a Flatten that folds the batch into one row
        {"half_precision": True},  # observations rounded through float16: not a no-op Cast
        {"extra_activation": "Relu"},  # two activations after one layer
        {"skip_activation": True},  # a branch: the activation is computed but not used
        {"extra_output": True},  # a second graph output
    ],
)
def test_other_graphs_are_left_to_onnxruntime(tmp_path: Path, variation: dict) -> None:
    data, _ = mlp_model(**variation)
    path = tmp_path / "policy.onnx"
    path.write_bytes(data)
    assert read_mlp(path, OBS, ACTIONS) is None


def test_sizes_other_than_the_policy_s_are_not_read(tmp_path: Path) -> None:
    data, _ = mlp_model()
    path = tmp_path / "policy.onnx"
    path.write_bytes(data)
    assert read_mlp(path, OBS + 1, ACTIONS) is None
    assert read_mlp(path, OBS, ACTIONS + 1) is None


def test_weights_kept_outside_the_file_are_not_read(tmp_path: Path) -> None:
    data, _ = mlp_model()
    model = onnx.load_from_string(data)
    onnx.save_model(
        model,
        str(tmp_path / "policy.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    assert read_mlp(tmp_path / "policy.onnx", OBS, ACTIONS) is None


@pytest.mark.parametrize("cut", [0, 1, 7, 100, -50, -1])
def test_truncated_or_corrupt_bytes_read_as_no_network(tmp_path: Path, cut: int) -> None:
    good = (SHIPPED / "policy.onnx").read_bytes()
    path = tmp_path / "policy.onnx"
    path.write_bytes(good[:cut])
    assert read_mlp(path, 100, 128) is None
    flipped = bytearray(good)
    for i in range(5, 400, 3):
        flipped[i] ^= 0xFF
    path.write_bytes(bytes(flipped))
    assert read_mlp(path, 100, 128) is None
    assert read_mlp(tmp_path / "missing.onnx", 100, 128) is None


def test_a_misread_network_is_caught_by_the_probe_and_onnxruntime_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the reader ever misread a file onnxruntime accepts, the probe observations show
    it and onnxruntime plays: the policy's moves never depend on the reader being right."""
    folder = tmp_path / "bot"
    shutil.copytree(SHIPPED, folder)
    real_read = onnx_mlp.read_mlp

    def misread(*args: object) -> NumpyMLP | None:
        mlp = real_read(*args)  # type: ignore[arg-type]
        assert mlp is not None
        mlp.layers[-1].bias[3] += 0.01  # one logit off by a little
        return mlp

    monkeypatch.setattr("matador_env.policy.read_mlp", misread)
    policy = load_policy(folder)
    assert policy.runtime == "onnxruntime"
    monkeypatch.undo()
    assert load_policy(folder).runtime == "numpy"


def test_a_misread_of_the_legal_rows_alone_is_caught_by_the_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A move runs legal_logits, not logits: the probe compares both with onnxruntime, so
    a network right on whole outputs but off on the legal rows still plays in onnxruntime."""
    real_read = onnx_mlp.read_mlp

    def misread(*args: object) -> NumpyMLP | None:
        mlp = real_read(*args)  # type: ignore[arg-type]
        assert mlp is not None
        rows = mlp.legal_logits

        def off(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
            return rows(obs, legal) + np.float32(0.01)  # one hundredth off on every row

        mlp.legal_logits = off  # type: ignore[method-assign]
        return mlp

    monkeypatch.setattr("matador_env.policy.read_mlp", misread)
    assert load_policy(SHIPPED).runtime == "onnxruntime"


def test_legal_logits_refuses_more_than_one_observation_in_both_runtimes() -> None:
    # The numpy runtime reads one row: a batch of two would play the first and drop the second.
    for runtime in ("auto", "onnxruntime"):
        policy = load_policy(SHIPPED, runtime=runtime)
        two = np.zeros((2, policy.info.obs_size), np.float32)
        with pytest.raises(ValueError, match=r"legal_logits: one observation expected"):
            policy.legal_logits(two, np.array([0, 1]))


def test_the_runtime_benchmark_compares_both_runtimes_on_the_same_decisions() -> None:
    row = compare("standard_4p", 6, 1, seed=4)
    assert row["decisions"] == 6 and row["same_moves"] == 6
    for key in ("cold_onnxruntime_us", "cold_numpy_us", "warm_onnxruntime_us", "warm_numpy_us"):
        value = row[key]
        assert isinstance(value, float) and value > 0


def test_a_network_that_fails_on_the_probes_still_loads_in_onnxruntime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The numpy runtime never changes which files load: when onnxruntime fails on the
    probe observations (here made to, past the one-row check every load runs), the
    policy loads as before and plays in onnxruntime."""
    from matador_env.policy import OnnxPolicy

    real = OnnxPolicy._run_batch

    def fails_on_batches(self: OnnxPolicy, x: np.ndarray) -> np.ndarray:
        if len(x) > 1:
            raise RuntimeError("a failure only on the probes")
        return real(self, x)

    monkeypatch.setattr(OnnxPolicy, "_run_batch", fails_on_batches)
    policy = load_policy(SHIPPED)
    assert policy.runtime == "onnxruntime"
    assert policy.logits(np.zeros(policy.info.obs_size, np.float32)).shape == (
        policy.info.num_actions,
    )
