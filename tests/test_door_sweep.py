"""The door sweep (issue 25): as agent bob, every command, every MCP tool, resource and
prompt, and every `serve` route — with alice's private markers planted in titles, bodies,
claims, aliases, tags, file names, her sessions, her recall queries and her feedback — and
none of the markers appears: not in any output, not in any file bob's namespaces may read,
not in the git history of shared files.

The list of doors is checked against the CLI's own list of commands and the MCP server's
tools, resources and prompts: a new door that is not swept fails the test."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli, command_names

from .conftest import module_machine

ROOT = Path(__file__).resolve().parent.parent
MARKS = ("wombatquill", "袋熊羽毛笔")  # alice's, in everything of hers
TITLE = "Wombatquill billing cutover"  # her card's title (and so its file name)
SESSION = "session-wombatquill-7"  # her session's id (a marker in a file name too)


def run(v: Path, *args: str, agent: str | None = "bob", input: str | None = None) -> str:
    argv = ["--vault", str(v)] + (["--agent", agent] if agent else []) + list(args)
    res = CliRunner().invoke(cli, argv, input=input)
    return res.output + (str(res.exception) if res.exception and not isinstance(
        res.exception, SystemExit) else "")


def leaks(text: str, own_args: tuple[str, ...] = ()) -> list[str]:
    """The markers in `text`, once bob's own words are taken out (an error that repeats the
    ref bob typed tells him nothing he did not know)."""
    for arg in sorted(own_args, key=len, reverse=True):
        text = text.replace(arg, "<bob's>")
    low = text.lower()
    return [m for m in MARKS if m.lower() in low]


def words(value: Any) -> tuple[str, ...]:
    """Every string bob put in a call's arguments, however deep."""
    if isinstance(value, dict):
        return tuple(w for v in value.values() for w in words(v))
    if isinstance(value, list | tuple):
        return tuple(w for v in value for w in words(v))
    return (str(value),)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    mp = module_machine(tmp_path_factory)
    v = tmp_path_factory.mktemp("sweep") / "vault"
    assert "Created" in run(v, "init", str(v), agent=None) or (v / "alaya.toml").exists()
    src = v.parent / "alice.json"
    src.write_text(json.dumps({"id": SESSION, "timestamp": 1775000000000, "channel": "ops",
                               "turns": [
        {"role": "user", "content": "The wombatquill billing cutover happens on Friday; "
                                    "I prefer the 袋熊羽毛笔 script for it."},
        {"role": "assistant", "content": "Noted: wombatquill cutover Friday."},
        {"role": "user", "content": "Gotcha: the wombatquill queue drops jobs when redis "
                                    "restarts without persistence."}]}, ensure_ascii=False),
        encoding="utf-8")
    run(v, "ingest", str(src), agent="alice")
    run(v, "distill", agent="alice")
    run(v, "new", "--title", "Billing runbook", "--type", "fact", "--claim",
        "Billing jobs run nightly", agent=None)
    run(v, "new", "--title", TITLE, "--type", "decision", "--claim",
        "Move billing to the wombatquill cluster", "--alias", "wombatquill-plan", "--tag",
        "wombatquill", "--content", "Body: 袋熊羽毛笔 steps.", agent="alice")
    run(v, "link", TITLE, "Billing runbook", "--rel", "DEPENDS_ON", "--reason",
        "wombatquill depends on it", agent="alice")
    for _ in range(4):
        run(v, "recall", "wombatquill cutover password rotation", "--json", agent="alice")
    run(v, "feedback", "useful", "Billing runbook", "--reason", "wombatquill helped",
        agent="alice")
    run(v, "compile", agent=None)
    run(v, "introspect", agent=None)
    run(v, "compile", agent=None)
    card = next(p for p in (v / "cards").rglob("*.md") if "wombatquill" in p.name.lower())
    refs = {"id": next(line.split(": ", 1)[1] for line in card.read_text().splitlines()
                       if line.startswith("id: ")),
            "path": card.relative_to(v).as_posix(), "title": TITLE, "alias": "wombatquill-plan",
            "session": SESSION}
    # alice herself sees it all (else the sweep would pass for nothing)
    assert leaks(run(v, "show", refs["id"], agent="alice"))
    assert leaks(run(v, "recall", "wombatquill", "--json", agent="alice"))
    yield v, refs
    mp.undo()


