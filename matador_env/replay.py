"""Replay recorded hands in the terminal: ``python -m matador_env.replay FILE``.

::

    python -m evaluate --agents expert --vs search --hands 20 --records --out reports/r
    python -m matador_env.replay reports/r/records.jsonl --game 3
    python -m matador_env.replay hand.txt --step --png frames/

``FILE`` is either text holding one or more hand records
(:func:`matador_env.engine.hand_record`'s format, each opened by its
``# Matador hand record v1`` line and closed by its ``moves:`` line; text around
them, such as the drawn tables of ``tests/golden``, is skipped), or the
``records.jsonl`` that ``python -m evaluate --records`` writes, one game per line:
``--game N`` picks game N (from 0, default 0), and a match replays hand by hand.
``--game`` with a text file, whose every hand is replayed, is refused.

Every move is told in a sentence with the open ends as they were, followed by the
table after it: the layout (drawn as in terminal play), every seat's tiles (a
record holds them all, so every hand is open), the boneyard, and at the end the
result. ``--step`` waits for Enter after each move (``q`` leaves); ``--png DIR``
also writes each position as a picture (:mod:`matador_env.picture`, every hand
face up) to ``DIR/hand<i>_<k>.png``, ``k`` counting the moves made (the folder is
made, or refused, before the replay starts). The folder then holds this replay's
frames alone: an earlier replay's frames there (its files named as those are) are
removed first, and no other file is touched.

A ``.jsonl``'s games are its lines that are not blank, numbered from 0 by
``--game``; a message about one names its line in the file (from 1).

A record that ends with its ``# result:`` line (as :func:`~matador_env.engine.hand_record`
writes it for a finished hand) is checked against the replay: where the moves lead to
another result, or stop before the end, a warning on stderr names the hand and both
results, the replay goes on, and the exit code is 3. That line is a comment for
people, so a record without one is replayed unchecked; a difference means the record
was written by an engine that plays some rule otherwise, or edited by hand.

Exit codes: 0 when every hand was replayed (or ``q``), 1 when a picture cannot be
written (or an earlier frame removed), 2 for a file that cannot be read or replayed
(the message names the file, the hand and what is wrong), a ``--game`` where it
means nothing or a ``--png`` folder that cannot be made, 3 when every hand was
replayed but one ended other than its record's ``# result:`` line says, 130 on
Ctrl-C, 141 when the reader of the output goes away, as with ``| head`` (it stops
quietly).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .engine import HandState, parse_hand_record, render_table
from .engine.render import RECORD_HEADER, RESULT_PREFIX, HandRecord
from .engine.state import IllegalMoveError
from .engine.tiles import shown_value
from .files import folder_arg, make_folder
from .flags import integer_arg
from .picture import draw_frame, write_png
from .play import draw_layout, narrate
from .streams import run_main, standard_streams
from .values import as_integer

__all__ = ["ReplayError", "main", "read_records"]

PROG = "python -m matador_env.replay"


class ReplayError(ValueError):
    """A file that holds no replayable hand; the message says what is wrong."""


_GAME_KEYS = ("records", "seats", "kind", "deal", "pattern", "a", "b", "diff")
"""What a game line of ``records.jsonl`` holds that the replay reads."""


def read_records(
    path: str | os.PathLike[str], game: int | None = None
) -> tuple[str, list[HandRecord]]:
    """A heading for what is replayed, and its hand records: every record of a text
    file, or game ``game``'s (None: 0) of a ``.jsonl`` of ``python -m evaluate
    --records``; a ``game`` for a text file is refused. ``path`` is a ``str`` or a
    path-like object and ``game`` an integer (else ``TypeError``)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path={shown_value(path)} is not allowed; allowed: a str or a Path")
    if game is not None:
        game = as_integer(game, "game", "None or an integer (int or a numpy integer)")
    heading, records, _ = _read_hands(Path(path), game)
    return heading, records


