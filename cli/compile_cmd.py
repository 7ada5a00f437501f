"""`alaya compile` and `alaya watch`."""

from __future__ import annotations

import sys
from typing import Any

import click

from compilers.options import CompileOptions, CompileStats
from compilers.pipeline import compile_vault
from vault_engine.care.freshness import check_artifacts, readable_paths

from .output import echo, emit_json, fail, json_option, ok, pass_json, use_color, warn


class _Bar:
    """A click progress bar with ETA for the embedding phase, shown only on a terminal."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.done = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if total == 0 or not use_color(sys.stderr):
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="Embedding", file=sys.stderr,
                                         show_eta=True, show_pos=True)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done
        if done >= total:
            self.bar.__exit__(None, None, None)


HIDDEN = ("parsed", "unchanged", "deleted", "embedded", "embed_cached", "context_vectors")


def for_caller(stats: CompileStats, vault: Any) -> dict[str, Any]:
    """A compile as its caller is told of it (`--json`, and the text): the owner gets every
    figure; an agent the counts of what it may see (store/namespaces.py) and the skipped
    notes of its namespaces — how many files of others were parsed or embedded is not its to
    count (None)."""
    data = stats.to_dict()
    if vault.caller.is_owner:
        return data
    from vault_engine.care.status import status as visible

    try:
        seen: dict[str, Any] | None = visible(vault.state_dir, caller=vault.caller)
    except Exception:  # noqa: BLE001 - no build to count from: counts stay unknown
        seen = None
    keep = set(readable_paths(vault, [m.path for m in stats.malformed]))
    data["malformed"] = [m for m in data["malformed"] if m["path"] in keep]
    data.update(dict.fromkeys(HIDDEN))
    if seen is not None:
        g, v = seen["graph"], seen["vectors"]
        data.update(notes=g["nodes"], units=v["units"], vectors=v["vectors"], tiers=v["tiers"],
                    edges=sum(g["links"].values()), claims=g["claims"])
    return data


def _render(stats: dict[str, Any]) -> None:
    total = stats["ms"].get("total", 0)
    if stats["up_to_date"]:
        echo(ok(f"Up to date: {stats['notes']} notes, nothing changed since the last compile "
                f"({total:.0f} ms)"))
        return
    echo(ok(f"Compiled {stats['notes']} notes → {stats['units']} units, {stats['edges']} "
            f"edges, {stats['claims']} claims ({total:.0f} ms)"))
    if stats["parsed"] is not None:  # None: an agent's view (for_caller)
        echo(f"  parsed {stats['parsed']}, unchanged {stats['unchanged']}, deleted "
             f"{stats['deleted']}; embedded {stats['embedded']}, from cache "
             f"{stats['embed_cached']}")
    echo("  tiers: " + ", ".join(f"{k} {v}" for k, v in stats["tiers"].items())
         + "; vectors: " + ", ".join(f"{k} {v}" for k, v in stats["vectors"].items()))
    for m in stats["malformed"]:
        echo(warn(f"skipped {m['path']}:{m['line'] or 1}: {m['message']} (fix: {m['fix']})"),
             err=True)
    if stats["embed_error"]:
        echo(warn(f"vectors incomplete: {stats['embed_error']}"), err=True)


@click.command("compile")
@click.option("--check", is_flag=True,
              help="Do not compile: exit 1 when the artifacts do not match the vault.")
@click.option("--strict", is_flag=True, help="Exit 1 when a note was malformed and skipped.")
@click.option("--full", is_flag=True,
              help="Re-parse every note and rebuild every artifact, copying nothing from the "
                   "previous build (embeddings still come from the cache).")
@json_option
@click.pass_obj
@pass_json
def compile_cmd(obj: Any, check: bool, strict: bool, full: bool, as_json: bool) -> None:
    """Compile the vault into .alaya/: FAISS tiers, BM25, graph, agent digest.

    Incremental: only changed notes are parsed and only new text is embedded; the artifacts
    are published together, so readers never see a half-built set. A malformed note is
    reported and skipped. Exit 1 with --strict on malformed notes, or when embedding failed.

    \b
    Examples:
      alaya compile
      alaya compile --json          # stats: parsed, embedded, ms per phase
      alaya compile --check         # exit 1 if a note changed since the last compile
    """
    vault = obj.vault()
    if check:
        result = check_artifacts(vault)
        if as_json:
            emit_json({"ok": result.ok, "reason": result.reason, "added": result.added,
                       "changed": result.changed, "deleted": result.deleted})
        else:
            echo(ok(result.reason) if result.ok else fail(result.reason))
            for label, paths in (("added", result.added), ("changed", result.changed),
                                 ("deleted", result.deleted)):
                for p in paths:
                    echo(f"  {label}: {p}")
        sys.exit(0 if result.ok else 1)
    stats = compile_vault(vault, CompileOptions(strict=strict, full=full, progress=_Bar()))
    shown = for_caller(stats, vault)
    if as_json:
        emit_json(shown)
    else:
        _render(shown)
    failed = bool(stats.embed_error) or (strict and bool(shown["malformed"]))
    sys.exit(1 if failed else 0)


@click.command()
@click.option("--debounce", type=float, default=0.5, show_default=True,
              help="Seconds of quiet before compiling a batch of changes.")
@click.option("--max-wait", type=float, default=5.0, show_default=True,
              help="Compile at the latest this many seconds after a burst began.")
@click.option("--no-introspect", is_flag=True,
              help="Never run introspect on its schedule from this watcher.")
@json_option
@click.pass_obj
@pass_json
def watch(obj: Any, debounce: float, max_wait: float, no_introspect: bool,
          as_json: bool) -> None:
    """Keep the artifacts fresh: compile on every change to the vault.

    Watches the vault (ignoring .git/, .alaya/, .obsidian/, temp and swap files), waits for a
    quiet moment, and runs the same incremental compile as `alaya compile`. A bad note is
    reported and skipped; the watcher keeps going. Stop with Ctrl-C or SIGTERM.
    Runs `alaya introspect` when it is due ([introspect] every_hours, default 4; 0 or
    --no-introspect: never). With --json, prints one JSON object per compile or
    introspection (JSON lines).

    \b
    Example:
      alaya watch --debounce 0.3
    """
    import json
    import signal
    import threading

    from compilers.watch import watch as watch_loop

    vault = obj.vault()
    stop = threading.Event()

    def handle(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)

    def on_compile(changes: list[str], stats: CompileStats) -> None:
        seen = readable_paths(vault, changes)
        if changes and not seen:
            return  # only notes this agent may not read changed: not its news
        changes, shown = seen, for_caller(stats, vault)
        if as_json:
            click.echo(json.dumps({"event": "compiled", "changes": changes,
                                   "stats": shown}, ensure_ascii=False))
            return
        what = (f"{len(changes)} change(s): " + ", ".join(changes[:5])
                + (" …" if len(changes) > 5 else "")) if changes else "start"
        counts = (f" (parsed {shown['parsed']}, embedded {shown['embedded']}, deleted "
                  f"{shown['deleted']})" if shown["parsed"] is not None else "")
        echo(ok(f"{what} → compiled in {stats.ms.get('total', 0):.0f} ms{counts}"), err=True)
        for m in shown["malformed"]:
            echo(warn(f"skipped {m['path']}:{m['line'] or 1}: {m['message']}"), err=True)

    def on_error(changes: list[str], exc: BaseException) -> None:
        changes = readable_paths(vault, changes)
        if as_json:
            click.echo(json.dumps({"event": "error", "changes": changes, "error": str(exc)}))
        else:
            echo(fail(f"compile failed ({exc}); still watching"), err=True)

    if not as_json:
        echo(f"Watching {vault.root} (Ctrl-C to stop)", err=True)
    from .schedule_out import introspect_schedule

    watch_loop(vault, stop, on_compile=on_compile, on_error=on_error, debounce=debounce,
               max_wait=max_wait,
               tick=None if no_introspect else introspect_schedule(vault, as_json))
    if not as_json:
        echo("Stopped.", err=True)
