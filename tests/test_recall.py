"""Recall: the three modes, relation-restricted expansion, navigation, filters, side effects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.store.relations import relation_similarity
from vault_engine.store.vault import Vault

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "schemas" /
                     "recall.schema.json").read_text())
HASH = HashEmbedder(256)  # what ALAYA_EMBED_PROVIDER=hash gives the CLI


def card(root: Path, name: str, body: str = "", **fm: object) -> None:
    lines = [f"{k}: {json.dumps(v)}" for k, v in fm.items()]
    path = root / "cards" / "fact" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body + "\n", encoding="utf-8")


@pytest.fixture
def graph_vault(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Outage ─CAUSED_BY→ Config change ─CAUSED_BY→ Bad merge; Outage ─DEPENDS_ON→ Gateway;
    Outage ─LED_TO→ Postmortem; a private card of another agent; a claim valid only in 2025."""
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    card(vault_path, "Outage", "The checkout outage on Friday.\n\nCAUSED_BY:: [[Config change]]\n"
         "DEPENDS_ON:: [[Gateway]]\nLED_TO:: [[Postmortem]]",
         id="card-outage", title="Outage", tags=["incident"])
    card(vault_path, "Config change", "A config change removed the cache.\n\n"
         "CAUSED_BY:: [[Bad merge]]", id="card-config", title="Config change")
    card(vault_path, "Bad merge", "A bad merge reverted the cache settings.", id="card-merge",
         title="Bad merge")
    card(vault_path, "Gateway", "The gateway serves checkout traffic.", id="card-gateway",
         title="Gateway")
    card(vault_path, "Postmortem", "Postmortem written after the outage.", id="card-pm",
         title="Postmortem")
    card(vault_path, "Private plan", "Checkout outage private notes of agent b.",
         id="card-private", title="Private plan", namespace="bob-main")
    card(vault_path, "Old price", "", id="card-price", title="Old price",
         claims=[{"id": "c1", "text": "The checkout fee was 2 euros",
                  "valid_from": "2025-01-01", "valid_until": "2026-01-01"}])
    compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))
    return vault_path


def run(vault: Path, *args: str, input: str | None = None) -> dict:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "recall", *args], input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_three_modes_return_the_documented_json(graph_vault: Path) -> None:
    free = run(graph_vault, "checkout outage", "--json")
    structured = run(graph_vault, "--concepts", "outage,checkout", "--rel", "CAUSED_BY",
                     "--depth", "2", "--json")
    piped = run(graph_vault, "-", "--json", input=json.dumps(
        {"concepts": ["outage", "checkout"], "relations": ["CAUSED_BY"], "depth": 2}))
    for result in (free, structured, piped):
        jsonschema.validate(result, SCHEMA)
        assert result["nodes"] and result["latency_ms"] >= 0
    assert free["nodes"][0]["id"] == "card-outage"
    assert [n["id"] for n in structured["nodes"]] == [n["id"] for n in piped["nodes"]]


def test_rel_caused_by_only_follows_caused_by(graph_vault: Path) -> None:
    result = run(graph_vault, "--concepts", "outage", "--rel", "CAUSED_BY", "--depth", "2",
                 "--json", "--top-k", "10")
    expanded = {n["id"]: n for n in result["nodes"] if n["matched_rel"]}
    assert set(expanded) == {"card-config", "card-merge"}
    assert expanded["card-merge"]["via"] == "card-config"  # one CAUSED_BY step further
    assert {n["matched_rel"] for n in expanded.values()} == {"CAUSED_BY"}
    # relation-matched nodes come first in navigation mode
    assert result["nodes"][0]["id"] in expanded
    narrow = run(graph_vault, "why was there a checkout outage", "--json", "--top-k", "1",
                 "--depth", "0")
    assert [n["id"] for n in narrow["nodes"]] == ["card-outage"]
    explorable = {e["rel"]: e["rel_sim_to_query"] for e in narrow["explorable"]}
    assert {"DEPENDS_ON", "LED_TO", "CAUSED_BY"} <= set(explorable)  # paths for a next step
    assert explorable["CAUSED_BY"] > explorable["DEPENDS_ON"]  # "why …" asks for causes


