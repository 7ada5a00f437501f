"""`alaya mcp`: the memory as a Model Context Protocol server (stdio, or streamable HTTP)."""

from __future__ import annotations

from typing import Any

import click

from .output import http_guard_options, pass_json


@click.command()
@click.option("--agent", default=None, envvar="ALAYA_AGENT", show_envvar=True,
              help="Answer as this agent (stdio and HTTP alike): it reads and writes `shared` "
                   "and its own namespaces only (recall, get, trace, resources, prompts); new "
                   "cards and sessions go to NAME. Without it: the owner.")
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP on loopback instead of stdio (bearer token).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="--http: loopback address to listen on (127.0.0.1 or ::1).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="--http: port (0: any free one; .alaya/mcp.json says which).")
@click.option("--token", envvar="ALAYA_MCP_TOKEN", show_envvar=True, default=None,
              help="--http: the bearer token clients must send (default: a new random one, "
                   "printed and kept in .alaya/mcp.json, mode 0600).")
@http_guard_options("--http: ")
@click.pass_obj
def mcp(obj: Any, agent: str | None, http: bool, host: str, port: int,
        token: str | None, read_timeout: float, max_connections: int) -> None:
    """Serve the memory to an agent over the Model Context Protocol: stdio, or streamable
    HTTP on loopback with a bearer token (--http).

    Tools: recall, traverse, trace, get, new, link, unlink, feedback, ingest, distill,
    context, status, schema — each the same engine call and JSON as its CLI command, every
    parameter described, closed sets as enums, annotated read-only or not. Resources: the
    agent digest (alaya://digest), MEMORY.md, persona.md, any note. Prompts:
    recall_before_answering, save_what_was_learned. The embedder, index and compile state
    stay loaded; after each of its writes the server compiles, so its next recall sees it.
    Register it with an MCP client as the command `alaya --vault PATH mcp` (docs/agents.md).

    \b
    Examples (Claude Desktop / any MCP client config, then HTTP):
      {"mcpServers": {"alaya": {"command": "alaya",
                                "args": ["--vault", "/home/me/agent-memory", "mcp",
                                         "--agent", "main"]}}}
      alaya --vault ~/agent-memory mcp --http --port 8765
    """
    from .mcp_server import build_server, mcp_caller

    caller = mcp_caller(agent, obj.caller)
    if not http:
        server = build_server(obj.vault_path, caller=caller)
        try:
            server.run("stdio")
        finally:
            server.refresher.close()
        return
    from vault_engine.store.vault import Vault

    from .mcp_http import auth_for, bind, choose_token, run_http
    from .output import echo, ok

    secret, made = choose_token(token)
    sock = bind(host, port)
    server = build_server(obj.vault_path, caller=caller,
                          auth=auth_for(secret, host, int(sock.getsockname()[1])))

    def ready(url: str) -> None:
        echo(ok(f"alaya mcp: {url}  (Authorization: Bearer "
                + (f"{secret}; also in .alaya/mcp.json" if made else "<your --token>")
                + "; Ctrl-C to stop)"), err=True)

    try:
        run_http(server, sock, host, secret,
                 Vault.open(obj.vault_path, caller=obj.caller).state_dir, on_ready=ready,
                 agent=caller.agent, read_timeout=read_timeout, max_connections=max_connections)
    except KeyboardInterrupt:
        pass
    finally:
        server.refresher.close()


@click.command()
@click.option("--budget", type=click.IntRange(200, 200_000), default=4000, show_default=True,
              help="Characters the agent can spare for memory this turn.")
