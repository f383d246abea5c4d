"""Inputs of the training commands and of a policy's moves that were let through and
then failed late, looped or misled: each is refused up front with one line naming what
is allowed, or made well defined.

- ``python -m train.bots``: flags after ``--`` that it sets itself, or that train's own
  parser and checks refuse; an install that fails; a run without warm start in the
  table; ``--only`` given twice; the provenance's rebuild command;
- ``python -m train.expert_fit``: ``--width 1``, ``--ridge 0`` on collinear positions,
  ``--only`` given twice;
- the warm start: a held-out set with no choice, too few decisions;
- policies: a sidecar missing rules fields, act()'s mask and observation, choose()'s
  temperature, and a network whose initializer is shared through an Identity node.

Nothing here writes outside tmp_path: runs, bots and weights files all go there.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
import sys
from dataclasses import astuple
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import train.bots as bots
import train.expert_fit as expert_fit
from agents.expert import FEATURES, ExpertWeights
from matador_env.configs import CONFIGURATIONS, configuration
from matador_env.encoding import ENCODING_VERSION, encoding_for
from matador_env.engine import HandState, Rules
from matador_env.onnx_mlp import read_mlp
from matador_env.policy import (
    BOTS_DIR,
    PolicyError,
    PolicyInfo,
    check_temperature,
    load_policy,
)
from tests.train_runs import run_train
from train.args import ArgsError, parse
from train.run import TrainArgs, recipe_decisions, recipe_teacher


def _refused(parse_argv: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a command line that ``parse_argv`` refuses (exit 2)."""
    with pytest.raises(SystemExit) as stop:
        parse_argv(argv)
    assert stop.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(lines) == 1, lines
    return lines[0]


# -- python -m train.bots: the flags after -- ------------------------------------------


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--preset", "pagat"], "--preset after -- is not allowed: each configuration fixes"),
        (["--pres", "pagat"], "--preset after -- is not allowed"),  # an abbreviation
        (["--players", "4"], "--players after -- is not allowed"),
        (["--no-teams"], "--teams/--no-teams after -- is not allowed"),
        (["--rules", "target_score=150"], "--rules after -- is not allowed"),
        (["--out", "elsewhere"], "--out after -- is not allowed: each run's folder is"),
        (["--resume", "elsewhere"], "--resume after -- is not allowed"),
        (["--seed", "3"], "--seed after -- is not allowed: give train.bots' own --seed"),
        (["--exp-name", "x"], "--exp-name after -- is not allowed"),
        (["--progress"], "--progress/--no-progress after -- is not allowed"),
    ],
)
def test_bots_refuses_the_flags_it_sets_itself_after_the_dashes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    runs = tmp_path / "runs"
    line = _refused(bots._parse, ["--only", "standard", "--runs", str(runs), "--", *flags], capsys)
    assert says in line
    assert not runs.exists()


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--timesteps", "x"], "argument --timesteps: invalid int value: 'x'"),
        (["--bogus", "1"], "unrecognized arguments: --bogus 1"),
        (["--timesteps", "0"], "standard, with the flags after --: --timesteps: 0 is not allowed"),
        # Standard's recipe asks for soft targets, which need a search teacher.
        (["--bc-teacher", "expert"], "--bc-soft-temperature: 4.0 needs a teacher"),
    ],
)
def test_bots_checks_the_other_flags_after_the_dashes_with_trains_own_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    line = _refused(
        bots._parse, ["--only", "standard", "--runs", str(tmp_path), "--", *flags], capsys
    )
    assert says in line


def test_bots_takes_the_flags_of_a_tiny_recipe_after_the_dashes(tmp_path: Path) -> None:
    args = bots._parse(["--only", "leiden", "--runs", str(tmp_path), "--", "--timesteps", "64"])
    assert args.train_flags == ["--timesteps", "64"]


