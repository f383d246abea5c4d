"""What the speed benchmarks (``benchmarks.engine``, ``env``, ``bot``, ``vector``,
``runtime`` and ``training``) measure, compare and print, with stand-ins for the timed
work and a stand-in clock: the figures of the work done (not of the budget), at least
one unit of work, the ratios the right way round, the bars at their edges and the
arguments passed on. Mutation testing found each of these unguarded; nothing here
asserts a time."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import benchmarks.bot as bot
import benchmarks.engine as engine
import benchmarks.env as env_bench
import benchmarks.runtime as runtime
import benchmarks.training as training
import benchmarks.vector as vector
from matador_env.engine import PRESETS, HandState, Rules
from matador_env.engine.state import SEED_LIMIT
from tests.test_benchmark_refusals import POLICY, refused


class Clock:
    """A stand-in ``perf_counter``: each reading moves it on by ``step`` seconds, and
    stand-ins for timed work move it on by their own cost."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now


def _clock(
    monkeypatch: pytest.MonkeyPatch, module: Any, step: float = 0.0, sleep: Any = None
) -> Clock:
    """The module's ``time`` replaced by a stand-in clock (``time.time`` included);
    ``sleep`` stands in for its ``time.sleep`` (default: returns at once)."""
    clock = Clock(step)
    fake = SimpleNamespace(
        perf_counter=clock, time=clock, monotonic=clock, sleep=sleep or (lambda s: None)
    )
    monkeypatch.setattr(module, "time", fake)
    return clock


def _main(module: Any, monkeypatch: pytest.MonkeyPatch, *argv: str) -> None:
    """``module.main()`` run as its command with ``argv``."""
    monkeypatch.setattr(sys, "argv", ["prog.py", *argv])
    module.main()


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# -- benchmarks.engine ----------------------------------------------------------------


def test_engine_figures_are_those_of_the_hands_played_in_the_time_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each reading of the clock moves it on 1 s: the start, three checks, the end.
    _clock(monkeypatch, engine, step=1.0)
    row = engine.run("leiden", 2.5, seed=7)
    # The same hands replayed from the same seed: the random legal moves it says.
    rules, rng, actions = Rules.preset("leiden"), random.Random(7), 0
    for _ in range(3):
        s = HandState.deal(rules, rng.randrange(1 << 30))
        while not s.is_over:
            moves = s.legal_moves()
            s = s.apply(moves[rng.randrange(len(moves))])
            actions += 1
    assert row == {
        "preset": "leiden",
        "seconds": 4.0,  # the time taken, not the budget of 2.5
        "hands": 3,
        "hands_per_s": 0.8,  # 3 / 4, to one decimal
        "actions_per_s": round(actions / 4),
        "mean_actions_per_hand": round(actions / 3, 2),
    }


def test_engine_measures_every_preset_by_default_and_those_asked_in_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(engine, "run", lambda preset, seconds: {"preset": preset, "s": seconds})
    _main(engine, monkeypatch)
    assert _json_lines(capsys.readouterr().out) == [{"preset": p, "s": 3.0} for p in PRESETS]
    _main(engine, monkeypatch, "--seconds", "0.5", "--preset", "leiden", "standard")
    rows = _json_lines(capsys.readouterr().out)
    assert rows == [{"preset": "leiden", "s": 0.5}, {"preset": "standard", "s": 0.5}]


# -- benchmarks.env --------------------------------------------------------------------


class ScriptedAEC:
    """A stand-in AEC environment: every game the same four turns, each with one legal
    action (so the sampler's draw is known): a mask in the observation (the info's,
    different, is not the one read), a mask in the info only, then a terminated and a
    truncated seat, which are stepped with None and not counted."""

    TURNS: tuple[tuple[Any, bool, bool, dict[str, Any]], ...] = (
        ({"action_mask": np.array([0, 1, 0])}, False, False, {"action_mask": np.array([1, 0, 0])}),
        ({"observation": 0}, False, False, {"action_mask": np.array([0, 0, 1])}),
        ({"action_mask": np.array([1, 0, 0])}, True, False, {}),
        ({"action_mask": np.array([1, 0, 0])}, False, True, {}),
    )

    def __init__(self) -> None:
        self.resets: list[int | None] = []
        self.actions: list[int | None] = []
        self.renders = 0
        self.turn = 0

    def reset(self, seed: int | None = None) -> None:
        self.resets.append(seed)

    def agent_iter(self) -> Iterator[str]:
        for turn in range(len(self.TURNS)):
            self.turn = turn
            yield f"player_{turn % 2}"

    def last(self) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, terminated, truncated, info = self.TURNS[self.turn]
        return obs, 0.0, terminated, truncated, info

    def step(self, action: int | None) -> None:
        self.actions.append(action)

    def render(self) -> None:
        self.renders += 1