@click.option("--query", "-q", default=None, help="The turn's question: adds the top recalls.")
@click.option("--top-k", type=click.IntRange(1, 50), default=8, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@click.pass_obj
@pass_json
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
              help="The session id (default: a Claude Code or OpenClaw transcript's own, as "
                   "`ingest` names it, else the file's name; required for stdin).")
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
@pass_json
def capture(obj: Any, source: str, session: str | None, follow: bool, poll: float,
            idle: float | None, batch: int, channel: str | None, agent_name: str | None,
            redact: bool, as_json: bool) -> None:
    """Capture a running conversation (JSONL messages) into a session note, with a
    checkpoint: a crash or a restart neither loses nor duplicates a turn.

    SOURCE is a transcript file the agent appends to (read again from the start on every
    pass; a half-written last line waits), or `-` for stdin (each line spooled under .alaya/
    before it counts; messages with an `id` seen before are skipped after a restart). A
    Claude Code or OpenClaw transcript is read in its own format (tool calls folded into one
    line each); with --follow its last turn waits until the next one starts. One commit per
    flush, then the artifacts are refreshed (the next recall sees the turns); distil the
    session afterwards (`alaya distill`).

    \b
    Examples:
      alaya capture ~/.agent/transcripts/chat-0412.jsonl --follow --idle 600
      alaya capture ~/.claude/projects/-home-me-app/8a1b2c3d-….jsonl   # a Claude Code session
      agent --jsonl | alaya capture - --session chat-0412 --batch 5
    """
    import signal
    import sys
    from dataclasses import asdict
    from pathlib import Path

    from compilers.refresh import Refresher
    from vault_engine.errors import UsageError
    from vault_engine.sessions.capture import capture_file, capture_stream, default_session

    from .output import echo, emit_json, ok, warn
    from .writes import after_write

    vault = obj.vault()
    meta = {k: v for k, v in (("channel", channel), ("agent", agent_name)) if v}
    # every flush is followed by a refresh (read your writes); following a transcript keeps
    # the compile state in memory between them
    refresher = Refresher(vault, resident=follow)
    refreshes: list[dict[str, Any]] = []

    def progress(stats: Any) -> None:
        refreshes.append(after_write(vault, quiet=as_json, refresher=refresher))
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
            stats = capture_file(vault, path, session or default_session(path), follow=follow,
                                 poll_s=poll, idle_s=idle, should_stop=lambda: stop["now"],
                                 meta=meta, on_flush=progress, redact=redact)
        except KeyboardInterrupt:
            return
        finally:
            refresher.close()
    if as_json:
        emit_json({**asdict(stats), "refresh": refreshes[-1] if refreshes else None})
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
@pass_json
def promote_shared(obj: Any, ref: str, no_commit: bool, as_json: bool) -> None:
    """Move a card from an agent's private namespace into `shared`, through a commit, so
    every agent recalls it.

    \b
    Example:
      alaya promote-shared card-7f3a2c1d
    """
    from vault_engine.store.cards import promote_shared as run

    from .output import echo, emit_json, ok
    from .writes import after_write, shared_screen

    vault = obj.vault()
    note, old, sha = run(vault, ref, commit=not no_commit, screen=shared_screen(vault))
    refresh = after_write(vault, quiet=as_json) if old != "shared" else None
    if as_json:
        emit_json({"id": note.id, "path": note.path, "from": old, "to": "shared",
                   "commit": sha, "refresh": refresh})
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
@click.option("--accept-config", is_flag=True,
              help="Take the remote's changes to the guarded settings of alaya.toml (where "
                   "text is sent: [embedding]/[llm]/[rerank] provider, base_url, model; who "
                   "reads what: [vault] default_namespace, sessions_namespace, review). Read "
                   "them first: git diff HEAD...FETCH_HEAD -- alaya.toml.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@click.pass_obj
@pass_json
def sync(obj: Any, remote: str, branch: str | None, rebase: bool, no_push: bool,
         no_compile: bool, accept_config: bool, as_json: bool) -> None:
    """Sync the vault with a git remote: fetch, merge (notes through the alaya merge driver:
    both machines' cards, links and claims are kept), compile, push.

    A claim both machines rewrote differently becomes `contested` on both sides and is listed
    in reports/contradictions.md — never a conflict marker in a note. Two notes of different
    namespaces at one path stay two notes (one renamed). A merge that still conflicts is
    aborted and the local branch left as it was. Uncommitted changes must be committed first.

    A remote is untrusted: nothing is merged when it brings files under .alaya/ or that the
    vault ignores, symlinks, submodules, or changes to alaya.toml's guarded settings (see
    --accept-config). A sync that was killed is cleaned up by the next one.

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
    result = run(vault, remote=remote, branch=branch, push=not no_push, rebase=rebase,
                 accept_config=accept_config)
    compiled = None
    if not no_compile:
        from compilers.pipeline import compile_vault
        from vault_engine.errors import WriteRefusedError

        try:
            compiled = compile_vault(vault).build
        except WriteRefusedError as exc:  # the sync stands; only the artifacts lag behind
            echo(warn(f"synced, but the artifacts were not refreshed ({exc}); recall says "
                      "stale until `alaya compile` succeeds"), err=True)
    if as_json:
        emit_json({**asdict(result), "build": compiled})
        return
    for line in result.recovered:
        echo(warn(f"interrupted sync: {line}"))
    echo(ok(f"{result.remote}/{result.branch}: {result.action}"
            + (f", {result.pulled} commit(s) in" if result.pulled else "")
            + (", pushed" if result.pushed else "")))
    for c in result.conflicts:
        echo(warn(f"contested after the merge: {c} (see reports/contradictions.md)"))
    for pair in result.collisions:
        echo(warn(f"{pair['path']}: notes of two namespaces ({pair['kept']}, {pair['moved']}) "
                  f"— both kept, {pair['moved']}'s now at {pair['moved_to']} (see the "
                  "contradictions reports)"))
    for c in result.scalar_conflicts:
        path, key = c.rsplit(" ", 1)
        echo(warn(f"both machines changed `{key}` in {path}: ours kept, theirs in "
                  f"`{key}_theirs` (see reports/contradictions.md)"))