def cli_doors(v: Path, refs: dict[str, str], tmp: Path) -> dict[str, list[tuple[str, ...]]]:
    """Every command with the arguments that could reveal alice's material."""
    src = tmp / "bob.json"
    src.write_text(json.dumps({"id": refs["session"], "timestamp": 1775000000000,
                               "turns": [{"role": "user", "content": "guess"}]}))
    cap = tmp / "cap.jsonl"
    cap.write_text(json.dumps({"role": "user", "content": "bob's capture"}) + "\n")
    folder = tmp / "import-me"
    folder.mkdir(exist_ok=True)
    (folder / "Note.md").write_text("---\ntitle: Bob import\n---\nhello\n")
    every_ref = [refs[k] for k in ("id", "path", "title", "alias", "session")]
    return {
        # first: it reports bob's own recall log, before any door below adds to it
        "eval": [("eval", "--from-telemetry", "--json")],
        "init": [("init", str(tmp / "fresh"))],
        # bob's own writes that carry alice's words (her title, her session's id) run on a
        # copy of the vault (see FRESH): what bob writes himself is his to read afterwards
        "new": [("new", "--title", TITLE, "--type", "decision", "--namespace", "shared",
                 "--json"),
                ("new", "--title", "Bob card", "--type", "fact", "--json")],
        "show": [("show", r) for r in every_ref] + [("show", "--raw", refs["id"])],
        "link": [("link", "Bob card", r, "--rel", "RELATES_TO") for r in every_ref]
        + [("link", r, "Billing runbook") for r in every_ref],
        "unlink": [("unlink", r, "Billing runbook") for r in every_ref],
        "doctor": [("doctor", "--json"), ("doctor",), ("doctor", "--fix")],
        "compile": [("compile", "--json"), ("compile", "--check", "--json"), ("compile",)],
        "watch": [],  # long-running: swept as a process below
        "ingest": [("ingest", str(src), "--json")],
        "distill": [("distill", "--json"), ("distill", refs["session"])],
        "trace": [("trace", r) for r in every_ref],
        "import": [("import", str(folder), "--json")],
        "demo": [],  # builds its own vault: nothing of this one
        "recall": [("recall", "wombatquill", "--json"), ("recall", "袋熊羽毛笔", "--json"),
                   ("recall", "wombatquill", "--all-namespaces", "--json"),
                   ("recall", "--from-nodes", refs["id"], "--json"),
                   ("recall", "--concepts", "wombatquill", "--json"),
                   ("recall", "wombatquill", "--format", "prompt"),
                   ("recall", "wombatquill", "--mode", "bm25", "--json"),
                   ("recall", "billing", "--json")],
        "traverse": [("traverse", r) for r in every_ref] + [("traverse", "Billing runbook"),
                                                           ("traverse", "Billing runbook",
                                                            refs["id"])],
        "schema": [("schema", "--json"), ("schema", "--node-types", "--json")],
        "status": [("status", "--json"), ("status",)],
        "export": [("export", "--format", "markdown", "--output", str(tmp / "md")),
                   ("export", "--format", "graphml", "--output", str(tmp / "g.graphml"))],
        "serve": [],  # swept through its routes below
        "lint": [("lint", "--format", "json", "--no-report"), ("lint", "--no-report")],
        "introspect": [("introspect", "--dry-run"), ("introspect",)],
        "restore": [("restore", r) for r in every_ref],
        "feedback": [("feedback", "useful", r) for r in every_ref]
        + [("feedback", "correct", r, "--text", "bob's correction") for r in every_ref]
        + [("feedback", "deprecate", r, "--reason", "bob") for r in every_ref],
        "mcp": [],  # swept through its tools, resources and prompts below
        "context": [("context", "--json"), ("context", "--query", "wombatquill", "--json")],
        "capture": [("capture", str(cap), "--json")],
        "promote-shared": [("promote-shared", r) for r in every_ref],
        "sync": [("sync", "--no-push", "--json")],
        "review": [("review", "--json"), ("review", "approve", refs["id"]),
                   ("review", "reject", refs["id"])],
    }


FRESH = {("new", "--title", TITLE), ("ingest",)}  # door prefixes run on a copy of the vault


def on_copy(args: tuple[str, ...]) -> bool:
    return any(args[:len(f)] == f for f in FRESH)


def readable_files(v: Path) -> dict[str, str]:
    """What bob may read as files: shared notes and reports, the shared digest and his own."""
    out = {}
    for p in sorted(v.rglob("*")):
        rel = p.relative_to(v).as_posix()
        if not p.is_file() or rel.startswith((".git/", ".alaya/")):
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        if p.suffix == ".md":
            head = text.split("\n---", 1)[0]
            ns = next((line.split(":", 1)[1].strip() for line in head.splitlines()
                       if line.startswith("namespace:")), "shared")
            if ns not in ("shared", "bob", "bob-main", "bob-ephemeral"):
                continue
        elif p.suffix in (".json", ".jsonl"):  # a session's raw file: its note's namespace
            note = p.with_suffix(".md")
            if note.exists() and "namespace: " in note.read_text().split("\n---", 1)[0] and \
                    "namespace: bob" not in note.read_text():
                continue
        out[rel] = text
    for rel in (".alaya/agent-digest.json", ".alaya/digest/bob.json", ".alaya/claims.jsonl"):
        if (v / rel).exists():
            out[rel] = (v / rel).read_text(encoding="utf-8")
    return out


