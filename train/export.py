"""Export a trained MaskablePPO policy to ONNX with its JSON sidecar.

The exported graph maps observations to action logits (the actor only: features,
policy MLP, action head). Masking and the choice of action happen in
:class:`matador_env.policy.OnnxPolicy`, which plays the file with onnxruntime and
no torch.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import torch

from matador_env.encoding import ENCODING_VERSION, encoding_for
from matador_env.engine import Rules
from matador_env.files import atomic_write, atomic_write_json
from matador_env.policy import POLICY_FILE, PolicyInfo


class _ActorLogits(torch.nn.Module):
    """obs -> logits of an SB3 actor-critic policy (the same path ``predict`` takes)."""

    def __init__(self, policy: Any) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        policy = self.policy
        features = policy.extract_features(obs, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))


def export_policy(
    policy: Any, rules: Rules, out: str | Path, provenance: dict[str, Any] | None = None
) -> Path:
    """Write an SB3 actor-critic's actor to ``out/policy.onnx`` (or ``out`` itself if it
    ends in .onnx) and the sidecar beside it, each atomically; returns the ONNX path."""
    was_training = policy.training
    policy.set_training_mode(False)
    try:
        return export_network(_ActorLogits(policy), rules, out, provenance)
    finally:
        policy.set_training_mode(was_training)


def export_network(
    net: torch.nn.Module,
    rules: Rules,
    out: str | Path,
    provenance: dict[str, Any] | None = None,
) -> Path:
    """Write any obs -> logits module (an SB3 actor, an RLlib module's policy head) to
    ``out/policy.onnx`` (or ``out`` itself if it ends in .onnx) with its sidecar, each
    atomically; returns the ONNX path. The module is exported in eval mode."""
    out = Path(out)
    onnx_path = out if out.suffix == ".onnx" else out / POLICY_FILE
    enc = encoding_for(rules)
    dummy = torch.zeros(1, enc.obs_size, dtype=torch.float32)
    was_training = net.training
    net.eval()

    def write(tmp: Path) -> None:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                net,
                (dummy,),
                str(tmp),
                input_names=["obs"],
                output_names=["logits"],
                dynamic_axes={"obs": {0: "batch"}, "logits": {0: "batch"}},
                dynamo=False,
            )

    try:
        atomic_write(onnx_path, write)
    finally:
        net.train(was_training)
    info = PolicyInfo(
        rules=rules,
        encoding_version=ENCODING_VERSION,
        obs_size=enc.obs_size,
        num_actions=enc.num_actions,
        provenance=provenance,
    )
    atomic_write_json(onnx_path.with_suffix(".json"), info.to_json())
    return onnx_path
