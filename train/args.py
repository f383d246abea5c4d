"""Command-line arguments from a dataclass: one field per flag, its docstring the help."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import textwrap
from typing import Any, NoReturn, TypeVar, get_type_hints

from matador_env.configs import seated_rules, seated_rules_flag
from matador_env.engine import Rules, RulesError

T = TypeVar("T")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (``x: int = 1`` then ``\"\"\"doc\"\"\"``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


class _OneLineErrors(argparse.ArgumentParser):
    """Errors as one line, as the checks of the values print theirs (not the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (--help lists the flags)\n")


def parser_for(
    cls: type, description: str | None = None, prog: str | None = None
) -> argparse.ArgumentParser:
    """An argparse parser with a ``--flag`` per field; defaults and docstrings in --help."""
    parser = _OneLineErrors(
        prog=prog,
        description=description or cls.__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    hints = get_type_hints(cls)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name]
        default = f.default if f.default is not dataclasses.MISSING else None
        help_text = docs.get(f.name, "")
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        if kind is bool or _optional(kind) is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=default, help=help_text
            )
            continue
        if getattr(kind, "__origin__", None) is list:
            (item,) = kind.__args__
            parser.add_argument(
                flag,
                nargs="*",
                type=item,
                default=default,
                metavar=f.metadata.get("metavar", "VALUE"),
                help=help_text,
            )
            continue
        convert = _converter(kind)
        parser.add_argument(flag, type=convert, default=default, help=help_text)
    return parser


def _optional(kind: Any) -> Any:
    """``X`` for ``X | None``, else None."""
    args = getattr(kind, "__args__", ())
    if len(args) == 2 and type(None) in args:
        return next(a for a in args if a is not type(None))
    return None


def _converter(kind: Any) -> Any:
    for simple in (int, float, str):
        if kind is simple:
            return simple
    args = getattr(kind, "__args__", ())
    for simple in (int, float, str):
        if simple in args:
            return simple
    return str


def parse(cls: type[T], argv: list[str] | None = None, prog: str | None = None) -> T:
    namespace = parser_for(cls, prog=prog).parse_args(argv)
    return cls(**vars(namespace))


def given_fields(cls: type, argv: list[str] | None = None, prog: str | None = None) -> set[str]:
    """The fields whose flags ``argv`` gives (whatever their values)."""
    parser = parser_for(cls, prog=prog)
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv)))


class ArgsError(ValueError):
    """A command-line argument that is not allowed; the message names the flag and what is."""


MIN_DECISIONS = 2
"""The fewest decisions a warm start takes: one held out to measure the agreement with
the teacher, one to train on (with one alone, the fit trained on nothing)."""


def check_decisions(decisions: int, none_ok: bool = True) -> None:
    """:class:`ArgsError` naming ``--bc-decisions`` unless ``decisions`` is at least
    :data:`MIN_DECISIONS`, or (``none_ok``, as on the command line) 0 for no warm start
    or -1 for the recipe's count: the check of ``train.run.check_args``, of
    ``train.pretrain.collect`` and of ``train.pretrain.fit`` alike (here, where no
    torch is imported, so that the flags are checked before it loads)."""
    if decisions >= MIN_DECISIONS or (none_ok and decisions in (0, -1)):
        return
    # A count of 1 comes from the command line, where 0 and -1 are allowed too; a
    # collection or fit of none (never asked by the trainer) is no flag's value.
    flag_values = none_ok or decisions > 0
    allowed = "0 (no warm start), -1 (the recipe's) or " if flag_values else ""
    raise ArgsError(
        f"--bc-decisions: {decisions} is not allowed; allowed: {allowed}at least "
        f"{MIN_DECISIONS} (a twentieth of them, at least one, is held out to measure the "
        "clone's agreement with the teacher, and the rest are trained on)"
    )


def check_number(
    flag: str, value: Any, low: float, high: float, low_ok: bool, allowed: str
) -> None:
    """:class:`ArgsError` unless ``value`` is a finite number from ``low`` (included when
    ``low_ok``) to ``high``; ``allowed`` says so in words."""
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value >= low if low_ok else value > low)
        and value <= high
    )
    if not ok:
        raise ArgsError(f"{flag}: {value!r} is not allowed; allowed: {allowed}")


def check_exp_name(name: str) -> None:
    """:class:`ArgsError` unless ``name`` can be the first part of a run folder's name."""
    if not name or "/" in name or name.startswith("."):
        raise ArgsError(
            f"--exp-name: {name!r} is not allowed; allowed: a name for a folder, "
            "without '/' and not starting with '.'"
        )


def flag_name(name: str) -> str:
    """``net_arch`` -> ``--net-arch``."""
    return "--" + name.replace("_", "-")


def rules_from_flags(
    preset: str, players: int | None, teams: bool | None, rules: list[str]
) -> Rules:
    """The rules of ``--preset`` with ``--players``, ``--teams`` and ``--rules KEY=VALUE``
    applied (:func:`matador_env.configs.seated_rules`); :class:`ArgsError` naming the
    flag when they are not allowed."""
    try:
        return seated_rules(preset, players, teams, rules)
    except RulesError as e:
        raise ArgsError(f"{seated_rules_flag(e, players, teams, rules)}: {e}") from None


def layer_sizes(text: str, flag: str) -> list[int]:
    """``"256,256"`` -> ``[256, 256]``; :class:`ArgsError` naming ``flag`` otherwise."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ArgsError(
            f"{flag}: {text!r} is not allowed; allowed: hidden layer sizes, positive "
            "integers separated by commas, e.g. 256,256"
        )
    return sizes
