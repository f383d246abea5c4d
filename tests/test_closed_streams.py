"""The commands run with their output or error stream closed.

With file descriptor 2 closed (``2>&-``, as a detached job or a service may start a
command) Python's ``sys.stderr`` is None. tqdm writes its bars there and, given
None, fails with an AttributeError on its first refresh (tqdm's issues #1523 and
#1593), so a training run or an evaluation started that way died before its first
step. Every bar is now made by ``matador_env.streams.progress_bar``, which draws it
nowhere when there is no stream, and the work goes on. A closed output (``>&-``,
``sys.stdout`` None) keeps nothing, as print() leaves it; the bot's test vectors were
written with json.dump and the demo flushed its last line through ``sys.stdout``,
both of which failed. (Terminal play and replay are checked in ``tests/test_play_mutants.py``.)
Ray needs a real file there, which ``null_closed_outputs`` opens. An output whose reader
goes away during the run (``| head``) ends every command quietly with status 141
(``run_main``), where most ended in a BrokenPipeError traceback."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from matador_env.streams import (
    INTERRUPTED,
    READER_GONE,
    command_name,
    note_when_slow,
    run_main,
)
from tests.test_architecture import imported_modules, module_name, python_files, top_level
from tests.test_train import TINY
from tests.train_runs import ROOT


def close_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    # In the test's body: pytest's output capture puts its own sys.stderr back at the
    # start of each phase, so a fixture's None would not last into the test.
    monkeypatch.setattr(sys, "stderr", None)


def test_an_evaluation_with_its_bar_runs_without_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from evaluate.__main__ import main

    close_stderr(monkeypatch)
    argv = ["--agents", "greedy", "random", "--hands", "8", "--out", str(tmp_path), "--no-plot"]
    assert main(argv) == 0
    assert json.loads((tmp_path / "report.json").read_text())


def test_an_expert_fit_with_its_bars_runs_without_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Its labelling bar and its confirming arena's (evaluate.arena.run_with_bar).
    from train.expert_fit import main

    close_stderr(monkeypatch)
    out = tmp_path / "weights.json"
    tiny = ["--positions", "12", "--samples", "4", "--confirm-hands", "8", "--workers", "1"]
    assert main(["--only", "leiden", *tiny, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["configurations"]["leiden"]["positions"] == 12


def test_a_fuzz_campaign_with_its_bar_runs_without_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.fuzz import main

    close_stderr(monkeypatch)
    assert main(["--count", "3", "--campaign", "rules"]) == 0


def test_a_training_run_with_its_bars_runs_with_stderr_closed(tmp_path: Path) -> None:
    # The process itself, from a shell with descriptor 2 closed: the warm start's bar
    # (train.pretrain) and PPO's (train.loop), with progress on as by default.
    run = tmp_path / "run"
    argv = [arg for arg in TINY if arg != "--no-progress"]
    argv[argv.index("--bc-decisions") + 1] = "300"
    argv += ["--timesteps", "256", "--out", str(run), "--bc-epochs", "1", "--bc-workers", "1"]
    argv += ["--eval-every", "0", "--eval-hands", "2", "--final-eval-hands", "2"]
    argv += ["--select-hands", "4"]
    command = " ".join([sys.executable, "-m", "train", *argv, "2>&-"])
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "warm start (search:samples=64)" in done.stdout
    assert json.loads((run / "summary.json").read_text())["steps"] == 256


def test_the_bots_test_vectors_run_with_stdout_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from matador_env.bot import main

    monkeypatch.setattr(sys, "stdout", None)  # in the body, as close_stderr says
    assert main(["examples", "--count", "1", "--level", "greedy"]) == 0


def test_the_server_serves_with_its_output_and_error_closed() -> None:
    # uvicorn chose its log colours by asking sys.stdout.isatty(): with the output
    # closed the server failed before it served, silently (its error stream too).
    # Its port is chosen here, as nothing it prints can be read.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = f"exec {sys.executable} -m matador_env.serve --port {port} <&- >&- 2>&-"
    proc = subprocess.Popen(["bash", "-c", command], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        answer = None
        while answer is None and proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as got:
                    answer = json.loads(got.read())
            except OSError:
                time.sleep(0.1)
        assert answer is not None and answer["status"] == "ok", proc.poll()
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(60)
    assert code == 0


def test_the_demo_runs_with_its_standard_streams_closed(tmp_path: Path) -> None:
    # The main job, from a shell with descriptors 0, 1 and 2 closed: its printing (its
    # last line was flushed through sys.stdout, which failed on None), its arena and its
    # training runs (processes of their own, logging to files).
    out = tmp_path / "demo"
    demo = shlex.join(
        [sys.executable, "-m", "evaluate.demo", "--quick", "--seed", "5", "--out", str(out)]
    )
    command = f"{demo} <&- >&- 2>&-"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, timeout=600)
    assert done.returncode == 0
    assert json.loads((out / "arena" / "report.json").read_text())
    assert (out / "clone" / "learning_curve.png").is_file()
    summary = json.loads((out / "clone" / "decisions_500" / "summary.json").read_text())
    assert summary["final_evaluation"]["expert"]["deals"] == 20


def test_a_rllib_training_run_runs_with_its_standard_streams_closed(tmp_path: Path) -> None:
    # Ray's ray.init enables faulthandler on sys.stderr, and failed on None before its
    # first step; null_closed_outputs puts /dev/null there first.
    out = tmp_path / "run"
    argv = ["--preset", "pagat", "--timesteps", "256", "--train-batch-size", "256"]
    argv += ["--minibatch-size", "128", "--num-epochs", "1", "--hidden", "32"]
    argv += ["--num-env-runners", "0", "--num-cpus", "1", "--out", str(out)]
    command = shlex.join([sys.executable, "-m", "train.rllib", *argv]) + " <&- >&- 2>&-"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, timeout=600)
    assert done.returncode == 0
    assert (out / "final" / "policy.onnx").is_file()
    last = json.loads((out / "progress.jsonl").read_text().splitlines()[-1])
    assert last["env_steps"] >= 256 and last["illegal_actions"] == 0


NULLED = """
import faulthandler, json, os, sys
from matador_env.streams import null_closed_outputs
closed = [sys.stdout is None, sys.stderr is None]
null_closed_outputs()
faulthandler.enable()  # as Ray's ray.init does: it needs sys.stderr's descriptor
print("kept nowhere")
sys.stderr.write("nor this")
try:
    os.fstat(0)
    input_closed = False