def _read_hands(path: Path, game: int | None) -> tuple[str, list[HandRecord], list[str | None]]:
    """:func:`read_records`' heading and records, and the result each record's
    ``# result:`` line states (None: no such line)."""
    if game is not None and path.suffix != ".jsonl":
        raise ReplayError(
            f"{path}: --game {game} picks a game of a .jsonl of `python -m evaluate "
            "--records`, and this is a file of hand records, every one of which is "
            "replayed; drop --game"
        )
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark is no text
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayError(f"{path}: cannot read it ({exc})") from None
    heading = str(path)
    if path.suffix == ".jsonl":
        game = 0 if game is None else game
        # The games, each with its line number in the file (blank lines are no game).
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not lines:
            raise ReplayError(f"{path}: it holds no games (the file is empty or blank)")
        if not 0 <= game < len(lines):
            raise ReplayError(f"{path}: --game {game} is not a game of it (0 to {len(lines) - 1})")
        line_no, line = lines[game]
        not_a_game = f"{path}: line {line_no} is not a game of `python -m evaluate --records`"
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise ReplayError(f"{not_a_game} (not JSON: {exc})") from None
        if not isinstance(data, dict):
            raise ReplayError(f"{not_a_game} (it is JSON, but not an object)")
        missing = [key for key in _GAME_KEYS if key not in data]
        if missing:
            raise ReplayError(f"{not_a_game} (no {', '.join(map(repr, missing))})")
        if not isinstance(data["records"], list):
            raise ReplayError(f"{not_a_game} (its 'records' is not a list of hand records)")
        if not isinstance(data["seats"], list):
            raise ReplayError(f"{not_a_game} (its 'seats' is not a list of agents)")
        diff = data["diff"]
        if isinstance(diff, bool) or not isinstance(diff, int | float):
            raise ReplayError(f"{not_a_game} (its 'diff' is not a number)")
        texts = list(data["records"])
        seats = ", ".join(f"P{s} {spec}" for s, spec in enumerate(data["seats"]))
        heading = (
            f"{path}, game {game} of {len(lines)}: {data['kind']} {data['deal']}, "
            f"seat pattern {data['pattern']} ({seats}); A={data['a']} scored "
            f"{diff:+g} against B={data['b']}"
        )
        if not all(isinstance(t, str) for t in texts):
            raise ReplayError(f"{path}: line {line_no} has records that are not text")
    else:
        texts = _record_texts(text.splitlines())
    if not texts:
        raise ReplayError(f"{path}: no hand record in it (each opens with {RECORD_HEADER!r})")
    records, stated = [], []
    for i, record_text in enumerate(texts, 1):
        try:
            record = parse_hand_record(record_text)
            record.start()  # the deal: every tile of the set once, hands of the rules' size
        except ValueError as exc:  # MoveParseError, RulesError, or a deal that cannot be
            raise ReplayError(f"{path}: hand {i}: {exc}") from None
        records.append(record)
        stated.append(_stated_result(record_text))
    return heading, records, stated


def _stated_result(record_text: str) -> str | None:
    """The result that the ``# result:`` line among the comments after a record's
    ``moves:`` line states (what follows the prefix, stripped), or None."""
    lines = record_text.splitlines()
    after = next((k for k, line in enumerate(lines) if line.startswith("moves:")), len(lines))
    for line in lines[after + 1 :]:
        line = line.strip()
        if line.startswith(RESULT_PREFIX):
            return line[len(RESULT_PREFIX) :].strip()
        if line and not line.startswith("#"):
            return None  # the record's comments are over: what follows is not its
    return None


