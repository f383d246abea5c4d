"""The distribution as its users install it: a wheel built from the package's
sources, unpacked into a folder of its own and run from processes in which what
the install would lack cannot be imported.

The rest of the suite runs under the editable install, which reads the checkout: it
would not notice a file the wheel leaves out (a bot, the browser page, a schema) nor
an import, at play time, of something ``pip install '.[bot]'`` does not bring (torch,
numba, the ``onnx`` package, or the ``agents`` package that lives only in the
checkout). The README promises that everything a frontend needs is in the installed
``matador_env`` and that none of it needs torch or the training code; these tests
hold it to that, for every shipped bot, in process, through the JSON protocol, in
terminal play, the ``levels`` command and the HTTP server, which serves the browser
page from the wheel. The README promises too that the environments need only the
core dependencies (numpy, Gymnasium, PettingZoo; ``pip install .``), and the engine
none but Python's own library.

The wheel is built with the suite's own setuptools (``--no-build-isolation``, which
torch's install brings) and ``--no-index``: nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from matador_env.bot import shipped_configurations
from matador_env.engine import HandState
from matador_env.protocol import move_from_json, view_to_json
from tests.test_readme import pyproject

if TYPE_CHECKING:  # imported by the HTTP test alone: those modules skip without Starlette
    from tests.test_serve import Server
    from tests.test_web import Reply

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "matador_env"

BOT_EXTRA_LACKS = (
    # The checkout's other packages: not in the wheel.
    "agents",
    "train",
    "evaluate",
    "benchmarks",
    "tests",
    # The extras a frontend does not install (train, eval, batch, compat, test).
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "onnx",
    "numba",
    "llvmlite",
    "tensorboard",
    "matplotlib",
    "tqdm",
    "ray",
    "tianshou",
    "pytest",
    "hypothesis",
)
"""Top-level modules that ``pip install '.[bot]'`` does not bring."""

CORE_LACKS = (*BOT_EXTRA_LACKS, "onnxruntime", "starlette", "uvicorn")
"""... nor ``pip install .``: the environments need only the core dependencies."""

STDLIB_LACKS = (*CORE_LACKS, "numpy", "gymnasium", "pettingzoo")
"""... and the engine none of them (``matador_env.engine`` is stdlib only)."""

REFUSED = "MATADOR_TEST_REFUSED_IMPORTS"

REFUSE_IMPORTS = f'''"""Refuses the imports named in ${REFUSED} (comma-separated top-level
names), as an install without them would, and says so on the error stream."""
import importlib.abc
import os
import sys

NOT_INSTALLED = frozenset(os.environ.get("{REFUSED}", "").split(","))


class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in NOT_INSTALLED:
            print(f"refused import: {{name}}", file=sys.stderr, flush=True)
            raise ModuleNotFoundError(f"{{name}} is not installed here", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''

PLAY_EVERY_BOT = r"""import refuse_imports  # first: nothing below may need what it refuses
import contextlib
import io
import json

import matador_env
from matador_env.bot import load_bot, main, shipped_configurations
from matador_env.engine import HandState
from matador_env.play import main as play
from matador_env.protocol import move_from_json, view_to_json

report = {"package": matador_env.__file__, "hands": {}, "json_moves": {}}
for config in shipped_configurations():
    rules = config.rules()
    for level in ("trained", "casual"):
        bot = load_bot(level, rules=config.name, seed=0)
        state = HandState.deal(rules, seed=1)
        moves = 0
        while state.outcome is None:
            state = state.apply(bot.choose(state.view(state.to_move)))  # refuses illegal
            moves += 1
        report["hands"][f"{config.name}/{level}"] = moves
    state = HandState.deal(rules, seed=2)
    view = state.view(state.to_move)
    bot = load_bot("trained", rules=config.name, seed=0)
    answer = bot.move_json(json.dumps(view_to_json(view)))
    report["json_moves"][config.name] = move_from_json(answer) in view.legal_moves
levels = io.StringIO()
with contextlib.redirect_stdout(levels):
    report["levels_status"] = main(["levels"])
report["levels"] = levels.getvalue()
report["terminal"] = {}
for config in shipped_configurations():
    out, err = io.StringIO(), io.StringIO()
    args = ["--config", config.name, "--level", "trained", "--seed", "6"]
    code = play(args, stdin=io.StringIO("1\n" * 400), stdout=out, stderr=err)
    report["terminal"][config.name] = code == 0 and "hand 1 over" in out.getvalue()
