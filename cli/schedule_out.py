"""The introspection schedule of `alaya watch` and `alaya serve`, with its output."""

from __future__ import annotations

import json
from typing import Any

import click

from vault_engine.store.vault import Vault

from .output import echo, ok, warn


def introspect_schedule(vault: Vault, as_json: bool) -> Any:
    """A tick for the watcher loop that runs introspect when due and says so (stderr text,
    or one JSON line on stdout)."""
    from compilers.schedule import IntrospectSchedule

    def on_run(results: list[Any]) -> None:
        commits = [r.commit for r in results if r.commit]
        if as_json:
            click.echo(json.dumps({"event": "introspected", "phases": [r.name for r in results],
                                   "commits": commits}))
        else:
            echo(ok(f"introspect (due): {len(results)} phases, {len(commits)} commit(s)"),
                 err=True)

    def on_error(exc: BaseException) -> None:
        if as_json:
            click.echo(json.dumps({"event": "error", "introspect": True, "error": str(exc)}))
        else:
            echo(warn(f"scheduled introspect failed ({exc}); next try in an hour"), err=True)

    return IntrospectSchedule(vault, on_run=on_run, on_error=on_error)