def test_bots_main_refuses_the_passthrough_before_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_work(*_: object) -> int:
        raise AssertionError("work started")

    monkeypatch.setattr(bots.subprocess, "call", no_work)
    monkeypatch.setattr(bots, "install", no_work)
    argv = ["--only", "standard", "--runs", str(tmp_path / "runs"), "--", "--preset", "pagat"]
    assert "--preset after --" in _refused(bots.main, argv, capsys)


def _finished_run(runs: Path, name: str, best_from: str, seed: int, extra: list[str]) -> Path:
    """A run folder as python -m train leaves it for ``name``'s bot (args.json as a new
    run of ``seed`` with ``extra`` writes it, summary.json), its best policy a copy of the
    shipped bot ``best_from``."""
    config = configuration(name)
    run = runs / name
    shutil.copytree(BOTS_DIR / best_from, run / "best")
    args = parse(TrainArgs, bots._new_run_flags(config, run, seed, extra))
    args.bc_decisions = recipe_decisions(args.bc_decisions, config.rules())
    args.bc_teacher = recipe_teacher(args.bc_teacher, config.rules())
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(args)))
    (run / "summary.json").write_text("{}")
    return run


def test_an_install_that_fails_is_one_line_naming_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    # A finished "standard" run that trained a pagat bot (as -- --preset pagat did).
    run = _finished_run(runs, "standard", "pagat", 1, [])
    argv = ["--only", "standard", "--runs", str(runs), "--bots-dir", str(tmp_path / "bots")]
    assert bots.main([*argv, "--no-matrix"]) == 1
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("python -m train.bots: error: [1/1] standard")
    assert "cannot install the run's best policy" in lines[0]
    assert f"delete {run} to train it again" in lines[0]
    assert not (tmp_path / "bots").exists()


def test_the_rebuild_command_is_the_one_that_made_the_run(tmp_path: Path) -> None:
    runs, where = tmp_path / "runs", tmp_path / "bots"
    _finished_run(runs, "standard", "standard", 4, ["--timesteps", "500", "--bc-decisions", "300"])
    _finished_run(runs, "leiden", "leiden", 1, [])
    bots.install(configuration("standard"), runs / "standard", where)
    bots.install(configuration("leiden"), runs / "leiden", where)
    standard = json.loads((where / "standard" / "policy.json").read_text())["provenance"]
    assert standard["rebuild"] == (
        f"python -m train.bots --only standard --seed 4 --runs {runs} --bots-dir {where} "
        "-- --timesteps 500 --bc-decisions 300"
    )
    leiden = json.loads((where / "leiden" / "policy.json").read_text())["provenance"]
    assert (
        leiden["rebuild"] == f"python -m train.bots --only leiden --runs {runs} --bots-dir {where}"
    )
    # The command's flags after -- are those a new run of it would take.
    words = standard["rebuild"].split()
    rebuilt = bots._parse(["--no-matrix", *words[3:]])
    assert rebuilt.seed == 4 and rebuilt.train_flags == words[words.index("--") + 1 :]


def test_the_training_table_of_a_run_without_warm_start(tmp_path: Path) -> None:
    figure = {"points": 1.5, "points_lo": 0.5, "points_hi": 2.5, "deals": 10}
    for name, pretrain in (("standard", None), ("leiden", {"held_out_agreement": None})):
        run = tmp_path / name
        (run / "best").mkdir(parents=True)
        summary = {
            "minutes": 1.0,
            "pretrain": pretrain,
            "final_evaluation": {"expert": figure, "random": figure},
        }
        (run / "args.json").write_text(json.dumps({"bc_teacher": "expert", "bc_decisions": 0}))
        (run / "summary.json").write_text(json.dumps(summary))
        (run / "best" / "policy.json").write_text(json.dumps({"provenance": {"steps": 64}}))
    rows = bots.training_table(tmp_path, ["standard", "leiden"]).splitlines()[2:]
    for row in rows:
        assert "| expert x 0 | 1.0 |  | 64 |" in row and "None" not in row


