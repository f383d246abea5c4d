"""Self-play training of a MaskablePPO agent: ``python -m train --preset standard ...``.

One run writes everything into its folder (``runs/{exp}__{preset}__{seed}__{time}``
unless ``--out`` names it)::

    args.json            the arguments (also a table in TensorBoard)
    pretrain/            the teacher's decisions cloned before PPO (--bc-decisions,
                         see pretrain.py), collected in chunks an interrupted run reuses
    checkpoint/          weights_<N>.pt (tensors) + state.json, written atomically at
                         the first update boundary after every --checkpoint-every
                         steps (see checkpoint.py); --resume continues from here
    pool/step_<N>/       frozen snapshots of the learner (opponents, see selfplay.py)
    warm_start/, best/,  weights.pt (the policy's tensors) + policy.onnx + policy.json
    final/               (the exported policy): after the warm start, the best
                         evaluation (checked against the warm start, --select-hands),
                         the last step
    selection.json       that check of the best policy against the warm start
    tb/                  TensorBoard logs
    evaluations.jsonl    one line per periodic evaluation
    learning_curve.png   evaluation figures against the step count
    summary.json/.md     the final evaluation of the best policy

The JSON files are strict JSON: an interval that one deal leaves unbounded is
``null`` there (``inf`` in summary.md and the printed lines), as in the arena's.

The exported policy plays as the agent ``policy:<run>/best`` and needs no torch.

The arguments are checked before anything is written: a bad one ends the command
with one line naming the flag and what is allowed (exit status 2). A trainer holds
a lock on its run folder (``train.lock``, see :class:`train.files.FolderLock`), so
a second trainer on the same folder stops with the first one's pid.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from matador_env.bot import rules_refusal
from matador_env.engine import Rules
from matador_env.engine.tiles import shown_value
from matador_env.files import atomic_write_json, folder_problem, lookup_problem, make_folder
from matador_env.flags import LARGEST_TRAINING_SEED
from matador_env.matador_v0 import REWARD_KINDS

from .args import (
    ArgsError,
    check_decisions,
    check_exp_name,
    check_number,
    flag_name,
    given_fields,
    layer_sizes,
    parse,
    rules_from_flags,
)
from .files import (
    RUN_ARGS_FILE,
    FolderBusyError,
    FolderLock,
    RunFolderError,
    new_run_problem,
    replace_dir,
)


@dataclass
class TrainArgs:
    """Self-play MaskablePPO training for Matador."""

    exp_name: str = "ppo"
    """Experiment name: the first part of the run folder's name."""
    preset: str = "standard"
    """Rules preset to train on (see matador_env.engine.PRESETS)."""
    players: int | None = None
    """Players at the table, overriding the preset's."""
    teams: bool | None = None
    """Partnerships of two (--teams; four players only, so with --players 4 unless the
    preset seats four) or every seat for itself (--no-teams), overriding the preset's."""
    rules: list[str] = field(default_factory=list, metadata={"metavar": "KEY=VALUE"})
    """KEY=VALUE overrides of the preset's rules (fields of matador_env.engine.Rules,
    e.g. --rules lead_tile=any target_score=150), as python -m evaluate takes them."""
    seed: int = 1
    """Seed of the model, the environments and the evaluations."""
    timesteps: int = 100_000
    """Total learner steps of PPO (a resumed run counts the steps it had; the warm
    start counts none). The default recipe, the warm start and 100,000 steps of PPO
    that refine it, builds a bot for any configuration in at most 20 minutes on two
    cores (see README, Training)."""
    out: str | None = None
    """Run folder; default runs/{exp_name}__{preset}__{seed}__{unix time}."""
    resume: str | None = None
    """A run folder to continue from its last checkpoint (its arguments are reused,
    except --timesteps and --progress when given)."""
    n_envs: int = 2
    """Environments, each in its own process (SubprocVecEnv) when more than one."""
    n_steps: int = 1024
    """Steps per environment between updates."""
    vector_envs: int = 0
    """Games in one batched vector environment (matador_env.vector) instead of the
    --n-envs processes (0: the processes). The rollout stays --n-steps x --n-envs
    steps, so N must divide it (N slots of rollout / N steps each). Opponents play
    inside the batch: random and the learner's snapshots only, so --baselines may name
    random alone."""
    batch_size: int = 256
    """Minibatch size of the PPO update."""
    n_epochs: int = 6
    """Passes over each rollout."""
    learning_rate: float = 1e-4
    """Adam step size (small, with --clip-range, so that PPO refines the warm start
    instead of unlearning it)."""
    gamma: float = 0.995
    """Discount (a hand is about 15 learner decisions)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.1
    """PPO clip range."""
    ent_coef: float = 0.003
    """Entropy bonus."""
    net_arch: str = "256,256"
    """Hidden layer sizes of the policy and value networks."""
    reward: str = "score"
    """Environment reward: score, win or normalised."""
    reward_scale: float = 0.05
    """Multiplier on the reward given to PPO (points per hand run to about 60)."""
    baselines: str = "expert:0.8,greedy:0.1,random:0.1"
    """Baseline opponents and their weights, name:weight pairs."""
    snapshot_every: int = 100_000
    """Steps between frozen snapshots of the learner added to the opponent pool (taken
    between two PPO updates, so at the first multiple of --n-steps x --n-envs past it)."""
    snapshot_share: float = 0.5
    """Chance that an episode's opponent is a snapshot (once there is one)."""
    latest_share: float = 0.5
    """Chance that a snapshot opponent is the newest snapshot."""
    pool_size: int = 10
    """How many of the newest snapshots stay in the pool."""
    checkpoint_every: int = 50_000
    """Steps between checkpoints (written between two PPO updates, as snapshots are; an
    interrupted run also saves the state after its last update)."""
    eval_every: int = 50_000
    """Steps between evaluations against random and expert (0: only at the end; taken
    between two PPO updates, as snapshots are)."""
    eval_hands: int = 300
    """Duplicate deals per opponent in each periodic evaluation."""
    final_eval_hands: int = 1000
    """Duplicate deals per opponent in the final evaluation of the best policy."""
    select_hands: int = 2000
    """Duplicate deals of the check, at the end of a run with a warm start, that a PPO
    policy the periodic evaluations picked as best really beats the warm start against
    expert: both play the same fresh deals, and the PPO policy stays best only if its
    mean lead per deal is above 0; else the warm start is the best policy (0: no check,
    the best periodic evaluation is kept)."""
    eval_workers: int = 2
    """Processes for the evaluations."""
    torch_threads: int = 1
    """Torch threads of the learner process; more than one thrashes on two shared cores
    (measured: 2 threads made a run about 10x slower while another process was busy)."""
    progress: bool = True
    """Show a progress bar."""
    bc_decisions: int = -1
    """Warm start: decisions of the teacher to clone before PPO (0: none, PPO starts
    from a random network; -1: the recipe's, 150,000 where the teacher is cheap (two
    players up to double-nine, any seats on double-six) and 100,000 otherwise, fixed
    in args.json when the run starts). See train/pretrain.py."""
    bc_skip_forced: bool = False
    """Warm start: record only decisions with more than one legal move (a forced move
    teaches the policy nothing), so --bc-decisions counts real choices. Runs made before
    this option recorded forced moves too and count them."""
    bc_soft_temperature: float = 0.0
    """Warm start: above 0, each decision's target is spread over the search teacher's
    candidates, a softmax of their mean playout results divided by this many points,
    instead of the teacher's single choice (0). Needs a search teacher."""
    bc_teacher: str = "auto"
    """Agent spec of the teacher whose moves are cloned: the determinized search, or
    e.g. expert (0.1 ms a move). auto: the recipe's, the strength matrix's search
    (``agents.search.search_spec``) where it is cheap enough:
    search:samples=64 with two players up to double-nine, search:samples=256 with
    three or four on double-six (1-5 ms a move, well ahead of expert), else
    search:samples=32 (several hidden hands of a larger set, or double-twelve, cost
    more a move), fixed in args.json when the run starts."""
    bc_opponent: str = "expert"
    """Agent spec of the opponent the teacher plays while its decisions are collected."""
    bc_dagger_decisions: int = 0
    """A DAgger round after the warm start: decisions where the cloned policy plays the
    learner's seat and the teacher labels each one; the policy is then fitted again on
    every collection so far (0: none). See train/pretrain.py."""
    bc_dagger_rounds: int = 1
    """DAgger rounds of ``bc_dagger_decisions`` each, every round driven by the policy
    fitted on all the collections before it (more than 1 needs bc_dagger_decisions)."""
    bc_epochs: int = 8
    """Passes over the cloned decisions."""
    bc_batch_size: int = 512
    """Minibatch size of the cloning fit."""
    bc_learning_rate: float = 1e-3
    """Adam step size of the cloning fit (cosine-decayed to zero over the fit)."""
    bc_vf_coef: float = 0.5
    """Weight of the value head's squared error (against the discounted return) in the
    cloning loss."""
    bc_workers: int = 2
    """Processes collecting the teacher's decisions."""


