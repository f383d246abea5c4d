"""The expert's weights per configuration: the file, the agent's choice of set, the fit."""

from __future__ import annotations

import json
import random
import shlex
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents.expert as expert_module
import train.expert_fit as expert_fit
from agents import AgentSpecError, make_agent
from agents.expert import (
    FEATURES,
    FITTED_WEIGHTS_PATH,
    ExpertAgent,
    ExpertWeights,
    ExpertWeightsError,
    fitted_weights,
)
from matador_env.configs import CONFIGURATIONS, configuration
from matador_env.engine import HandState, Rules
from train.expert_fit import (
    Labelled,
    fit_weights,
    load_unit,
    main,
    save_unit,
    weights_spec,
    work_folder,
)


def _write(path: Path, configurations: dict) -> Path:  # type: ignore[type-arg]
    path.write_text(json.dumps({"format": 1, "configurations": configurations}))
    return path


def test_the_shipped_file_names_configurations_and_every_weight() -> None:
    fitted = fitted_weights()
    assert set(fitted) <= set(CONFIGURATIONS)
    data = json.loads(FITTED_WEIGHTS_PATH.read_text())
    for name, entry in data["configurations"].items():
        assert name in CONFIGURATIONS
        assert set(entry["weights"]) == set(FEATURES)
        # Kept exactly where the fitted set beat the base set in its confirming run.
        # (An unbounded lower end, from one confirming deal, is written as null.)
        lo = entry["confirm"]["points_per_hand"]["lo"]
        assert entry["kept"] == (lo is not None and lo > 0)
        assert (name in fitted) == entry["kept"]


def test_fitted_weights_reads_only_kept_sets(tmp_path: Path) -> None:
    weights = dict(zip(FEATURES, astuple(replace(ExpertWeights(), partner=1.5)), strict=True))
    path = _write(
        tmp_path / "w.json",
        {
            "leiden": {"kept": True, "weights": weights},
            "polish": {"kept": False, "weights": weights},
        },
    )
    assert fitted_weights(path) == {"leiden": replace(ExpertWeights(), partner=1.5)}
    assert fitted_weights(tmp_path / "missing.json") == {}


_FULL = dict(zip(FEATURES, astuple(replace(ExpertWeights(), block=-7.0)), strict=True))


def _file(entry: object, name: str = "leiden", file_format: object = 1) -> str:
    return json.dumps({"format": file_format, "configurations": {name: entry}})


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json", "not JSON"),
        (
            '{"configurations": ["ab"]}',
            'not a fitted-weights file \\(no "configurations" object\\)',
        ),
        (_file({"weights": _FULL}), 'leiden: no "kept" true or false'),
        (_file({"kept": True, "weights": {**_FULL, "nerve": 1}}), r"unknown weights \['nerve'\]"),
        (_file({"kept": True, "weights": {**_FULL, "block": "x"}}), "block='x' is no number"),
        # Before, each of these was read without a word: a "false" was kept and played,
        # true and "2.5" read as numbers, one weight filled in from the base set, an
        # unknown name or format taken.
        (_file({"kept": "false", "weights": _FULL}), 'leiden: no "kept" true or false'),
        (_file({"kept": True, "weights": {**_FULL, "block": True}}), "block=True is no number"),
        (_file({"kept": True, "weights": {**_FULL, "block": "2.5"}}), "block='2.5' is no number"),
        (
            _file({"kept": True, "weights": {"block": -7.0}}),
            r"no value for the weights \['pips_left'",
        ),
        (_file({"kept": True, "weights": _FULL}, name="leidn"), "'leidn' is no configuration"),
        (
            _file({"kept": True, "weights": _FULL}, file_format=2),
            "format 2; this code reads format 1",
        ),
        (_file({"kept": True, "weights": _FULL}, file_format=None), "format None"),
        (
            _file({"kept": True, "weights": {**_FULL, "block": float("nan")}}),
            "block=nan is not finite",
        ),
        # JSON's Infinity, which Python's json reads, is refused as nan is.
        (
            _file({"kept": True, "weights": {**_FULL, "block": float("inf")}}),
            "leiden: block=inf is not finite",
        ),
        # No "format" at all is no format 1 (another writer's file, or one by hand).
        (json.dumps({"configurations": {}}), "format None; this code reads format 1"),
        # "weights" that is no object: a number would fail on set(), a list be read.
        (_file({"kept": True, "weights": 5}), 'leiden: no "weights" object'),
        (_file({"kept": True, "weights": []}), 'leiden: no "weights" object'),
        # Bytes that are no UTF-8: a UnicodeDecodeError is a ValueError, not JSON's own.
        (b"\xff\xfe{}", "not JSON"),
    ],
)
def test_a_malformed_weights_file_is_refused(
    tmp_path: Path, content: str | bytes, says: str
) -> None:
    path = tmp_path / "w.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ExpertWeightsError, match=says) as info:
        fitted_weights(path)
    assert str(path) in str(info.value)