def test_bots_only_given_twice_builds_once_and_the_matrix_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [
        c.name for c in bots._parse(["--only", "pagat", "leiden", "--only", "pagat"]).configs
    ] == [
        "pagat",
        "leiden",
    ]
    calls: list[list[str]] = []

    def call(command: list[str]) -> int:
        calls.append(command)
        return 0

    monkeypatch.setattr(bots, "install", lambda config, run, where: where / config.name)
    monkeypatch.setattr(bots.subprocess, "call", call)
    runs = tmp_path / "runs"
    (runs / "pagat").mkdir(parents=True)
    (runs / "pagat" / "summary.json").write_text("{}")  # a finished run: reused
    argv = ["--only", *["pagat"] * len(CONFIGURATIONS), "--runs", str(runs)]
    assert bots.main([*argv, "--bots-dir", str(tmp_path / "bots")]) == 0
    (matrix,) = calls
    assert "--all" not in matrix
    assert matrix[matrix.index("--preset") : matrix.index("--preset") + 2] == ["--preset", "pagat"]
    assert matrix.count("--preset") == 1


# -- python -m train.expert_fit --------------------------------------------------------


def test_expert_fit_refuses_a_width_below_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for width in ("1", "0"):
        line = _refused(
            expert_fit.main, ["--width", width, "--out", str(tmp_path / "w.json")], capsys
        )
        assert f"--width must be at least 2, got {width}" in line
        assert "differences between the values" in line
    with pytest.raises(expert_fit.LabelError, match="width 1: at least 2 candidates"):
        expert_fit.label_positions(configuration("leiden"), 11, 1, 2, 1, 0.5)


def test_labelling_gives_up_on_positions_with_nothing_to_tell_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def one_candidate(self: Any, view: Any, rng: random.Random) -> tuple[Any, list[Any]]:
        return view.legal_moves[0], [(view.legal_moves[0], 0.0)]

    monkeypatch.setattr(expert_fit.SearchAgent, "evaluate", one_candidate)
    monkeypatch.setattr(expert_fit, "MAX_SKIPPED", 5)
    with pytest.raises(expert_fit.LabelError, match="5 positions in a row had fewer than two"):
        expert_fit.label_positions(configuration("leiden"), 11, 1, 2, 2, 0.5)


class _InProcessPool:
    """multiprocessing's Pool, run in this process (so that monkeypatches apply)."""

    def __init__(self, processes: int) -> None:
        pass

    def __enter__(self) -> _InProcessPool:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def imap(self, function: Any, items: list[Any]) -> Any:
        return map(function, items)


def test_expert_fit_that_finds_nothing_to_label_ends_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def one_candidate(self: Any, view: Any, rng: random.Random) -> tuple[Any, list[Any]]:
        return view.legal_moves[0], [(view.legal_moves[0], 0.0)]

    class Context:
        Pool = _InProcessPool

    monkeypatch.setattr(expert_fit.SearchAgent, "evaluate", one_candidate)
    monkeypatch.setattr(expert_fit, "MAX_SKIPPED", 5)
    monkeypatch.setattr(expert_fit.multiprocessing, "get_context", lambda kind: Context)
    out = tmp_path / "w.json"
    argv = ["--only", "leiden", "--positions", "2", "--workers", "1", "--no-progress"]
    assert expert_fit.main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "python -m train.expert_fit: error: leiden: 5 positions in a row had fewer than two "
        "candidates to value (width 6); none to fit on"
    ]
    assert not out.exists()