def test_rel_causes_follows_led_to_but_not_depends_on(graph_vault: Path) -> None:
    result = run(graph_vault, "--concepts", "outage", "--rel", "CAUSES", "--json")
    matched = {n["id"]: n["matched_rel"] for n in result["nodes"] if n["matched_rel"]}
    assert matched == {"card-pm": "LED_TO"}
    assert relation_similarity("CAUSED_BY", "DEPENDS_ON") < 0.75 <= relation_similarity(
        "CAUSES", "LED_TO")


def test_from_nodes_continues_a_navigation(graph_vault: Path) -> None:
    result = run(graph_vault, "--from-nodes", "card-config", "--rel", "CAUSED_BY", "--json")
    assert [n["id"] for n in result["nodes"]] == ["card-merge"]
    assert result["nodes"][0]["via"] == "card-config"


def test_namespaces_as_of_and_filters(graph_vault: Path) -> None:
    ids = {n["id"] for n in run(graph_vault, "checkout outage private", "--json",
                                "--top-k", "20")["nodes"]}
    assert "card-private" not in ids  # another agent's private card
    ids = {n["id"] for n in run(graph_vault, "checkout outage private", "--json",
                                "--namespace", "bob-main", "--top-k", "20")["nodes"]}
    assert "card-private" in ids
    past = {n["id"] for n in run(graph_vault, "checkout fee", "--as-of", "2025-06-01",
                                 "--json")["nodes"]}
    now = {n["id"] for n in run(graph_vault, "checkout fee", "--as-of", "2026-06-01",
                                "--json")["nodes"]}
    assert "card-price" in past and "card-price" not in now
    tagged = run(graph_vault, "checkout", "--tag", "incident", "--json", "--depth", "0")
    assert [n["id"] for n in tagged["nodes"]] == ["card-outage"]


def test_recall_changes_no_tracked_file_and_logs_telemetry(graph_vault: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=graph_vault, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
                   cwd=graph_vault, check=True)
    run(graph_vault, "checkout outage", "--json")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=graph_vault,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""
    events = (graph_vault / ".alaya" / "telemetry" / "recall.jsonl").read_text().splitlines()
    event = json.loads(events[-1])
    assert event["query"] == "checkout outage" and event["hits"][0]["id"] == "card-outage"


def test_without_an_embedder_recall_answers_from_bm25(graph_vault: Path) -> None:
    result = recall(Vault.open(graph_vault).state_dir, RecallQuery(text="bad merge"),
                    embedder=None)
    assert result["nodes"][0]["id"] == "card-merge"
    assert "BM25" in result["warnings"][0]