print(json.dumps(report))
"""

RUN_THE_ENVIRONMENTS = r"""import refuse_imports  # first: nothing below may need what it refuses
import json

import gymnasium
import numpy as np
import pettingzoo

import matador_env
from matador_env import env

rng = np.random.default_rng(0)
report = {"package": matador_env.__file__, "aec": {}, "single": {}}
for mode in ("ansi", "rgb_array"):
    aec = env(preset="leiden", render_mode=mode)
    aec.reset(seed=1)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        legal = obs["action_mask"].nonzero()[0]
        aec.step(None if terminated or truncated else int(rng.choice(legal)))
    frame = aec.render()
    report["aec"][mode] = list(frame.shape) if mode == "rgb_array" else len(frame) > 0
for opponents in ("random", "greedy"):
    single = gymnasium.make(
        "Matador-v0", preset="pagat", players=4, teams=True, opponents=opponents
    )
    single.reset(seed=2)
    done = steps = 0
    while not done:
        legal = single.unwrapped.action_masks().nonzero()[0]
        _, _, terminated, truncated, info = single.step(int(rng.choice(legal)))
        done, steps = terminated or truncated, steps + 1
    report["single"][opponents] = steps
made = pettingzoo.make("aec", "matador_v0", preset="polish", players=3)
report["registered"] = made.unwrapped.rules.players
print(json.dumps(report))
"""

PLAY_A_HAND = r"""import refuse_imports  # first: nothing below may need what it refuses
import json
import random

from matador_env.engine import HandState, Rules, hand_record, parse_hand_record

rng = random.Random(0)
state = HandState.deal(Rules.preset("leiden"), seed=4)
while state.outcome is None:
    state = state.apply(rng.choice(state.legal_moves()))
replayed = parse_hand_record(hand_record(state)).replay()
print(json.dumps({"over": replayed.outcome == state.outcome}))
"""

SERVE = (
    "import refuse_imports, runpy; "
    "runpy.run_module('matador_env.serve', run_name='__main__', alter_sys=True)"
)


def _not_shipped(_folder: str, names: list[str]) -> list[str]:
    """What the copy of the sources leaves out: byte code and dot-named folders
    (``python -m train.bots`` stages a bot in one)."""
    return [n for n in names if n == "__pycache__" or n.endswith(".pyc") or n.startswith(".")]


def _dist_info() -> str:
    """The wheel's metadata folder, ``matador_env-<version>.dist-info/``."""
    return f"{PACKAGE}-{pyproject()['project']['version']}.dist-info/"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """The wheel built from a copy of the package's sources (the checkout stays
    untouched: setuptools writes ``build/`` and egg-info next to the sources), and the
    package files that copy holds."""
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist = tmp / "src", tmp / "dist"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / PACKAGE, src / PACKAGE, ignore=_not_shipped)
    sources = {p.relative_to(src).as_posix() for p in (src / PACKAGE).rglob("*") if p.is_file()}
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--no-cache-dir",
            "--quiet",
            "--wheel-dir",
            str(dist),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("*.whl")
    return wheel, sources