except OSError:
    input_closed = True
report = {
    "closed": closed,
    "descriptors": [sys.stdout.fileno(), sys.stderr.fileno()],
    "targets": [os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)],
    "input_closed": input_closed,
}
with open(sys.argv[1], "w") as file:
    json.dump(report, file)
"""


def test_closed_outputs_become_dev_null_for_the_process_and_its_children(tmp_path: Path) -> None:
    # Descriptor 0 closed too: /dev/null is first opened there (the lowest free one)
    # and must end on 1 and 2, leaving the input closed.
    report = tmp_path / "report.json"
    command = shlex.join([sys.executable, "-c", NULLED, str(report)]) + " <&- >&- 2>&-"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, timeout=60)
    assert done.returncode == 0
    assert json.loads(report.read_text()) == {
        "closed": [True, True],
        "descriptors": [1, 2],
        "targets": [os.devnull, os.devnull],
        "input_closed": True,
    }


def test_an_open_descriptor_behind_a_none_stream_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # sys.stderr None over an open descriptor 2 (here pytest's capture file): the stream
    # is bound to that descriptor, which is not replaced; sys.stdout is left as it is.
    from matador_env.streams import null_closed_outputs

    before = os.readlink("/proc/self/fd/2")
    stdout = sys.stdout
    close_stderr(monkeypatch)
    null_closed_outputs()
    assert sys.stderr is not None and sys.stderr.fileno() == 2
    assert os.readlink("/proc/self/fd/2") == before and sys.stdout is stdout


# The project's code, where a command's bar may be made (tests may import tqdm freely).
CODE_DIRS = ("matador_env", "agents", "train", "evaluate", "benchmarks")


CODE_FILES = [path for top in CODE_DIRS for path in python_files(ROOT / top)]


def tqdm_imports() -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)}:{line}"
        for path in CODE_FILES
        for line, module in imported_modules(path)
        if top_level(module) == "tqdm"
    )


def test_only_the_streams_module_makes_progress_bars() -> None:
    """A bar made by tqdm directly would write to a closed error stream and fail, as
    the six did before: every one goes through ``progress_bar``, the only place that
    imports tqdm. The scan finds that import, so it would find another."""
    found = tqdm_imports()
    assert found and all(where.startswith("matador_env/streams.py:") for where in found), (
        "make progress bars with matador_env.streams.progress_bar, not tqdm directly:\n"
        + "\n".join(found)
    )


# -- the reader of the output gone (| head), and Ctrl-C ------------------------------

# Every command of the project, which must end through run_main.
COMMANDS = [
    path for path in CODE_FILES if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
]


def test_every_command_ends_through_run_main() -> None:
    assert len(COMMANDS) >= 20  # the scan sees them: play, replay, train, evaluate, ...
    endings = ("    run_main(main)\n",)
    bare = [
        str(path.relative_to(ROOT))
        for path in COMMANDS
        if not path.read_text(encoding="utf-8")
        .split('if __name__ == "__main__":\n', 1)[1]
        .startswith(endings)
    ]
    assert not bare, f"commands that do not end through run_main: {bare}"


def test_every_command_refuses_an_unknown_flag_with_status_2_naming_it() -> None:
    # The README's "How the commands end": 2 for a refused argument, named in the
    # last line printed. All at once, as processes of their own.
    modules = [module_name(path).removesuffix(".__main__") for path in COMMANDS]
    procs = {
        module: subprocess.Popen(
            [sys.executable, "-m", module, "--no-such-flag"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for module in modules
    }
    for module, proc in procs.items():
        _, err = proc.communicate(timeout=300)
        last = err.strip().splitlines()[-1]
        assert proc.returncode == 2, (module, err[-1000:])
        assert last.startswith(f"python -m {module}"), (module, last)
        # The flag, or what is missing before it would be read (a required argument).
        assert "--no-such-flag" in last or "required" in last, (module, last)


def environment(buffered: bool) -> dict[str, str]:
    # Whether Python buffers the standard streams (PYTHONUNBUFFERED unset) changes
    # which write finds the pipe closed: the test runs both ways.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return env if buffered else {**env, "PYTHONUNBUFFERED": "1"}


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_a_command_whose_reader_goes_stops_quietly_with_status_141(buffered: bool) -> None:
    # More output than a pipe holds, so that a write finds the reader gone: a
    # BrokenPipeError, which Python printed as a traceback (exit status 1).
    argv = ["-m", "matador_env.bot", "examples", "--count", "400", "--level", "greedy"]
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=ROOT,
        env=environment(buffered),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == READER_GONE == 141 and err == b""


BOTH_OUTPUTS_TO_ONE_PIPE = """
import sys
from matador_env.streams import run_main