def test_sessions_are_recall_targets_with_anchors(vault_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    examples = Path(__file__).resolve().parent.parent / "examples" / "sessions"
    CliRunner().invoke(cli, ["--vault", str(vault_path), "ingest", str(examples / "*.json")])
    CliRunner().invoke(cli, ["--vault", str(vault_path), "compile"])
    result = run(vault_path, "SKIP LOCKED export queue postgres", "--kind", "session", "--json")
    top = result["nodes"][0]
    assert top["kind"] == "session" and top["session_id"] == "session-20260405-140000"
    assert top["anchors"] and all(a.startswith("t") for a in top["anchors"])
    prompt = CliRunner().invoke(cli, ["--vault", str(vault_path), "recall", "postgres queue",
                                      "--format", "prompt"]).output
    assert "[[session-20260405-140000#^t" in prompt


def test_bad_input_is_a_usage_error(graph_vault: Path) -> None:
    for args, stdin in ((["-"], "{not json"), (["-"], '{"depth": "two"}'), ([], None),
                        (["--as-of", "yesterday-ish", "x"], None)):
        result = CliRunner().invoke(cli, ["--vault", str(graph_vault), "recall", *args],
                                    input=stdin)
        assert result.exit_code == 2, (args, result.output)


def test_fresh_compiles_before_answering(graph_vault: Path) -> None:
    card(graph_vault, "Late addition", "Zebra crossing sensors in the checkout lane.",
         id="card-late", title="Late addition")
    stale = run(graph_vault, "zebra crossing sensors", "--json")
    assert "card-late" not in [n["id"] for n in stale["nodes"]]
    fresh = run(graph_vault, "zebra crossing sensors", "--json", "--fresh")
    assert fresh["nodes"][0]["id"] == "card-late"


def _chat_vault(root: Path) -> Vault:
    from vault_engine.sessions.ingest import ingest

    turns = [("Joanna", "How long have you had your pet turtles?"),
             ("Nate", "Three years now, and they still make me happy."),
             ("Joanna", "I went hiking on the mountain trail yesterday."),
             ("Nate", "The weather was great for a long walk outside."),
             ("Joanna", "My new screenplay is almost finished."),
             ("Nate", "I won a video game tournament last week.")]
    ms = 1_650_000_000_000
    session = {"id": "chat-1", "timestamp": ms, "channel": "chat",
               "turns": [{"id": f"m{i}", "role": "user", "name": name, "content": text,
                          "timestamp": ms + i * 1000} for i, (name, text) in enumerate(turns)]}
    ingest(Vault.open(root), [("chat-1.json", json.dumps(session).encode())])
    return Vault.open(root)


def test_an_answer_is_found_through_the_question_before_it(vault_path: Path) -> None:
    """Turn context: "Three years now" never names the turtles; read with the question before
    it, it does. Every turn but a session's first gets that second vector."""
    vault = _chat_vault(vault_path)
    stats = compile_vault(vault, CompileOptions(embedder=HASH))
    assert (stats.units, stats.context_vectors) == (6, 5)
    question = "how long has Nate had his turtles"

    def best_turns(weight: float) -> list[str]:
        # turn context alone: without preferring Nate's turns and answers to the turns shown
        # (recall/anchors.py, which would show "Three years now" by itself)
        settings = RecallSettings(context_weight=weight, other_speaker_factor=1.0,
                                  asking_factor=1.0)
        result = recall(vault.state_dir, RecallQuery(text=question, mode="vector", top_k=3),
                        embedder=HASH, settings=settings, telemetry=False)
        assert [n["id"] for n in result["nodes"]] == ["chat-1"]
        return result["nodes"][0]["anchors"]

    assert "t2" not in best_turns(0.0)  # the answer alone: nothing in common with the query
    assert best_turns(0.5)[:2] == ["t1", "t2"]  # with its question: right after it


def test_turn_context_can_be_turned_off(vault_path: Path) -> None:
    vault = _chat_vault(vault_path)
    config = vault_path / "alaya.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "turn_context = true", "turn_context = false"), encoding="utf-8")
    stats = compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))
    assert (stats.units, stats.context_vectors, stats.embedded) == (6, 0, 6)
    result = recall(vault.state_dir, RecallQuery(text="turtles", mode="vector"), embedder=HASH,
                    telemetry=False)
    assert result["nodes"][0]["id"] == "chat-1"  # recall works without context vectors


def test_turning_turn_context_off_and_on_rebuilds(vault_path: Path) -> None:
    """A config change with no note changed still gives a new build: the vault's notes are
    the same, what is compiled from them is not."""
    vault = _chat_vault(vault_path)
    assert compile_vault(vault, CompileOptions(embedder=HASH)).context_vectors == 5
    config = vault_path / "alaya.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("turn_context = true", "turn_context = false"),
                      encoding="utf-8")
    off = compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))
    assert not off.up_to_date and off.context_vectors == 0
    assert compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH)).up_to_date
    config.write_text(text, encoding="utf-8")
    on = compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))
    assert not on.up_to_date and on.context_vectors == 5 and on.embedded == 0  # from the cache


def test_a_session_hit_shows_the_turn_before_its_best_turn(vault_path: Path) -> None:
    vault = _chat_vault(vault_path)
    compile_vault(vault, CompileOptions(embedder=HASH))
    result = recall(vault.state_dir, RecallQuery(text="three years happy", mode="bm25"),
                    embedder=None, telemetry=False)
    jsonschema.validate(result, SCHEMA)
    best = result["nodes"][0]["turns"][0]
    assert best["anchor"] == "t2" and "Three years now" in best["text"]
    assert best["before"].endswith("Joanna: How long have you had your pet turtles?")
    first = [t for n in result["nodes"] for t in n["turns"] if t["anchor"] == "t1"]
    assert all(t["before"] is None for t in first)
    from vault_engine.recall.present import prompt_block

    line = prompt_block(result).splitlines()[0]
    assert line.startswith("- [episodic] Joanna: How long have you had your pet turtles? → ")
    assert "Three years now" in line and line.endswith("([[chat-1#^t2]])")
