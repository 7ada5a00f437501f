"""`traverse`, `schema`, `status`, `export`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from vault_engine.errors import UsageError

from .output import (
    echo,
    emit_json,
    http_guard_options,
    json_option,
    no_commit_option,
    ok,
    pass_json,
    style,
    warn,
)


@click.command()
@click.argument("a")
@click.argument("b", required=False)
@click.option("--max-hops", type=click.IntRange(1, 6), default=3, show_default=True,
              help="Longest path between A and B.")
@click.option("--rel", "rels", multiple=True,
              help="Neighbourhood mode: follow only this relation type (and close ones).")
@click.option("--depth", type=click.IntRange(1, 5), default=1, show_default=True,
              help="Neighbourhood mode: how many steps from A.")
@click.option("--save", is_flag=True, help="Write the result as a note in queries/ and commit.")
@json_option
@no_commit_option
@click.pass_obj
@pass_json
def traverse(obj: Any, a: str, b: str | None, max_hops: int, rels: tuple[str, ...],
             depth: int, save: bool, as_json: bool, no_commit: bool) -> None:
    """Paths between two notes, or the neighbourhood of one.

    With A and B (ids or titles): the best three paths of at most --max-hops steps, scored by
    the product of edge weights (bidirectional BFS; an edge walked backwards shows as ←).
    With A only: the notes within --depth steps, along --rel types only if given.

    \b
    Examples:
      alaya traverse "Gateway restart" "Telegram notification mechanism" --max-hops 3
      alaya traverse card-7f3a2c1d --rel CAUSED_BY --depth 2
    """
    from vault_engine.recall.queries import node_link, path_lines, save_query
    from vault_engine.recall.traverse import find_paths, neighbourhood

    vault = obj.vault()
    index = vault.load() if save else None  # links in a saved note use file names
    split = tuple(r.strip().upper() for x in rels for r in x.split(",") if r.strip())
    if b is not None:
        if split:
            raise UsageError("--rel applies to the neighbourhood of one note",
                             fix="drop B, or drop --rel")
        result = find_paths(vault.state_dir, a, b, max_hops=max_hops, caller=vault.caller)
        lines = path_lines(result, index)
    else:
        threshold = float(vault.config.get("recall", "rel_similarity_threshold"))
        result = neighbourhood(vault.state_dir, a, rels=split, depth=depth, threshold=threshold,
                               caller=vault.caller)
        lines = [f"{'  ' * (n['depth'] - 1)}- {'←' if n['reverse'] else '—'}{n['rel']}"
                 f"{'—' if n['reverse'] else '→'} {node_link(index, n['id'], n['title'])}"
                 for n in result["nodes"]]
    if save:
        title = f"{a} → {b}" if b else f"{a} {','.join(split) or 'all'} depth {depth}"
        rel, sha = save_query(vault, kind="traverse", title=title,
                              query={"a": a, "b": b, "max_hops": max_hops if b else None,
                                     "rel": list(split), "depth": None if b else depth},
                              lines=lines, commit=not no_commit)
        from .writes import after_write

        result["saved"] = {"path": rel, "commit": sha,
                           "refresh": after_write(vault, quiet=as_json)}
    if as_json:
        emit_json(result)
        return
    if b is not None:
        if not result["paths"]:
            echo(warn(f"no path of at most {max_hops} steps between {a!r} and {b!r}"))
        for i, path in enumerate(result["paths"], 1):
            echo(style(f"Path {i}", bold=True) + f"  score {path['score']}, {path['hops']} hop(s)")
            echo(f"  {path['steps'][0]['source_title']}")
            for s in path["steps"]:
                arrow = f"←{s['rel']}—" if s["reverse"] else f"—{s['rel']}→"
                echo(f"    {arrow} {s['target_title']}  ({s['target']})")
    else:
        echo(style(result["title"], bold=True) + f"  ({result['from']})")
        for line in lines:
            echo("  " + line)
        if not lines:
            echo("  (no neighbours" + (f" along {', '.join(split)}" if split else "") + ")")
    if save:
        echo(ok(f"saved to {result['saved']['path']}"))


@click.command()
@click.option("--relations", "what", flag_value="relations", default=True,
              help="Relation types and how often each is used (default).")
@click.option("--node-types", "what", flag_value="node-types", help="Note kinds and card types.")
@json_option
@click.pass_obj
@pass_json
def schema(obj: Any, what: str, as_json: bool) -> None:
    """What relation types and node types the compiled vault uses.

    \b
    Examples:
      alaya schema --relations
      alaya schema --node-types --json
    """
    from vault_engine.care.status import schema_node_types, schema_relations

    vault = obj.vault()
    if what == "node-types":
        data = schema_node_types(vault.state_dir, vault.caller)
        if as_json:
            emit_json(data)
            return
        echo("📊 Node Types\n\nCards:")
        total = max(1, data["cards"])
        for t, n in data["card_types"].items():
            echo(f"  {t:<14}{n:>7,} ({100 * n / total:.0f}%)")
        echo(f"  {'Total:':<14}{data['cards']:>7,}")
        plural = {"entity": "Entities", "query": "Queries"}
        for kind, n in data["kinds"].items():
            if kind != "card":
                echo(f"{plural.get(kind, kind.capitalize() + 's') + ':':<16}{n:>7,}")
        return
    data = schema_relations(vault.state_dir, vault.caller)
    if as_json:
        emit_json(data)
        return
    echo("📊 Relation Types\n\nCore Relations (built-in):")
    for row in data["core"]:
        hint = f"  [{row['hint']}]" if row.get("hint") else ""
        echo(f"  {row['type']:<20}{row['uses']:>7,} uses{hint}")
    echo("\nCustom Relations (emergent):")
    for row in data["custom"]:
        hint = f"  [{row['hint']}]" if row.get("hint") else ""
        echo(f"  {row['type']:<20}{row['uses']:>7,} uses{hint}")
    if not data["custom"]:
        echo("  (none yet)")
    echo(f"\nTotal: {data['total_edges']:,} edges ({data['core_types']} core types + "
         f"{data['custom_types']} custom types)")


@click.command()
@json_option
@click.pass_obj
@pass_json
def status(obj: Any, as_json: bool) -> None:
    """Counts per layer, tiers and their size, temperatures, last compile and staleness.

    Exit 1 when the artifacts are stale (run `alaya compile`).

    \b
    Example:
      alaya status
    """
    from vault_engine.care.freshness import check_artifacts
    from vault_engine.care.status import status as vault_status

    vault = obj.vault()
    data = vault_status(vault.state_dir, caller=vault.caller)
    check = check_artifacts(vault)
    data["stale"] = {"stale": not check.ok, "reason": check.reason, "added": check.added,
                     "changed": check.changed, "deleted": check.deleted}
    if as_json:
        emit_json(data)
        sys.exit(0 if check.ok else 1)
    s, g, v = data["sessions"], data["graph"], data["vectors"]
    echo("📊 Alaya Status\n")
    echo("L3 Sessions")
    echo(f"  Sessions: {s['count']:,} ({s['turns']:,} turns)")
    echo(f"  Oldest: {s['oldest'] or '-'}\n  Newest: {s['newest'] or '-'}\n")
    echo("L2 Graph")
    echo(f"  Cards: {g['by_kind'].get('card', 0):,}")
    for t, n in list(g["card_types"].items())[:8]:
        echo(f"    - {t}: {n:,}")
    echo(f"  Entities: {g['by_kind'].get('entity', 0):,}   Claims: {g['claims']:,}")
    echo(f"  Links: {sum(g['links'].values()):,}")
    for t, n in list(g["links"].items())[:6]:
        echo(f"    - {t}: {n:,}")
    echo("\nL1 Vectors")
    context = f", +{v['context_vectors']:,} turns in context" if v.get("context_vectors") else ""
    echo(f"  Units: {v['units']:,} ({v['embedder']['id']}{context})")
    for tier in ("HOT", "WARM", "COLD"):
        size = v["bytes"].get(tier)  # None: an agent is not told the whole vault's sizes
        extra = (" (no vectors)" if tier == "COLD" else
                 f" ({size / 1e6:.1f} MB)" if size is not None else "")
        echo(f"  {tier}: {v['tiers'].get(tier, 0):,} notes{extra}")
    echo("\nTemperature Distribution")
    total = max(1, sum(b["count"] for b in data["temperature"]))
    for b in data["temperature"]:
        filled = round(10 * b["count"] / total)
        echo(f"  {b['range']}: {'█' * filled}{'░' * (10 - filled)} {100 * b['count'] / total:.0f}%")
    c = data["compile"]
    echo(f"\nLast compile: {c['compiled_at']} (build {c['build']})")
    echo(ok(check.reason) if check.ok else warn(f"stale: {check.reason} — run `alaya compile`"))
    sys.exit(0 if check.ok else 1)


@click.command()
@click.option("--format", "fmt", type=click.Choice(["markdown", "graphml"]), required=True,
              help="markdown: cards by type + index.md; graphml: the graph for Gephi/networkx.")
@click.option("--output", type=click.Path(path_type=Path), required=True,
              help="A folder (markdown) or a .graphml file.")
@json_option
@click.pass_obj
@pass_json
def export(obj: Any, fmt: str, output: Path, as_json: bool) -> None:
    """Export the compiled vault for other tools.

    \b
    Examples:
      alaya export --format graphml --output graph.graphml
      alaya export --format markdown --output ~/alaya-export
    """
    from vault_engine.care.status import export as run_export
    from vault_engine.errors import SealError

    vault = obj.vault()
    try:
        result = run_export(vault.state_dir, vault.root, fmt, output, caller=vault.caller)
    except SealError as exc:
        if not exc.no_key:
            raise  # not sealed by this machine: never loaded, rebuilt by `alaya compile`
        from compilers.pipeline import graph_in_memory

        result = run_export(vault.state_dir, vault.root, fmt, output, caller=vault.caller,
                            graph=graph_in_memory(vault))
    if as_json:
        emit_json(result)
    elif fmt == "graphml":
        echo(ok(f"Exported graph ({result['nodes']} nodes, {result['edges']} edges) to "
                f"{result['output']}"))
    else:
        echo(ok(f"Exported {result['cards']} cards to {result['output']}/cards/"))
        for t, n in result["types"].items():
            echo(f"  - {t}/ ({n})")
        echo(ok(f"Created index at {result['output']}/index.md"))



@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback only unless --allow-remote).")
@click.option("--port", type=int, default=0, show_default=True,
              help="Port (0: a free one; written to .alaya/serve.json).")
@click.option("--token", envvar="ALAYA_SERVE_TOKEN", default=None, show_envvar=True,
              help="Require `Authorization: Bearer TOKEN` on every request.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host (needs --token); also lifts the Host/Origin "
                   "allow-list.")
@click.option("--no-watch", is_flag=True,
              help="Do not recompile on changes (nor run introspect on its schedule).")
@click.option("--no-introspect", is_flag=True,
              help="Never run introspect on its schedule from this server.")
@click.option("--agent", default=None, envvar="ALAYA_AGENT", show_envvar=True,
              help="Answer for this agent only: its own namespaces and `shared`. Without it, "
                   "each request may name its agent in an X-Alaya-Agent header (none: the "
                   "owner).")
@click.option("--max-body", type=click.IntRange(1024, 16 * 1024 * 1024), default=65536,
              show_default=True, help="Largest request body in bytes (larger: 413).")
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="Worker threads answering recalls (default: one a core, 2–32); more "
                   "requests wait for one.")
@http_guard_options()
@click.pass_obj
def serve(obj: Any, host: str, port: int, token: str | None, allow_remote: bool,
          no_watch: bool, no_introspect: bool, agent: str | None, max_body: int,
          workers: int | None, read_timeout: float, max_connections: int) -> None:
    """Keep recall resident: artifacts and the embedder loaded, the watcher inside, and
    `alaya introspect` run when it is due ([introspect] every_hours, default 4).

    `alaya recall … --json` uses the server automatically while it runs (no click, numpy or
    engine imports in the client). Agents can POST the recall JSON to /recall. Requests must
    name this server by a loopback Host (DNS rebinding is refused); bodies over --max-body
    get 413, malformed requests 400 and a close (RFC 9112), a client slower than
    --read-timeout 408. Stop with Ctrl-C or SIGTERM.

    \b
    Examples:
      alaya serve
      curl -s -X POST http://127.0.0.1:PORT/recall -d '{"query": "gateway restart"}'
      curl -s -X POST http://127.0.0.1:PORT/recall -H 'X-Alaya-Agent: ops-bot' \\
          -d '{"query": "gateway restart"}'
    """
    import signal

    from compilers.serve import RecallServer

    vault = obj.vault()
    server = RecallServer(vault, host=host, port=port, token=token, allow_remote=allow_remote,
                          watch=not no_watch, agent=agent, max_body=max_body, workers=workers,
                          read_timeout=read_timeout, max_connections=max_connections)

    def handle(signum: int, frame: object) -> None:
        server.stop.set()

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)
    echo(ok(f"alaya serve: {server.url}  (vault {vault.root}; Ctrl-C to stop)"), err=True)
    from compilers.discovery import SERVE_FILE, tracked

    if tracked(vault.state_dir / SERVE_FILE):
        echo(warn("git tracks .alaya/serve.json, so `alaya recall` will not believe it and "
                  "answers in-process: `git rm --cached .alaya/serve.json`"), err=True)

    def on_compile(changes: list[str], stats: Any) -> None:
        if changes:
            echo(ok(f"{len(changes)} change(s) → compiled in {stats.ms.get('total', 0):.0f} ms"),
                 err=True)

    from .schedule_out import introspect_schedule

    server.serve_forever(on_compile=on_compile,
                         on_error=lambda c, e: echo(warn(f"compile failed: {e}"), err=True),
                         tick=None if no_introspect else introspect_schedule(vault, False))
    echo("Stopped.", err=True)