def run_name(args: TrainArgs) -> str:
    return f"{args.exp_name}__{args.preset}__{args.seed}__{int(time.time())}"


LARGEST_SEED = LARGEST_TRAINING_SEED
"""The largest ``--seed``: the model's seed goes to ``numpy.random.seed``, which refuses
a larger one (the run died with a traceback in its environments' processes)."""

# The lowest value each integer argument allows.
_INT_AT_LEAST: dict[str, int] = {
    "seed": 0,
    "timesteps": 1,
    "n_envs": 1,
    "n_steps": 1,
    "vector_envs": 0,
    "n_epochs": 1,
    "snapshot_every": 1,
    "pool_size": 1,
    "checkpoint_every": 1,
    "eval_every": 0,
    "eval_hands": 1,
    "final_eval_hands": 1,
    "select_hands": 0,
    "eval_workers": 1,
    "torch_threads": 1,
    "bc_decisions": -1,
    "bc_dagger_decisions": 0,
    "bc_dagger_rounds": 1,
    "bc_epochs": 1,
    "bc_batch_size": 1,
    "bc_workers": 1,
}
FLOAT_RANGES: dict[str, tuple[float, float, bool, str]] = {
    # name: (low, high, low included, what is allowed)
    "learning_rate": (0.0, math.inf, False, "a number above 0"),
    "gamma": (0.0, 1.0, False, "a number above 0 and at most 1"),
    "gae_lambda": (0.0, 1.0, True, "a number from 0 to 1"),
    "clip_range": (0.0, math.inf, False, "a number above 0"),
    "ent_coef": (0.0, math.inf, True, "a number, 0 or more"),
    "reward_scale": (0.0, math.inf, False, "a number above 0"),
    "snapshot_share": (0.0, 1.0, True, "a number from 0 to 1"),
    "latest_share": (0.0, 1.0, True, "a number from 0 to 1"),
    "bc_learning_rate": (0.0, math.inf, False, "a number above 0"),
    "bc_vf_coef": (0.0, math.inf, True, "a number, 0 or more"),
    "bc_soft_temperature": (0.0, math.inf, True, "a number, 0 or more (0: hard targets)"),
}


