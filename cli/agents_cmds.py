"""`alaya mcp`: the memory as a Model Context Protocol server (stdio)."""

from __future__ import annotations

from typing import Any

import click


@click.command()
@click.option("--agent", default=None, envvar="ALAYA_AGENT", show_envvar=True,
              help="This agent's name: its private namespace. Recall searches it and "
                   "`shared` only; new cards go there.")
@click.pass_obj
def mcp(obj: Any, agent: str | None) -> None:
    """Serve the memory to an agent over the Model Context Protocol (stdio).

    Tools: recall, traverse, trace, get, new, link, feedback, ingest, context, status,
    schema — each the same engine call and JSON as its CLI command. The embedder and index
    stay loaded.
    Register it with an MCP client as the command `alaya --vault PATH mcp` (docs/agents.md).

    \b
    Example (Claude Desktop / any MCP client config):
      {"mcpServers": {"alaya": {"command": "alaya",
                                "args": ["--vault", "/home/me/agent-memory", "mcp",
                                         "--agent", "main"]}}}
    """
    from .mcp_server import build_server

    server = build_server(obj.vault_path, agent=agent)
    server.run("stdio")


@click.command()
@click.option("--budget", type=click.IntRange(200, 200_000), default=4000, show_default=True,
              help="Characters the agent can spare for memory this turn.")
@click.option("--query", "-q", default=None, help="The turn's question: adds the top recalls.")
@click.option("--top-k", type=click.IntRange(1, 50), default=8, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@click.pass_obj
def context(obj: Any, budget: int, query: str | None, top_k: int, as_json: bool) -> None:
    """Print what an agent should load at the start of a turn: persona, MEMORY.md (its own
    notes and promoted entries) and the top recalls for --query, within --budget characters,
    one line per memory with its wikilink kept as a reference (seed 004 memory format).

    \b
    Examples:
      alaya context --budget 3000
      alaya context --query "why did the deploy fail?" --budget 2000 --json
    """
    from vault_engine.recall.context import build_context

    from .output import echo, emit_json

    vault = obj.vault()
    embedder = None
    if query:
        from vault_engine.providers.embedding import get_embedder

        try:
            embedder = get_embedder(vault.config)
        except Exception:  # noqa: BLE001 - degrade to BM25 like recall
            embedder = None
    ctx = build_context(vault, budget=budget, query=query, embedder=embedder, top_k=top_k)
    if as_json:
        emit_json(ctx.as_dict())
    else:
        echo(ctx.text)


@click.command()
@click.argument("source", required=False, default="-")
@click.option("--session", "session", default=None,
              help="The session id (default: the file's name; required for stdin).")
@click.option("--follow", is_flag=True, help="Keep reading a growing file until stopped.")
@click.option("--poll", type=float, default=0.5, show_default=True,
              help="--follow: seconds between reads.")
@click.option("--idle", type=float, default=None,
              help="--follow: stop after this many seconds without a new line.")
@click.option("--batch", type=click.IntRange(1, 10_000), default=1, show_default=True,
              help="stdin: ingest after this many new messages (and at the end).")
@click.option("--channel", default=None, help="Recorded on the session (e.g. telegram).")
@click.option("--agent-name", "agent_name", default=None, help="Recorded on the session.")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Replace API keys, tokens, private keys and passwords before anything is "
                   "written (the stdin spool under .alaya/ too).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document at the end.")