def _record_texts(lines: list[str]) -> list[str]:
    """Each record's lines, from its header to its ``moves:`` line (the format's last)
    and the comment lines that follow it (the moves told, the result); what follows
    them up to the next header, such as a drawn table, is not the record's."""
    starts = [i for i, line in enumerate(lines) if line.strip() == RECORD_HEADER]
    if not starts:
        return []
    texts: list[str] = []
    for a, b in zip(starts, [*starts[1:], len(lines)], strict=True):
        chunk = lines[a:b]
        last = next((k for k, line in enumerate(chunk) if line.startswith("moves:")), len(chunk))
        while last + 1 < len(chunk) and chunk[last + 1].startswith("#"):
            last += 1
        texts.append("\n".join(chunk[: last + 1]))
    return texts


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Replay recorded Matador hands move by move: a file of hand records, "
        "or a game of the records.jsonl of `python -m evaluate --records`.",
    )
    p.add_argument("file", type=Path, help="hand records (text) or records.jsonl")
    p.add_argument(
        "--game", type=integer_arg, help="the game of a records.jsonl (from 0, default 0)"
    )
    p.add_argument("--step", action="store_true", help="wait for Enter after each move")
    p.add_argument(
        "--png", type=folder_arg, metavar="DIR", help="also write each position as a PNG"
    )
    return p


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Replay; returns the exit code (streams default to the process's)."""
    source, out, err = standard_streams(stdin, stdout, stderr)
    args = build_parser().parse_args(argv)
    try:
        heading, records, stated = _read_hands(args.file, args.game)
    except ReplayError as exc:
        err.write(f"{PROG}: error: {exc}\n")
        return 2
    if args.png is not None:
        problem = make_folder(args.png)
        if problem is not None:
            err.write(f"{PROG}: error: --png: {problem}\n")
            return 2
    try:
        if args.png is not None:
            _remove_frames(args.png)
        return _replay(args, heading, records, stated, source, out, err)
    except _PictureError as exc:
        out.flush()
        err.write(f"{PROG}: error: {exc}\n")
        return 1
    except KeyboardInterrupt:  # Ctrl-C, e.g. at --step's question
        out.write("\n")
        out.flush()
        return 130


class _PictureError(Exception):
    """A picture of ``--png`` could not be written; the message says which and why."""


_FRAME_NAME = re.compile(r"hand[1-9][0-9]*_[0-9]{3,}\.png")
"""The name of a frame that ``--png`` writes: ``hand<i>_<k>.png`` (``k`` of at least
three digits), as :func:`_frame_path` names it."""


def _frame_path(folder: Path, i: int, k: int) -> Path:
    """The picture of hand ``i`` (from 1) after move ``k`` (0: the deal)."""
    return folder / f"hand{i}_{k:03d}.png"


def _remove_frames(folder: Path) -> None:
    """An earlier replay's frames in ``folder`` (files named as :func:`_frame_path`
    names them) removed, so that the folder holds one replay's; nothing else."""
    for path in folder.iterdir():
        if _FRAME_NAME.fullmatch(path.name) and (path.is_file() or path.is_symlink()):
            try:
                path.unlink()
            except OSError as exc:
                raise _PictureError(
                    f"--png: cannot remove {path}, an earlier replay's frame "
                    f"({exc.strerror or exc})"
                ) from None


def _replay(
    args: argparse.Namespace,
    heading: str,
    records: list[HandRecord],
    stated: list[str | None],
    source: TextIO,
    out: TextIO,
    err: TextIO,
) -> int:
    out.write(f"{heading}\n")

    def show(state: HandState, i: int, k: int) -> None:
        """The table after move ``k`` of hand ``i`` (0: the deal), and its picture."""
        out.write(render_table(state, layout=draw_layout) + "\n")
        if args.png is not None:
            path = _frame_path(args.png, i, k)
            try:
                write_png(path, draw_frame(state, reveal=True))
            except OSError as exc:
                raise _PictureError(f"--png: cannot write {path} ({exc.strerror or exc})") from None

    code = 0
    for i, (record, stated_result) in enumerate(zip(records, stated, strict=True), 1):
        rules = record.rules
        changes = " ".join(f"{k}={v}" for k, v in rules.changes().items()) or "(defaults)"
        out.write(
            f"\nhand {i} of {len(records)}: seed {record.seed}, P{record.leader} leads; "
            f"rules {changes}\n"
        )
        state = record.start()
        show(state, i, 0)
        for k, move in enumerate(record.moves, 1):
            seat, ends = state.to_move, state.ends
            try:
                state = state.apply(move)
            except IllegalMoveError as exc:
                err.write(f"{PROG}: error: {args.file}: hand {i}, move {k}: {exc}\n")
                return 2
            out.write(f"\n{k}. {narrate(f'P{seat}', move, ends, rules)}\n")
            show(state, i, k)
            if args.step and not state.is_over:
                out.write("[Enter: next move, q: quit] ")
                out.flush()
                line = source.readline()
                if not line or line.strip().lower() in ("q", "quit"):
                    out.write("\n")
                    return 0
        if state.outcome is None:
            out.write(f"(the record stops after {len(record.moves)} moves, before the end)\n")
        if stated_result is not None and stated_result != str(state.outcome):
            ended = (
                repr(str(state.outcome))
                if state.outcome is not None
                else "no result (the moves stop before the end)"
            )
            out.flush()
            err.write(
                f"{PROG}: warning: {args.file}: hand {i}: its record's result line says "
                f"{stated_result!r}, and its moves replayed here end with {ended}\n"
            )
            code = 3
    out.flush()
    return code


if __name__ == "__main__":
    run_main(main)
