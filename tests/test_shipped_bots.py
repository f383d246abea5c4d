"""Every shipped bot, through every entry point: in process (``choose``), the JSON
protocol (``move_json``), HTTP (``POST /move``) and terminal play.

The bots are found at collection time: each folder of ``matador_env/bots/`` with a
``policy.onnx`` is a case, so a bot added later is covered without a change here.
Next to them, the multi-configuration paths (four seats, partnerships) are played
by real exported policies of an untrained network for ``standard_4p`` and
``pagat_teams``, written by ``train/export.py`` into a temporary folder that
``MATADOR_BOTS_DIR`` points the runtime to. Each entry point plays one hand or a
few moves, so that every bot times four entry points stays fast.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from matador_env.bot import (
    BotError,
    PolicyBot,
    load_bot,
    load_level,
    shipped_configurations,
)
from matador_env.configs import CONFIGURATIONS, Configuration, configuration
from matador_env.engine import PRESETS, HandState, Rules
from matador_env.policy import (
    BOTS_DIR,
    BOTS_DIR_VARIABLE,
    PolicyInfo,
    PolicyMismatchError,
    bots_dir,
    default_policy,
    load_policy,
)
from matador_env.protocol import ProtocolError, move_from_json, rules_from_json, view_to_json
from tests.scripted import midgame_states

UNTRAINED = ("standard_4p", "pagat_teams")
"""Configurations played by an untrained exported network (four seats, partnerships)."""


def bot_folders() -> list[Path]:
    """The folders of ``matador_env/bots/`` (a name starting with a dot is a bot being
    installed: ``python -m train.bots`` stages it there and renames it)."""
    return sorted(p for p in BOTS_DIR.iterdir() if p.is_dir() and not p.name.startswith("."))


SHIPPED = [p.name for p in bot_folders() if (p / "policy.onnx").is_file()]
CASES = [pytest.param(("shipped", name), id=name) for name in SHIPPED] + [
    pytest.param(("untrained", name), id=f"untrained-{name}") for name in UNTRAINED
]


def export_untrained(folder: Path, names: tuple[str, ...] = UNTRAINED, seed: int = 0) -> Path:
    """Real exported policies (``train.export.export_network``) of a small untrained
    network for each configuration in ``names``, as ``folder/<name>/``; ``folder``."""
    import torch

    from matador_env.encoding import encoding_for
    from train.export import export_network

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    for name in names:
        rules = configuration(name).rules()
        enc = encoding_for(rules)
        net = torch.nn.Sequential(
            torch.nn.Linear(enc.obs_size, 32), torch.nn.Tanh(), torch.nn.Linear(32, enc.num_actions)
        )
        export_network(net, rules, folder / name, {"note": "untrained, for tests"})
    return folder


@pytest.fixture(scope="session")
def untrained_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_untrained(tmp_path_factory.mktemp("untrained_bots"))


@pytest.fixture(params=CASES)
def config(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, untrained_dir: Path
) -> Iterator[Configuration]:
    """The configuration of one bot, with the runtime's bots folder holding it."""
    kind, name = request.param
    if kind == "untrained":
        monkeypatch.setenv(BOTS_DIR_VARIABLE, str(untrained_dir))
    else:
        monkeypatch.delenv(BOTS_DIR_VARIABLE, raising=False)
    yield configuration(name)


def other_configuration(config: Configuration) -> Configuration:
    """Another configuration with the same seat count where there is one."""
    rules = config.rules()
    others = [c for c in CONFIGURATIONS.values() if c.rules() != rules]
    same_seats = [c for c in others if c.rules().players == rules.players]
    return (same_seats or others)[0]


def views(rules: Rules, count: int, seed: int = 0) -> list[HandState]:
    """States with a seat to act, at random points of random hands."""
    return midgame_states(rules, count, seed, 12)


# -- the folders --------------------------------------------------------------------------


def test_every_bot_folder_is_a_configuration_playing_its_rules() -> None:
    folders = bot_folders()
    assert "standard" in [p.name for p in folders]
    for folder in folders:
        assert folder.name in CONFIGURATIONS, (
            f"{folder} is no configuration of matador_env.configs: {', '.join(CONFIGURATIONS)}"
        )
        assert (folder / "policy.onnx").is_file() and (folder / "policy.json").is_file(), folder
        sidecar = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
        info = PolicyInfo.from_json(sidecar, str(folder / "policy.json"))
        assert info.rules == configuration(folder.name).rules(), folder


def test_the_shipped_list_is_the_folders(
    untrained_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BOTS_DIR_VARIABLE, raising=False)
    assert bots_dir() == BOTS_DIR
    folders = {p.name for p in bot_folders() if (p / "policy.onnx").is_file()}
    assert [c.name for c in shipped_configurations()] == [c for c in CONFIGURATIONS if c in folders]
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(untrained_dir))
    assert [c.name for c in shipped_configurations()] == list(UNTRAINED)


# -- each bot -----------------------------------------------------------------------------


def test_loads_by_level_and_rules_and_by_configuration_name(config: Configuration) -> None:
    rules = config.rules()
    names: list[Rules | str] = [rules, config.name]
    if config.name in PRESETS:  # a preset's name is its own seats' configuration
        names.append(config.name)
    for level in ("trained", "casual"):
        for given in names:
            bot = load_bot(level, rules=given, seed=1)
            assert isinstance(bot, PolicyBot)
            assert (bot.name, bot.level, bot.rules) == (f"{level}:{config.name}", level, rules)
            assert bot.describe()["configuration"] == config.name
        assert load_level(level).bot_for(rules).name == f"{level}:{config.name}"
    assert default_policy(config.name).rules == rules