def test_the_expert_plays_the_set_of_the_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    leiden = replace(ExpertWeights(), block=-7.0)
    monkeypatch.setattr(expert_module, "fitted_weights", lambda: {"leiden": leiden})
    expert = ExpertAgent()
    assert expert.weights_for(configuration("leiden").rules()) == leiden
    assert expert.weights_for(configuration("polish").rules()) == ExpertWeights()
    assert expert.weights_for(Rules(hand_size=5)) == ExpertWeights()  # no configuration
    # weights=base plays the base set everywhere; single weights go on top of either.
    base = make_agent("expert:weights=base")
    assert isinstance(base, ExpertAgent)
    assert base.weights_for(configuration("leiden").rules()) == ExpertWeights()
    tuned = make_agent("expert:partner=2")
    assert isinstance(tuned, ExpertAgent)
    assert tuned.weights_for(configuration("leiden").rules()) == replace(leiden, partner=2.0)
    # The scores follow the set: the same view, scored with the fitted and base sets.
    rules = configuration("leiden").rules()
    state = HandState.deal(rules, 4)
    view = state.view(state.to_move)
    w = np.array(astuple(leiden))
    features = [f for f in expert.features(view) if f is not None]
    scores = [
        s for s, f in zip(expert.scores(view), expert.features(view), strict=True) if f is not None
    ]
    assert scores == pytest.approx([float(np.dot(w, f)) for f in features])


def test_bad_weight_sets_are_refused() -> None:
    with pytest.raises(AgentSpecError, match="expected fitted .* or base"):
        make_agent("expert:weights=mine")


def test_the_fit_recovers_the_weights_that_made_the_values() -> None:
    rng = np.random.default_rng(0)
    truth = rng.normal(size=len(FEATURES))
    truth[FEATURES.index("partner")] = 99.0  # never varies below: must keep the base value
    data = []
    for _ in range(300):
        x = rng.normal(size=(4, len(FEATURES)))
        x[:, FEATURES.index("partner")] = 0.7
        data.append(Labelled(x, x @ truth + 5.0))  # a per-position offset changes nothing
    fitted = np.array(astuple(fit_weights(data, ExpertWeights(), ridge=0.0)))
    expected = truth.copy()
    expected[FEATURES.index("partner")] = ExpertWeights().partner
    assert fitted == pytest.approx(expected, rel=1e-3, abs=1e-3)
    # The ridge pulls towards the base set.
    pulled = np.array(astuple(fit_weights(data, ExpertWeights(), ridge=100.0)))
    base = np.array(astuple(ExpertWeights()))
    assert np.abs(pulled - base).sum() < np.abs(fitted - base).sum()


def test_the_weights_spec_plays_those_weights() -> None:
    weights = replace(ExpertWeights(), force=3.25, draw=-0.5)
    agent = make_agent(weights_spec(weights))
    assert isinstance(agent, ExpertAgent)
    for config in ("standard", "leiden", "pagat_teams"):
        assert agent.weights_for(configuration(config).rules()) == weights


def test_a_tiny_fit_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "weights.json"
    tiny = ["--positions", "12", "--samples", "4", "--confirm-hands", "8", "--workers", "1"]
    tiny += ["--out", str(out), "--no-progress"]
    assert main(["--only", "leiden", *tiny]) == 0
    first = json.loads(out.read_text())["configurations"]
    assert list(first) == ["leiden"] and first["leiden"]["positions"] == 12
    assert first["leiden"]["confirm"]["hands"] == 8
    # Another configuration is added; leiden's entry stays as it was.
    assert main(["--only", "standard_4p", *tiny]) == 0
    second = json.loads(out.read_text())["configurations"]
    assert second["leiden"] == first["leiden"] and "standard_4p" in second
    assert second["standard_4p"]["confirm"]["hands"] == 8  # 1 deal x 8 field seatings
    # The same command and seed give the same weights.
    assert main(["--only", "leiden", *tiny]) == 0
    assert json.loads(out.read_text())["configurations"]["leiden"] == first["leiden"]
    loaded = fitted_weights(out)
    assert set(loaded) == {n for n, e in second.items() if e["kept"]}
    # A fitted set plays legal moves.
    rules = configuration("leiden").rules()
    agent = make_agent(weights_spec(ExpertWeights(**first["leiden"]["weights"])))
    state = HandState.deal(rules, 1)
    rng = random.Random(1)
    while state.outcome is None:
        view = state.view(state.to_move)
        move = agent.act(view, rng)
        assert move in view.legal_moves
        state = state.apply(move)