def test_a_fit_without_ridge_on_collinear_features_keeps_base_where_undetermined() -> None:
    """Two features equal in every position: the least squares fix their sum only (a
    plain solve raised LinAlgError: Singular matrix); their difference keeps base's."""
    rng = np.random.default_rng(0)
    truth = rng.normal(size=len(FEATURES))
    a, b = FEATURES.index("block"), FEATURES.index("force")
    data = []
    for _ in range(300):
        x = rng.normal(size=(4, len(FEATURES)))
        x[:, b] = x[:, a]
        data.append(expert_fit.Labelled(x, x @ truth))
    w0 = np.array(astuple(ExpertWeights()))
    fitted = np.array(astuple(expert_fit.fit_weights(data, ExpertWeights(), ridge=0.0)))
    others = [i for i in range(len(FEATURES)) if i not in (a, b)]
    assert fitted[others] == pytest.approx(truth[others], rel=1e-3, abs=1e-3)
    assert fitted[a] + fitted[b] == pytest.approx(truth[a] + truth[b], rel=1e-3, abs=1e-3)
    assert fitted[a] - fitted[b] == pytest.approx(w0[a] - w0[b], rel=1e-3, abs=1e-3)


def test_expert_fit_only_extends_and_keeps_each_name_once(tmp_path: Path) -> None:
    out = ["--out", str(tmp_path / "w.json")]
    args = expert_fit._parse(["--only", "leiden", "--only", "standard_4p", *out])
    assert args.only == ["leiden", "standard_4p"]
    assert expert_fit._parse(["--only", "leiden", "leiden", *out]).only == ["leiden"]
    assert expert_fit._parse(out).only == list(CONFIGURATIONS)


# -- the warm start --------------------------------------------------------------------


def _tiny_policy() -> Any:
    from sb3_contrib import MaskablePPO

    from matador_env.gym_env import MatadorSingleEnv

    env = MatadorSingleEnv(preset="standard")
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=3, device="cpu",
        policy_kwargs={"net_arch": [16]},
    )  # fmt: skip
    return model.policy


def test_a_held_out_set_without_a_choice_reports_no_agreement() -> None:
    from train.pretrain import fit

    enc = encoding_for(Rules.preset("standard"))
    n = 4
    mask = np.zeros((n, enc.num_actions), np.bool_)
    mask[:, 5] = True  # every decision forced
    data = {
        "obs": np.zeros((n, enc.obs_size), np.float32),
        "mask": mask,
        "action": np.full(n, 5, np.int64),
        "ret": np.zeros(n, np.float32),
    }
    figures = fit(_tiny_policy(), data, 1, 8, 1e-3, 0.5, 5, False)
    assert figures["held_out_agreement"] is None
    json.dumps(figures, allow_nan=False)  # strict JSON


def test_an_optional_number_flag_is_read_as_a_number_and_a_list_flag_may_be_empty() -> None:
    args = parse(TrainArgs, ["--players", "3", "--rules"])
    assert (args.players, args.rules) == (3, [])


def test_too_few_warm_start_decisions_are_refused_before_collecting(tmp_path: Path) -> None:
    from train.args import MIN_DECISIONS, check_decisions
    from train.pretrain import collect, fit

    assert MIN_DECISIONS == 2
    for ok in (0, -1, 2, 150_000):
        check_decisions(ok)
    with pytest.raises(ArgsError, match="--bc-decisions: 1 is not allowed; allowed: 0"):
        check_decisions(1)
    folder = tmp_path / "pretrain"
    with pytest.raises(ArgsError, match="--bc-decisions: 1 is not allowed; allowed: 0"):
        collect(folder, Rules.preset("standard"), "expert", "expert", 1, 1, 0.99, 0.05, 1, False)
    with pytest.raises(ArgsError, match="0 is not allowed; allowed: at least 2"):
        check_decisions(0, none_ok=False)
    assert not folder.exists()
    one = {"obs": np.zeros((1, 4)), "mask": np.ones((1, 4), bool), "action": np.zeros(1)}
    with pytest.raises(ArgsError, match="--bc-decisions: 1"):
        fit(None, one | {"ret": np.zeros(1)}, 1, 8, 1e-3, 0.5, 5, False)