def main() -> None:
    sys.stdin.read()  # until the reader has gone
    print("held in the output's buffer")
    while True:
        sys.stderr.write("x" * 100 + "\\n")

run_main(main)
"""


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_an_output_still_holding_text_when_the_reader_goes_is_dropped(buffered: bool) -> None:
    # `2>&1 | head`: the error stream finds the pipe closed while the output's buffer
    # still holds a line. Python's flush of it at exit would fail again and turn the
    # exit status into 120, unless the output now leads to /dev/null.
    reader, writer = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", BOTH_OUTPUTS_TO_ONE_PIPE],
        cwd=ROOT,
        env=environment(buffered),
        stdin=subprocess.PIPE,
        stdout=writer,
        stderr=writer,
    )
    os.close(writer)
    os.close(reader)
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=60) == READER_GONE


def test_a_command_stopped_by_ctrl_c_ends_in_one_line_with_status_130() -> None:
    # The demo left Ctrl-C to Python, which printed a KeyboardInterrupt traceback; it
    # is signalled once it has printed its first line, so its main is running.
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evaluate.demo", "--quick", "--out", folder],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # As a terminal leaves it: a process started in the background of a shell
            # without job control (as a CI runner may start the suite) ignores SIGINT.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline()
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == INTERRUPTED == 130, err[-2000:]
    # One line: the command's, or (Ctrl-C during its arena) the arena's, which says
    # how far it got, as README's "How the commands end" has it.
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err[-2000:]
    assert lines[0] == "python -m evaluate.demo: interrupted" or lines[0].startswith(
        "interrupted after "
    )
    assert "Traceback" not in err


def test_a_refusal_with_the_error_stream_closed_leaves_the_output_alone() -> None:
    # Python leaves sys.stderr None, and argparse's usage (print_usage(None)) and
    # print(..., file=None) write to the output instead: a refusal landed in what
    # the output was keeping. run_main gives the closed stream /dev/null first.
    argv = ["-m", "evaluate", "--agents", "nonsense", "greedy", "--hands", "2"]
    command = shlex.join([sys.executable, *argv]) + " 2>&-"
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    argv = ["-m", "matador_env.bot", "examples", "--level", "nonsense"]
    command = shlex.join([sys.executable, *argv]) + " 2>&-"
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""


@pytest.mark.parametrize(("returned", "status"), [(3, 3), (0, 0), (None, 0), (Path("run"), 0)])
def test_run_main_exits_with_the_status_main_returns(returned: object, status: int) -> None:
    # An int is the status; anything else (train's mains return their run folder) is 0.
    with pytest.raises(SystemExit) as exited:
        run_main(lambda: returned)
    assert exited.value.code == status


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """SIGINT handled as a terminal leaves it (a suite started in the background of a
    shell without job control ignores it), put back after."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _ctrl_c_then(then: Callable[[], object]) -> Callable[[], object]:
    """A main that gets Ctrl-C in a call that turns it into ``then`` (a native library's
    import reports an ImportError with no trace of the interrupt)."""

    def main() -> object:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises at the next bytecode
        except KeyboardInterrupt:
            pass  # swallowed, as such a library does
        return then()

    return main


