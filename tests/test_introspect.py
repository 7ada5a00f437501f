"""`alaya introspect` on real vaults in git: merges, contradictions, promotion into MEMORY.md,
forgetting and restore — one commit per phase, and --dry-run changes nothing."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.care.introspect.promote import six_factor
from vault_engine.care.introspect.runner import PHASES
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.store import blocks
from vault_engine.store.vault import Vault
from vault_engine.telemetry import NoteStats

from .conftest import commit_as_alaya
from .test_lint import RAW, SESSION, card, claim
from .test_lint import planted as _planted  # noqa: F401  (fixture)


@pytest.fixture()
def planted(_planted: Path) -> Path:  # noqa: F811
    root = _planted
    # a link to the card that will lose the merge, from another card's text
    p = root / "cards" / "broken.md"
    p.write_text(p.read_text().replace(
        "See [[No such note]]", "See [[restart-b|the gotcha]]"))
    # restart-a holds more (a second claim): it survives, restart-b is merged into it
    a = root / "cards" / "restart-a.md"
    a.write_text(a.read_text().replace("relations:", claim(
        "c2", "The plugin list is read once at gateway start") + "\nrelations:"))
    commit_as_alaya(root, "planted")  # cards alaya distilled: maintenance may change them
    return root


def run(root: Path, *args: str) -> dict:
    res = CliRunner().invoke(cli, ["--vault", str(root), "introspect", "--json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and ".alaya" not in p.parts}


def test_dry_run_changes_nothing(planted: Path) -> None:
    before, head = snapshot(planted), git.Repo(planted).head.commit.hexsha
    out = run(planted, "--dry-run")
    assert [p["name"] for p in out["phases"]] == list(PHASES)
    consolidate = next(p for p in out["phases"] if p["name"] == "consolidate")
    assert consolidate["numbers"]["duplicate_pairs"] == 1
    assert snapshot(planted) == before and git.Repo(planted).head.commit.hexsha == head


def test_merges_duplicates_marks_contradiction_one_commit_per_phase(planted: Path) -> None:
    repo = git.Repo(planted)
    head = repo.head.commit.hexsha
    out = run(planted)
    assert out["phases"][1]["numbers"]["duplicate_pairs"] == 1
    # one commit per phase that changed something (issue 14: no commit for a no-op phase)
    committed = [p["name"] for p in out["phases"] if p["commit"]]
    assert {"consolidate", "conflicts"} <= set(committed)
    commits = [c.message.splitlines()[0] for c in repo.iter_commits(f"{head}..HEAD")]
    phase_commits = [m for m in commits if m.startswith("introspect: ")]
    assert [m.split(" ")[1] for m in reversed(phase_commits)] == committed
    # the duplicates: one archived with merged_into, its claims and links moved to the other
    archived = list((planted / "archive").glob("*.md"))
    assert len(archived) == 1
    loser = archived[0].read_text()
    assert archived[0].name == "restart-b.md"
    # merged_into is a link Obsidian opens (file name | title), never a bare id (issue 14)
    assert "merged_into: '[[restart-a|Gateway restart needs the telegram plugin]]'" in loser
    assert "archived_reason: merged into" in loser
    # a link in a note's own text is never rewritten: it now opens the tombstone (Obsidian
    # finds archive/restart-b.md by its name), and the report says where to re-point it
    linking = (planted / "cards" / "broken.md").read_text()
    assert "See [[restart-b|the gotcha]]" in linking
    text = (planted / "cards" / "restart-a.md").read_text()
    assert "aliases: [Gateway restart needs telegram plugin]" in text  # the old title finds it
    assert text.count("- id: c") == 2  # the same statement in other words was united
    # the contradiction: both claims contested, linked, listed for a person
    for name in ("cache-ttl", "cache-expiry"):
        assert "status: contested" in (planted / "cards" / f"{name}.md").read_text()
    assert "CONTRADICTS" in (planted / "cards" / "cache-expiry.md").read_text() or \
        "CONTRADICTS" in (planted / "cards" / "cache-ttl.md").read_text()
    contradictions = (planted / "reports" / "contradictions.md").read_text()
    # the values with their units (quantities compare after normalising them)
    assert "300 seconds vs 60 seconds" in contradictions or \
        "60 seconds vs 300 seconds" in contradictions
    report = next((planted / "reports").glob("introspect-*.md")).read_text()
    for phase in committed:
        assert f"## {phase} · " in report
    assert "[[broken|Deploy notes]] still links to [[restart-b|" in report
    # the vault is still consistent: no broken links, no claim-conflict left
    res = CliRunner().invoke(cli, ["--vault", str(planted), "lint", "--format", "json",
                                   "--no-report"])
    codes = {f["code"] for f in json.loads(res.output)["findings"]}
    assert "claim-conflict" not in codes and "near-duplicate" not in codes
    assert "contradiction-present" in codes
    # restore brings the merged card back where it was
    res = CliRunner().invoke(cli, ["--vault", str(planted), "restore", archived[0].stem])
    assert res.exit_code == 0, res.output
    assert not archived[0].exists()


def test_conflict_resolved_by_recency_when_far_apart(tmp_path: Path) -> None:
    from vault_engine.store.init_vault import init_vault

    root = tmp_path / "v"
    init_vault(root)
    (root / "sessions" / "session-a.md").write_text(SESSION)
    (root / "sessions" / "session-a.json").write_text(RAW)
    old = claim("c1", "The staging database runs on port 5432").replace(
        "status: supported", "status: supported\n  valid_from: 2025-01-01")
    new = claim("c1", "The staging database runs on port 6432").replace(
        "status: supported", "status: supported\n  valid_from: 2026-06-01")
    card(root, "old", id="card-old", title="Staging DB port", claims=[old],
         relations=["- {type: RELATES_TO, target: '[[Staging DB]]'}"])
    card(root, "new", id="card-new", title="Staging DB", claims=[new])
    commit_as_alaya(root)
    out = run(root, "--phase", "conflicts")
    assert out["phases"][0]["numbers"] == {"candidates": 1, "resolved": 1, "contested": 0,
                                           "confirmed_by_sessions": 0,
                                           "contradicted_by_sessions": 0}
    old_text = (root / "cards" / "old.md").read_text()
    assert "status: superseded" in old_text and "superseded_by: '[[new|Staging DB]] c1'" in old_text
    assert "status: supported" in (root / "cards" / "new.md").read_text()


def test_recalls_promote_into_memory_within_budget_human_text_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.store.init_vault import init_vault

    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    root = tmp_path / "v"
    init_vault(root)
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text() + "\nI prefer tabs. Never deploy on Fridays.\n")
    human_before = blocks.outside_blocks(memory.read_text())
    topics = {"redis": "Redis streams need explicit ACK", "wal": "WAL archiving fills the disk",
              "tabs": "The team indents with tabs", "deploy": "Deploys freeze on Fridays"}
    for key, title in topics.items():
        card(root, key, id=f"card-{key}", title=title, type="gotcha",
             claims=[claim("c1", title + " in production")],
             relations=["- {type: RELATES_TO, target: '[[card-deploy]]'}"])
    compile_vault(Vault.open(root), CompileOptions(embedder=HashEmbedder()))
    # recalls over three days (relevance is the hit's similarity in [0, 1]: BM25 here, the
    # best hit of each recall counting 1.0 — the hash embedder's cosines mean nothing)
    queries = [("2026-05-01", "redis streams ack"), ("2026-05-01", "redis explicit ack"),
               ("2026-05-02", "streams need ack redis"), ("2026-05-02", "wal archiving disk"),
               ("2026-05-03", "redis ack production")]
    for day, q in queries:
        monkeypatch.setenv("ALAYA_NOW", f"{day}T10:00:00Z")
        res = CliRunner().invoke(cli, ["--vault", str(root), "recall", q, "--json",
                                       "--top-k", "1", "--mode", "bm25"])
        assert res.exit_code == 0, res.output
    out = run(root, "--phase", "promote")
    numbers = out["phases"][0]["numbers"]
    assert numbers["promoted"] >= 1
    text = memory.read_text()
    block = blocks.read_block(text, "memory", "MEMORY.md") or ""
    assert "[[redis|Redis streams need explicit ACK]]" in block and "(score 0." in block
    assert "card-tabs" not in block  # never recalled
    assert blocks.outside_blocks(text) == human_before  # byte-identical human text
    assert len(text) <= 10_000
    # a budget too small for every entry: the lowest score goes, never the human text
    cfg = root / "alaya.toml"
    cfg.write_text(cfg.read_text().replace("budget_chars = 10000",
                                           f"budget_chars = {len(text) - 5}"))
    run(root, "--phase", "promote")
    assert blocks.outside_blocks(memory.read_text()) == human_before
    assert len(memory.read_text()) <= len(text) - 5


def test_forget_archives_cold_unlinked_old_cards(tmp_path: Path) -> None:
    from vault_engine.store.init_vault import init_vault

    root = tmp_path / "v"
    init_vault(root)
    old = card(root, "old", id="card-old", title="Ancient trivia",
               claims=[claim("c1", "The old build server was named zeus")])
    old.write_text(old.read_text().replace("2026-11-01T10:00:00Z", "2025-01-01T10:00:00Z"))
    pinned = card(root, "pinned", id="card-pin", title="Pinned trivia",
                  claims=[claim("c1", "The first office was in Berlin")])
    pinned.write_text(pinned.read_text().replace("2026-11-01T10:00:00Z", "2025-01-01T10:00:00Z")
                      .replace("type: fact", "type: fact\npinned: true"))
    commit_as_alaya(root)
    out = run(root, "--phase", "forget")
    assert out["phases"][0]["numbers"]["archived"] == 1
    archived = (root / "archive" / "old.md").read_text()
    assert "archived_reason: 'forgotten: cold" in archived or \
        "archived_reason: \"forgotten: cold" in archived or "forgotten: cold" in archived
    assert pinned.exists()


def test_six_factor_matches_the_seed_formula() -> None:
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    s = NoteStats(access_count=10, last_accessed=now - dt.timedelta(days=14),
                  first_accessed=now - dt.timedelta(days=21), scores=[0.8, 0.6],
                  queries={"a", "b", "c", "d", "e"}, days={"1", "2", "3", "4", "5"})
    sc = six_factor(s, concepts=3, now=now)
    assert sc.factors["frequency"] == 1.0 and sc.factors["relevance"] == 0.7
    assert sc.factors["diversity"] == 1.0 and sc.factors["recency"] == 0.5
    assert sc.factors["consolidation"] == 1.0 and sc.factors["concepts"] == 0.5
    assert sc.score == pytest.approx(0.24 + 0.30 * 0.7 + 0.15 + 0.15 * 0.5 + 0.10 + 0.03)


def feedback(root: Path, *args: str) -> dict:
    res = CliRunner().invoke(cli, ["--vault", str(root), "feedback", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_feedback_quality_correct_and_deprecate(tmp_path: Path) -> None:
    from vault_engine.store.init_vault import init_vault

    root = tmp_path / "v"
    init_vault(root)
    card(root, "ttl", id="card-ttl", title="Cache TTL",
         claims=[claim("c1", "The cache TTL is 60 seconds")])
    card(root, "alert", id="card-alert", title="Cache alert",
         claims=[claim("c1", "The alert fires when hits drop")],
         relations=["- {type: DEPENDS_ON, target: '[[Cache TTL]]'}"])
    card(root, "other", id="card-other", title="Unrelated", claims=[claim("c1", "Tabs")])
    commit_as_alaya(root)  # alaya's cards: deprecate archives them (a person's: proposed)
    # quality: useful ÷ all verdicts, kept in telemetry, no markdown touched
    head = git.Repo(root).head.commit.hexsha
    feedback(root, "useful", "card-ttl")
    out = feedback(root, "not-useful", "card-ttl")
    assert out["quality"] == {"useful": 1, "not_useful": 1, "score": 0.5}
    assert git.Repo(root).head.commit.hexsha == head
    # correct: the claim rewritten in one commit, dependants marked stale, others untouched
    other_before = (root / "cards" / "other.md").read_bytes()
    out = feedback(root, "correct", "card-ttl", "--text", "The cache TTL is 300 seconds")
    assert out["changed"] == ["cards/ttl.md", "cards/alert.md"]
    ttl = (root / "cards" / "ttl.md").read_text()
    assert "text: The cache TTL is 300 seconds" in ttl and "corrections: 1" in ttl
    alert = (root / "cards" / "alert.md").read_text()
    assert "stale: true" in alert and "card-ttl c1 was corrected" in alert
    assert (root / "cards" / "other.md").read_bytes() == other_before
    commit = git.Repo(root).head.commit
    assert commit.message.startswith("feedback: correct Cache TTL c1")
    assert "- The cache TTL is 60 seconds" in commit.message
    assert set(commit.stats.files) == {"cards/ttl.md", "cards/alert.md"}
    res = CliRunner().invoke(cli, ["--vault", str(root), "lint", "--format", "json",
                                   "--no-report", "--select", "stale-page"])
    assert [f["path"] for f in json.loads(res.output)["findings"]] == ["cards/alert.md"]
    # bad input: no text, unknown claim
    res = CliRunner().invoke(cli, ["--vault", str(root), "feedback", "correct", "card-ttl"])
    assert res.exit_code == 2 and "--text" in res.output
    res = CliRunner().invoke(cli, ["--vault", str(root), "feedback", "correct", "card-ttl",
                                   "--claim", "c9", "--text", "x"])
    assert res.exit_code == 1 and "c9" in res.output
    # deprecate: archived with the reason; restore brings it back
    out = feedback(root, "deprecate", "card-other", "--reason", "not ours")
    archived = (root / "archive" / "other.md").read_text()
    assert "archived_reason: 'deprecated: not ours'" in archived
    assert not (root / "cards" / "other.md").exists()
    assert CliRunner().invoke(cli, ["--vault", str(root), "restore", "card-other"]).exit_code == 0
    assert (root / "cards" / "other.md").read_bytes() == other_before


def test_forget_archives_a_card_people_keep_marking_not_useful(tmp_path: Path) -> None:
    from vault_engine.store.init_vault import init_vault

    root = tmp_path / "v"
    init_vault(root)
    card(root, "bad", id="card-bad", title="Bad advice", claims=[claim("c1", "Restart it")])
    commit_as_alaya(root)
    for _ in range(5):
        feedback(root, "not-useful", "card-bad")
    out = run(root, "--phase", "forget")
    assert out["phases"][0]["numbers"]["archived"] == 1
    assert "deprecated by feedback" in (root / "archive" / "bad.md").read_text()


def test_llm_judges_conflict_candidates_and_bad_answers_fall_back(
        planted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from .openai_server import FakeOpenAI

    with FakeOpenAI() as srv:
        monkeypatch.setenv("ALAYA_LLM_BASE_URL", srv.url)
        monkeypatch.setenv("ALAYA_LLM_MODEL", "judge")
        srv.completions.append('{"contradiction": true, "keep": "b", "reason": "b is newer"}')
        out = run(planted, "--phase", "conflicts")
        assert out["phases"][0]["numbers"] == {"candidates": 1, "resolved": 1, "contested": 0,
                                               "confirmed_by_sessions": 0,
                                               "contradicted_by_sessions": 0}
        prompt = srv.requests[-1]["body"]["messages"][1]["content"]
        assert "300 seconds" in prompt and "60 seconds" in prompt
    texts = [(planted / "cards" / f"{n}.md").read_text() for n in ("cache-ttl", "cache-expiry")]
    assert sum("status: superseded" in t for t in texts) == 1
    assert any("resolution: 'LLM: b is newer'" in t for t in texts)


def test_llm_answer_that_is_not_json_leaves_the_rules_in_charge(
        planted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from .openai_server import FakeOpenAI

    with FakeOpenAI() as srv:
        monkeypatch.setenv("ALAYA_LLM_BASE_URL", srv.url)
        srv.completions.append("Sure! They contradict, keep the first one.")
        out = run(planted, "--phase", "conflicts")
    assert out["phases"][0]["numbers"] == {"candidates": 1, "resolved": 0, "contested": 1,
                                           "confirmed_by_sessions": 0,
                                           "contradicted_by_sessions": 0}


def test_consolidate_links_cards_to_entities_they_name(tmp_path: Path) -> None:
    from vault_engine.store.init_vault import init_vault

    root = tmp_path / "v"
    init_vault(root)
    (root / "entities" / "Redis.md").write_text(
        "---\nid: ent-redis\ntitle: Redis\ntype: system\naliases: [redis-streams]\n---\n")
    card(root, "ack", id="card-ack", title="Consumers must ACK",
         claims=[claim("c1", "Our redis-streams consumers must ACK every message")])
    card(root, "cache", id="card-cache", title="Cache in Redis", type="decision",
         claims=[claim("c1", "The price cache lives in Redis")],
         relations=["- {type: REFERENCES, target: '[[Redis]]'}"])  # already linked
    card(root, "other", id="card-other", title="Predisposed", claims=[claim("c1", "Unrelated")])
    commit_as_alaya(root)
    out = run(root, "--phase", "consolidate")
    assert out["phases"][0]["numbers"]["entity_links"] == 1
    assert "{type: REFERENCES, target: '[[Redis]]'" in (root / "cards" / "ack.md").read_text()
    assert (root / "cards" / "cache.md").read_text().count("REFERENCES") == 1
    assert "REFERENCES" not in (root / "cards" / "other.md").read_text()  # no partial words


def test_consolidate_joins_causal_chains_across_sessions(tmp_path: Path) -> None:
    """A card that says it caused something, and a card of another session that describes
    that something: CAUSED_BY between them (and the same for "because of …"). Not within one
    session, not on a one-word phrase, never twice."""
    from vault_engine.store.init_vault import init_vault

    root = tmp_path / "v"
    init_vault(root)

    def session_card(name: str, session: str, text: str) -> None:
        path = card(root, name, id=f"card-{name}", title=name.capitalize(),
                    claims=[claim("c1", text)])
        path.write_text(path.read_text().replace("[[session-a]]", f"[[{session}]]"))

    session_card("lag", "s-prices", "The replica had replication lag of 40 minutes, so it "
                 "served old prices")
    session_card("creds", "s-wal", "The archive credentials expired and the disk filled, which "
                 "caused replication lag of 40 minutes")
    session_card("panel", "s-wal", "The panel shows replication lag of 40 minutes")  # same session
    session_card("migration", "s-migrate", "The 2am migration failed because of the nightly "
                 "backup lock")
    session_card("backup", "s-backup", "The nightly backup takes a lock on every table")
    session_card("restart", "s-deploy", "The deploy restarted the pods, which caused downtime")
    session_card("downtime", "s-status", "Customers reported downtime on the status page")
    commit_as_alaya(root)
    out = run(root, "--phase", "consolidate")
    assert out["phases"][0]["numbers"]["causal_links"] == 2
    text = {p.stem: p.read_text() for p in (root / "cards").glob("*.md")}
    assert "{type: CAUSED_BY, target: '[[creds|Creds]]'" in text["lag"]
    assert "{type: CAUSED_BY, target: '[[backup|Backup]]'" in text["migration"]
    assert "CAUSED_BY" not in text["panel"]  # its own session's card said it
    assert "CAUSED_BY" not in text["downtime"]  # "downtime" alone is too little to join on
    assert run(root, "--phase", "consolidate")["phases"][0]["numbers"]["causal_links"] == 0