@click.pass_obj
def capture(obj: Any, source: str, session: str | None, follow: bool, poll: float,
            idle: float | None, batch: int, channel: str | None, agent_name: str | None,
            redact: bool, as_json: bool) -> None:
    """Capture a running conversation (JSONL messages) into a session note, with a
    checkpoint: a crash or a restart neither loses nor duplicates a turn.

    SOURCE is a transcript file the agent appends to (read again from the start on every
    pass; a half-written last line waits), or `-` for stdin (each line spooled under .alaya/
    before it counts; messages with an `id` seen before are skipped after a restart). One
    commit per flush; distil the session afterwards (`alaya distill`).

    \b
    Examples:
      alaya capture ~/.agent/transcripts/chat-0412.jsonl --follow --idle 600
      agent --jsonl | alaya capture - --session chat-0412 --batch 5
    """
    import signal
    import sys
    from dataclasses import asdict
    from pathlib import Path

    from vault_engine.errors import UsageError
    from vault_engine.sessions.capture import capture_file, capture_stream

    from .output import echo, emit_json, ok, warn

    vault = obj.vault()
    meta = {k: v for k, v in (("channel", channel), ("agent", agent_name)) if v}

    def progress(stats: Any) -> None:
        if not as_json:
            echo(ok(f"{stats.session}: {stats.turns} turns (+{stats.appended} this run)"))

    if source == "-":
        if not session:
            raise UsageError("stdin needs --session ID", fix="alaya capture - --session chat-1")
        stats = capture_stream(vault, sys.stdin.buffer, session, batch=batch, meta=meta,
                               on_flush=progress, redact=redact)
    else:
        path = Path(source).expanduser()
        stop = {"now": False}

        def handler(signum: int, frame: Any) -> None:
            stop["now"] = True

        signal.signal(signal.SIGTERM, handler)
        try:
            stats = capture_file(vault, path, session or path.stem, follow=follow,
                                 poll_s=poll, idle_s=idle, should_stop=lambda: stop["now"],
                                 meta=meta, on_flush=progress, redact=redact)
        except KeyboardInterrupt:
            return
    if as_json:
        emit_json(asdict(stats))
        return
    for s in stats.skipped:
        echo(warn(f"skipped {s}"), err=True)
    if not stats.appended:
        echo(ok(f"{stats.session}: up to date ({stats.turns} turns)"))


@click.command("promote-shared")
@click.argument("ref")
@click.option("--no-commit", is_flag=True, help="Write the change but leave it uncommitted.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@click.pass_obj
def promote_shared(obj: Any, ref: str, no_commit: bool, as_json: bool) -> None:
    """Move a card from an agent's private namespace into `shared`, through a commit, so
    every agent recalls it.

    \b
    Example:
      alaya promote-shared card-7f3a2c1d
    """
    from vault_engine.store.cards import promote_shared as run

    from .output import echo, emit_json, ok

    note, old, sha = run(obj.vault(), ref, commit=not no_commit)
    if as_json:
        emit_json({"id": note.id, "path": note.path, "from": old, "to": "shared",
                   "commit": sha})
    elif old == "shared":
        echo(ok(f"{note.title} is already shared"))
    else:
        echo(ok(f"{note.title}: {old} → shared" + (f" (commit {sha[:10]})" if sha else "")))


@click.command()
@click.option("--remote", default="origin", show_default=True, help="The git remote.")
@click.option("--branch", default=None, help="The branch (default: the current one).")
@click.option("--rebase", is_flag=True,
              help="Rebase local commits onto the remote instead of a merge commit.")
@click.option("--no-push", is_flag=True, help="Fetch and merge only.")
@click.option("--no-compile", is_flag=True, help="Skip the incremental compile after the merge.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@click.pass_obj
def sync(obj: Any, remote: str, branch: str | None, rebase: bool, no_push: bool,
         no_compile: bool, as_json: bool) -> None:
    """Sync the vault with a git remote: fetch, merge (notes through the alaya merge driver:
    both machines' cards, links and claims are kept), compile, push.

    A claim both machines rewrote differently becomes `contested` on both sides and is listed
    in reports/contradictions.md — never a conflict marker in a note. A merge that still
    conflicts is aborted and the local branch left as it was. Uncommitted changes must be
    committed first.

    \b
    Examples:
      git -C ~/agent-memory remote add origin git@github.com:me/agent-memory.git
      alaya sync
      alaya sync --no-push --json
    """
    from dataclasses import asdict

    from vault_engine.collab.sync import sync as run

    from .output import echo, emit_json, ok, warn

    vault = obj.vault()
    result = run(vault, remote=remote, branch=branch, push=not no_push, rebase=rebase)
    compiled = None
    if not no_compile:
        from compilers.pipeline import compile_vault

        stats = compile_vault(vault)
        compiled = stats.build
    if as_json:
        emit_json({**asdict(result), "build": compiled})
        return
    echo(ok(f"{result.remote}/{result.branch}: {result.action}"
            + (f", {result.pulled} commit(s) in" if result.pulled else "")
            + (", pushed" if result.pushed else "")))
    for c in result.conflicts:
        echo(warn(f"contested after the merge: {c} (see reports/contradictions.md)"))
    for c in result.scalar_conflicts:
        path, key = c.rsplit(" ", 1)
        echo(warn(f"both machines changed `{key}` in {path}: ours kept, theirs in "
                  f"`{key}_theirs` (see reports/contradictions.md)"))