def _refused() -> int:
    raise ImportError("import numpy failed")


@pytest.mark.parametrize(
    ("then", "why"),
    [(_refused, "an error"), (lambda: 2, "a refusal's status"), (lambda: None, "finishing")],
)
@pytest.mark.usefixtures("default_sigint")
def test_a_ctrl_c_that_surfaced_as_another_end_still_ends_the_command_as_interrupted(
    capsys: pytest.CaptureFixture[str], then: Callable[[], object], why: str
) -> None:
    # Seen in CI: Ctrl-C while onnxruntime was imported became "playing an exported
    # policy needs onnxruntime", exit 1 with a traceback. A main that finishes (status
    # 0) after a swallowed interrupt has done its work, and keeps its status.
    with pytest.raises(SystemExit) as exited:
        run_main(_ctrl_c_then(then))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    if why == "finishing":
        assert exited.value.code == 0 and capsys.readouterr().err == ""
        return
    assert exited.value.code == INTERRUPTED, why
    assert capsys.readouterr().err.strip().splitlines() == [f"{command_name()}: interrupted"]


@pytest.mark.usefixtures("default_sigint")
def test_run_main_keeps_a_status_of_130_as_the_command_said_it() -> None:
    # An arena's "interrupted after N games" is its one line: none is added.
    with pytest.raises(SystemExit) as exited:
        run_main(_ctrl_c_then(lambda: INTERRUPTED))
    assert exited.value.code == INTERRUPTED


def test_without_ctrl_c_an_error_is_the_commands_own() -> None:
    with pytest.raises(ImportError, match="import numpy failed"):
        run_main(_refused)


def test_run_main_raises_a_broken_pipe_that_is_not_its_outputs() -> None:
    # A socket's or a child's pipe: the standard outputs (pytest's files) still have
    # their reader, so it is an error of the command, not a reader gone.
    def broken() -> None:
        raise BrokenPipeError("a socket's")

    with pytest.raises(BrokenPipeError, match="a socket's"):
        run_main(broken)


# -- a note when a block is slow -----------------------------------------------------------


def test_a_slow_block_gets_its_note_on_the_error_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with note_when_slow("compiling, once", after_s=0.01):
        # Slow by construction: the block lasts until the note is there (or 30 s).
        deadline = time.monotonic() + 30
        while not err.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert err.getvalue() == "compiling, once\n"


def test_a_quick_block_gets_no_note_and_leaves_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    before = set(threading.enumerate())
    with note_when_slow("never said", after_s=600):
        pass
    assert err.getvalue() == ""
    assert set(threading.enumerate()) == before


def test_a_note_with_no_error_stream_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    failures: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: failures.append(hook.exc_value))
    fired = threading.Event()
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)  # print(file=None) would write here

    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            fired.set()
            raise ValueError("I/O operation on closed file.")

    for stream in (None, Closed()):
        monkeypatch.setattr(sys, "stderr", stream)
        with note_when_slow("nowhere to go", after_s=0.01):
            fired.wait(0.2 if stream is None else 30)  # None: nothing to wait for
    assert fired.is_set() and failures == [] and out.getvalue() == ""
