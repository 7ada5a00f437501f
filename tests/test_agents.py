"""Agents: the MCP server over stdio driven by the `mcp` package's own client, and private
namespaces that another agent never sees, through the CLI or MCP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli

from .conftest import commit_as_person
from .test_recall import graph_vault  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent


def mcp_session(vault: Path, calls: list[tuple[str, dict[str, Any]]],
                agent: str | None = None) -> tuple[list[str], list[Any]]:
    """Start `alaya mcp` as a subprocess, list its tools, make the calls; return both."""
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k.startswith(("ALAYA_", "PATH", "HOME"))}
    env["ALAYA_EMBED_PROVIDER"] = "hash"
    env["PYTHONPATH"] = str(ROOT)
    args = ["-c", "from cli.main import main; main()", "--vault", str(vault), "mcp"]
    if agent:
        args += ["--agent", agent]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(ROOT))

    async def run() -> tuple[list[str], list[Any]]:
        async with Client(params) as client:
            tools = await client.list_tools()
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
            return [t.name for t in tools.tools], results

    return asyncio.run(run())


def payload(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def strip(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "latency_ms"}


def test_mcp_lists_tools_and_recall_matches_the_cli(graph_vault: Path) -> None:  # noqa: F811
    names, results = mcp_session(graph_vault, [
        ("recall", {"query": "checkout outage", "top_k": 5}),
        ("recall", {"concepts": ["outage"], "relations": ["CAUSED_BY"], "depth": 2}),
        ("get", {"ref": "card-outage"}),
        ("recall", {"query": "x", "depth": "two"}),
        ("get", {"ref": "../../etc/passwd"}),
        ("context", {"query": "checkout outage", "budget": 800}),
    ])
    assert {"recall", "traverse", "trace", "get", "new", "link", "feedback", "ingest",
            "status", "schema", "context"} <= set(names)
    cli_free = json.loads(CliRunner().invoke(cli, [
        "--vault", str(graph_vault), "recall", "checkout outage", "--top-k", "5",
        "--json"]).output)
    cli_rel = json.loads(CliRunner().invoke(cli, [
        "--vault", str(graph_vault), "recall", "--concepts", "outage", "--rel", "CAUSED_BY",
        "--depth", "2", "--json"]).output)
    assert strip(payload(results[0])) == strip(cli_free)
    assert strip(payload(results[1])) == strip(cli_rel)
    assert payload(results[2])["id"] == "card-outage"
    assert results[3].is_error  # wrong type, reported to the agent, the server lives on
    assert results[4].is_error and "outside the vault" in results[4].content[0].text
    ctx = payload(results[5])
    assert ctx["chars"] <= 800 and "[[card-outage]]" in ctx["text"]


def test_private_cards_stay_private_through_cli_and_mcp(
        graph_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    # agent a writes a private card through MCP, agent b never recalls it
    _, results = mcp_session(graph_vault, [
        ("new", {"title": "Agent A's checkout outage notes", "type": "fact",
                 "claims": ["The checkout outage runbook lives in A's wiki"]})], agent="agent-a")
    created = payload(results[0])
    text = (graph_vault / created["path"]).read_text()
    assert "namespace: agent-a" in text
    assert CliRunner().invoke(cli, ["--vault", str(graph_vault), "compile"]).exit_code == 0

    def cli_ids(agent: str) -> set[str]:
        monkeypatch.setenv("ALAYA_AGENT", agent)
        out = CliRunner().invoke(cli, ["--vault", str(graph_vault), "recall",
                                       "checkout outage notes", "--top-k", "20", "--json"])
        return {n["id"] for n in json.loads(out.output)["nodes"]}

    assert created["id"] in cli_ids("agent-a")
    assert created["id"] not in cli_ids("agent-b")
    monkeypatch.delenv("ALAYA_AGENT")
    _, results = mcp_session(graph_vault, [
        ("recall", {"query": "checkout outage notes", "top_k": 20}),
        ("get", {"ref": created["id"]})], agent="agent-b")
    assert created["id"] not in {n["id"] for n in payload(results[0])["nodes"]}
    assert results[1].is_error
    # promoted to shared through a commit: now agent b recalls it too
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "promote-shared", created["id"],
                                   "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["from"] == "agent-a"
    import git

    assert git.Repo(graph_vault).head.commit.message.startswith("promote-shared:")
    assert CliRunner().invoke(cli, ["--vault", str(graph_vault), "compile"]).exit_code == 0
    assert created["id"] in cli_ids("agent-b")


def test_context_fits_the_budget_and_keeps_links(graph_vault: Path) -> None:  # noqa: F811
    from vault_engine.store import blocks

    persona = graph_vault / "persona.md"
    persona.write_text(blocks.replace_block(
        persona.read_text(), "persona",
        "### Preferences\n- [2026-11-30] [[Short answers]] (preference) — Ann wants short "
        "answers, conclusion first.\n", path="persona.md"))
    memory = graph_vault / "MEMORY.md"
    memory.write_text(blocks.replace_block(
        memory.read_text(), "memory",
        "- [[card-outage|Outage]] — The checkout outage on Friday. (score 0.91)\n",
        path="MEMORY.md") + "- Ann is on call in odd weeks.\n")
    out = CliRunner().invoke(cli, ["--vault", str(graph_vault), "context", "--query",
                                   "why was checkout down", "--budget", "1200", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["chars"] <= 1200 and len(doc["text"]) == doc["chars"]
    text = doc["text"]
    assert "- [preference] Ann wants short answers, conclusion first. ([[Short answers]])" in text
    assert "Ann is on call in odd weeks." in text  # the person's own MEMORY.md notes
    assert "[[card-outage|Outage]]" in text  # promoted entry, link kept as a reference
    assert "## Recalled for: why was checkout down" in text and "[[card-config]]" in text
    small = json.loads(CliRunner().invoke(cli, ["--vault", str(graph_vault), "context",
                                                "--query", "checkout", "--budget", "300",
                                                "--json"]).output)
    assert small["chars"] <= 300 and small["omitted"]  # what did not fit is counted
    assert "<!--" not in text and "---" not in text


def test_two_agents_writing_the_same_card_at_once_lose_nothing(graph_vault: Path) -> None:  # noqa: F811
    """Eight `alaya link` processes from two agents at once, all on card-outage: the vault
    lock queues them, the checksum guard re-applies each edit, every relation survives."""
    import subprocess

    commit_as_person(graph_vault)  # the person's notes are in git before agents link them
    targets = ["Config change", "Bad merge", "Gateway", "Postmortem"]
    procs = []
    for i, target in enumerate(targets * 2):
        rel = ["REFERENCES", "SEE_ALSO"][i // len(targets)]
        env = dict(os.environ, PYTHONPATH=str(ROOT), ALAYA_AGENT=f"agent-{i % 2}")
        procs.append(subprocess.Popen(
            [sys.executable, "-c", "from cli.main import main; main()", "--vault",
             str(graph_vault), "link", "card-outage", target, "--rel", rel, "--json"],
            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-300:] for o in outs]
    text = (graph_vault / "cards" / "fact" / "Outage.md").read_text()
    for target in targets:
        for rel in ("REFERENCES", "SEE_ALSO"):
            assert f"{{type: {rel}, target: '[[{target}]]'" in text, (rel, target)
    import git

    log = git.Repo(graph_vault).git.log("--format=%s", "-8").splitlines()
    assert len([m for m in log if m.startswith("link:")]) == 8
