"""MCP tools an LLM can use well, through the real `mcp` client against real `alaya mcp`
processes (stdio and streamable HTTP): every parameter described, closed sets as enums,
every tool annotated, bad calls answered in the tools' own terms, the agent reading its own
writes, resources and prompts that hold something, HTTP only on loopback with the token."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from vault_engine.recall.query import KINDS, MODES
from vault_engine.store.init_vault import init_vault
from vault_engine.store.model import CARD_TYPES

from .test_agents import payload
from .test_recall import graph_vault  # noqa: F401  (fixture)
from .test_trust_namespaces import two_agents  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
READ_ONLY = {"recall", "traverse", "trace", "get", "context", "status", "schema"}
WRITERS = {"new", "link", "unlink", "feedback", "ingest", "distill"}


def session(vault: Path, work: Any, agent: str | None = None) -> Any:
    """Run `work(client)` against `alaya mcp` on the vault; returns what it returns."""
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k.startswith(("ALAYA_", "PATH", "HOME",
                                                               "GIT_"))}
    env.update(ALAYA_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))
    args = ["-c", "from cli.main import main; main()", "--vault", str(vault), "mcp"]
    params = StdioServerParameters(command=sys.executable, args=args + (
        ["--agent", agent] if agent else []), env=env, cwd=str(ROOT))

    async def run() -> Any:
        async with Client(params) as client:
            return await work(client)

    return asyncio.run(run())


def test_every_parameter_is_described_closed_sets_are_enums_tools_annotated(
        graph_vault: Path) -> None:  # noqa: F811
    async def work(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in session(graph_vault, work)}
    assert set(tools) >= READ_ONLY | WRITERS
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 40, name
        for param, spec in tool.input_schema.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{param} has no description"
        a = tool.annotations
        assert a is not None and None not in (a.read_only_hint, a.destructive_hint,
                                              a.idempotent_hint), name
        assert a.read_only_hint is (name in READ_ONLY), name
    props = tools["recall"].input_schema["properties"]
    assert props["mode"]["enum"] == list(MODES)

    def items_enum(spec: dict[str, Any]) -> list[str]:
        for option in spec.get("anyOf", [spec]):
            if option.get("type") == "array":
                return list(option["items"]["enum"])
        raise AssertionError(spec)

    assert items_enum(props["kinds"]) == list(KINDS)
    assert items_enum(props["types"]) == list(CARD_TYPES)
    assert tools["new"].input_schema["properties"]["type"]["enum"] == list(CARD_TYPES)
    assert tools["feedback"].input_schema["properties"]["verdict"]["enum"] == [
        "useful", "not-useful", "correct", "deprecate"]
    assert tools["schema"].input_schema["properties"]["what"]["enum"] == ["relations",
                                                                         "node-types"]
    assert tools["unlink"].annotations.destructive_hint is True
    assert tools["link"].annotations.idempotent_hint is True


def test_bad_calls_are_tool_errors_in_the_tools_own_terms(graph_vault: Path) -> None:  # noqa: F811
    calls = [
        ("recall", {"query": "checkout", "mode": "fuzzy"}, ["`mode`", "'hybrid'", "'bm25'"]),
        ("recall", {"query": "checkout", "depth": "two"}, ["`depth`", "number"]),
        ("recall", {"querry": "checkout"}, ["unknown argument", "`querry`", "query, concepts"]),
        ("recall", {}, ["`query`", "`concepts`", "`from_nodes`"]),
        ("recall", {"query": "x", "as_of": "yesterday"}, ["`as_of`", "YYYY-MM-DD"]),
        ("recall", {"query": "x", "kinds": ["cards"]}, ["`kinds[0]`", "'card'"]),
        ("new", {"type": "gotcha"}, ["`title` is required"]),
        ("new", {"title": "Zebra", "type": "weird"}, ["`type`", "'gotcha'"]),
        ("feedback", {"verdict": "great", "id": "card-outage"}, ["`verdict`", "'useful'"]),
        ("feedback", {"verdict": "correct", "id": "card-outage"},
         ['verdict "correct"', "`text`"]),
        ("link", {"a": "Outage", "b": "Nowhere at all"}, ["Nowhere at all"]),
        ("get", {"ref": "../../etc/passwd"}, ["outside the vault"]),
        ("schema", {"what": "tables"}, ["`what`", "'relations'"]),
    ]

    async def work(client: Any) -> Any:
        return [await client.call_tool(name, args) for name, args, _ in calls]

    for (name, args, words), result in zip(calls, session(graph_vault, work), strict=True):
        text = result.content[0].text
        assert result.is_error, (name, args, text)
        for word in words:
            assert word in text, (name, args, text)
        for cli_word in ("--", "alaya recall", "alaya feedback", "pydantic", "validation error",
                         "Error executing tool", "Input should be"):
            assert cli_word not in text, (name, args, text)


def test_the_agent_reads_its_own_writes_over_mcp(graph_vault: Path) -> None:  # noqa: F811
    async def work(client: Any) -> Any:
        out: dict[str, Any] = {}
        out["new"] = payload(await client.call_tool("new", {
            "title": "Zebra crossing sensors fail in fog", "type": "gotcha",
            "claims": ["Fog blinds the zebra crossing sensors"]}))
        out["recall"] = payload(await client.call_tool("recall", {
            "query": "Zebra crossing sensors fail in fog"}))
        out["zh"] = payload(await client.call_tool("new", {
            "title": "斑马线传感器在雾天失灵", "type": "gotcha"}))
        out["recall_zh"] = payload(await client.call_tool("recall", {
            "query": "斑马线传感器在雾天失灵"}))
        out["link"] = payload(await client.call_tool("link", {
            "a": "Gateway", "b": "Bad merge", "rel": "CAUSED_BY"}))
        out["follow"] = payload(await client.call_tool("recall", {
            "from_nodes": ["card-gateway"], "relations": ["CAUSED_BY"], "depth": 1}))
        out["unlink"] = payload(await client.call_tool("unlink", {
            "a": "Gateway", "b": "Bad merge", "rel": "CAUSED_BY"}))
        out["after"] = payload(await client.call_tool("recall", {
            "from_nodes": ["card-gateway"], "relations": ["CAUSED_BY"], "depth": 1}))
        out["ingest"] = payload(await client.call_tool("ingest", {"session": {
            "id": "chat-wombat", "turns": [
                {"role": "user", "content": "The wombat cluster backup failed again."},
                {"role": "assistant", "content": "Its disk quota was exceeded; raised to 2 TB."}]}}))
        out["session"] = payload(await client.call_tool("recall", {
            "query": "wombat cluster backup"}))
        out["distill"] = payload(await client.call_tool("distill", {"session": "chat-wombat"}))
        (graph_vault / "cards" / "fact" / "Postmortem.md").write_text(
            "---\nid: card-pm\ntitle: Postmortem\n---\nRewritten by hand in Obsidian.\n")
        out["stale"] = payload(await client.call_tool("recall", {"query": "postmortem"}))
        return out

    out = session(graph_vault, work)
    top3 = [n["id"] for n in out["recall"]["nodes"][:3]]
    assert out["new"]["id"] in top3 and out["new"]["refresh"]["build"]
    assert out["recall"]["stale"] is False
    assert out["zh"]["id"] in [n["id"] for n in out["recall_zh"]["nodes"][:3]]
    assert out["link"]["changed"] and "card-merge" in [n["id"] for n in out["follow"]["nodes"]]
    assert out["unlink"]["changed"] and "card-merge" not in [n["id"] for n in out["after"]["nodes"]]
    assert out["ingest"]["refresh"]["build"]
    assert out["session"]["nodes"][0]["id"] == "chat-wombat"
    assert out["distill"]["sessions"][0]["status"] == "distilled"
    assert out["stale"]["stale"] is True and "cards/fact/Postmortem.md" in out["stale"][
        "changed_notes"]
    assert any("the vault changed since the last compile" in w for w in out["stale"]["warnings"])


def test_a_vault_never_compiled_is_compiled_by_the_first_read(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    init_vault(vault)
    (vault / "cards" / "fact").mkdir(parents=True, exist_ok=True)
    (vault / "cards" / "fact" / "Quokka.md").write_text(
        "---\nid: card-quokka\ntitle: Quokka latency budget\ntype: fact\n---\n"
        "The quokka service must answer within 200 ms.\n")

    async def work(client: Any) -> Any:
        return payload(await client.call_tool("recall", {"query": "quokka latency budget"}))

    assert session(vault, work)["nodes"][0]["id"] == "card-quokka"


def test_resources_and_prompts_hold_the_memory(graph_vault: Path) -> None:  # noqa: F811
    (graph_vault / "persona.md").write_text((graph_vault / "persona.md").read_text()
                                            + "\n- 用户偏好简短的回答。\n")

    async def work(client: Any) -> Any:
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = [t.uri_template for t in (await client.list_resource_templates())
                     .resource_templates]
        memory = (await client.read_resource("alaya://memory")).contents[0].text
        persona = (await client.read_resource("alaya://persona")).contents[0].text
        note = (await client.read_resource("alaya://note/card-outage")).contents[0].text
        prompts = {p.name: [a.name for a in p.arguments or []]
                   for p in (await client.list_prompts()).prompts}
        before = (await client.get_prompt("recall_before_answering",
                                          {"question": "why was checkout down?"}))
        save = (await client.get_prompt("save_what_was_learned",
                                        {"summary": "the checkout outage was a config change"}))
        return listed, templates, memory, persona, note, prompts, before, save

    listed, templates, memory, persona, note, prompts, before, save = session(graph_vault, work)
    assert {"alaya://digest", "alaya://memory", "alaya://persona"} <= set(listed)
    assert templates == ["alaya://note/{ref}"]
    assert memory == (graph_vault / "MEMORY.md").read_text()
    assert "用户偏好简短的回答" in persona
    assert note == (graph_vault / "cards" / "fact" / "Outage.md").read_text()
    assert prompts == {"recall_before_answering": ["question"],
                       "save_what_was_learned": ["summary"]}
    text = before.messages[0].content.text
    assert "[[card-outage]]" in text and "why was checkout down?" in text and "`recall`" in text
    saved = save.messages[0].content.text
    assert "`new`" in saved and "`link`" in saved and "`feedback`" in saved
    assert "card-config" in saved or "card-outage" in saved  # what is already known


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists():
            return json.loads(path.read_text())
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read() if proc.stderr else "exited")
        time.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


def test_streamable_http_on_loopback_with_a_bearer_token(graph_vault: Path) -> None:  # noqa: F811
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    alaya = str(Path(sys.executable).parent / "alaya")
    env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash")
    token = "t0ken-of-twenty-chars"
    proc = subprocess.Popen([alaya, "--vault", str(graph_vault), "mcp", "--http", "--port", "0",
                             "--token", token], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    info_path = graph_vault / ".alaya" / "mcp.json"
    try:
        info = wait_for(info_path, proc)
        assert info["token"] == token and info["url"].startswith("http://127.0.0.1:")
        assert oct(info_path.stat().st_mode & 0o777) == "0o600"

        async def call(headers: dict[str, str]) -> Any:
            async with httpx2.AsyncClient(headers=headers) as http, Client(
                    streamable_http_client(info["url"], http_client=http)) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                found = payload(await client.call_tool("recall", {"query": "checkout outage"}))
                return names, found

        names, found = asyncio.run(call({"Authorization": f"Bearer {token}"}))
        assert "recall" in names and found["nodes"][0]["id"] == "card-outage"
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}):
            response = httpx2.post(info["url"], headers={**headers, "Accept":
                                   "application/json, text/event-stream"},
                                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert response.status_code == 401, headers
    finally:
        proc.terminate()
        proc.wait(20)
    assert not info_path.exists()  # removed when the server stops
    for args, words in ((["--host", "0.0.0.0"], "loopback only"), (["--token", "short"], "short")):
        bad = subprocess.run([alaya, "--vault", str(graph_vault), "mcp", "--http", *args],
                             env=env, capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and words in bad.stderr, bad.stderr


def test_an_agent_over_http_reads_only_its_own_and_shared(two_agents: Path) -> None:  # noqa: F811
    """MCP on top of the namespace policy (issue #13), over the HTTP transport: the token's
    server answers as agent bob — his digest, not alice's; alice's notes neither as a
    resource nor in a prompt; a change to her note is not even named in his stale report."""
    import httpx2
    import jsonschema
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from cli.mcp_resources import digest_path
    from vault_engine.store.vault import Vault

    from .test_trust_namespaces import MARK, MARK_ZH, alaya, ok

    v = two_agents
    ok(alaya(v, "new", "--title", "Bob quokka checklist", "--type", "fact", "--claim",
             "The quokka checklist has seven steps", agent="bob"))
    schema = json.loads((ROOT / "docs" / "schemas" / "agent-digest.schema.json").read_text())
    state = v / ".alaya"
    shared = json.loads((state / "agent-digest.json").read_text())
    jsonschema.validate(shared, schema)
    assert {p["namespace"] for p in shared["pages"]} == {"shared"}
    assert "Gateway restart" in {p["title"] for p in shared["pages"]}
    claims = (state / "claims.jsonl").read_text()
    assert "Restarting the gateway drops notices" in claims and MARK not in claims
    line_schema = json.loads((ROOT / "docs" / "schemas" / "claims-line.schema.json").read_text())
    for line in claims.splitlines():
        jsonschema.validate(json.loads(line), line_schema)
    alice_card = next(p for p in (v / "cards").rglob("*.md") if "runbook" in p.name)
    card_id = next(line.split(": ", 1)[1] for line in alice_card.read_text().splitlines()
                   if line.startswith("id: "))
    vault = Vault.open(v)
    assert digest_path(vault, "alice") == state / "digest" / "alice.json"
    assert digest_path(vault, "carol") == state / "agent-digest.json"  # no notes of her own

    alaya_bin = str(Path(sys.executable).parent / "alaya")
    token = "bobs-token-of-twenty-chars"
    proc = subprocess.Popen([alaya_bin, "--vault", str(v), "mcp", "--http", "--port", "0",
                             "--token", token, "--agent", "bob"],
                            env=dict(os.environ, ALAYA_EMBED_PROVIDER="hash"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shared_card = next(p for p in (v / "cards").rglob("Gateway restart.md"))

    async def work(url: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            out["digest"] = (await client.read_resource("alaya://digest")).contents[0].text
            out["memory"] = (await client.read_resource("alaya://memory")).contents[0].text
            out["persona"] = (await client.read_resource("alaya://persona")).contents[0].text
            out["shared_note"] = (await client.read_resource(
                "alaya://note/Gateway restart")).contents[0].text
            try:
                await client.read_resource(f"alaya://note/{card_id}")
                out["alice_note"] = None
            except Exception as exc:  # noqa: BLE001 - the SDK raises the resource error
                out["alice_note"] = str(exc)
            out["before"] = (await client.get_prompt("recall_before_answering", {
                "question": f"{MARK} runbook"})).messages[0].content.text
            out["save"] = (await client.get_prompt("save_what_was_learned", {
                "summary": f"{MARK} runbook {MARK_ZH}"})).messages[0].content.text
            out["new"] = payload(await client.call_tool("new", {
                "title": "Bob wombat rollout order", "type": "decision"}))
            out["recall_new"] = payload(await client.call_tool("recall", {
                "query": "Bob wombat rollout order"}))
            # alice's card edited by hand (still hers): bob is told nothing of it
            alice_card.write_text(alice_card.read_text() + f"\nMore {MARK} notes.\n")
            out["hidden_edit"] = payload(await client.call_tool("recall", {
                "query": "gateway restart"}))
            shared_card.write_text(shared_card.read_text() + "\nEdited in Obsidian.\n")
            out["shared_edit"] = payload(await client.call_tool("recall", {
                "query": "gateway restart"}))
        return out

    try:
        info = wait_for(v / ".alaya" / "mcp.json", proc)
        assert info["agent"] == "bob"
        out = asyncio.run(work(info["url"]))
    finally:
        proc.terminate()
        proc.wait(20)
    digest = json.loads(out["digest"])
    jsonschema.validate(digest, schema)
    titles = {p["title"] for p in digest["pages"]}
    assert "Bob quokka checklist" in titles and "Gateway restart" in titles
    assert "Bob wombat rollout order" not in titles  # read before bob's `new`, which …
    now = json.loads((state / "digest" / "bob.json").read_text())  # … refreshed his digest
    assert titles | {"Bob wombat rollout order"} == {p["title"] for p in now["pages"]}
    assert "Gateway restart" in out["shared_note"]
    assert out["alice_note"] is not None and "no note matches" in out["alice_note"]
    assert out["new"]["path"] and "namespace: bob" in (v / out["new"]["path"]).read_text()
    assert out["new"]["id"] in [n["id"] for n in out["recall_new"]["nodes"][:3]]
    assert out["hidden_edit"]["stale"] is False and out["hidden_edit"]["changed_notes"] == []
    assert out["shared_edit"]["stale"] is True
    assert out["shared_edit"]["changed_notes"] == [shared_card.relative_to(v).as_posix()]
    out["before"] = out["before"].replace(f"{MARK} runbook", "<bob's question>")
    out["save"] = out["save"].replace(f"{MARK} runbook {MARK_ZH}", "<bob's summary>")
    out["alice_note"] = out["alice_note"].replace(card_id, "<bob's ref>")
    for key, text in out.items():
        text = json.dumps(text, ensure_ascii=False)
        assert MARK not in text and MARK_ZH not in text and card_id not in text, (key, text)