def test_train_refuses_an_agent_that_cannot_play_its_rules_before_any_work() -> None:
    """Every agent flag is asked matador_env.bot.rules_refusal, the arena's question:
    bot:trained (no rules of its own, a bot per configuration) for rules no bot was
    made for was taken, and failed once the run had started."""
    from train.run import check_args

    no_bot = ["--preset", "standard", "--rules", "target_score=37"]
    cases = [
        (no_bot + ["--baselines", "bot:trained"], "--baselines: 'bot:trained' cannot play "),
        (no_bot + ["--bc-opponent", "bot:casual"], "--bc-opponent: 'bot:casual' cannot play "),
        (
            ["--preset", "standard", "--bc-teacher", "policy:matador_env/bots/leiden"],
            "--bc-teacher: 'policy:matador_env/bots/leiden' plays leiden only, not the "
            "chosen rules standard (",
        ),
    ]
    said_now = []
    for argv, said in cases:
        with pytest.raises(ArgsError) as info:
            check_args(parse(TrainArgs, argv))
        assert str(info.value).startswith(said), (argv, str(info.value))
        said_now.append(str(info.value))
    assert "no trained bot is shipped for standard, 2 players, target_score=37" in said_now[0]
    check_args(parse(TrainArgs, ["--preset", "leiden", "--bc-teacher", "bot:trained"]))


def test_train_refuses_one_warm_start_decision_before_its_run_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "train", "--bc-decisions", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "--bc-decisions: 1 is not allowed" in done.stderr
    assert not out.exists()


TINY_TRAIN = [
    "--timesteps", "64", "--n-envs", "1", "--n-steps", "64", "--batch-size", "64",
    "--n-epochs", "1", "--net-arch", "16", "--eval-workers", "1", "--eval-every", "0",
    "--eval-hands", "1", "--final-eval-hands", "1", "--select-hands", "0",
    "--bc-epochs", "1", "--bc-workers", "1", "--bc-teacher", "expert", "--no-progress",
]  # fmt: skip


def _strict(path: Path) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"{path} is not strict JSON: {constant}")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_a_run_whose_held_out_decision_is_forced_writes_strict_json(tmp_path: Path) -> None:
    """The audit's run: three decisions, seed 6, the one held out is forced."""
    run = tmp_path / "run"
    done = run_train(*TINY_TRAIN, "--bc-decisions", "3", "--seed", "6", "--out", str(run))
    assert done.returncode == 0, done.stderr[-3000:]
    state = _strict(run / "checkpoint" / "state.json")
    assert state["pretrain"]["held_out"] == 1
    assert state["pretrain"]["held_out_agreement"] is None
    assert _strict(run / "summary.json")["pretrain"]["held_out_agreement"] is None


# -- policies --------------------------------------------------------------------------