def test_env_runner_counts_the_agent_steps_of_its_games_across_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _clock(monkeypatch, env_bench, step=1.0)
    runner = env_bench.Runner(ScriptedAEC, seed=3, render=True)
    fake = runner.env
    # Each slice: the start, three games (a check after each), the end: 4 s.
    runner.run(2.5)
    runner.run(2.5)
    assert fake.resets == [3] + [None] * 6
    assert fake.actions == [1, 2, None, None] * 6
    assert fake.renders == 2 * 6  # a picture after every agent-step, none after None
    assert runner.result() == {
        "seconds": 8.0,
        "games": 6,
        "agent_steps": 12,
        "agent_steps_per_s": 2,
        "steps_per_game": 2.0,
    }


def test_env_runner_plays_one_game_however_small_the_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _clock(monkeypatch, env_bench)  # a clock that stands still: no time is left at all
    runner = env_bench.Runner(ScriptedAEC)
    runner.run(0.0)
    assert runner.games == 1 and runner.steps == 2 and runner.env.renders == 0


class StubRunner:
    """``Runner`` with the steps and seconds its factory gives, recording its slices."""

    def __init__(self, make: Any, seed: int = 0, render: bool = False) -> None:
        self.steps, self.elapsed = make()
        self.render = render
        self.slices: list[float] = []

    def run(self, seconds: float) -> None:
        self.slices.append(seconds)

    def result(self) -> dict[str, Any]:
        return {"slices": self.slices, "render": self.render}


def _stub_env_factories(monkeypatch: pytest.MonkeyPatch, ours: int) -> list[tuple[str, bool]]:
    asked: list[tuple[str, bool]] = []

    def factories(preset: str, render: bool = False) -> dict[str, Any]:
        asked.append((preset, render))
        return {
            f"matador_v0 env() {preset}": lambda: (ours, 1.0),
            f"matador_v0 raw_env() {preset}": lambda: (50, 1.0),
            "connect_four_v3 env()": lambda: (20, 2.0),
            "texas_holdem_v4 env()": "skipped: rlcard is not installed",
        }

    monkeypatch.setattr(env_bench, "factories", factories)
    monkeypatch.setattr(env_bench, "Runner", StubRunner)
    return asked


