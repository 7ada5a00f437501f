"""The output contract shared by every command.

- `--json`: one JSON document on stdout (errors too: `{"error": …, "message": …, "fix": …}`).
- Human text otherwise, coloured only on a TTY and never when `NO_COLOR` is set.
- Exit codes: 0 ok, 1 findings or failure, 2 usage, 3 the machine refused a write (no space,
  read-only, permission denied: vault_engine.errors.WriteRefusedError).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def json_option(func: F) -> F:
    """`--json`: machine-readable output (define once, reuse everywhere)."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON document instead of text.")(func)


def no_commit_option(func: F) -> F:
    """`--no-commit`: write files but do not make a git commit."""
    return click.option("--no-commit", is_flag=True,
                        help="Write the change but leave it uncommitted.")(func)


def http_guard_options(prefix: str = "") -> Callable[[F], F]:
    """`--read-timeout` and `--max-connections`: the slow-client guards of `alaya serve` and
    `alaya mcp --http` (compilers/http_guard.py)."""
    from compilers.http_guard import MAX_CONNECTIONS, READ_TIMEOUT_S

    def apply(func: F) -> F:
        func = click.option(
            "--max-connections", type=click.IntRange(1, 100_000), default=MAX_CONNECTIONS,
            show_default=True, help=f"{prefix}Open connections at most; past it the slowest "
                                    "client still sending its request is dropped for a new "
                                    "one.")(func)
        return click.option(
            "--read-timeout", type=click.FloatRange(0.1, 3600), default=READ_TIMEOUT_S,
            show_default=True, help=f"{prefix}Seconds a client has to send one whole request "
                                    "(line, headers, body); past it, 408 and a close.")(func)
    return apply


def propose_option(func: F) -> F:
    """`--propose`: write to the review branch instead of the main branch (alaya review)."""
    return click.option("--propose", is_flag=True,
                        help="Propose the change for review (branch alaya/proposals) instead "
                             "of writing it to the main branch; `alaya review` lists it. "
                             "Default with [vault] review = true.")(func)


def use_color(stream: Any = None) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def style(text: str, **kwargs: Any) -> str:
    return click.style(text, **kwargs) if use_color() else text


def echo(text: str = "", err: bool = False, *, checked: bool = False) -> None:
    """Print — through the redactor: a command echoes no secret, not even the caller's own
    (docs/security.md §2). `checked`: the text was built from what already passed it (a
    recall answer is made of compiled, masked artifacts)."""
    if not checked:
        from vault_engine.redaction_trigger import triggered

        if triggered(text):
            from vault_engine.redaction import redact

            text = redact(text)
    click.echo(text, err=err, color=use_color(sys.stderr if err else sys.stdout))


def emit_json(data: Any, *, checked: bool = False) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    if not checked:
        from vault_engine.redaction_trigger import triggered

        if triggered(text):
            from vault_engine.redaction_input import mask

            text = json.dumps(mask(data), ensure_ascii=False, indent=2, default=str)
    click.echo(text)


def ok(text: str) -> str:
    return style("✓", fg="green") + " " + text


def warn(text: str) -> str:
    return style("!", fg="yellow") + " " + text


def fail(text: str) -> str:
    return style("✗", fg="red") + " " + text


def pass_json(func: F) -> F:
    """Make `as_json` available to the error handler through the click context."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        ctx.meta["alaya.json"] = bool(kwargs.get("as_json"))
        return func(*args, **kwargs)
    return wrapper  # type: ignore[return-value]