def _copy(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(BOTS_DIR / name, folder)
    return folder


def test_every_shipped_sidecar_names_every_rules_field() -> None:
    fields = set(Rules().to_dict())
    for sidecar in sorted(BOTS_DIR.glob("*/policy.json")):
        assert set(json.loads(sidecar.read_text())["rules"]) == fields, sidecar
        load_policy(sidecar.parent)


def test_a_sidecar_missing_rules_fields_is_refused_naming_them(tmp_path: Path) -> None:
    bot = _copy(tmp_path, "pagat")
    sidecar = json.loads((bot / "policy.json").read_text())
    standard = Rules.preset("standard").to_dict()
    differ = [k for k, v in sidecar["rules"].items() if standard[k] != v]
    assert differ
    # Without the fields where pagat differs it would have loaded as standard.
    stripped = {k: v for k, v in sidecar["rules"].items() if k not in differ}
    for rules, named in ((stripped, differ), ({}, list(standard))):
        (bot / "policy.json").write_text(json.dumps({**sidecar, "rules": rules}))
        with pytest.raises(PolicyError) as info:
            load_policy(bot, rules=Rules.preset("standard"))
        assert f"rules lack {', '.join(named)}" in str(info.value)
        assert str(bot / "policy.json") in str(info.value)


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
def test_an_export_to_an_onnx_path_plays_the_actor_with_its_sidecar_beside_it(
    tmp_path: Path, training: bool
) -> None:
    import torch

    from train.export import export_policy

    sb3 = _tiny_policy()
    sb3.set_training_mode(training)
    rules = Rules.preset("standard")
    path = export_policy(sb3, rules, tmp_path / "mine.onnx", {"note": "tiny"})
    assert path == tmp_path / "mine.onnx"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json", "mine.onnx"]
    assert sb3.training is training  # the trainer's mode, as it was
    exported = load_policy(path, rules=rules)
    assert exported.info.provenance == {"note": "tiny"}
    obs = np.random.default_rng(0).random((3, exported.info.obs_size), dtype=np.float32)
    with torch.no_grad():
        expected = sb3.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    got = exported.logits(obs)
    assert np.allclose(got - np.log(np.exp(got).sum(axis=1, keepdims=True)), expected, atol=1e-5)


@pytest.fixture(scope="module", params=["auto", "onnxruntime"])
def policy(request: pytest.FixtureRequest) -> Any:
    return load_policy(BOTS_DIR / "standard", runtime=request.param)


def _mask(policy: Any, legal: list[int], dtype: Any = np.bool_) -> np.ndarray:
    mask = np.zeros(policy.info.num_actions, dtype)
    mask[legal] = 1
    return mask


def test_act_refuses_a_mask_that_is_not_one_entry_per_action(policy: Any) -> None:
    n = policy.info.num_actions
    obs = np.zeros(policy.info.obs_size, np.float32)
    for mask, says in (
        (np.r_[np.zeros(n, bool), [True, True]], rf"shape \({n},\); got shape \({n + 2},\)"),
        (np.array([True, False, True]), r"got shape \(3,\)"),
        (np.ones((2, n), bool), rf"got shape \(2, {n}\)"),
        (np.full(n, 0.1), "holds values other than 0 and 1"),
        (_mask(policy, [3, 7], np.float32) * 0.5, "holds values other than 0 and 1"),
        (_mask(policy, [3, 7], np.int64) * 2, "holds values other than 0 and 1"),
        (-_mask(policy, [3, 7], np.int8), "holds values other than 0 and 1"),
        (_mask(policy, [3, 7], np.complex64), "holds complex64 values"),
        (np.array(["1"] * n), "holds <U1 values"),
        (np.zeros(n, bool), "marks no legal action"),
    ):
        with pytest.raises(ValueError, match=says):
            policy.act(obs, mask)
    # Bools and the encoding's own 0/1 integers play.
    # Masks of float ones and zeros too, as RLlib hands them over.
    for dtype in (np.bool_, np.int8, np.int64, np.uint8, np.float32, np.float64):
        assert policy.act(obs, _mask(policy, [3, 7], dtype)) in (3, 7)
    assert policy.act(obs, _mask(policy, [9], np.int8)) == 9


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_a_non_finite_observation_is_refused_not_blamed_on_the_network(policy: Any) -> None:
    obs = np.zeros(policy.info.obs_size, np.float32)
    for bad in (np.nan, np.inf, -np.inf, 1e39):  # 1e39 is inf as float32
        broken = obs.astype(np.float64)
        broken[4] = bad
        calls: list[tuple[Any, tuple[Any, ...]]] = [
            (policy.act, (broken, _mask(policy, [3, 7]))),
            (policy.logits, (broken,)),
            (policy.logits, (np.stack([obs, broken]),)),
        ]
        if np.isnan(bad):
            # A move's own path checks the values only before blaming the network.
            calls.append((policy.legal_logits, (broken, np.array([3, 7]))))
        for call, args in calls:
            with pytest.raises(ValueError, match="not finite") as info:
                call(*args)
            assert not isinstance(info.value, PolicyError)


def test_choose_refuses_a_temperature_a_bot_refuses(policy: Any) -> None:
    view = HandState.deal(Rules.preset("standard"), 1).view(0)
    assert len(view.legal_moves) > 1
    for bad in (-1.0, float("nan"), float("inf"), "2", True, None):
        with pytest.raises(ValueError, match="temperature must be a finite number >= 0"):
            policy.choose(view, random.Random(0), temperature=bad)
    # 0 is the most likely move, as PolicyBot plays it.
    best = policy.choose(view)
    assert {policy.choose(view, random.Random(s), temperature=0.0) for s in range(20)} == {best}
    for ok in (0, 0.5, 2, np.float32(1.5)):
        check_temperature(ok)


# -- a network sharing an initializer through Identity ---------------------------------


def _shared_bias_network(obs: int, hidden: int, actions: int) -> tuple[bytes, list[np.ndarray]]:
    """obs -> hidden -> hidden -> actions with Tanh, as the torch export writes an
    untrained network: both hidden biases equal, stored once and named twice through an
    Identity node; and the weights as [outputs, inputs]."""
    rng = np.random.default_rng(1)
    w = [
        rng.normal(size=(hidden, obs)).astype(np.float32),
        rng.normal(size=(hidden, hidden)).astype(np.float32),
        rng.normal(size=(actions, hidden)).astype(np.float32),
    ]
    b = [np.zeros(hidden, np.float32), np.zeros(hidden, np.float32)]
    b.append(rng.normal(size=actions).astype(np.float32))
    initializers = [numpy_helper.from_array(w[i], f"W{i}") for i in range(3)]
    initializers += [numpy_helper.from_array(b[0], "B0"), numpy_helper.from_array(b[2], "B2")]
    nodes = [
        helper.make_node("Identity", ["B0"], ["B1"]),
        helper.make_node("Cast", ["obs"], ["c"], to=TensorProto.FLOAT),
        helper.make_node("Flatten", ["c"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "W0", "B0"], ["g0"], transB=1),
        helper.make_node("Tanh", ["g0"], ["a0"]),
        helper.make_node("Gemm", ["a0", "W1", "B1"], ["g1"], transB=1),
        helper.make_node("Tanh", ["g1"], ["a1"]),
        helper.make_node("Gemm", ["a1", "W2", "B2"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", obs])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", actions])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), [w[0], b[0], w[1], b[1], w[2], b[2]]


def test_an_initializer_shared_through_identity_is_read(tmp_path: Path) -> None:
    data, (w0, b0, w1, b1, w2, b2) = _shared_bias_network(12, 8, 5)
    path = tmp_path / "policy.onnx"
    path.write_bytes(data)
    mlp = read_mlp(path, 12, 5)
    assert mlp is not None
    x = np.random.default_rng(2).random((3, 12), dtype=np.float32)
    want = np.tanh(np.tanh(x @ w0.T + b0) @ w1.T + b1) @ w2.T + b2
    np.testing.assert_allclose(mlp.logits(x), want, rtol=1e-5, atol=1e-5)


def test_such_a_policy_plays_in_numpy(tmp_path: Path) -> None:
    rules = Rules.preset("standard")
    enc = encoding_for(rules)
    data, _ = _shared_bias_network(enc.obs_size, 16, enc.num_actions)
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "policy.onnx").write_bytes(data)
    info = PolicyInfo(rules, ENCODING_VERSION, enc.obs_size, enc.num_actions)
    (folder / "policy.json").write_text(json.dumps(info.to_json()))
    fast = load_policy(folder)
    reference = load_policy(folder, runtime="onnxruntime")
    assert fast.runtime == "numpy"
    state = HandState.deal(rules, 2)
    while not state.is_over:
        view = state.view(state.to_move)
        assert fast.choose(view) == reference.choose(view)
        state = state.apply(fast.choose(view))