def recipe_teacher(spec: str, rules: Rules) -> str:
    """``--bc-teacher``, with ``auto`` resolved to the recipe's teacher for ``rules``."""
    if spec != "auto":
        return spec
    from agents.search import search_spec

    return search_spec(rules) if _cheap_teacher(rules) else "search:samples=32"


def _cheap_teacher(rules: Rules) -> bool:
    """Whether the recipe's full search fits the 20-minute budget under ``rules``: two
    players up to double-nine (64 worlds, 1-2 ms a move), or any seats on double-six
    (256 worlds, about 5 ms a move, its several hidden hands dealt by compiled code).
    Elsewhere (double-twelve about 9 ms a move at 64 worlds) it is cut down."""
    return rules.set_max <= 6 or (rules.players == 2 and rules.set_max <= 9)


def recipe_decisions(decisions: int, rules: Rules) -> int:
    """``--bc-decisions``, with -1 resolved to the recipe's count for ``rules``."""
    if decisions >= 0:
        return decisions
    return 150_000 if _cheap_teacher(rules) else 100_000


def resolve_rules(args: TrainArgs) -> Rules:
    """The rules of ``--preset`` with ``--players``, ``--teams`` and ``--rules``
    applied; :class:`ArgsError` naming the flag when they are not allowed."""
    return rules_from_flags(args.preset, args.players, args.teams, args.rules)