def test_bob_reads_nothing_of_alices_in_his_files_or_in_shared_history(
        vault: tuple[Path, dict[str, str]]) -> None:
    v, _ = vault
    for rel, text in readable_files(v).items():
        assert not leaks(text), f"{rel}: {text[:300]}"
    shared = [rel for rel in readable_files(v) if rel.endswith(".md")]
    log = subprocess.run(["git", "log", "-p", "--all", "--", *shared], cwd=v,
                         capture_output=True, text=True).stdout
    assert not leaks(log), [line for line in log.splitlines() if leaks(line)][:10]
    messages = subprocess.run(["git", "log", "--all", "--format=%B"], cwd=v,
                              capture_output=True, text=True).stdout
    # commit messages are every reader's (git log shows them whatever the file): alice's
    # own commits name her notes' titles only in her own namespace's terms — never a secret
    assert "password" not in messages.lower()


def test_bob_meets_nothing_of_alices_through_any_cli_door(
        vault: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    v, refs = vault
    doors = cli_doors(v, refs, tmp_path)
    assert set(doors) == set(command_names()), "a command nobody sweeps: add it here"
    found = []
    import shutil

    for calls in doors.values():
        for args in calls:
            where = v
            if on_copy(args):
                where = tmp_path / f"copy-{len(found)}-{abs(hash(args))}"
                shutil.copytree(v, where, symlinks=True)
            out = run(where, *args)
            if leaks(out, args + ((refs["session"],) if args[0] == "ingest" else ())):
                found.append(f"{' '.join(args)} → {out[:300]}")
    for path in list((tmp_path / "md").rglob("*.md")) + [tmp_path / "g.graphml"]:
        if path.exists() and leaks(path.read_text()):
            found.append(f"export {path.name}")
    assert not found, "\n".join(found)


def test_the_watcher_tells_bob_nothing_of_alices(vault: tuple[Path, dict[str, str]]) -> None:
    v, refs = vault
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", "from cli.main import main; main()",
                             "--vault", str(v), "--agent", "bob", "watch", "--no-introspect",
                             "--debounce", "0.2"], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        threading.Event().wait(3)
        card = v / refs["path"]
        card.write_text(card.read_text() + "\nwombatquill edited while bob watches\n")
        threading.Event().wait(4)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert not leaks(out), out[-500:]