@pytest.fixture(scope="module")
def installed(built: tuple[Path, set[str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the unpacked wheel (a pure-Python wheel installs by unpacking)
    and the module that refuses imports, for ``PYTHONPATH``."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(built[0]) as archive:
        archive.extractall(site)
    (site / "refuse_imports.py").write_text(REFUSE_IMPORTS)
    return site


def _on_the_wheel(site: Path, refused: tuple[str, ...]) -> dict[str, str]:
    """What a process run on the unpacked wheel adds to the environment: the wheel first
    on the path, ahead of the editable install's finder, which points into the
    checkout, and the imports ``refuse_imports`` refuses."""
    return {"PYTHONPATH": str(site), REFUSED: ",".join(refused)}


def _probe(site: Path, tmp: Path, script: str, refused: tuple[str, ...]) -> dict[str, Any]:
    """Run ``script`` on the unpacked wheel with ``refused`` imports refused; its report
    (the JSON it prints). It runs away from the checkout, so that nothing of it is
    found by its folder, and must end well without trying a refused import."""
    probe = tmp / "probe.py"
    probe.write_text(script)
    run = subprocess.run(
        [sys.executable, str(probe)],
        cwd=tmp,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **_on_the_wheel(site, refused)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "refused import" not in run.stderr, run.stderr
    report: dict[str, Any] = json.loads(run.stdout)
    return report


def test_the_wheel_holds_the_package_and_nothing_else(built: tuple[Path, set[str]]) -> None:
    wheel, sources = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {n for n in names if not n.startswith(_dist_info())} == sources
    shipped = {c.name for c in shipped_configurations()}
    assert len(shipped) == 11
    for name in shipped:
        assert {f"{PACKAGE}/bots/{name}/policy.onnx", f"{PACKAGE}/bots/{name}/policy.json"} <= names
    for data in ("py.typed", "bots/README.md", "conformance/perft.json", "web/index.html"):
        assert f"{PACKAGE}/{data}" in names


def _requirements(metadata: str) -> dict[str, set[str]]:
    """The distributions the wheel's metadata requires, by extra ("" for the core), as
    importable names (``stable-baselines3`` -> ``stable_baselines3``)."""
    out: dict[str, set[str]] = {}
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        spec, _, marker = line.removeprefix("Requires-Dist: ").partition(";")
        name = re.split(r"[\s\[<>=!~]", spec.strip(), maxsplit=1)[0]
        extra = re.search(r'extra == "([^"]+)"', marker)
        out.setdefault(extra.group(1) if extra else "", set()).add(name.replace("-", "_"))
    return out


def test_the_probes_refuse_nothing_the_install_they_stand_for_brings(
    built: tuple[Path, set[str]],
) -> None:
    """Each probe below refuses what an install lacks; the wheel's own metadata says
    what ``pip install .``, ``'.[bot]'`` and ``'.[serve]'`` bring."""
    with zipfile.ZipFile(built[0]) as archive:
        metadata = archive.read(f"{_dist_info()}METADATA").decode()
    needs = _requirements(metadata)
    assert needs[""] == {"numpy", "gymnasium", "pettingzoo"}
    assert needs["bot"] == {"onnxruntime"}
    assert needs["serve"] == {"onnxruntime", "starlette", "uvicorn"}
    assert not set(CORE_LACKS) & needs[""]
    assert not set(BOT_EXTRA_LACKS) & (needs[""] | needs["bot"] | needs["serve"])
    # What they refuse is what the other extras bring (or the checkout's packages).
    others = set().union(*(v for k, v in needs.items() if k not in ("", "bot", "serve")))
    assert {"torch", "numba", "onnx", "stable_baselines3", "ray", "tianshou"} <= others


def test_the_installed_wheel_plays_every_shipped_bot_without_the_training_stack(
    installed: Path, tmp_path: Path
) -> None:
    report = _probe(installed, tmp_path, PLAY_EVERY_BOT, BOT_EXTRA_LACKS)
    assert Path(report["package"]).is_relative_to(installed)
    shipped = [c.name for c in shipped_configurations()]
    assert list(report["json_moves"]) == shipped
    assert all(report["json_moves"].values()), report["json_moves"]
    assert sorted(report["hands"]) == sorted(
        f"{n}/{lv}" for n in shipped for lv in ("trained", "casual")
    )
    assert all(moves > 0 for moves in report["hands"].values())
    assert report["terminal"] == dict.fromkeys(shipped, True)
    assert report["levels_status"] == 0
    assert (
        f"are shipped for {len(shipped)} of the {len(shipped)} configurations" in report["levels"]
    )


def test_the_installed_wheel_runs_the_environments_on_the_core_dependencies(
    installed: Path, tmp_path: Path
) -> None:
    report = _probe(installed, tmp_path, RUN_THE_ENVIRONMENTS, CORE_LACKS)
    assert Path(report["package"]).is_relative_to(installed)
    assert report["aec"] == {"ansi": True, "rgb_array": [540, 960, 3]}
    assert all(steps > 0 for steps in report["single"].values()), report
    assert report["registered"] == 3


def test_the_installed_wheels_engine_needs_only_the_standard_library(
    installed: Path, tmp_path: Path
) -> None:
    assert _probe(installed, tmp_path, PLAY_A_HAND, STDLIB_LACKS) == {"over": True}


def test_the_installed_wheel_serves_every_shipped_bot_and_the_browser_games_over_http(
    installed: Path, tmp_path: Path
) -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    from tests.test_serve import request, start_server, stop_server

    server = start_server(
        tmp_path,
        "--seed",
        "0",
        env=_on_the_wheel(installed, BOT_EXTRA_LACKS),
        command=(sys.executable, "-c", SERVE),
        cwd=tmp_path,
    )
    try:
        _, _, listed = request(server, "GET", "/bots")
        shipped = [c.name for c in shipped_configurations()]
        assert {b["name"]: b for b in listed["bots"]}["trained"]["configurations"] == shipped
        for config in shipped_configurations():
            state = HandState.deal(config.rules(), seed=3)
            view = state.view(state.to_move)
            status, _, answer = request(
                server, "POST", "/move", view_to_json(view), Content_Type="application/json"
            )
            assert status == 200, answer
            assert answer["bot"] == f"trained:{config.name}"
            assert move_from_json(answer) in view.legal_moves
        # The browser page, its files read from the wheel.
        client = _HttpClient(server)
        for path, name in (
            ("/", "index.html"),
            ("/web/app.js", "app.js"),
            ("/web/style.css", "style.css"),
        ):
            reply = client.get(path)
            assert (reply.status_code, reply.content) == (
                200,
                (ROOT / PACKAGE / "web" / name).read_bytes(),
            )
        # The page's games: a partnership hand against the trained bots, and a match
        # of three seats against the casual ones, played to their ends.
        _play_games_over_http(client)
    finally:
        code = stop_server(server)
    logs = server.logs()
    assert code == 0, logs
    assert "refused import" not in logs and "Traceback" not in logs, logs


class _HttpClient:
    """What ``tests/test_web.py``'s in-process client does (``get``, ``post``,
    ``delete``), over a real connection to ``server``, so that its game loop plays
    the wheel's server."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        from tests.test_web import Reply

        conn = self.server.connect()
        try:
            raw = None if body is None else json.dumps(body).encode()
            headers = {} if raw is None else {"Content-Type": "application/json"}
            conn.request(method, path, body=raw, headers=headers)
            reply = conn.getresponse()
            return Reply(reply.status, dict(reply.getheaders()), reply.read())
        finally:
            conn.close()

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: Any = None) -> Reply:
        return self.request("POST", path, body)

    def delete(self, path: str) -> Reply:
        return self.request("DELETE", path)


def _play_to_the_end(client: _HttpClient, settings: dict[str, Any]) -> dict[str, Any]:
    """Deal a game of ``settings`` and play it out (random legal moves for the person),
    each answer checked to show no hidden tile; the game as it ends."""
    import random

    from tests.test_web import assert_nothing_hidden, play_out

    dealt = client.post("/games", settings)
    assert dealt.status_code == 201, dealt.content
    game: dict[str, Any] = dealt.json()
    for game, text in play_out(client, game, random.Random(settings["seed"])):  # noqa: B020
        assert_nothing_hidden(text, game)
    assert game["status"] == "finished", game["status"]
    return game


def _play_games_over_http(client: _HttpClient) -> None:
    from matador_env.engine import MatchState, Rules

    options = client.get("/games/options")
    assert options.status_code == 200, options.content
    pagat = {p["name"]: p for p in options.json()["presets"]}["pagat"]
    assert "trained" in pagat["levels"]["4t"], pagat
    # A partnership hand against the trained bots: its moves replay in the engine.
    game = _play_to_the_end(
        client, {"preset": "pagat", "players": 4, "teams": True, "level": "trained", "seed": 5}
    )
    state = MatchState.new(Rules.preset("pagat", players=4, teams=True), game["settings"]["seed"])
    for action in game["view"]["history"]:
        state = state.apply(action["move"])
    assert state.hand.outcome is not None
    assert game["outcome"]["counts"] == list(state.hand.outcome.counts)
    # A match of three seats against the casual bots, hand after hand.
    settings = {"preset": "standard", "players": 3, "level": "casual", "match": True}
    game = _play_to_the_end(client, {**settings, "seed": 6})
    assert game["result"] is not None and game["hand_no"] > 1, game["hand_no"]
    # A game dealt and ended at once.
    gid = client.post("/games", {"preset": "leiden", "level": "trained"}).json()["id"]
    assert client.delete(f"/games/{gid}").json() == {"deleted": gid}
    assert client.get(f"/games/{gid}").status_code == 404
