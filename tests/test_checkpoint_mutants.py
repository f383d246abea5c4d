"""What keeps training and bot files safe and resumable that no other fast test held to
(found by mutation testing of ``train.checkpoint``, ``train.files``, ``train.export``,
``agents.policy`` and the package's entry points): every damaged or foreign
``state.json`` is a :class:`~train.checkpoint.CheckpointError` naming what is wrong,
``restore`` puts back the optimizer and counters as well as the weights, folder swaps
and their recovery reach nested folders and return what they promise, the folder lock
names its holder whole, exports keep a module's mode and a dotted folder's name. No
training runs here: checkpoints are captured from an untrained tiny model, so the whole
file runs in seconds."""

from __future__ import annotations

import importlib
import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from agents import AgentSpecError, make_agent
from agents.policy import BotAgent, PolicyAgent
from matador_env.bot import BotError
from matador_env.configs import configuration
from matador_env.encoding import encoding_for
from matador_env.engine import HandState, Rules
from tests.test_env_rl_api import run_python
from tests.test_train_checkpoint import STANDARD, _model
from tests.train_runs import ROOT
from train import checkpoint
from train.checkpoint import CheckpointError
from train.files import (
    FolderBusyError,
    FolderLock,
    RunFolderError,
    new_run_problem,
    recover_dir,
    recover_run_folder,
    replace_dir,
)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint of an untrained tiny model, as :func:`checkpoint.write` leaves it."""
    folder = tmp_path_factory.mktemp("saved") / "checkpoint"
    checkpoint.write(folder, checkpoint.capture(_model(), {"seconds": 1.5}), STANDARD)
    return folder


def _damaged(saved: Path, tmp_path: Path, change: Any) -> Path:
    """A copy of ``saved`` whose state.json ``change(state)`` edited in place."""
    folder = tmp_path / "checkpoint"
    shutil.copytree(saved, folder)
    state = json.loads((folder / "state.json").read_text())
    change(state)
    (folder / "state.json").write_text(json.dumps(state))
    return folder


def _refusal(folder: Path) -> str:
    """The message of the :class:`CheckpointError` that reading ``folder`` raises."""
    with pytest.raises(CheckpointError) as refused:
        checkpoint.read_state(folder, STANDARD)
    return str(refused.value)


# -- read_state: every damage is a CheckpointError naming it ----------------------------


@pytest.mark.parametrize("how", ["missing", "a-folder"])
def test_a_state_json_that_is_missing_or_a_folder_is_a_checkpoint_error_naming_it(
    saved: Path, tmp_path: Path, how: str
) -> None:
    folder = tmp_path / "checkpoint"
    shutil.copytree(saved, folder)
    (folder / "state.json").unlink()
    if how == "a-folder":
        (folder / "state.json").mkdir()
    says = _refusal(folder)
    assert f"{folder / 'state.json'} cannot be read" in says and "restore" in says


def test_a_refused_checkpoint_is_a_run_folder_error_which_the_trainer_reports_in_one_line(
    saved: Path, tmp_path: Path
) -> None:
    # train.run turns RunFolderError (a ValueError) into one line and exit 2.
    folder = _damaged(saved, tmp_path, lambda state: state.update(steps=-1))
    with pytest.raises(RunFolderError):
        checkpoint.read_state(folder, STANDARD)
    with pytest.raises(ValueError):
        checkpoint.read_state(folder, STANDARD)


def test_another_format_beside_an_old_model_zip_is_refused_as_the_older_version(
    saved: Path, tmp_path: Path
) -> None:
    # What an older version left: its model.zip and a state.json of its own format.
    folder = _damaged(saved, tmp_path, lambda state: state.update(format=0))
    (folder / "model.zip").write_bytes(b"PK\x03\x04")
    says = _refusal(folder)
    assert "model.zip checkpoint of an older version" in says and "not loaded" in says


def test_a_python_random_state_with_a_fourth_entry_is_refused(saved: Path, tmp_path: Path) -> None:
    folder = _damaged(saved, tmp_path, lambda state: state["rng"]["python"].append(None))
    assert "the python random state is damaged" in _refusal(folder)


# -- restore: everything the checkpoint holds comes back --------------------------------


def test_restore_puts_back_the_weights_the_optimizer_and_the_counters(tmp_path: Path) -> None:
    ckpt = checkpoint.capture(_model(), {})
    # Values no fresh model has: shifted weights, an odd learning rate, counters.
    ckpt.tensors["policy"] = {k: v + 1 for k, v in ckpt.tensors["policy"].items()}
    ckpt.tensors["optimizer"]["param_groups"][0]["lr"] = 0.123
    ckpt.steps, ckpt.n_updates = 768, 3
    checkpoint.write(tmp_path, ckpt, STANDARD)
    model = _model()
    checkpoint.restore(model, tmp_path, checkpoint.read_state(tmp_path, STANDARD))
    for key, value in model.policy.state_dict().items():
        assert torch.equal(value, ckpt.tensors["policy"][key]), key
    assert model.policy.optimizer.param_groups[0]["lr"] == 0.123
    assert (model.num_timesteps, model._n_updates) == (768, 3)


def test_weights_of_another_network_are_refused_in_one_line_naming_the_first(
    tmp_path: Path,
) -> None:
    # torch's own message runs over many lines; its first says what failed to load.
    checkpoint.write(tmp_path, checkpoint.capture(_model([16, 16]), {}), STANDARD)
    state = checkpoint.read_state(tmp_path, STANDARD)
    with pytest.raises(CheckpointError) as refused:
        checkpoint.restore(_model(), tmp_path, state)
    says = str(refused.value)
    assert "\n" not in says
    assert "does not fit the network of the run's arguments (Error(s) in loading" in says


# -- run folders --------------------------------------------------------------------------


def test_a_new_run_folder_that_cannot_be_looked_up_is_a_reason_not_an_os_error(
    tmp_path: Path,
) -> None:
    long = tmp_path / ("x" * 300)  # looking up anything in it is ENAMETOOLONG
    assert new_run_problem(long) == f"{long} cannot be used (File name too long)"


def test_replace_dir_fills_a_hidden_sibling_and_returns_the_folder(tmp_path: Path) -> None:
    seen: list[Path] = []

    def fill(tmp: Path) -> None:
        seen.append(tmp)
        tmp.mkdir()
        (tmp / "policy.json").write_text("new")

    assert replace_dir(tmp_path / "best", fill) == tmp_path / "best"
    assert seen == [tmp_path / ".best.tmp"]
    assert (tmp_path / "best" / "policy.json").read_text() == "new"


@pytest.mark.parametrize("before", ["in-place", "moved-aside"])
def test_a_swap_whose_fill_fails_leaves_the_old_folder_in_place_and_recovery_the_rest(
    tmp_path: Path, before: str
) -> None:
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "policy.json").write_text("old")
    if before == "moved-aside":  # an earlier swap was cut between its renames
        (tmp_path / "best").rename(tmp_path / ".best.old")

    def fill(tmp: Path) -> None:
        tmp.mkdir()
        (tmp / "policy.onnx").write_text("half")
        raise KeyboardInterrupt  # killed while writing

    with pytest.raises(KeyboardInterrupt):
        replace_dir(tmp_path / "best", fill)
    # The old folder is back where readers look for it even before any recovery.
    assert (tmp_path / "best" / "policy.json").read_text() == "old"
    recover_run_folder(tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["best", "policy.json"]


def test_recovery_puts_back_a_nested_folder_a_cut_swap_moved_aside(tmp_path: Path) -> None:
    # The pool's snapshots are swapped in one level down.
    aside = tmp_path / "pool" / ".step_512.old"
    aside.mkdir(parents=True)
    (aside / "policy.json").write_text("snapshot")
    recover_run_folder(tmp_path)
    assert (tmp_path / "pool" / "step_512" / "policy.json").read_text() == "snapshot"
    assert not aside.exists()


def test_recover_dir_leaves_a_file_named_like_a_moved_aside_folder(tmp_path: Path) -> None:
    (tmp_path / "best").mkdir()
    (tmp_path / ".best.old").write_text("a file of someone's, not a swap's")
    recover_dir(tmp_path / "best")
    assert (tmp_path / ".best.old").is_file() and (tmp_path / "best").is_dir()


# -- the folder lock ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "named"), [("4194304999\n", "pid 4194304999"), ("", "pid unknown")]
)
def test_a_busy_folder_names_its_holders_pid_whole_or_unknown(
    tmp_path: Path, written: str, named: str
) -> None:
    with FolderLock(tmp_path):
        # What another trainer (a longer pid) or one that died before writing left.
        (tmp_path / "train.lock").write_text(written)
        with pytest.raises(FolderBusyError) as refused:
            FolderLock(tmp_path).acquire()
    assert f"{tmp_path} is in use by another trainer ({named})" in str(refused.value)
    assert isinstance(refused.value, ValueError)


def test_a_refused_lock_leaves_no_file_open(tmp_path: Path) -> None:
    # A trainer that waits and retries must not leak a descriptor per try.
    with FolderLock(tmp_path):
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(3):
            with pytest.raises(FolderBusyError):
                FolderLock(tmp_path).acquire()
        assert len(os.listdir("/proc/self/fd")) == before


# -- export -----------------------------------------------------------------------------------


def test_an_export_to_a_folder_with_a_dot_in_its_name_writes_inside_it(tmp_path: Path) -> None:
    from tests.test_train_inputs import _tiny_policy
    from train.export import export_policy

    out = tmp_path / "step_1.5"
    assert export_policy(_tiny_policy(), STANDARD, out) == out / "policy.onnx"
    assert sorted(p.name for p in out.iterdir()) == ["policy.json", "policy.onnx"]


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
def test_export_network_leaves_the_module_in_the_mode_it_was_in(
    tmp_path: Path, training: bool
) -> None:
    from train.export import export_network

    enc = encoding_for(STANDARD)
    net = torch.nn.Sequential(torch.nn.Linear(enc.obs_size, enc.num_actions), torch.nn.Dropout())
    net.train(training)
    export_network(net, STANDARD, tmp_path)
    assert net.training is training
    assert all(m.training is training for m in net.modules())


# -- policy: and bot: agents --------------------------------------------------------------

SHIPPED = "matador_env/bots/standard"


def test_a_policy_spec_plays_the_runtime_it_names_and_names_it() -> None:
    chosen = make_agent(f"policy:{SHIPPED},runtime=onnxruntime")
    assert isinstance(chosen, PolicyAgent) and chosen.policy.runtime == "onnxruntime"
    assert chosen.name == f"policy:{SHIPPED},runtime=onnxruntime"
    plain = make_agent(f"policy:{SHIPPED}")
    assert isinstance(plain, PolicyAgent) and plain.policy.runtime == "numpy"
    assert plain.name == f"policy:{SHIPPED}"  # the default is not spelled out
    assert plain.rules == Rules.preset("standard") == plain.policy.rules


def test_a_policy_agents_canonical_spec_names_the_network_file_and_every_option() -> None:
    # Recorded results are matched by this text: its form must not drift.
    network = (ROOT / SHIPPED / "policy.onnx").resolve()
    assert make_agent(f"policy:{SHIPPED},sample=yes").spec == (
        f"policy:{network},sample=true,runtime=auto"
    )
    assert PolicyAgent(str(network), runtime="onnxruntime").spec == (
        f"policy:{network},sample=false,runtime=onnxruntime"
    )


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (f"policy:{SHIPPED},temperature=2", "runtime= one of auto, onnxruntime"),
        ("bot:greedy,fast=1", "bot:<level> with a level of random, greedy"),
    ],
)
def test_an_option_the_agent_does_not_take_is_refused_naming_the_allowed(
    spec: str, says: str
) -> None:
    with pytest.raises(AgentSpecError, match=re.escape(says)):
        make_agent(spec)


def test_a_sampling_policy_draws_with_the_arenas_generator_and_a_plain_one_never(
    tmp_path: Path,
) -> None:
    from tests.test_train_inputs import _tiny_policy
    from train.export import export_policy

    export_policy(_tiny_policy(), STANDARD, tmp_path)  # untrained: near uniform
    state = HandState.deal(STANDARD, 4)
    view = state.view(state.to_move)
    plain, sampling = PolicyAgent(str(tmp_path)), PolicyAgent(str(tmp_path), sample=True)
    assert {plain.act(view, random.Random(s)) for s in range(20)} == {
        plain.policy.choose(view, None)
    }
    drawn = [sampling.act(view, random.Random(s)) for s in range(20)]
    assert drawn == [sampling.policy.choose(view, random.Random(s)) for s in range(20)]
    assert len(set(drawn)) > 1


def test_a_bot_level_draws_with_the_arenas_generator() -> None:
    state = HandState.deal(STANDARD, 4)
    view = state.view(state.to_move)
    agent = BotAgent("random")
    assert len({agent.act(view, random.Random(s)) for s in range(20)}) > 1


def test_the_casual_level_plays_every_shipped_configuration_and_trained_checks_rules() -> None:
    teams = configuration("pagat_teams").rules()
    casual = BotAgent("casual")
    casual.check_rules(teams)  # its own bot for each shipped configuration
    with pytest.raises(BotError, match="no trained bot is shipped for standard, 2 players"):
        BotAgent("trained").check_rules(Rules(target_score=37))


def test_a_bot_level_that_fails_to_load_is_an_agent_spec_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agents.policy

    def broken(level: str) -> Any:
        raise BotError("its files are missing")

    monkeypatch.setattr(agents.policy, "load_bot", broken)
    with pytest.raises(AgentSpecError, match="bot spec 'greedy': its files are missing"):
        make_agent("bot:greedy")


# -- the package's entry points ---------------------------------------------------------------

# Each lazily imported name and the submodule that defines it: what the package offers,
# stated here rather than read from its own table, which a test could not then check.
LAZY = {
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


def test_every_lazy_name_is_its_submodules_object_by_attribute_and_by_star_import() -> None:
    import matador_env

    star: dict[str, Any] = {}
    exec("from matador_env import *", star)
    for name, module in LAZY.items():
        defined = getattr(importlib.import_module(f"matador_env.{module}"), name)
        assert getattr(matador_env, name) is defined, name
        assert star[name] is defined, name


def test_a_name_the_package_lacks_is_an_attribute_error_naming_it() -> None:
    import matador_env

    with pytest.raises(AttributeError, match="module 'matador_env' has no attribute 'nope'"):
        matador_env.nope  # noqa: B018
    assert not hasattr(matador_env, "Env")


def test_pettingzoo_make_builds_the_wrapped_environment_env_builds() -> None:
    import pettingzoo  # type: ignore[import-untyped]

    import matador_env

    # env(), not raw_env(): PettingZoo's order checks come with it.
    assert type(pettingzoo.make("aec", matador_env.ENV_ID)) is type(matador_env.env())


def test_the_import_hook_steps_aside_and_leaves_each_library_its_own_loader() -> None:
    out = run_python(
        "import json, sys\n"
        "import matador_env, pettingzoo, gymnasium\n"
        "print(json.dumps([type(pettingzoo.__spec__.loader).__name__,\n"
        "                  type(gymnasium.__spec__.loader).__name__,\n"
        "                  [type(f).__name__ for f in sys.meta_path]]))"
    )
    petting, gym, finders = json.loads(out)
    assert (petting, gym) == ("SourceFileLoader", "SourceFileLoader")
    assert "_ImportHook" not in finders


@pytest.mark.parametrize(
    "imports",
    [
        "import gymnasium, pettingzoo, matador_env\nimportlib.reload(matador_env)\n",
        # Each load of the package leaves an import hook waiting for the libraries.
        "import matador_env\nimportlib.reload(matador_env)\nimport gymnasium, pettingzoo\n",
    ],
    ids=["libraries-first", "libraries-after"],
)
def test_reloading_the_package_registers_with_each_library_once(imports: str) -> None:
    # A notebook's autoreload runs the registrations again: each library warns when an
    # id is registered over itself, PettingZoo under its own form of the id.
    out = run_python(
        "import importlib, json, warnings\n"
        "warnings.simplefilter('error')\n"
        + imports
        + "print(json.dumps([gymnasium.registry['Matador-v0'].entry_point,\n"
        "                  pettingzoo.aec_registry['matador-v0'].entry_point]))"
    )
    assert json.loads(out) == [
        "matador_env.gym_env:MatadorSingleEnv",
        "matador_env.matador_v0:env",
    ]
