"""``train/run.py`` behaviours that mutation testing found unguarded by a fast test:
each argument's lowest allowed value, the recipe's choice at the edges of the cheap
configurations, the folder a new run makes and what it records, what a resume
reuses or refuses, and the exit status of each refusal. No test here trains: the
training itself (``_train_locked`` or the ``Trainer``) is replaced by a stub."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import train.loop
import train.run as run_mod
from matador_env.engine import Rules
from tests.test_benchmark_refusals import refused
from train.args import ArgsError, flag_name
from train.files import FolderBusyError, RunFolderError
from train.run import (
    LARGEST_SEED,
    TrainArgs,
    check_args,
    load_run_args,
    parse_weights,
    recipe_decisions,
    recipe_teacher,
)

ROOT = Path(__file__).resolve().parent.parent
# The expert teacher keeps check_args cheap (the recipe's search teacher is built too).
CHEAP = TrainArgs(bc_teacher="expert")


def _args(**changes: Any) -> TrainArgs:
    return dataclasses.replace(CHEAP, **changes)


def _stub_training(monkeypatch: pytest.MonkeyPatch) -> list[tuple[TrainArgs, Rules, Path]]:
    """Replace the training by a record of what it was given."""
    calls: list[tuple[TrainArgs, Rules, Path]] = []

    def fake(args: TrainArgs, rules: Rules, run_dir: Path) -> Path:
        calls.append((args, rules, run_dir))
        return run_dir

    monkeypatch.setattr(run_mod, "_train_locked", fake)
    return calls


# -- the lowest value of each integer argument ------------------------------------------

# Written out here (not read from train.run) so that a changed bound is caught. Values
# that need a partner to pass the other checks bring it along.
_LOWEST: list[tuple[str, int, dict[str, Any]]] = [
    ("seed", 0, {}),
    ("timesteps", 1, {}),
    ("n_envs", 1, {}),
    ("n_steps", 1, {"batch_size": 2}),
    ("vector_envs", 0, {}),
    ("n_epochs", 1, {}),
    ("snapshot_every", 1, {}),
    ("pool_size", 1, {}),
    ("checkpoint_every", 1, {}),
    ("eval_every", 0, {}),
    ("eval_hands", 1, {}),
    ("final_eval_hands", 1, {}),
    ("select_hands", 0, {}),
    ("eval_workers", 1, {}),
    ("torch_threads", 1, {}),
    ("bc_decisions", -1, {}),
    ("bc_dagger_decisions", 0, {}),
    ("bc_dagger_rounds", 1, {}),
    ("bc_epochs", 1, {}),
    ("bc_batch_size", 1, {}),
    ("bc_workers", 1, {}),
]


@pytest.mark.parametrize(("name", "low", "partner"), _LOWEST, ids=[n for n, _, _ in _LOWEST])
def test_each_integer_argument_allows_its_lowest_value_and_refuses_one_less(
    name: str, low: int, partner: dict[str, Any]
) -> None:
    check_args(_args(**{name: low}, **partner))
    with pytest.raises(ArgsError) as refusal:
        check_args(_args(**{name: low - 1}, **partner))
    # The line names the flag and the bound the help promises.
    assert str(refusal.value) == (
        f"{flag_name(name)}: {low - 1} is not allowed; allowed: an integer, {low} or more"
    )


def test_a_bool_is_no_integer_argument() -> None:
    # True == 1 would pass "1 or more"; a Python caller's bool is refused.
    with pytest.raises(ArgsError, match=r"^--n-envs: True is not allowed"):
        check_args(_args(n_envs=True))


def test_the_largest_seed_is_allowed_and_one_more_is_refused() -> None:
    check_args(_args(seed=LARGEST_SEED))
    with pytest.raises(ArgsError, match=f"^--seed: .* from 0 to {LARGEST_SEED} "):
        check_args(_args(seed=LARGEST_SEED + 1))


def test_one_warm_start_decision_is_refused_by_the_argument_check() -> None:
    # 1 passes "-1 or more" but the fit needs two (one is held out).
    with pytest.raises(ArgsError, match=r"^--bc-decisions: 1 is not allowed"):
        check_args(_args(bc_decisions=1))


# -- the ends of the number ranges -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("gae_lambda", 0.0, True),  # "from 0 to 1"
        ("ent_coef", 0.0, True),  # "0 or more"
        ("bc_vf_coef", 0.0, True),
        ("bc_soft_temperature", 0.0, True),  # 0: hard targets, any teacher
        ("latest_share", 1.0, True),
        ("latest_share", 1.5, False),
        ("reward_scale", 0.0, False),  # "above 0": no reward at all teaches nothing
        ("bc_learning_rate", 0.0, False),
    ],
)
def test_each_float_range_includes_the_ends_its_words_say(
    name: str, value: float, allowed: bool
) -> None:
    args = _args(**{name: value})
    if allowed:
        check_args(args)
        return
    with pytest.raises(ArgsError, match=f"^{flag_name(name)}: {value!r} is not allowed"):
        check_args(args)


# -- the rollout, the batch and the vector environment ----------------------------------


def test_a_batch_of_the_whole_rollout_of_every_environment_is_allowed() -> None:
    # The rollout is --n-steps x --n-envs: 4 x 2 = 8, and the batch may be all of it.
    check_args(_args(n_steps=4, n_envs=2, batch_size=8))
    with pytest.raises(ArgsError, match=r"^--batch-size: 9 .* \(8\)"):
        check_args(_args(n_steps=4, n_envs=2, batch_size=9))


def test_vector_envs_must_divide_the_rollout_and_play_only_random_baselines() -> None:
    check_args(_args(vector_envs=4, baselines="random:1"))
    with pytest.raises(ArgsError, match=r"^--vector-envs: 3 does not divide the rollout"):
        check_args(_args(vector_envs=3, baselines="random:1"))
    with pytest.raises(ArgsError, match=r"^--baselines: 'expert' cannot play with --vector"):
        check_args(_args(vector_envs=4, baselines="expert:1,random:1"))


def test_the_reward_may_be_spelt_normalized_too() -> None:
    # The environment takes either spelling, so the check does.
    check_args(_args(reward="normalized"))


def test_a_bc_opponent_that_is_no_agent_is_refused_naming_its_flag() -> None:
    with pytest.raises(ArgsError, match=r"^--bc-opponent: 'wizard' is not an agent"):
        check_args(_args(bc_opponent="wizard"))


def test_a_teacher_made_for_other_rules_is_refused_naming_both() -> None:
    spec = f"policy:{ROOT / 'matador_env' / 'bots' / 'double_nine'}"
    with pytest.raises(ArgsError, match=r"^--bc-teacher: .* plays double_nine only.*standard"):
        check_args(_args(bc_teacher=spec))


# -- --baselines ---------------------------------------------------------------------------


def test_baselines_read_a_missing_weight_as_1_and_a_spec_with_options_whole() -> None:
    assert parse_weights("expert,random:0.5") == {"expert": 1.0, "random": 0.5}
    assert parse_weights("search:samples=8") == {"search:samples=8": 1.0}


def test_a_baseline_of_weight_0_is_allowed_beside_a_positive_one() -> None:
    assert parse_weights("expert:0,random:1") == {"expert": 0.0, "random": 1.0}


@pytest.mark.parametrize("text", ["expert:1,expert:2", "expert:inf", "expert:nan", "expert:0"])
def test_baselines_refuse_a_repeat_a_weight_that_is_not_finite_or_no_positive_weight(
    text: str,
) -> None:
    with pytest.raises(ArgsError, match=r"^--baselines: "):
        parse_weights(text)


# -- the recipe ------------------------------------------------------------------------------


def test_the_recipe_runs_the_full_search_for_two_players_on_double_nine_only() -> None:
    two = Rules.preset("double_nine")
    three = Rules.preset("double_nine", players=3)
    assert recipe_teacher("auto", two) != "search:samples=32"
    assert recipe_decisions(-1, two) == 150_000
    assert recipe_teacher("auto", three) == "search:samples=32"
    assert recipe_decisions(-1, three) == 100_000


def test_a_named_teacher_and_a_count_of_0_are_kept_as_given() -> None:
    rules = Rules.preset("double_twelve")
    assert recipe_teacher("search:samples=8", rules) == "search:samples=8"
    assert recipe_decisions(0, rules) == 0  # 0: no warm start, not the recipe's count


# -- a new run ---------------------------------------------------------------------------------


def test_a_new_run_without_out_makes_its_folder_under_runs_by_name_preset_and_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _stub_training(monkeypatch)
    monkeypatch.chdir(tmp_path)
    run_dir = run_mod.train(TrainArgs(exp_name="mine", preset="leiden", seed=7), set())
    assert run_dir.parent == Path("runs")
    exp, preset, seed, when = run_dir.name.split("__")
    assert (exp, preset, seed) == ("mine", "leiden", "7") and when.isdigit()
    # args.json names the folder and fixes the recipe's choices for a resume.
    saved = json.loads((tmp_path / run_dir / "args.json").read_text())
    assert saved["out"] == str(run_dir)
    assert saved["bc_teacher"] == recipe_teacher("auto", Rules.preset("leiden"))
    assert saved["bc_decisions"] == 150_000
    ((args, _, given_dir),) = calls
    assert given_dir == run_dir and args.out == str(run_dir)


def test_a_new_run_in_a_folder_that_holds_one_points_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _stub_training(monkeypatch)
    (tmp_path / "args.json").write_text("{}")
    line = refused(run_mod.main, ["--bc-teacher", "expert", "--out", str(tmp_path)], capsys)
    assert line == (
        f"python -m train: error: --out: {tmp_path} already holds a run; "
        f"use --resume {tmp_path} to continue it"
    )
    assert calls == []


@pytest.mark.parametrize("error", [RunFolderError, FolderBusyError, ArgsError])
def test_a_run_folder_or_lock_error_ends_in_one_line_and_exit_2(
    error: type[Exception],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def fail(*_: object) -> Path:
        raise error("what went wrong")

    monkeypatch.setattr(run_mod, "_train_locked", fail)
    argv = ["--bc-teacher", "expert", "--out", str(tmp_path / "run")]
    assert refused(run_mod.main, argv, capsys) == "python -m train: error: what went wrong"


# -- a resumed run ---------------------------------------------------------------------------


def _saved_run(folder: Path, **changes: Any) -> Path:
    """A run folder holding only args.json, as a new run with ``changes`` writes it."""
    folder.mkdir()
    args = _args(out=str(folder), bc_decisions=0, **changes)
    (folder / "args.json").write_text(json.dumps(dataclasses.asdict(args)))
    return folder


def _rewrite(folder: Path, **changes: Any) -> None:
    stored = json.loads((folder / "args.json").read_text())
    for key, value in changes.items():
        if value is _DROP:
            del stored[key]
        else:
            stored[key] = value
    (folder / "args.json").write_text(json.dumps(stored))


_DROP = object()


def test_a_resume_may_change_timesteps_and_progress_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _stub_training(monkeypatch)
    run = _saved_run(tmp_path / "run")
    run_mod.main(["--resume", str(run), "--timesteps", "5", "--no-progress"])
    ((args, _, run_dir),) = calls
    assert (args.timesteps, args.progress, args.resume) == (5, False, str(run))
    assert run_dir == run
    line = refused(run_mod.main, ["--resume", str(run), "--seed", "2"], capsys)
    assert line.startswith("python -m train: error: --seed: 2 differs from the run's 1 in ")
    line = refused(run_mod.main, ["--resume", str(run), "--out", str(tmp_path / "x")], capsys)
    assert line.startswith("python -m train: error: --out: ")
    # A bad value given now is the command line's, not the saved file's.
    line = refused(run_mod.main, ["--resume", str(run), "--timesteps", "0"], capsys)
    assert line.startswith("python -m train: error: --timesteps: 0 is not allowed"), line
    # A bad value in the file is the file's.
    _rewrite(run, timesteps=0)
    line = refused(run_mod.main, ["--resume", str(run)], capsys)
    assert line.startswith(f"python -m train: error: {run / 'args.json'}: --timesteps: 0"), line


def test_a_python_resume_without_given_compares_only_what_differs_from_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The saved out and teacher are not the defaults; they were not asked to change.
    calls = _stub_training(monkeypatch)
    run = _saved_run(tmp_path / "run")
    run_mod.train(TrainArgs(resume=str(run)))
    ((args, _, _),) = calls
    assert args.out == str(run) and args.bc_teacher == "expert"


def test_an_older_args_json_resumes_without_the_check_against_the_warm_start(
    tmp_path: Path,
) -> None:
    run = _saved_run(tmp_path / "run")
    _rewrite(run, select_hands=_DROP, bc_soft_temperature=_DROP, bc_skip_forced=_DROP)
    args = load_run_args(run, {})
    assert args.resume == str(run)  # the folder it was read from, not args.json's None
    assert (args.select_hands, args.bc_soft_temperature, args.bc_skip_forced) == (0, 0.0, False)


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("colour", "red", "unknown argument 'colour'"),
        ("gamma", True, "gamma is True, not of type"),
        ("n_steps", True, "n_steps is True, not of type"),
        ("n_steps", "many", "n_steps is 'many', not of type"),
        ("rules", "lead_tile=any", "rules is 'lead_tile=any', not of type"),
        ("bc_decisions", -1, "bc_decisions is -1, not fixed"),
    ],
)
def test_an_args_json_of_a_wrong_key_type_or_unfixed_recipe_is_refused_naming_it(
    tmp_path: Path, key: str, value: Any, says: str
) -> None:
    run = _saved_run(tmp_path / "run")
    _rewrite(run, **{key: value})
    with pytest.raises(ArgsError) as refusal:
        load_run_args(run, {})
    assert str(refusal.value).startswith(f"{run / 'args.json'}: {says}")
    assert "start a new run" in str(refusal.value)


@pytest.mark.parametrize(("decisions", "fixed"), [(0, True), (1, False)])
def test_an_auto_teacher_is_fixed_enough_only_for_a_run_without_warm_start(
    tmp_path: Path, decisions: int, fixed: bool
) -> None:
    run = _saved_run(tmp_path / "run")
    _rewrite(run, bc_teacher="auto", bc_decisions=decisions)
    if fixed:
        assert load_run_args(run, {}).bc_teacher == "auto"
        return
    with pytest.raises(ArgsError, match="bc_teacher is 'auto', not fixed"):
        load_run_args(run, {})


def test_a_resume_of_a_folder_without_args_json_leaves_it_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(run_mod.main, ["--resume", str(tmp_path)], capsys)
    assert line.endswith("no args.json there; is it a training run folder?")
    assert list(tmp_path.iterdir()) == []  # not even a lock file


def test_a_saved_argument_the_checks_refuse_is_blamed_on_args_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _saved_run(tmp_path / "run")
    _rewrite(run, batch_size=1)
    line = refused(run_mod.main, ["--resume", str(run)], capsys)
    assert line.startswith(f"python -m train: error: {run / 'args.json'}: --batch-size: 1 ")


class _NoTrainer:
    def __init__(self, *_: object) -> None:
        raise RunFolderError("the trainer started")


def test_a_resume_records_its_timesteps_before_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A plain --resume after an interrupt goes on to the same end.
    monkeypatch.setattr(train.loop, "Trainer", _NoTrainer)
    run = _saved_run(tmp_path / "run")
    line = refused(run_mod.main, ["--resume", str(run), "--timesteps", "777"], capsys)
    assert line == "python -m train: error: the trainer started"
    assert json.loads((run / "args.json").read_text())["timesteps"] == 777


def test_a_resume_of_a_finished_run_prints_its_summary_and_trains_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(train.loop, "Trainer", _NoTrainer)
    monkeypatch.setattr(run_mod, "finished_summary", lambda run_dir, steps: f"done {steps}")
    run = _saved_run(tmp_path / "run")
    assert run_mod.main(["--resume", str(run)]) == run
    assert capsys.readouterr().out == f"done {CHEAP.timesteps}\n"
