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