def parse_net_arch(text: str) -> list[int]:
    """``"256,256"`` -> ``[256, 256]``; :class:`ArgsError` for anything else."""
    return layer_sizes(text, "--net-arch")


def parse_weights(text: str) -> dict[str, float]:
    """``"expert:0.6,greedy:0.2"`` -> ``{"expert": 0.6, "greedy": 0.2}`` (a missing
    weight is 1; the weight is after the last colon, so specs with options work:
    ``search:samples=8:0.5``)."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.strip().rpartition(":")
        try:
            value = float(weight) if sep else 1.0
        except ValueError:
            name, value = part.strip(), 1.0  # "search:samples=8" is a spec, weight 1
        if not sep:
            name = weight
        if not name or not math.isfinite(value) or value < 0 or name in out:
            raise ArgsError(
                f"--baselines: {part!r} is not allowed; allowed: agent:weight pairs separated "
                "by commas, each agent once, weights 0 or more, e.g. expert:0.8,random:0.2"
            )
        out[name] = value
    if sum(out.values()) <= 0:
        raise ArgsError(f"--baselines: {text!r} has no positive weight; give at least one")
    return out


def check_args(args: TrainArgs) -> Rules:
    """Check every argument before anything is written; returns the run's rules.

    Raises :class:`ArgsError` naming the first flag that is not allowed.
    """
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if f.name in _INT_AT_LEAST:
            low = _INT_AT_LEAST[f.name]
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                flag = flag_name(f.name)
                raise ArgsError(
                    f"{flag}: {value!r} is not allowed; allowed: an integer, {low} or more"
                )
            if f.name == "seed" and value > LARGEST_SEED:
                raise ArgsError(
                    f"--seed: {shown_value(value)} is not allowed; allowed: an integer from 0 "
                    f"to {LARGEST_SEED} (Stable-Baselines3 seeds numpy with it, which takes "
                    "2**32 - 1 at most)"
                )
        elif f.name in FLOAT_RANGES:
            check_number(flag_name(f.name), value, *FLOAT_RANGES[f.name])
    check_decisions(args.bc_decisions)
    check_exp_name(args.exp_name)
    rollout = args.n_steps * args.n_envs
    if not isinstance(args.batch_size, int) or not 2 <= args.batch_size <= rollout:
        raise ArgsError(
            f"--batch-size: {args.batch_size!r} is not allowed; allowed: an integer from 2 to "
            f"--n-steps x --n-envs ({rollout})"
        )
    if args.vector_envs and rollout % args.vector_envs:
        raise ArgsError(
            f"--vector-envs: {args.vector_envs} does not divide the rollout, --n-steps x "
            f"--n-envs ({rollout}); allowed: 0 or a divisor of {rollout}"
        )
    parse_net_arch(args.net_arch)
    if args.reward not in (*REWARD_KINDS, "normalized"):  # the env takes either spelling
        raise ArgsError(
            f"--reward: {args.reward!r} is not allowed; allowed: {', '.join(REWARD_KINDS)}"
        )
    rules = resolve_rules(args)
    for name in parse_weights(args.baselines):
        if args.vector_envs and name != "random":
            raise ArgsError(
                f"--baselines: {name!r} cannot play with --vector-envs (it needs seat views, "
                "which the batch does not build); allowed there: random (snapshots of the "
                "learner play too, by --snapshot-share)"
            )
        _check_agent("--baselines", name, rules)
    teacher = _check_agent("--bc-teacher", recipe_teacher(args.bc_teacher, rules), rules)
    from agents.search import SearchAgent

    if args.bc_soft_temperature > 0 and not isinstance(teacher, SearchAgent):
        raise ArgsError(
            f"--bc-soft-temperature: {args.bc_soft_temperature} needs a teacher that values "
            f"its candidates; {args.bc_teacher!r} only chooses; allowed: 0, or a search "
            "teacher (search:...)"
        )
    if args.bc_dagger_rounds > 1 and args.bc_dagger_decisions <= 0:
        raise ArgsError(
            f"--bc-dagger-rounds: {args.bc_dagger_rounds} rounds of no decisions; allowed: "
            "1, or more together with --bc-dagger-decisions N (the decisions of each round)"
        )
    _check_agent("--bc-opponent", args.bc_opponent, rules)
    problem = None if args.out is None else folder_problem(args.out)
    if problem is not None:
        raise ArgsError(f"--out: {problem}; give a folder")
    return rules


def _check_agent(flag: str, spec: str, rules: Rules) -> Any:
    """The agent ``spec`` builds, checked against the run's rules."""
    from agents import make_agent

    try:
        agent = make_agent(spec)
    except ValueError as e:  # AgentSpecError and the agents' own option errors
        raise ArgsError(f"{flag}: {spec!r} is not an agent: {e}") from None
    refusal = rules_refusal(agent, rules)
    if refusal is not None:
        raise ArgsError(f"{flag}: {spec!r} {refusal}")
    return agent