def test_bob_meets_nothing_of_alices_through_serve(vault: tuple[Path, dict[str, str]]) -> None:
    from compilers.serve import RecallServer, read_serve_file
    from vault_engine.store.namespaces import Caller
    from vault_engine.store.vault import Vault

    v, refs = vault
    found = []
    for pinned in ("bob", None):
        srv = RecallServer(Vault.open(v, caller=Caller.owner()), token=None, watch=False,
                           agent=pinned)
        thread = threading.Thread(target=srv.serve_forever, daemon=True)
        thread.start()
        for _ in range(100):
            if read_serve_file(v / ".alaya"):
                break
            threading.Event().wait(0.05)
        try:
            bodies = [{"query": q, "top_k": 20} for q in MARKS] + [
                {"from_nodes": [refs["id"]]}, {"concepts": ["wombatquill"]},
                {"query": "wombatquill", "all_namespaces": True},
                {"query": "wombatquill", "namespaces": ["alice"]}]
            for body in bodies:
                req = urllib.request.Request(
                    srv.url + "/recall", data=json.dumps(body).encode(), method="POST",
                    headers={"X-Alaya-Agent": "bob", "Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=30) as resp:
                        text = resp.read().decode()
                except urllib.error.HTTPError as exc:
                    text = exc.read().decode()
                if leaks(text, words(body)):
                    found.append(f"POST /recall {body} (pinned {pinned}): {text[:300]}")
            for path in ("/health", "/", "/recall", "/digest"):
                try:
                    with urllib.request.urlopen(srv.url + path, timeout=10) as resp:
                        text = resp.read().decode()
                except urllib.error.HTTPError as exc:
                    text = exc.read().decode()
                if leaks(text):
                    found.append(f"GET {path}: {text[:300]}")
        finally:
            srv.stop.set()
            thread.join(10)
    assert not found, "\n".join(found)


def test_another_agents_note_is_not_found_exactly_as_a_missing_one(
        vault: tuple[Path, dict[str, str]]) -> None:
    """Every door that takes a ref answers alice's ref word for word as it answers a ref to
    nothing at all: no refusal, no "exists but", no content comparison tells bob it is there."""
    import re

    v, refs = vault
    nothing = {"id": "card-0badc0de", "path": "cards/@alice/decision/Nothing here.md",
               "title": "Nothing here at all", "alias": "no-such-alias",
               "session": "session-nothing-at-all-7"}
    doors = [("show", "{r}"), ("show", "--raw", "{r}"), ("show", "{r}", "--json"),
             ("trace", "{r}"), ("traverse", "{r}"), ("traverse", "Billing runbook", "{r}"),
             ("link", "{r}", "Billing runbook"), ("link", "Billing runbook", "{r}"),
             ("unlink", "{r}", "Billing runbook"), ("feedback", "useful", "{r}"),
             ("feedback", "correct", "{r}", "--text", "x"),
             ("feedback", "deprecate", "{r}", "--reason", "x"), ("restore", "{r}"),
             ("promote-shared", "{r}"), ("distill", "{r}"), ("review", "approve", "{r}"),
             ("recall", "--from-nodes", "{r}", "--json")]

    def answer(args: tuple[str, ...], ref: str) -> str:
        out = run(v, *(a.format(r=ref) for a in args))
        out = out.replace(ref, "<ref>").replace(repr(ref), "<ref>")
        return re.sub(r'"latency_ms": [0-9.]+', "", out)

    differ = []
    for key, ref in refs.items():
        for door in doors:
            mine, none = answer(door, ref), answer(door, nothing[key])
            if mine != none:
                differ.append(f"{' '.join(door)} [{key}]:\n  alice's: {mine[:200]}\n  "
                              f"nothing: {none[:200]}")
    assert not differ, "\n".join(differ)


# last: bob's own MCP writes (a card with alice's title, a session of her id) stay in the vault
def test_bob_meets_nothing_of_alices_through_mcp(vault: tuple[Path, dict[str, str]]) -> None:
    from mcp import Client, StdioServerParameters

    v, refs = vault
    env = {k: val for k, val in os.environ.items() if k.startswith(("ALAYA_", "PATH", "HOME",
                                                                     "GIT_"))}
    env.update(ALAYA_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))
    params = StdioServerParameters(command=sys.executable, args=[
        "-c", "from cli.main import main; main()", "--vault", str(v), "mcp", "--agent", "bob"],
        env=env, cwd=str(ROOT))
    every_ref = [refs[k] for k in ("id", "path", "title", "alias", "session")]
    calls: list[tuple[str, dict[str, Any]]] = []
    for r in every_ref:
        calls += [("get", {"ref": r}), ("trace", {"card": r}), ("traverse", {"a": r}),
                  ("traverse", {"a": "Billing runbook", "b": r}),
                  ("link", {"a": r, "b": "Billing runbook"}),
                  ("unlink", {"a": r, "b": "Billing runbook"}),
                  ("feedback", {"verdict": "useful", "id": r}),
                  ("distill", {"session": r})]
    calls += [("recall", {"query": q, "top_k": 20}) for q in MARKS]
    calls += [("recall", {"from_nodes": [refs["id"]]}), ("recall", {"concepts": ["wombatquill"]}),
              ("context", {"query": "wombatquill"}), ("context", {}), ("status", {}),
              ("schema", {}), ("schema", {"what": "node-types"}),
              ("new", {"title": TITLE, "type": "decision"}),
              ("ingest", {"session": {"id": refs["session"], "turns": [
                  {"role": "user", "content": "guess"}]}})]

    async def sweep() -> tuple[set[str], list[str]]:
        found: list[str] = []
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            # resources and prompts first: bob's own writes below are his to read after
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            resources += [f"alaya://note/{r}" for r in every_ref]
            for uri in resources:
                try:
                    got = await client.read_resource(uri)
                    text = json.dumps([getattr(c, "text", "") for c in got.contents],
                                      ensure_ascii=False)
                except Exception as exc:  # noqa: BLE001 - a refusal's message is swept too
                    text = str(exc)
                if leaks(text, tuple(every_ref)):
                    found.append(f"resource {uri}: {text[:300]}")
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["alaya://note/{ref}"]
            prompts = (await client.list_prompts()).prompts
            for p in prompts:
                args = {a.name: "wombatquill" for a in (p.arguments or [])}
                got = await client.get_prompt(p.name, args)
                text = json.dumps([m.content.text for m in got.messages
                                   if hasattr(m.content, "text")], ensure_ascii=False)
                if leaks(text, ("wombatquill",)):
                    found.append(f"prompt {p.name}: {text[:300]}")
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                text = json.dumps([getattr(c, "text", "") for c in result.content]
                                  + [result.structured_content], ensure_ascii=False)
                if leaks(text, words(arguments)):
                    found.append(f"tool {name} {arguments}: {text[:300]}")
        return tools, found

    tools, found = asyncio.run(sweep())
    assert tools <= {name for name, _ in calls}, f"tools nobody sweeps: {tools - {n for n, _ in calls}}"
    assert not found, "\n".join(found)