def test_refuses_other_rules(config: Configuration) -> None:
    other = other_configuration(config)
    folder = bots_dir() / config.name
    with pytest.raises(PolicyMismatchError, match="cannot play these rules"):
        load_policy(folder, rules=other.rules())
    bot = load_bot("trained", rules=config.name)
    state = HandState.deal(other.rules(), 1)
    with pytest.raises(BotError, match=f"plays {config.name} only, not {other.name}"):
        bot.choose(state.view(state.to_move))
    with pytest.raises(ProtocolError) as info:
        bot.move_json(view_to_json(state.view(state.to_move)))
    assert info.value.field == "rules"
    # The same table to another target is other rules: no bot, and no fall-back.
    odd = config.rules().replace(target_score=config.rules().target_score + 1)
    with pytest.raises(BotError, match=f"no trained bot is shipped for .*{config.name}"):
        load_bot("trained", rules=odd)


def test_refuses_another_encoding_version(
    config: Configuration, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / config.name
    shutil.copytree(bots_dir() / config.name, copy)
    sidecar = json.loads((copy / "policy.json").read_text(encoding="utf-8"))
    sidecar["encoding_version"] += 1
    (copy / "policy.json").write_text(json.dumps(sidecar), encoding="utf-8")
    with pytest.raises(PolicyMismatchError, match="observation encoding version"):
        load_policy(copy, rules=config.rules())
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(tmp_path))
    with pytest.raises(BotError, match=f"shipped bot {config.name} cannot be loaded.*encoding"):
        load_bot("trained", rules=config.name)


def test_plays_a_hand_in_process(config: Configuration) -> None:
    rules = config.rules()
    bot = load_bot("trained", rules=rules)
    state = HandState.deal(rules, 3)
    while state.outcome is None:
        view = state.view(state.to_move)
        move = bot.choose(view)
        assert move in view.legal_moves
        state = state.apply(move)


def test_plays_through_the_json_protocol(config: Configuration) -> None:
    bot = load_bot("casual", rules=config.name, seed=4)
    for state in views(config.rules(), 6, seed=4):
        message = json.loads(json.dumps(view_to_json(state.view(state.to_move))))
        assert move_from_json(bot.move_json(message)) in state.legal_moves()


def test_plays_over_http(config: Configuration) -> None:
    pytest.importorskip("starlette")
    from matador_env.serve import DEFAULT_BOTS, create_app, load_bots
    from tests.test_web import Client

    client = Client(create_app(load_bots(DEFAULT_BOTS, seed=0)))
    listed = {b["name"]: b for b in client.get("/bots").json()["bots"]}
    for level in ("trained", "casual"):
        entry = listed[f"{level}:{config.name}"]
        assert entry["configuration"] == config.name and entry["level"] == level
        assert rules_from_json(entry["rules"]) == config.rules()
        assert config.name in listed[level]["configurations"]
    for state, path in zip(
        views(config.rules(), 4, seed=5),
        ["/move", "/move?bot=trained", "/move?bot=casual", f"/move?bot=casual:{config.name}"],
        strict=True,
    ):
        reply = client.post(path, view_to_json(state.view(state.to_move)))
        assert reply.status_code == 200, reply.content
        move = reply.json()
        level = "casual" if "casual" in path else "trained"
        assert move["bot"] == f"{level}:{config.name}"
        assert move_from_json(move) in state.legal_moves()


def test_plays_a_hand_in_the_terminal(config: Configuration) -> None:
    from matador_env.play import main

    out, err = io.StringIO(), io.StringIO()
    args = [*config.flags(), "--level", "trained", "--seed", "6"]
    code = main(args, stdin=io.StringIO("1\n" * 400), stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert "bots: trained" in out.getvalue() and "hand 1 over" in out.getvalue()
    out = io.StringIO()
    code = main(
        ["--config", config.name, "--level", "casual", "--seed", "6"],
        stdin=io.StringIO("1\nq\n"),
        stdout=out,
        stderr=err,
    )
    assert code == 0 and "bots: casual" in out.getvalue(), err.getvalue()
    assert out.getvalue().rstrip().endswith("You left the game. Bye.")


# -- rules with no shipped bot ------------------------------------------------------------


def test_rules_without_a_bot_are_refused_naming_the_shipped_ones(
    untrained_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("starlette")
    from matador_env.serve import DEFAULT_BOTS, create_app, load_bots
    from tests.test_web import Client

    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(untrained_dir))
    shipped = "shipped for: standard_4p, pagat_teams"
    with pytest.raises(BotError, match=f"no trained bot is shipped for standard_3p .*{shipped}"):
        load_bot("trained", rules="standard_3p")
    with pytest.raises(BotError, match="unknown rules 'pagat_4p'.*leiden.*standard_3p"):
        load_bot("trained", rules="pagat_4p")
    client = Client(create_app(load_bots(DEFAULT_BOTS, seed=0)))
    state = HandState.deal(Rules.preset("standard"), 2)
    view = view_to_json(state.view(state.to_move))
    for path in ("/move", "/move?bot=casual"):
        reply = client.post(path, view)
        assert reply.status_code == 422, reply.content
        error = reply.json()
        assert (error["error"], error["field"]) == ("no_bot", "rules")
        assert "no trained bot is shipped for standard" in error["message"]
        assert shipped in error["message"]
    reply = client.post("/move?bot=trained:pagat_teams", view)
    assert reply.status_code == 422 and reply.json()["field"] == "rules"
    reply = client.post("/move?bot=greedy", view)
    assert reply.status_code == 200 and reply.json()["bot"] == "greedy"