def main(argv: list[str] | None = None) -> Path:
    args = parse(TrainArgs, argv, prog="python -m train")
    given = given_fields(TrainArgs, argv, prog="python -m train")
    try:
        return train(args, given)
    except (ArgsError, RunFolderError, FolderBusyError) as e:
        print(f"python -m train: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


# The flags a resumed run may change; any other flag given must repeat args.json's value.
RESUME_FLAGS = ("resume", "timesteps", "progress")


def load_run_args(run_dir: Path, given: dict[str, Any]) -> TrainArgs:
    """The saved arguments of a run folder, with ``given``'s values of :data:`RESUME_FLAGS`.

    :class:`ArgsError` names ``args.json`` and what to do when it cannot be read, and
    the flag when ``given`` changes one that a run keeps.
    """
    saved = run_dir / RUN_ARGS_FILE
    if not saved.is_file():
        raise ArgsError(f"--resume {run_dir}: no args.json there; is it a training run folder?")
    fix = "restore it from a copy (it holds the run's arguments) or start a new run"
    try:
        stored = json.loads(saved.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArgsError(f"{saved} cannot be read ({e}); {fix}") from None
    hints = get_type_hints(TrainArgs)
    if not isinstance(stored, dict):
        raise ArgsError(f"{saved} is not a JSON object of arguments; {fix}")
    # Runs from before the option recorded forced moves too: they resume as they began.
    stored.setdefault("bc_skip_forced", False)
    stored.setdefault("bc_soft_temperature", 0.0)
    # Runs from before the check of the best policy against the warm start end without it.
    stored.setdefault("select_hands", 0)
    for key, value in stored.items():
        if key not in hints:
            raise ArgsError(f"{saved}: unknown argument {key!r}; {fix}")
        if not _has_type(value, hints[key]):
            raise ArgsError(f"{saved}: {key} is {value!r}, not of type {hints[key]}; {fix}")
    for key, value in given.items():
        if key not in RESUME_FLAGS and key in stored and value != stored[key]:
            raise ArgsError(
                f"{flag_name(key)}: {value!r} differs from the run's {stored[key]!r} in {saved}; "
                "a resumed run keeps its arguments except --timesteps and --progress"
            )
    merged = {**stored, **{k: v for k, v in given.items() if k in RESUME_FLAGS}}
    merged["resume"] = str(run_dir)
    args = TrainArgs(**merged)
    if args.bc_decisions < 0:
        raise ArgsError(f"{saved}: bc_decisions is {args.bc_decisions}, not fixed; {fix}")
    if args.bc_teacher == "auto" and args.bc_decisions > 0:
        raise ArgsError(f"{saved}: bc_teacher is 'auto', not fixed; {fix}")
    return args


def _has_type(value: Any, hint: Any) -> bool:
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (str, bool):
        return isinstance(value, hint)
    if getattr(hint, "__origin__", None) is list:
        return isinstance(value, list) and all(_has_type(v, hint.__args__[0]) for v in value)
    args = getattr(hint, "__args__", ())
    return any(value is None if a is type(None) else _has_type(value, a) for a in args)


def train(args: TrainArgs, given: set[str] | None = None) -> Path:
    """Run (or resume) a training run; returns its folder.

    ``given``: the fields set on the command line (None: those that differ from the
    defaults). A resumed run takes :data:`RESUME_FLAGS` from them and refuses a
    change of any other.
    """
    if given is None:
        default = TrainArgs()
        given = {
            f.name
            for f in dataclasses.fields(args)
            if getattr(args, f.name) != getattr(default, f.name)
        }
    if args.resume:
        run_dir = Path(args.resume)
        why = lookup_problem(run_dir / RUN_ARGS_FILE)
        if why is not None:
            raise ArgsError(f"--resume {run_dir}: it cannot be looked up ({why})")
        if not (run_dir / RUN_ARGS_FILE).is_file():
            raise ArgsError(f"--resume {run_dir}: no args.json there; is it a training run folder?")
        lock = FolderLock(run_dir).acquire()
        try:
            args = load_run_args(run_dir, {k: getattr(args, k) for k in given})
            try:
                rules = check_args(args)
            except ArgsError as e:
                # A flag given now (--timesteps 0) is the command line's fault, not the file's.
                if any(str(e).startswith(f"{flag_name(k)}:") for k in given if k in RESUME_FLAGS):
                    raise
                raise ArgsError(f"{run_dir / RUN_ARGS_FILE}: {e}") from None
            return _train_locked(args, rules, run_dir)
        finally:
            lock.release()
    rules = check_args(args)
    run_dir = Path(args.out or Path("runs") / run_name(args))
    problem = make_folder(run_dir)
    if problem is not None:
        raise ArgsError(f"--out: {problem}; give another folder")
    lock = FolderLock(run_dir).acquire()
    try:
        problem = new_run_problem(run_dir)
        if problem is not None:
            raise ArgsError(f"--out: {problem}; use --resume {run_dir} to continue it")
        args.out = str(run_dir)
        # The recipe's choices are fixed in args.json, so a resumed run keeps them.
        args.bc_decisions = recipe_decisions(args.bc_decisions, rules)
        args.bc_teacher = recipe_teacher(args.bc_teacher, rules)
        atomic_write_json(run_dir / RUN_ARGS_FILE, dataclasses.asdict(args))
        return _train_locked(args, rules, run_dir)
    finally:
        lock.release()


def finished_summary(run_dir: Path, timesteps: int) -> str | None:
    """What to print for the run in ``run_dir`` when it has finished ``timesteps``
    steps: its summary. None when it has not, or when its summary.json is unreadable or
    misses a figure (finishing writes it again)."""
    from .loop import summary_markdown

    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        steps = summary["steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < timesteps:
            return None
        text = summary_markdown(summary)
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return None
    if _checkpoint_steps(run_dir) > steps:
        return None  # trained on after its summary (a larger --timesteps, interrupted)
    return (
        f"{run_dir} has finished its {steps} steps (a larger --timesteps continues it); "
        f"its summary:\n\n{text}"
    )


def _checkpoint_steps(run_dir: Path) -> int:
    """The steps of the run's checkpoint (0 when it has none that reads)."""
    try:
        steps = json.loads((run_dir / "checkpoint" / "state.json").read_text())["steps"]
    except (OSError, KeyError, TypeError, ValueError):
        return 0
    return steps if isinstance(steps, int) and not isinstance(steps, bool) else 0


def _record_timesteps(run_dir: Path, timesteps: int) -> None:
    """Make ``timesteps`` the run's in its args.json, so that a plain ``--resume``
    after an interrupt goes on to the same end."""
    saved = run_dir / RUN_ARGS_FILE
    stored = json.loads(saved.read_text())
    if stored.get("timesteps") != timesteps:
        stored["timesteps"] = timesteps
        atomic_write_json(saved, stored)


def _train_locked(args: TrainArgs, rules: Rules, run_dir: Path) -> Path:
    # Imported here so that `python -m train --help` answers at once.
    from .loop import Trainer

    # Finishing a finished run again would only redo its evaluations (the same deals,
    # the same figures) and overwrite the run's minutes with those of this call.
    done = finished_summary(run_dir, args.timesteps) if args.resume else None
    if done is not None:
        print(done)
        return run_dir
    if args.resume:
        _record_timesteps(run_dir, args.timesteps)
    trainer = Trainer(args, run_dir, rules)
    # Ctrl-C and SIGTERM (a scheduler stopping the job) both save, then stop.
    _INTERRUPTED.clear()
    # Put back after training as they were (run_main's, which notes Ctrl-C, say).
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        trainer.learn()
        trainer.finish()
    except (KeyboardInterrupt, Exception) as e:
        # An interrupt inside library code (an import, say) can surface as another
        # exception type; the flag tells it apart from a real failure.
        if not _INTERRUPTED:
            raise
        saved = trainer.save_checkpoint()
        what = (
            f"checkpoint of step {saved} saved (the last PPO update)"
            if saved is not None
            else "no checkpoint yet (a warm start's collected decisions are kept)"
        )
        if not isinstance(e, KeyboardInterrupt):
            what += f"; the interrupt surfaced as {type(e).__name__}"
        print(
            f"\ninterrupted at step {trainer.steps}; {what}. "
            f"Continue with: python -m train --resume {run_dir}",
            file=sys.stderr,
        )
        trainer.close(interrupted=True)
        raise SystemExit(130) from None
    finally:
        # getsignal gives None for a handler not set from Python: the default then.
        signal.signal(signal.SIGINT, previous[0] or signal.default_int_handler)
        signal.signal(signal.SIGTERM, previous[1] or signal.SIG_DFL)
    trainer.close()
    return run_dir


_INTERRUPTED: set[int] = set()
"""The signals received during training (non-empty: the run was interrupted)."""


def _interrupt(signum: int, frame: Any) -> None:
    _INTERRUPTED.add(signum)
    raise KeyboardInterrupt


def copy_dir_atomic(src: Path, dst: Path) -> None:
    """Replace ``dst`` by a copy of ``src`` (via a temporary sibling and a rename)."""
    replace_dir(dst, lambda tmp: shutil.copytree(src, tmp))


__all__ = [
    "ArgsError",
    "TrainArgs",
    "check_args",
    "copy_dir_atomic",
    "main",
    "resolve_rules",
    "train",
]