def test_bad_arguments_are_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "w.json"
    for argv, says in (
        (["--only", "nope"], "unknown configuration 'nope'"),
        (["--positions", "0"], "--positions must be at least 1, got 0"),
        (["--workers", "-2"], "--workers must be at least 1, got -2"),
        (["--keep", "1.5"], "--keep must be in (0, 1], got 1.5"),
        (["--keep", "inf"], "--keep must be in (0, 1], got inf"),
        (["--keep", "nan"], "--keep must be in (0, 1], got nan"),
        (["--ridge", "-1"], "--ridge must be a finite number >= 0, got -1.0"),
        (["--ridge", "inf"], "--ridge must be a finite number >= 0, got inf"),
        (["--ridge", "nan"], "--ridge must be a finite number >= 0, got nan"),
    ):
        with pytest.raises(SystemExit) as info:
            main([*argv, "--out", str(out)])
        assert info.value.code == 2 and says in capsys.readouterr().err
    assert not out.exists()


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a command line refused (exit 2) before any work."""
    with pytest.raises(SystemExit) as info:
        main([*argv, "--no-progress"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def test_a_bad_out_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*_: object) -> None:
        raise AssertionError("work started")

    monkeypatch.setattr("train.expert_fit.label_positions", no_work)
    monkeypatch.setattr("train.expert_fit.fit_weights", no_work)
    folder = tmp_path / "d"
    folder.mkdir()
    assert f"--out {folder}: {folder} is a folder; give a file" in _refused(
        ["--out", str(folder)], capsys
    )
    assert "an empty path is not a file" in _refused(["--out="], capsys)
    # A path under a file cannot be written.
    afile = tmp_path / "f"
    afile.write_text("x")
    sub = afile / "sub"
    line = _refused(["--out", str(sub)], capsys)
    assert f"--out {sub}" in line and f"{afile} exists and is not a folder" in line
    # An existing file of the wrong shape (or not JSON) is refused and left as it was.
    for content, says in (
        ('{"configurations": ["ab"]}', 'no "configurations" object'),
        ('["ab"]', 'no "configurations" object'),
        (_file("ab"), 'leiden: no "kept" true or false'),
        (_file({"kept": 1, "weights": {}}), 'leiden: no "kept" true or false'),
        (_file({"kept": True, "weights": {"nerve": 1}}), "unknown"),
        (_file({"kept": False, "weights": {"block": 1}}), "no value for the weights"),
        ("not json", "not JSON"),
    ):
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        line = _refused(["--only", "leiden", "--out", str(bad)], capsys)
        assert str(bad) in line and says in line
        assert bad.read_text() == content


def test_an_unreadable_out_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _write(tmp_path / "w.json", {})

    def unreadable(self: Path, *_: object, **__: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", unreadable)
    line = _refused(["--out", str(out)], capsys)
    assert f"{out} cannot be read (Permission denied)" in line


def test_one_confirming_deal_writes_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "weights.json"
    tiny = ["--positions", "12", "--samples", "4", "--confirm-hands", "1", "--workers", "1"]
    assert main(["--only", "leiden", *tiny, "--out", str(out), "--no-progress"]) == 0

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    entry = json.loads(out.read_text(), parse_constant=refuse)["configurations"]["leiden"]
    figures = entry["confirm"]["points_per_hand"]
    assert figures["lo"] is None and figures["hi"] is None and entry["kept"] is False
    assert "[-inf, +inf] over" in capsys.readouterr().out  # printed from the floats
    # The file so written is read back, by the expert and by another run.
    assert fitted_weights(out) == {}
    assert main(["--only", "standard", *tiny, "--out", str(out), "--no-progress"]) == 0
    assert set(json.loads(out.read_text())["configurations"]) == {"leiden", "standard"}


def test_the_recorded_command_reads_back_as_given_and_each_stage_shows_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Joined with spaces, a path with a space read back as two arguments; and the
    # confirming games ran without a bar (only the labelling had one).
    out = tmp_path / "a folder" / "weights.json"
    argv = ["--only", "leiden", "--positions", "12", "--samples", "4", "--confirm-hands", "8"]
    argv += ["--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    command = json.loads(out.read_text())["last_command"]
    assert shlex.split(command) == ["python", "-m", "train.expert_fit", *argv]
    err = capsys.readouterr().err
    assert "label: 100%" in err and "confirm leiden: 100%" in err


def _two_unit_fit(out: Path) -> list[str]:
    """A tiny fit of two units of work (one for each of two configurations)."""
    argv = ["--only", "leiden", "standard", "--positions", "12", "--samples", "4"]
    return [*argv, "--confirm-hands", "8", "--workers", "1", "--out", str(out), "--no-progress"]


def _interrupted_after_one_unit(out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the tiny fit and stop it (as ^C would) once its first unit is kept."""

    def save_then_stop(*args: object) -> None:
        save_unit(*args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(expert_fit, "save_unit", save_then_stop)
        with pytest.raises(KeyboardInterrupt):
            main(_two_unit_fit(out))
    assert not out.exists()
    assert len(list(work_folder(out).iterdir())) == 1


def test_an_interrupted_fit_resumes_and_writes_what_one_run_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = tmp_path / "whole.json"
    assert main(_two_unit_fit(whole)) == 0
    assert not work_folder(whole).exists()
    expected = json.loads(whole.read_text())["configurations"]
    capsys.readouterr()
    # Stopped after its first unit, then run again: it labels only the other one.
    resumed = tmp_path / "resumed.json"
    _interrupted_after_one_unit(resumed, monkeypatch)
    assert main(_two_unit_fit(resumed)) == 0
    assert f"(1 of 2 units read from {work_folder(resumed)})" in capsys.readouterr().out
    assert json.loads(resumed.read_text())["configurations"] == expected
    assert not work_folder(resumed).exists()
    # A unit left damaged is labelled again, said so, to the same result.
    damaged = tmp_path / "damaged.json"
    _interrupted_after_one_unit(damaged, monkeypatch)
    [left] = work_folder(damaged).iterdir()
    left.write_text(left.read_text()[:-40])
    assert main(_two_unit_fit(damaged)) == 0
    run = capsys.readouterr()
    assert f"{left} cannot be read (" in run.err and ": labelling it again" in run.err
    assert "units read from" not in run.out
    assert json.loads(damaged.read_text())["configurations"] == expected


def test_a_work_folder_that_is_a_file_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "w.json"
    work_folder(out).write_text("x")
    line = _refused(["--out", str(out)], capsys)
    assert f"--out {out}: {work_folder(out)} exists and is not a folder" in line


_UNIT = ("leiden", 7, 2, 4, 6, 0.5)


def _saved_unit(path: Path) -> dict:  # type: ignore[type-arg]
    features = np.arange(2 * len(FEATURES), dtype=np.float64).reshape(2, -1) / 3
    data = [
        Labelled(features, np.array([0.1, -2.5])),
        Labelled(features[::-1], np.array([1e-9, 7])),
    ]
    save_unit(path, _UNIT, data)
    assert [(d.features.tolist(), d.values.tolist()) for d in load_unit(path, _UNIT)] == [
        (d.features.tolist(), d.values.tolist()) for d in data
    ], "floats read back as written"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda u: u.update(unit=["leiden", 8, 2, 4, 6, 0.5]), "is not this unit's"),
        (lambda u: u["positions"].pop(), "does not hold 2 positions"),
        (lambda u: u["positions"][0].pop("values"), "holds a position that is not one"),
        (lambda u: u["positions"][0]["values"].pop(), "holds a position that is not one"),
        (lambda u: u["positions"][1]["features"][0].pop(), "holds a position that is not one"),
        (lambda u: u["positions"][1]["values"].__setitem__(0, "x"), "is not one"),
        (lambda u: u["positions"][1]["values"].__setitem__(0, 1e400), "is not one"),
        (lambda u: u.clear(), "is not this unit's"),
    ],
)
def test_a_unit_file_that_is_not_the_unit_is_refused(
    damage: Any, says: str, tmp_path: Path
) -> None:
    path = tmp_path / "unit.json"
    saved = _saved_unit(path)
    damage(saved)
    path.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match=says):
        load_unit(path, _UNIT)


def test_the_help_gives_defaults_but_none_that_is_none(capsys: pytest.CaptureFixture[str]) -> None:
    # ArgumentDefaultsHelpFormatter wrote "(default: None)" after --only's "default: all".
    with pytest.raises(SystemExit):
        expert_fit.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: None)" not in text
    assert "configurations to fit (default: all;" in text
    assert "positions per configuration (default: 3000)" in text