@pytest.mark.parametrize("ours, verdict", [(13, "meets"), (12, "below")])
def test_env_compares_matadors_wrapped_rate_with_connect_fours_against_1_3(
    ours: int,
    verdict: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The target is met at 1.3x exactly, and only by the wrapped env() of the preset."""
    asked = _stub_env_factories(monkeypatch, ours)
    _main(env_bench, monkeypatch, "--seconds", "3", "--slices", "4", "--preset", "leiden")
    rows = _json_lines(capsys.readouterr().out)
    assert asked == [("leiden", False)]
    slices = {"slices": [0.75] * 4, "render": False}  # the seconds shared by the slices
    assert rows == [
        {"env": "matador_v0 env() leiden", **slices},
        {"env": "matador_v0 raw_env() leiden", **slices},
        {"env": "connect_four_v3 env()", **slices},
        {"env": "texas_holdem_v4 env()", "result": "skipped: rlcard is not installed"},
        {"matador_env_over_connect_four": ours / 10, "target": 1.3, "verdict": verdict},
    ]


def test_env_with_render_draws_in_every_runner_and_sets_no_target(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = _stub_env_factories(monkeypatch, 12)
    _main(env_bench, monkeypatch, "--seconds", "1", "--slices", "1", "--render")
    rows = _json_lines(capsys.readouterr().out)
    assert asked == [("standard", True)]
    assert all(row["render"] for row in rows[:3])
    assert rows[-1] == {"matador_env_over_connect_four_drawing": 1.2}


def test_env_factories_build_the_preset_wrapped_and_raw_drawing_when_asked() -> None:
    from matador_env.matador_v0 import raw_env

    made = env_bench.factories("leiden", render=True)
    wrapped, raw = (made[f"matador_v0 {kind}() leiden"] for kind in ("env", "raw_env"))
    assert not isinstance(wrapped, str) and not isinstance(raw, str)
    wrapped_env, raw_env_ = wrapped(), raw()
    assert type(raw_env_) is raw_env and type(wrapped_env) is not raw_env
    for env in (wrapped_env, raw_env_):
        assert env.unwrapped.rules == Rules.preset("leiden")
        assert env.render_mode == "rgb_array"
    # Shimmy's game draws no pictures: skipped, whether installed or not.
    assert made["python_block_dominoes (shimmy)"] == "skipped: it draws no rgb_array pictures"


# -- benchmarks.bot: views, figures, in process ---------------------------------------


def test_bot_sample_views_are_count_views_of_the_seat_to_act_shuffled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    views = bot.sample_views(40, seed=2)
    assert len(views) == 40 and len(bot.sample_views(1)) == 1
    assert all(v.seat == v.to_move and v.legal_moves for v in views)

    class Unshuffled(random.Random):
        def shuffle(self, *args: Any, **kwargs: Any) -> None:
            pass

    # The same play without the shuffle: the order of play, which the views are not in.
    monkeypatch.setattr(bot, "random", SimpleNamespace(Random=Unshuffled))
    in_play_order = bot.sample_views(40, seed=2)
    assert views != in_play_order and in_play_order[0].history == ()


def test_bot_ms_gives_the_median_and_the_99th_percentile_in_milliseconds() -> None:
    # 0.001 s to 0.199 s and one 5 s outlier: the median ignores it, the p99 too.
    samples = [k / 1000 for k in range(1, 200)] + [5.0]
    random.Random(0).shuffle(samples)
    assert bot.ms(samples) == {"median_ms": 100.5, "p99_ms": 198.0}
    assert bot.ms([0.002]) == {"median_ms": 2.0, "p99_ms": 2.0}
    assert bot.prefixed("json", {"median_ms": 1.0}) == {"json_median_ms": 1.0}


class StubBot:
    """A bot whose ``choose`` takes 0.25 s and ``move_json`` 1 s of a stand-in clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.chosen: list[Any] = []
        self.parsed: list[Any] = []

    def choose(self, view: Any) -> None:
        self.chosen.append(view)
        self.clock.now += 0.25

    def move_json(self, payload: Any) -> None:
        self.parsed.append(payload)
        self.clock.now += 1.0


def test_bot_in_process_times_choose_and_move_json_apart_over_the_views(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _clock(monkeypatch, bot)
    stub = StubBot(clock)
    levels: list[str] = []

    def load_bot(level: str, seed: int = 0) -> StubBot:
        levels.append(level)
        return stub

    monkeypatch.setattr(bot, "load_bot", load_bot)
    views, payloads = ["v0", "v1"], ["p0", "p1"]
    # Warm-up: 2 views (0.5 s); then views of 1.25 s each until 3 s have passed.
    row = bot.in_process("greedy", views, payloads, 3.0)  # type: ignore[arg-type]
    assert levels == ["greedy"]
    assert stub.chosen == ["v0", "v1", "v0", "v1", "v0"] and stub.parsed == ["p0", "p1", "p0"]
    assert row == {
        "bench": "in_process",
        "level": "greedy",
        "views": 3,
        "seconds": 3.75,
        "choose_median_ms": 250.0,
        "choose_p99_ms": 250.0,
        "json_median_ms": 1000.0,
        "json_p99_ms": 1000.0,
        "choose_moves_per_s": 4,
    }


# -- benchmarks.bot: over HTTP --------------------------------------------------------


class StubConnection:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class StubServer:
    def __init__(self) -> None:
        self.connections: list[StubConnection] = []

    def connect(self) -> StubConnection:
        self.connections.append(StubConnection())
        return self.connections[-1]


def test_bot_http_single_posts_the_bodies_in_turn_to_the_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _clock(monkeypatch, bot)
    posted: list[tuple[str, bytes]] = []

    def post(conn: StubConnection, path: str, body: bytes) -> dict[str, Any]:
        posted.append((path, body))
        clock.now += 0.5
        return {}

    monkeypatch.setattr(bot, "post", post)
    server = StubServer()
    bodies = [b"a", b"b", b"c"]
    # Three untimed posts (1.5 s), then 0.5 s each while under 1.25 s: three moves.
    row = bot.http_single(server, "trained", bodies, 1.25)  # type: ignore[arg-type]
    assert posted == [("/move?bot=trained", b) for b in bodies * 2]
    assert row == {
        "bench": "http_single",
        "level": "trained",
        "moves": 3,
        "seconds": 1.5,
        "median_ms": 500.0,
        "p99_ms": 500.0,
        "moves_per_s": 2.0,  # over the 1.5 s taken, not the 1.25 s budget
    }
    assert [c.closed for c in server.connections] == [True]


def test_bot_http_concurrent_counts_every_clients_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    lock = threading.Lock()
    posts: list[str] = []

    def post(conn: StubConnection, path: str, body: bytes) -> dict[str, Any]:
        assert path == "/move?bot=greedy"
        with lock:
            posts.append(threading.current_thread().name)
        threading.Event().wait(0.001)  # a stand-in answer, that leaves the others a turn
        return {}

    monkeypatch.setattr(bot, "post", post)
    server = StubServer()
    row = bot.http_concurrent(server, "greedy", [b"x"], 0.05, 3)  # type: ignore[arg-type]
    # Every post but each client's first (made before the clock starts) is a move.
    assert row["moves"] == len(posts) - 3 and row["moves"] >= 3
    assert row["clients"] == 3 and row["errors"] == 0 and "first_error" not in row
    assert len(set(posts)) == 3 and all(c.closed for c in server.connections)


def test_bot_http_concurrent_times_a_move_per_client_when_the_time_is_up_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    posts: list[str] = []

    def post(conn: StubConnection, path: str, body: bytes) -> dict[str, Any]:
        posts.append(threading.current_thread().name)
        return {}

    def stopped() -> threading.Event:
        done = threading.Event()
        done.set()
        return done

    # The stop is set before any client starts: the figures still need a move each.
    fake = SimpleNamespace(
        Barrier=threading.Barrier,
        BrokenBarrierError=threading.BrokenBarrierError,
        Event=stopped,
        Thread=threading.Thread,
    )
    monkeypatch.setattr(bot, "threading", fake)
    monkeypatch.setattr(bot, "post", post)
    row = bot.http_concurrent(StubServer(), "greedy", [b"x"], 0.01, 2)  # type: ignore[arg-type]
    assert row["moves"] == 2 and len(posts) == 4 and row["errors"] == 0


def test_bot_http_concurrent_reports_a_client_that_fails_before_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client that fails before the barrier breaks it, so the load test does not wait
    for it for ever, and says what failed."""

    def post(conn: StubConnection, path: str, body: bytes) -> dict[str, Any]:
        raise RuntimeError("HTTP 500: b'no'")

    monkeypatch.setattr(bot, "post", post)
    done: list[dict[str, Any]] = []
    measuring = threading.Thread(
        target=lambda: done.append(bot.http_concurrent(StubServer(), "greedy", [b"x"], 0.01, 1)),  # type: ignore[arg-type]
        daemon=True,
    )
    measuring.start()
    measuring.join(30)  # a bound for a hang only: it ends at once
    assert done, "the load test waited for a client that had failed"
    (row,) = done
    assert row["moves"] == 0 and row["errors"] == 1 and "median_ms" not in row
    assert row["first_error"] == "RuntimeError: HTTP 500: b'no'"


def test_bot_post_refuses_an_answer_that_is_not_200() -> None:
    class Answer:
        status = 400

        def read(self) -> bytes:
            return b"bad request, not JSON"

    conn = SimpleNamespace(request=lambda *a, **k: None, getresponse=Answer)
    with pytest.raises(RuntimeError, match=r"^HTTP 400: b'bad request, not JSON'$"):
        bot.post(conn, "/move", b"{}")  # type: ignore[arg-type]


def test_bot_main_serves_the_http_levels_and_the_others_and_always_stops_the_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    servers: list[Any] = []

    class Server:
        def __init__(self, bots: list[str]) -> None:
            self.bots, self.closed = bots, False
            servers.append(self)

        def close(self) -> None:
            self.closed = True

    def http_single(server: Any, level: str, *args: Any) -> dict[str, Any]:
        raise RuntimeError("the server broke")

    monkeypatch.setattr(bot, "ServerProcess", Server)
    monkeypatch.setattr(bot, "in_process", lambda level, *a: {"bench": "in_process", "l": level})
    monkeypatch.setattr(bot, "http_single", http_single)
    with pytest.raises(RuntimeError, match="the server broke"):
        _main(bot, monkeypatch, "--views", "3", "--levels", "random", "greedy")
    (server,) = servers
    # The default HTTP levels first, then the in-process ones not among them.
    assert server.bots == ["trained", "greedy", "random"] and server.closed
    rows = _json_lines(capsys.readouterr().out)
    assert [r["bench"] for r in rows] == ["machine", "in_process", "in_process"]
    assert rows[0]["loadavg_1m"] is None or rows[0]["loadavg_1m"] >= 0


class StubPopen:
    """A stand-in server process: prints ``line`` and has exited with ``code`` (None:
    runs until signalled; ``hang``: and does not end on the signal)."""

    made: list[StubPopen] = []

    def __init__(
        self, command: list[str], stdout: Any, line: bytes, code: int | None, hang: bool
    ) -> None:
        self.command, self.code, self.hang = command, code, hang
        self.signals: list[int] = []
        self.killed = False
        stdout.write(line)
        stdout.flush()
        StubPopen.made.append(self)

    def poll(self) -> int | None:
        return self.code

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)

    def wait(self, timeout: float | None = None) -> int:
        if self.hang and not self.killed:
            raise subprocess.TimeoutExpired("serve", timeout or 0)
        return 0 if not self.killed else -9

    def kill(self) -> None:
        self.killed = True


def _stub_popen(
    monkeypatch: pytest.MonkeyPatch, line: bytes, code: int | None = None, hang: bool = False
) -> list[StubPopen]:
    StubPopen.made = []

    def popen(command: list[str], cwd: Any, stdout: Any, stderr: Any, env: Any) -> StubPopen:
        return StubPopen(command, stdout, line, code, hang)

    monkeypatch.setattr(
        bot, "subprocess", SimpleNamespace(Popen=popen, TimeoutExpired=subprocess.TimeoutExpired)
    )
    return StubPopen.made


def test_bot_server_process_reads_its_port_and_stops_it_with_sigint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _stub_popen(monkeypatch, b"serving on http://127.0.0.1:43210\n")
    server = bot.ServerProcess(["trained", "greedy"], options=("--seed", "5"))
    (proc,) = made
    assert server.port == 43210
    assert proc.command[-6:] == ["--port", "0", "--bots", "trained,greedy", "--seed", "5"]
    assert server.stop() == 0 and proc.signals == [signal.SIGINT]
    server.close()


def test_bot_server_process_kills_a_server_that_does_not_end_on_sigint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _stub_popen(monkeypatch, b"serving on http://127.0.0.1:5\n", hang=True)
    server = bot.ServerProcess(["random"])
    assert server.stop() is None and made[0].killed
    server.close()


def test_bot_server_process_that_exited_is_reported_at_once_and_cleaned_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    made = _stub_popen(monkeypatch, b"usage: ...\n", code=2)
    slept: list[float] = []
    _clock(monkeypatch, bot, step=1.0, sleep=slept.append)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(RuntimeError, match="the server did not start") as failed:
        bot.ServerProcess(["random"])
    # No waiting for a port from a process that has ended, no signal to it, and its
    # files removed (checked while the error, which holds the object, is kept).
    assert slept == [] and made[0].signals == []
    assert list(tmp_path.iterdir()) == [] and failed.value


# -- benchmarks.vector ----------------------------------------------------------------


def test_vector_ratio_is_new_over_old_and_na_without_an_old_rate() -> None:
    assert vector._ratio(30.0, 10.0) == "3.0x"
    assert vector._ratio(5.0, 0.0) == "n/a"


def _stub_sections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    called: list[tuple[str, Any]] = []

    def compile_times() -> tuple[float, float]:
        called.append(("compile", ()))
        return 1.0, 2.0

    monkeypatch.setattr(vector, "compile_times", compile_times)
    for name in ("engine_rows", "env_rows", "make_vec_rows", "search_rows", "ppo_rows"):
        monkeypatch.setattr(
            vector, name, lambda *args, _n=name: called.append((_n.split("_r")[0], args))
        )
    return called


def test_vector_runs_the_sections_asked_with_their_budgets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    called = _stub_sections(monkeypatch)
    _main(
        vector, monkeypatch, "--seconds", "3", "--threads", "3", "--search-decisions", "20",
        "--ppo-steps", "4096", "--section", "engine", "search", "--section", "ppo",
    )  # fmt: skip
    assert called == [("engine", (3.0, 3)), ("search", (20,)), ("ppo", (4096,))]
    assert capsys.readouterr().out.startswith("machine: ")
    called.clear()
    _main(vector, monkeypatch, "--quick", "--search-decisions", "30", "--ppo-steps", "40000")
    # A quarter of each, but never under 4 decisions and 2,048 PPO steps.
    assert called == [
        ("compile", ()),
        ("engine", (0.5, 2)),
        ("env", (0.5,)),
        ("make_vec", (0.5,)),
        ("search", (7,)),
        ("ppo", (10000,)),
    ]
    called.clear()
    _main(vector, monkeypatch, "--quick", "--search-decisions", "8", "--ppo-steps", "4096")
    assert called[-2:] == [("search", (4,)), ("ppo", (2048,))]


def test_vector_engine_and_env_rows_compare_new_with_old(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(vector, "python_engine", lambda preset, seconds: 100.0)
    monkeypatch.setattr(vector, "batch_engine", lambda preset, seconds, threads: 300.0 * threads)
    vector.engine_rows(1.0, 4)
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split()[0] for row in rows] == list(PRESETS)
    assert all(
        row.split()[-6:] == ["300", "(3.0x)", "4", "threads", "1,200", "(12.0x)"] for row in rows
    )
    monkeypatch.setattr(vector, "raw_env_steps", lambda preset, seconds: 50.0)
    monkeypatch.setattr(vector, "vector_env_steps", lambda preset, seconds: 1000.0)
    vector.env_rows(1.0)
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split() for row in rows] == [
        [preset, "raw_env", "50", "VectorEnv(256)", "1,000", "(20.0x)"]
        for preset in ("standard", "leiden")
    ]


def test_vector_make_vec_rows_print_medians_of_each_way(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rates = {"sync": iter([10.0, 90.0, 30.0] * 4), None: iter([400.0, 100.0, 200.0] * 4)}
    monkeypatch.setattr(vector, "make_vec_steps", lambda config, opp, mode, s: next(rates[mode]))
    vector.make_vec_rows(1.0)
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 4
    assert all(row.split()[2:] == ["sync", "30", "compiled", "200", "(6.7x)"] for row in rows)


def test_vector_search_and_ppo_rows_put_each_setup_in_its_place(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(vector, "search_playouts", lambda preset, fast, d: 100.0 + 500.0 * fast)
    vector.search_rows(5)
    rows = [row.split() for row in capsys.readouterr().out.splitlines()[1:]]
    assert [row[1:] for row in rows] == [["old", "100", "batch", "600", "(6.0x)"]] * 2
    monkeypatch.setattr(vector, "ppo_steps", {"today": 100.0, "single": 200.0, "vector": 800.0}.get)
    monkeypatch.setattr(vector, "trainer_steps", lambda envs, steps: 100.0 + 10.0 * envs)
    vector.ppo_rows(2048)
    out = capsys.readouterr().out
    assert "(8.0x today, 4.0x single env)" in out
    assert out.splitlines()[-1].split()[-2:] == ["740", "(7.4x)"]


def test_vector_python_engine_rate_is_the_engine_benchmarks_actions_per_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = {"hands_per_s": 5.0, "actions_per_s": 250}
    monkeypatch.setattr(engine, "run", lambda preset, seconds: row)
    assert vector.python_engine("standard", 1.0) == 250.0


def test_vector_batch_engine_counts_the_actions_played_over_the_time_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import matador_env.batch

    _clock(monkeypatch, vector, step=1.0)
    calls: list[tuple[Any, ...]] = []

    def random_hands(rules: Rules, seeds: Any, rng_seed: int = 0, threads: int = 1) -> Any:
        calls.append((list(seeds)[:2], rng_seed, threads))
        return None, 7

    monkeypatch.setattr(matador_env.batch, "random_hands", random_hands)
    # A budget spent before the first chunk: one chunk all the same.
    assert vector.batch_engine("standard", 0.5, 3) == 7 / 2
    assert calls == [([0, 1], 0, 3), ([0, 1], 0, 3)]


def test_vector_env_steps_count_every_slots_step(monkeypatch: pytest.MonkeyPatch) -> None:
    import matador_env.batch
    import matador_env.vector

    stepped: list[list[int]] = []

    class Vec:
        def __init__(self, slots: int, preset: str) -> None:
            assert (slots, preset) == (8, "leiden")
            self.masks = np.ones((slots, 3), bool)

        def reset(self) -> tuple[Any, Any, Any]:
            return None, self.masks, None

        def step(self, actions: Any) -> tuple[Any, Any]:
            stepped.append(list(actions))
            return None, self.masks

    def random_choices(masks: Any, rows: Any, state: Any, actions: Any) -> None:
        actions[:] = rows % 3  # a stand-in draw, one per slot

    monkeypatch.setattr(matador_env.vector, "VectorEnv", Vec)
    monkeypatch.setattr(
        matador_env.batch, "_kernels", SimpleNamespace(random_choices=random_choices)
    )
    _clock(monkeypatch, vector, step=1.0)
    # One step of the 8 slots (at least one, the budget being spent), over 2 s.
    assert vector.vector_env_steps("leiden", 0.5, slots=8) == 4.0
    assert stepped == [[0, 1, 2, 0, 1, 2, 0, 1]]


def test_vector_search_counts_the_playouts_of_decisions_with_a_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agents.search

    class Search:
        def __init__(self, samples: int, fast: int) -> None:
            assert (samples, fast) == (8, 1)
            self.seen = 0

        def evaluate(self, view: Any, rng: random.Random) -> tuple[None, list[float]]:
            self.seen += 1
            # The warm-up's 4, then one candidate (no playout counted), then three.
            return None, [0.0] * (1 if self.seen == 5 else 3)

    _clock(monkeypatch, vector, step=1.0)
    monkeypatch.setattr(agents.search, "SearchAgent", Search)
    assert vector.search_playouts("standard", 1, 2, samples=8) == 8 * 3


def test_vector_compile_times_are_the_first_process_then_the_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _clock(monkeypatch, vector)
    caches: list[str] = []

    def run(command: list[str], env: dict[str, str], **kwargs: Any) -> None:
        caches.append(env["NUMBA_CACHE_DIR"])
        clock.now += 5.0 if len(caches) == 1 else 0.5

    monkeypatch.setattr(vector, "subprocess", SimpleNamespace(run=run))
    assert vector.compile_times() == (5.0, 0.5)
    assert len(caches) == 2 and caches[0] == caches[1]


# -- benchmarks.runtime ---------------------------------------------------------------


def test_runtime_decisions_are_the_expert_plays_views_with_a_choice_deal_after_deal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agents import make_agent

    dealt: list[int] = []
    acted: list[str] = []

    class Deals:
        @staticmethod
        def deal(rules: Rules, seed: int) -> HandState:
            dealt.append(seed)
            return HandState.deal(rules, seed=seed)

    def expert(name: str) -> Any:
        agent = make_agent(name)
        acted.append(name)

        def act(view: Any, rng: random.Random) -> Any:
            acted.append("act")
            return agent.act(view, rng)

        return SimpleNamespace(act=act)

    monkeypatch.setattr(runtime, "HandState", Deals)
    monkeypatch.setattr(runtime, "make_agent", expert)
    views = runtime.decisions("standard", 30, seed=9)
    assert len(views) == 30 and all(len(v.legal_moves) > 1 for v in views)
    assert acted[0] == "expert" and acted.count("act") >= 30
    assert dealt == list(range(9, 9 + len(dealt))) and len(dealt) > 1


class StubPolicy:
    """A policy whose 2nd and 6th calls on each view (the cold and the warm timed ones)
    take the given seconds of a stand-in clock."""

    def __init__(self, clock: Clock, runtime: str, cold: list[float], warm: list[float]) -> None:
        self.clock, self.runtime, self.cold, self.warm = clock, runtime, cold, warm
        self.calls: list[Any] = []

    def choose(self, view: Any) -> int:
        self.calls.append(view)
        n = self.calls.count(view)
        if n in (2, 6):
            self.clock.now += (self.cold if n == 2 else self.warm)[view]
        # numpy answers the last view otherwise.
        return 1 if self.runtime == "numpy" and view == 2 else 0


def test_runtime_compare_gives_each_runtimes_medians_and_their_ratios(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _clock(monkeypatch, runtime)
    loaded: list[str] = []
    # numpy's cold calls have an outlier: the median is 2 ms, the mean 5 ms.
    policies = {
        "onnxruntime": StubPolicy(clock, "onnxruntime", [0.004] * 3, [0.001] * 3),
        "auto": StubPolicy(clock, "numpy", [0.002, 0.011, 0.002], [0.003] * 3),
    }

    def load_policy(folder: Path, runtime: str) -> StubPolicy:
        assert folder.name == "standard"
        loaded.append(runtime)
        return policies[runtime]

    seeds: list[int] = []

    def decisions(name: str, count: int, seed: int) -> list[int]:
        seeds.append(seed)
        return [0, 1, 2]

    monkeypatch.setattr(runtime, "load_policy", load_policy)
    monkeypatch.setattr(runtime, "decisions", decisions)
    row = runtime.compare("standard", 3, 1, seed=11)
    assert loaded == ["onnxruntime", "auto"] and seeds == [11]
    assert row == {
        "configuration": "standard",
        "cold_onnxruntime_us": 4000.0,
        "cold_numpy_us": 2000.0,
        "cold_ratio": 0.5,
        "warm_onnxruntime_us": 1000.0,
        "warm_numpy_us": 3000.0,
        "warm_ratio": 3.0,
        "same_moves": 2,
        "decisions": 3,
    }


def test_runtime_compare_refuses_a_network_numpy_does_not_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    onnx = StubPolicy(Clock(), "onnxruntime", [], [])
    monkeypatch.setattr(runtime, "load_policy", lambda folder, runtime: onnx)
    with pytest.raises(SystemExit, match="^standard: the shipped network is not a plain MLP"):
        runtime.compare("standard", 3, 1, seed=0)


def test_runtime_prints_each_configurations_row_under_its_heads(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[tuple[Any, ...]] = []

    def compare(name: str, count: int, sweep_mb: int, seed: int) -> dict[str, Any]:
        asked.append((name, count, sweep_mb, seed))
        return {
            "cold_onnxruntime_us": 40.0, "cold_numpy_us": 20.0, "cold_ratio": 0.5,
            "warm_onnxruntime_us": 10.0, "warm_numpy_us": 30.0, "warm_ratio": 3.0,
            "same_moves": 2, "decisions": 3,
        }  # fmt: skip

    monkeypatch.setattr(runtime, "compare", compare)
    _main(runtime, monkeypatch, "--configuration", "leiden", "--decisions", "3", "--seed", "8")
    assert asked == [("leiden", 3, 32, 8)]
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.split() == ["leiden", "40.0", "20.0", "0.50", "10.0", "30.0", "3.00", "2/3"]


def test_runtime_refuses_a_configuration_with_no_shipped_bot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from matador_env.configs import configuration

    monkeypatch.setattr(runtime, "shipped_configurations", lambda: [configuration("standard")])
    monkeypatch.setattr(runtime, "compare", lambda *a: pytest.fail("measured"))
    argv = ["--configuration", "leiden"]
    monkeypatch.setattr(sys, "argv", ["runtime.py", *argv])
    line = refused(lambda _argv: runtime.main(), argv, capsys)
    assert line.endswith("error: no shipped bot for leiden; shipped: standard")


# -- benchmarks.training --------------------------------------------------------------


def _result(kind: str, deal: int, score: float, diff: float) -> Any:
    from evaluate.arena import GameResult

    return GameResult(pairing=0, kind=kind, deal=deal, pattern=0, score=score, diff=diff)


def test_training_evaluate_reports_each_kind_played_over_its_deals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plans: list[tuple[Any, ...]] = []
    hands = [_result("hand", d, s, p) for d, s, p in ((0, 1, 4), (0, 0, -2), (1, 1, 6), (1, 1, 8))]

    def run_with_bar(plan: Any, workers: int, desc: str, show: bool) -> list[Any]:
        plans.append((plan, desc, show))
        return hands  # no match played: no match figures

    monkeypatch.setattr(training, "run_with_bar", run_with_bar)
    out = training.evaluate("runs/x/best", "expert", 2, 0, 5, progress=True)
    ((plan, desc, show),) = plans
    assert (plan.rules, plan.deals, plan.matches, plan.seed) == (Rules.preset("standard"), 2, 0, 5)
    assert [(p.a, p.b) for p in plan.pairings] == [("policy:runs/x/best", "expert")]
    assert (desc, show) == ("vs expert", True)
    from evaluate.arena import duplicate_figures

    win, pts = duplicate_figures(hands)
    assert out == {
        "opponent": "expert",
        "hand_deals": 2,  # deals, not the four replays
        "hand_win_rate": round(win.mean, 4),
        "hand_win_rate_lo95": round(win.lo, 4),
        "hand_win_rate_hi95": round(win.hi, 4),
        "hand_points": round(pts.mean, 3),
        "hand_points_lo95": round(pts.lo, 3),
        "hand_points_hi95": round(pts.hi, 3),
    }
    assert len({out["hand_points_lo95"], out["hand_points"], out["hand_points_hi95"]}) == 3


def test_training_evaluate_gives_null_for_the_interval_of_one_deal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(training, "run_with_bar", lambda *a: [_result("match", 0, 1, 30)])
    out = training.evaluate("p", "random", 1, 1, 0)
    assert out["match_win_rate"] == 1.0 and out["match_points"] == 30.0
    assert out["match_points_lo95"] is None and out["match_points_hi95"] is None
    assert out["match_deals"] == 1 and "hand_deals" not in out


def _stub_evaluate(
    monkeypatch: pytest.MonkeyPatch, expert: dict[str, Any], against_random: dict[str, Any]
) -> list[int]:
    seeds: list[int] = []

    def evaluate(
        policy: str, opponent: str, hands: int, matches: int, seed: int, progress: bool
    ) -> dict[str, Any]:
        seeds.append(seed)
        return {"opponent": opponent, **(expert if opponent == "expert" else against_random)}

    monkeypatch.setattr(training, "evaluate", evaluate)
    return seeds


@pytest.mark.parametrize(
    "expert, random_low, verdict",
    [
        # At the bars exactly: 55% of matches, 13 points against random: met.
        ({"match_win_rate": 0.55, "hand_points": 3.0, "hand_points_lo95": 0.0}, 13.0, [1, 0, 1]),
        # Just short of them; points significantly positive.
        (
            {"match_win_rate": 0.5499, "hand_points": 3.0, "hand_points_lo95": 0.01},
            12.99,
            [0, 1, 0],
        ),
    ],
)
def test_training_verdict_holds_each_bar_at_its_edge(
    expert: dict[str, Any],
    random_low: float,
    verdict: list[int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The random opponent's points are well above the bar: its lower end decides.
    _stub_evaluate(monkeypatch, expert, {"hand_points": 20.0, "hand_points_lo95": random_low})
    training.main(["--policy", POLICY])
    rows = _json_lines(capsys.readouterr().out)
    assert [r["policy"] for r in rows[:2]] == [POLICY, POLICY]
    assert list(rows[-1]["verdict"].values()) == [bool(v) for v in verdict]


def test_training_plays_random_on_the_next_seed_wrapping_at_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seeds = _stub_evaluate(monkeypatch, {"hand_points_lo95": None}, {"hand_points_lo95": None})
    training.main(["--policy", POLICY, "--seed", "41"])
    training.main(["--policy", POLICY, "--seed", str(SEED_LIMIT - 1)])
    assert seeds == [41, 42, SEED_LIMIT - 1, 0]


@pytest.mark.parametrize("minutes, within", [(20.0, True), (20.5, False)])
def test_training_trains_the_default_recipe_and_times_it_in_minutes(
    minutes: float,
    within: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import train.run

    trained: list[list[str]] = []
    clock = _clock(monkeypatch, training)

    def train_main(argv: list[str]) -> Path:
        trained.append(argv)
        clock.now += minutes * 60
        return tmp_path / "run"

    monkeypatch.setattr(train.run, "main", train_main)
    policies: list[str] = []
    monkeypatch.setattr(training, "evaluate", _recording_evaluate(policies))
    training.main(["--out", str(tmp_path / "run"), "--no-progress"])
    assert trained == [
        [
            "--exp-name",
            "default",
            "--preset",
            "standard",
            "--out",
            str(tmp_path / "run"),
            "--no-progress",
        ]
    ]
    best = str(tmp_path / "run" / "best")
    assert policies == [best, best]
    rows = _json_lines(capsys.readouterr().out)
    assert rows[0] == {"trained": str(tmp_path / "run"), "minutes": minutes}
    assert rows[-1]["verdict"]["trained_within_20_minutes"] is within


def _recording_evaluate(policies: list[str]) -> Any:
    def evaluate(policy: str, opponent: str, *args: Any) -> dict[str, Any]:
        policies.append(policy)
        return {"opponent": opponent, "hand_points_lo95": None}

    return evaluate
