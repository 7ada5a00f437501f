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

    Tools: recall, traverse, trace, get, new, link, feedback, ingest, status, schema — each
    the same engine call and JSON as its CLI command. The embedder and index stay loaded.
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
    from vault_engine.context import build_context

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
