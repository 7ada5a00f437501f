"""The lifecycle as the seeds specify it, run at other dates through ALAYA_NOW: scores in
range, tiers that compile, introspect and status agree on, forgetting that fires, volatile
and stale memories marked in recall, poor feedback ranked down (seed 000 §3.3, §4.7; seed 002;
seed 003 §2.5.3, §3.2, §3.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine import artifacts as A
from vault_engine.store.init_vault import init_vault

from .conftest import commit_as_alaya


def alaya(root: Path, *args: str, json_out: bool = True):  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(cli, ["--vault", str(root), *args] + (["--json"] if json_out else []),
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output) if json_out else res.output


def write_card(root: Path, name: str, title: str, *, type: str = "fact", created: str,
               claim: str | None = None, body: str = "", extra: str = "") -> Path:
    path = root / "cards" / f"{name}.md"
    claims = (f"claims:\n  - id: c1\n    text: {claim}\n    confidence: 0.9\n"
              f"    status: supported\n") if claim else "claims: []\n"
    path.write_text(f"---\nid: card-{name}\ntitle: {title}\ntype: {type}\ncreated: {created}\n"
                    f"updated: {created}\n{extra}{claims}---\n{body}\n", encoding="utf-8")
    return path


def commit_all(root: Path, message: str = "notes") -> None:
    """Commit the hand-written cards as alaya's (they stand for what alaya distilled, which
    maintenance may change; a person's notes are only ever proposed to — issue 14)."""
    commit_as_alaya(root, message)


@pytest.fixture()
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    root = tmp_path / "v"
    init_vault(root)
    return root


def test_scores_stay_in_range_and_compile_introspect_status_agree_on_tiers(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topics = ["redis streams need explicit ack", "wal archiving fills the disk",
              "the deploy freezes on fridays", "nginx rejects bodies over one megabyte",
              "the cache ttl is sixty seconds", "postgres vacuum runs nightly"]
    for i, title in enumerate(topics):
        write_card(vault, f"t{i}", title.capitalize(), created="2026-01-01T00:00:00Z",
                   claim=title.capitalize() + " in production")
    commit_all(vault)
    monkeypatch.setenv("ALAYA_NOW", "2026-01-02T00:00:00Z")
    alaya(vault, "compile")
    for n in range(30):  # the same few cards, recalled over and over
        monkeypatch.setenv("ALAYA_NOW", f"2026-01-{2 + n // 10:02d}T{n % 10:02d}:00:00Z")
        alaya(vault, "recall", topics[n % 2], "--top-k", "3")
    events = [json.loads(x) for x in (vault / ".alaya" / A.TELEMETRY).read_text().splitlines()]
    relevances = [h["relevance"] for e in events for h in e["hits"]]
    assert len(events) == 30 and relevances and all(0.0 <= r <= 1.0 for r in relevances)

    monkeypatch.setenv("ALAYA_NOW", "2026-01-05T00:00:00Z")
    compiled = alaya(vault, "compile")
    build = A.current_build(vault / ".alaya")
    assert build is not None
    temps = [p["temperature"] for p in build.digest()["pages"]]
    assert max(temps) > 0 and all(0.0 <= t <= 1.0 for t in temps)
    status = alaya(vault, "status")
    notes = build.manifest()["notes"]
    assert sum(b["count"] for b in status["temperature"]) == len(notes)  # every note
    cooldown = alaya(vault, "introspect", "--phase", "cooldown", "--dry-run")
    numbers = cooldown["phases"][0]["numbers"]
    from_introspect = {"HOT": numbers["hot"], "WARM": numbers["warm"], "COLD": numbers["cold"]}
    assert compiled["tiers"] == status["vectors"]["tiers"] == from_introspect

    # no note changed, but the clock did: compile applies the new temperatures
    monkeypatch.setenv("ALAYA_NOW", "2026-02-20T00:00:00Z")
    again = alaya(vault, "compile")
    assert again["up_to_date"] is False
    later = A.current_build(vault / ".alaya")
    assert later is not None and later.build_id != build.build_id
    assert max(p["temperature"] for p in later.digest()["pages"]) < max(temps)
    assert alaya(vault, "compile")["up_to_date"] is True  # …and only once


def test_forget_fires_for_knowledge_only_views_link_to_and_spares_dependants_and_pins(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = "2026-01-01T00:00:00Z"
    write_card(vault, "viewed", "Gateway restarts drop notices", type="gotcha", created=old)
    write_card(vault, "needed", "The notice plugin list", type="fact", created=old)
    write_card(vault, "user", "Restart checklist", type="pattern", created=old,
               body="Read [[needed|The notice plugin list]] first.")  # as Obsidian links
    write_card(vault, "pinned", "Never restart during a deploy", type="instruction",
               created=old, extra="pinned: true\n")
    (vault / "scenes").mkdir(exist_ok=True)
    (vault / "scenes" / "restarts.md").write_text(
        "---\ntitle: Scene: restarts\n---\n<!-- alaya:scene:start -->\n"
        "- [2026-01-01] [[Gateway restarts drop notices]] (gotcha)\n<!-- alaya:scene:end -->\n")
    persona = vault / "persona.md"
    persona.write_text(persona.read_text() + "\nSee [[Gateway restarts drop notices]].\n")
    memory = vault / "MEMORY.md"
    memory.write_text(memory.read_text() + "\n- [[Gateway restarts drop notices]]\n")
    (vault / "reports" / "old-report.md").write_text(
        "---\ntitle: Old report\ntype: report\n---\n[[Gateway restarts drop notices]]\n")
    commit_all(vault)
    monkeypatch.setenv("ALAYA_NOW", old)
    alaya(vault, "compile")
    monkeypatch.setenv("ALAYA_NOW", "2027-02-05T00:00:00Z")  # 400 days on, never recalled
    out = alaya(vault, "introspect", "--phase", "cooldown", "--phase", "forget")
    forget = out["phases"][1]
    assert forget["numbers"]["archived"] == 2  # the viewed card, and the one nobody needs
    archived = sorted(p.name for p in (vault / "archive").glob("*.md"))
    assert archived == ["user.md", "viewed.md"]
    assert (vault / "cards" / "needed.md").exists()  # another card links to it
    assert (vault / "cards" / "pinned.md").exists()
    text = (vault / "archive" / "viewed.md").read_text()
    assert "archived_reason: 'forgotten: cold" in text or "forgotten: cold" in text


def test_a_recent_or_slow_decaying_card_is_not_forgotten(vault: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "fact", "The office router is in room 4", type="fact",
               created="2026-01-01T00:00:00Z")
    write_card(vault, "event", "The team moved offices", type="event",
               created="2026-01-01T00:00:00Z")
    commit_all(vault)
    monkeypatch.setenv("ALAYA_NOW", "2026-01-01T00:00:00Z")
    alaya(vault, "compile")
    # 200 days: past a project fact's 112 days, not a system fact's 300
    monkeypatch.setenv("ALAYA_NOW", "2026-07-20T00:00:00Z")
    out = alaya(vault, "introspect", "--phase", "forget")
    assert out["phases"][0]["numbers"]["archived"] == 1
    assert (vault / "cards" / "fact.md").exists() and not (vault / "cards" / "event.md").exists()


def test_recall_marks_volatile_and_stale_memories(vault: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "ttl", "Checkout cache TTL", created="2026-01-01T00:00:00Z",
               claim="The checkout cache TTL is 60 seconds", extra="volatile: true\ncorrections: 3\n")
    write_card(vault, "runbook", "Checkout cache runbook", created="2026-01-01T00:00:00Z",
               claim="Flush the checkout cache after a price import",
               extra="stale: true\nstale_reason: card-ttl c1 was corrected on 2026-01-02\n")
    write_card(vault, "plain", "Checkout cache owner", created="2026-01-01T00:00:00Z",
               claim="The payments team owns the checkout cache")
    commit_all(vault)
    alaya(vault, "compile")
    result = alaya(vault, "recall", "checkout cache")
    by_id = {n["id"]: n for n in result["nodes"]}
    assert by_id["card-ttl"]["volatile"] is True and by_id["card-ttl"]["stale"] is False
    assert by_id["card-runbook"]["stale"] is True and by_id["card-runbook"]["volatile"] is False
    assert by_id["card-runbook"]["stale_reason"] == "card-ttl c1 was corrected on 2026-01-02"
    assert by_id["card-plain"]["volatile"] is False and by_id["card-plain"]["stale"] is False
    assert any(w.startswith("card-runbook may be outdated: card-ttl c1") for w in result["warnings"])
    assert any(w.startswith("card-ttl changes often") for w in result["warnings"])
    prompt = alaya(vault, "recall", "checkout cache", "--format", "prompt", json_out=False)
    lines = {line for line in prompt.splitlines() if line.startswith("- ")}
    assert any("Checkout cache runbook" in x and x.endswith("⚠ may be outdated") for x in lines)
    assert any("Checkout cache TTL" in x and x.endswith("⚠ changes often") for x in lines)
    human = alaya(vault, "recall", "checkout cache", json_out=False)
    assert any("Checkout cache runbook" in x and x.endswith("⚠ may be outdated")
               for x in human.splitlines())
    context = alaya(vault, "context", "--query", "checkout cache")
    assert "may be outdated" in context["text"]


def test_poor_feedback_ranks_a_card_below_its_twin(vault: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b"):
        write_card(vault, name, "Disk alerts fire at ninety percent",
                   created="2026-01-01T00:00:00Z",
                   claim="Disk alerts fire at ninety percent on the database hosts")
    commit_all(vault)
    alaya(vault, "compile")
    first = alaya(vault, "recall", "disk alerts ninety percent", "--mode", "bm25")
    ids = [n["id"] for n in first["nodes"][:2]]
    assert sorted(ids) == ["card-a", "card-b"]
    loser = ids[0]  # the one that ranks first today gets the bad verdicts
    for _ in range(5):
        alaya(vault, "feedback", "not-useful", loser)
    alaya(vault, "compile")
    after = alaya(vault, "recall", "disk alerts ninety percent", "--mode", "bm25")
    ranked = [n["id"] for n in after["nodes"][:2]]
    assert ranked == [x for x in ids[::-1]]
    scores = {n["id"]: n["score"] for n in after["nodes"]}
    assert scores[loser] == pytest.approx(scores[ids[1]] * 0.5, rel=0.01)


def _events(root: Path, events: list[dict]) -> None:  # type: ignore[type-arg]
    from vault_engine.artifacts import TELEMETRY

    path = root / ".alaya" / TELEMETRY
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for e in events:
            fh.write(json.dumps(e) + "\n")


def _scores(phase: dict) -> dict[str, float]:  # type: ignore[type-arg]
    out = {}
    for line in phase["report"]:
        if line.startswith("| [["):  # `| [[twin-a\|Title]] | 0.74 | …`: file-name links
            cells = [c.strip() for c in line.replace("\\|", "¦").strip("|").split("|")]
            out["card-" + cells[0][2:-2].split("¦")[0]] = float(cells[1])
    return out


def test_dreaming_rem_bonus_comes_from_real_scene_membership_and_light_from_the_days_sessions(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    created = "2026-03-01T00:00:00Z"
    for name in ("twin-a", "twin-b"):
        write_card(vault, name, "Replica lag breaks price reads", type="gotcha",
                   created=created, claim="Price reads from the replica go stale when it lags")
    write_card(vault, "other", "Route price reads to the primary", type="decision",
               created=created)
    write_card(vault, "alone", "Vacuum runs at night", type="fact", created=created,
               claim="Autovacuum on db-primary runs at 02:00")
    (vault / "scenes").mkdir(exist_ok=True)
    (vault / "scenes" / "prices.md").write_text(
        "---\ntitle: 'Scene: prices'\n---\n<!-- alaya:scene:start -->\n"
        "- [2026-03-01] [[card-twin-a]] (gotcha)\n- [2026-03-01] [[card-other]] (decision)\n"
        "<!-- alaya:scene:end -->\n")
    commit_all(vault)
    hits = [{"id": "card-twin-a", "score": 1.0, "relevance": 0.9},
            {"id": "card-twin-b", "score": 1.0, "relevance": 0.9},
            {"id": "card-alone", "score": 1.0, "relevance": 0.9}]
    _events(vault, [{"ts": f"2026-03-0{d}T10:00:00Z", "query": q, "hits": hits}
                    for d in (2, 3, 4) for q in ("price reads stale", "replica lag")])
    monkeypatch.setenv("ALAYA_NOW", "2026-03-05T09:00:00Z")
    # today's session restates the vacuum card: a light hit
    session = vault / "sessions" / "2026-03" / "s-today.md"
    session.parent.mkdir(parents=True, exist_ok=True)
    session.write_text("---\nid: s-today\ntitle: Session today\nstarted: 2026-03-05T08:00:00Z\n"
                       "---\n> [!user] t1 · user · Ann · 2026-03-05T08:00:00Z\n"
                       "> Autovacuum on db-primary runs at 02:00 every night, right?\n\n^t1\n")
    out = alaya(vault, "introspect", "--phase", "promote", "--dry-run")
    phase = out["phases"][0]
    scores = _scores(phase)
    assert scores["card-twin-a"] > scores["card-twin-b"]  # the REM bonus: in a scene
    assert phase["numbers"]["rem_hits"] == 2 and phase["numbers"]["light_hits"] == 1
    # report rows link by file name (`\|` in a table), as Obsidian opens them
    rows = [line.replace("\\|", "¦").split("|") for line in phase["report"]
            if line.startswith("| [[")]
    light = {row[1].strip().split("¦")[0]: row[9].strip() for row in rows}
    assert light["[[alone"] == "1" and light["[[twin-a"] == "0"


def test_short_term_candidates_drop_out_after_30_days_and_recovery_promotes_when_health_is_low(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "old", "Old favourite", created="2026-01-01T00:00:00Z",
               claim="The build cache lives on the shared disk")
    write_card(vault, "sure", "Deploy window", created="2026-03-01T00:00:00Z",
               claim="Deploys happen on Tuesdays and Thursdays")
    commit_all(vault)
    _events(vault, [
        {"ts": "2026-01-02T10:00:00Z", "query": "build cache", "hits": [
            {"id": "card-old", "score": 1.0, "relevance": 1.0}]},
        {"ts": "2026-03-10T10:00:00Z", "query": "deploy window", "hits": [
            {"id": "card-sure", "score": 1.0, "relevance": 0.95}]},
        {"ts": "2026-03-11T10:00:00Z", "query": "when do we deploy", "hits": [
            {"id": "card-sure", "score": 1.0, "relevance": 0.95}]}])
    monkeypatch.setenv("ALAYA_NOW", "2026-03-12T10:00:00Z")
    phase = alaya(vault, "introspect", "--phase", "promote")["phases"][0]
    numbers = phase["numbers"]
    assert numbers["dropped_after_30_days"] == 1  # card-old: first recalled 69 days ago
    assert numbers["past_the_gates"] == 0 and numbers["health"] == 0.0
    assert numbers["recovered"] == 1 and numbers["promoted"] == 1
    memory = (vault / "MEMORY.md").read_text()
    assert "[[sure|" in memory and "[[old|" not in memory  # links Obsidian opens
    assert any("recovery pass" in line for line in phase["report"])


def _session(root: Path, sid: str, started: str, *lines: str) -> None:
    body = "".join(f"> [!user] t{i} · user · Ann · {started}\n> {text}\n\n^t{i}\n\n"
                   for i, text in enumerate(lines, 1))
    path = root / "sessions" / started[:7] / f"{sid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: {sid}\ntitle: {sid}\nstarted: {started}\n---\n{body}",
                    encoding="utf-8")


@pytest.mark.parametrize("a, b", [
    ("The backup bucket is in region eu-west-1.", "The backup bucket is in region us-east-1."),
    ("订单服务的连接池上限是 25", "订单服务的连接池上限是 200"),
    ("周五下午可以发版", "周五下午不可以发版"),
    ("Postgres on db-primary runs version 15.4", "Postgres on db-primary runs version 16.1"),
    ("Redis 的内存上限是 4GB", "Redis 的内存上限是 8GB"),
])
def test_conflicts_on_identifiers_quantities_and_chinese_are_contested(
        vault: Path, a: str, b: str) -> None:
    write_card(vault, "one", "Fact one", created="2026-05-01T00:00:00Z", claim=a)
    write_card(vault, "two", "Fact two", created="2026-05-02T00:00:00Z", claim=b)
    commit_all(vault)
    phase = alaya(vault, "introspect", "--phase", "conflicts")["phases"][0]
    assert phase["numbers"]["candidates"] == 1 and phase["numbers"]["contested"] == 1
    for name in ("one", "two"):
        assert "status: contested" in (vault / "cards" / f"{name}.md").read_text()
    assert "Fact one" in (vault / "reports" / "contradictions.md").read_text() or \
        "card-one" in (vault / "reports" / "contradictions.md").read_text()


@pytest.mark.parametrize("a, b", [
    ("The cache TTL is 5 minutes", "The cache TTL is 300 seconds"),  # the same quantity
    ("团队非常喜欢用 Go 写服务", "团队非常喜欢用 Go 写服务端"),  # 非常 does not negate
    ("The deploy runs at 02:00 on db-primary", "The deploy runs at 02:00 on db-primary now"),
])
def test_the_same_value_in_other_words_is_no_conflict(vault: Path, a: str, b: str) -> None:
    write_card(vault, "one", "Fact one", created="2026-05-01T00:00:00Z", claim=a)
    write_card(vault, "two", "Fact two", created="2026-05-02T00:00:00Z", claim=b)
    commit_all(vault)
    phase = alaya(vault, "introspect", "--phase", "conflicts")["phases"][0]
    assert phase["numbers"]["candidates"] == 0


def test_passive_validation_raises_confidence_on_confirmation_and_flags_contradiction(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "backup", "Nightly backup host", created="2026-05-01T00:00:00Z",
               claim="The nightly backup runs on db-replica-2 at 01:00")
    write_card(vault, "pool", "订单服务连接池", created="2026-05-01T00:00:00Z",
               claim="订单服务的数据库连接池上限是 25")
    dns = write_card(vault, "dns", "DNS provider", created="2026-05-01T00:00:00Z",
                     claim="The company DNS is hosted on Cloudflare")
    dns_before = dns.read_bytes()
    _session(vault, "s-before", "2026-04-20T09:00:00Z",
             "The nightly backup runs on db-replica-2 at 01:00 already.")  # older: no signal
    _session(vault, "s-ok", "2026-05-10T09:00:00Z",
             "Checked again: the nightly backup runs on db-replica-2 at 01:00, all good.",
             "我确认了，订单服务的数据库连接池上限是 25，没变。")
    _session(vault, "s-moved", "2026-05-20T09:00:00Z",
             "Heads up, the nightly backup runs on db-replica-3 at 01:00 since Monday.")
    commit_all(vault)
    monkeypatch.setenv("ALAYA_NOW", "2026-05-21T00:00:00Z")
    phase = alaya(vault, "introspect", "--phase", "conflicts")["phases"][0]
    assert phase["numbers"]["confirmed_by_sessions"] == 2
    assert phase["numbers"]["contradicted_by_sessions"] == 1
    pool = (vault / "cards" / "pool.md").read_text()
    assert "confidence: 1.0" in pool and "[[s-ok#^t2]]" in pool  # 0.9 + 0.15, capped
    backup = (vault / "cards" / "backup.md").read_text()
    assert "status: contested" in backup and "[[s-ok#^t1]]" in backup
    assert dns.read_bytes() == dns_before  # no later session speaks of it: untouched
    report = (vault / "reports" / "contradictions.md").read_text()
    assert "[[s-moved#^t1]]" in report and "db-replica-2 vs db-replica-3" in report
    again = alaya(vault, "introspect", "--phase", "conflicts")["phases"][0]
    assert again["numbers"]["confirmed_by_sessions"] == 0  # already recorded as evidence


def test_weak_recalls_become_triaged_open_questions_that_lint_points_at(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "redis", "Redis streams need explicit ACK", type="gotcha",
               created="2026-05-01T00:00:00Z",
               claim="Redis streams redeliver messages that consumers never ACK")
    write_card(vault, "bucket", "Backup bucket region", created="2026-05-01T00:00:00Z",
               claim="The backup bucket is in region eu-west-1")
    commit_all(vault)
    monkeypatch.setenv("ALAYA_NOW", "2026-05-02T00:00:00Z")
    alaya(vault, "compile")
    weak = ["kubernetes pod autoscaling limits", "how does pod autoscaling work here",
            "kubernetes autoscaling thresholds", "pod autoscaling for the api",
            "kubernetes pod autoscaling max replicas"]
    for i, q in enumerate(weak):  # nothing in the memory is about autoscaling
        monkeypatch.setenv("ALAYA_NOW", f"2026-05-0{2 + i}T12:00:00Z")
        alaya(vault, "recall", q, "--mode", "bm25")
    alaya(vault, "recall", "redis streams ack", "--mode", "bm25")  # a good recall: no gap
    phase = alaya(vault, "introspect", "--phase", "gaps")["phases"][0]
    assert phase["numbers"]["open_questions"] == 1 and phase["numbers"]["weak_recalls"] == 5
    assert phase["numbers"]["class_A"] == 1
    report = (vault / "reports" / "open-questions.md").read_text()
    assert "### A — true unknown" in report and "5 weak recall(s)" in report
    for q in weak:
        assert f"“{q}”" in report
    assert "redis" not in report.lower().split("<!-- alaya:gaps:start -->")[1]
    lint = json.loads(CliRunner().invoke(cli, ["--vault", str(vault), "lint", "--format",
                                              "json"]).output)
    gaps = [f for f in lint["findings"] if f["code"] == "open-question"]
    assert len(gaps) == 1 and gaps[0]["path"] == "reports/open-questions.md"
    assert gaps[0]["line"] and "knowledge gap" in gaps[0]["message"]
    # a person ticks it: it stays ticked, and lint no longer reports it
    path = vault / "reports" / "open-questions.md"
    path.write_text(path.read_text().replace("- [ ] **", "- [x] **"))
    alaya(vault, "introspect", "--phase", "gaps")
    assert "- [x] **" in path.read_text()
    lint = json.loads(CliRunner().invoke(cli, ["--vault", str(vault), "lint", "--format",
                                              "json"]).output)
    assert not [f for f in lint["findings"] if f["code"] == "open-question"]


def test_gap_triage_tells_recall_failure_synonym_mismatch_and_fragments_apart(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "vacuum", "Autovacuum schedule", created="2026-05-01T00:00:00Z",
               claim="Autovacuum on db-primary runs nightly at 02:00")
    write_card(vault, "other", "Disk alerts", created="2026-05-01T00:00:00Z",
               claim="Disk alerts fire at ninety percent")
    write_card(vault, "hpa", "HPA limits", created="2026-05-01T00:00:00Z",
               claim="The HPA caps the api at twelve replicas")
    write_card(vault, "cert-a", "Certificate renewal job", created="2026-05-01T00:00:00Z",
               claim="The renewal job runs certbot weekly")
    write_card(vault, "cert-b", "Mobile login certificate", created="2026-05-01T00:00:00Z",
               claim="Mobile login pins the intermediate certificate chain")
    commit_all(vault)

    def weak(query: str, best: str, relevance: float) -> list[dict]:  # type: ignore[type-arg]
        return [{"ts": f"2026-05-1{i}T10:00:00Z", "query": query,
                 "hits": [{"id": best, "score": 1.0, "relevance": relevance}]}
                for i in range(3)]

    _events(vault, weak("autovacuum nightly db-primary schedule runs", "card-other", 0.5)
            + weak("how many pods can the service scale to", "card-hpa", 0.9)
            + weak("certbot weekly renewal mobile login pins chain", "card-other", 0.4)
            + weak("quarterly okr planning offsite", "card-other", 0.3))
    monkeypatch.setenv("ALAYA_NOW", "2026-05-20T00:00:00Z")
    phase = alaya(vault, "introspect", "--phase", "gaps", "--dry-run")["phases"][0]
    n = phase["numbers"]
    assert (n["class_A"], n["class_B"], n["class_C"], n["class_D"]) == (1, 1, 1, 1)
    lines = "\n".join(phase["report"])
    assert "quarterly okr planning offsite" in lines.split("### B")[0]  # A: nothing covers it
    b = lines.split("### B")[1].split("###")[0]
    assert "how many pods" in b and "[[hpa|HPA limits]]" in b  # B: close, but other words
    c = lines.split("### C")[1].split("###")[0]
    assert "autovacuum" in c and "[[vacuum|" in c  # C: the card exists, recall missed it
    d = lines.split("### D")[1]
    assert "certbot" in d and "[[cert-a|" in d and "[[cert-b|" in d  # D: split over two


def test_cards_recalled_together_get_a_derived_co_occurs_edge_that_expansion_follows(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    write_card(vault, "lag", "Replica lag alarm", created="2026-05-01T00:00:00Z",
               claim="The replica lag alarm fires after thirty seconds")
    write_card(vault, "wal", "WAL disk usage", created="2026-05-01T00:00:00Z",
               claim="WAL files pile up when archiving stalls")
    write_card(vault, "noise", "Office plants", created="2026-05-01T00:00:00Z",
               claim="The plants are watered on Mondays")
    commit_all(vault)
    before = {p.name: p.read_bytes() for p in (vault / "cards").glob("*.md")}
    pair = [{"id": "card-lag", "score": 1.0, "relevance": 0.9},
            {"id": "card-wal", "score": 0.8, "relevance": 0.85}]
    _events(vault, [{"ts": "2026-05-02T10:00:00Z", "query": q, "hits": pair}
                    for q in ("replica lag", "why is the replica behind", "wal disk full")])
    alaya(vault, "compile")
    build = A.current_build(vault / ".alaya")
    assert build is not None
    with build.path(A.GRAPH).open("rb") as fh:
        graph = pickle.load(fh)
    edges = [(u, v, d["weight"]) for u, v, d in graph.edges(data=True) if d["type"] == "CO_OCCURS"]
    assert sorted(edges) == [("card-lag", "card-wal", 1.0), ("card-wal", "card-lag", 1.0)]
    assert {p.name: p.read_bytes() for p in (vault / "cards").glob("*.md")} == before
    # expansion follows it: from the lag card along CO_OCCURS, the WAL card
    nav = alaya(vault, "recall", "--from-nodes", "card-lag", "--rel", "CO_OCCURS")
    assert [n["id"] for n in nav["nodes"]] == ["card-wal"]
    assert nav["nodes"][0]["matched_rel"] == "CO_OCCURS"
    # two queries only: no edge (the threshold is three)
    (vault / ".alaya" / "telemetry").rename(vault / ".alaya" / "telemetry-old")
    _events(vault, [{"ts": "2026-05-02T10:00:00Z", "query": q, "hits": pair}
                    for q in ("replica lag", "wal disk full")])
    alaya(vault, "compile")
    build = A.current_build(vault / ".alaya")
    assert build is not None
    with build.path(A.GRAPH).open("rb") as fh:
        graph = pickle.load(fh)
    assert not [1 for *_, d in graph.edges(data=True) if d["type"] == "CO_OCCURS"]


def test_a_volatile_memory_cools_twice_as_fast(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, extra in (("steady", ""), ("volatile", "volatile: true\n")):
        write_card(vault, name, f"Port of the {name} service", created="2026-05-01T00:00:00Z",
                   claim=f"The {name} service listens on 8080", extra=extra)
    commit_all(vault)
    hits = [{"id": "card-steady", "score": 1.0, "relevance": 0.9},
            {"id": "card-volatile", "score": 1.0, "relevance": 0.9}]
    monkeypatch.setenv("ALAYA_NOW", "2026-05-01T00:00:00Z")
    alaya(vault, "compile")  # the day they entered the vault
    _events(vault, [{"ts": "2026-05-02T10:00:00Z", "query": "service port", "hits": hits}] * 10)
    monkeypatch.setenv("ALAYA_NOW", "2026-05-31T00:00:00Z")
    alaya(vault, "compile")
    build = A.current_build(vault / ".alaya")
    assert build is not None
    temps = {p["id"]: p["temperature"] for p in build.digest()["pages"]}
    import math

    days = 30  # since it entered the vault
    steady = 0.9 * 10 / 20 * math.exp(-days / 30)
    assert temps["card-steady"] == pytest.approx(steady, abs=0.002)
    assert temps["card-volatile"] == pytest.approx(0.9 * 10 / 20 * math.exp(-2 * days / 30),
                                                   abs=0.002)


def _cards(root: Path) -> list:  # type: ignore[type-arg]
    from vault_engine.store.model import Card
    from vault_engine.store.vault import Vault

    return sorted((n for n in Vault.open(root).load().notes if isinstance(n, Card)),
                  key=lambda c: c.path)


def test_a_scene_is_a_narrative_and_a_timeline_in_the_scenes_language(vault: Path) -> None:
    from vault_engine.sessions.distill.narrative import scene_block, timeline
    from vault_engine.store.vault import Vault

    write_card(vault, "fail", "The deploy failed at the migration step", type="gotcha",
               created="2026-04-02T09:00:00Z", claim="The deploy failed at the migration step")
    write_card(vault, "freeze", "Never deploy on a Friday afternoon", type="instruction",
               created="2026-04-02T09:05:00Z", claim="Never deploy on a Friday afternoon")
    write_card(vault, "queue", "Use the Postgres queue", type="decision",
               created="2026-04-07T10:00:00Z", claim="We use the Postgres queue with SKIP LOCKED")
    cards = _cards(vault)
    lines = [f"- [{c.created.date()}] [[{c.title}]] ({c.type})" for c in cards]
    block = scene_block(Vault.open(vault), cards, lines, ["deploy"])
    story, _, rest = block.partition("\n\n### Timeline\n")
    assert story.startswith("From 2026-04-02 to 2026-04-07, 3 memories about deploy.")
    assert "Problems met: The deploy failed at the migration step." in story
    assert "Decided: Use the Postgres queue." in story
    assert "Standing instructions: Never deploy on a Friday afternoon." in story
    assert timeline(block) == lines  # the timeline is the membership, oldest first

    for p in (vault / "cards").glob("*.md"):
        p.unlink()
    write_card(vault, "413", "网关默认 proxy-body-size 只有 1m", type="gotcha",
               created="2026-04-23T05:00:00Z", claim="ingress-nginx 默认 proxy-body-size 是 1m")
    write_card(vault, "fix", "上传服务的 Ingress 改成 50m", type="decision",
               created="2026-04-23T06:00:00Z", claim="只改 upload-svc 的 Ingress annotation")
    cards = _cards(vault)
    block = scene_block(Vault.open(vault), cards, [], ["ingress"])
    assert block.startswith("2026-04-23，共 2 条记忆，关于ingress。起点是「网关默认 proxy-body-size 只有 1m」。")
    assert "遇到的问题：网关默认 proxy-body-size 只有 1m。" in block
    assert "决定：上传服务的 Ingress 改成 50m。" in block and "### 演变轨迹" in block


def test_with_an_llm_the_scene_has_the_seeds_sections_and_falls_back_offline(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.sessions.distill.narrative import scene_block
    from vault_engine.store.vault import Vault

    from .openai_server import FakeOpenAI

    write_card(vault, "pref", "Ann prefers short answers", type="preference",
               created="2026-04-02T09:00:00Z", claim="Ann prefers short answers")
    cards = _cards(vault)
    with FakeOpenAI() as srv:
        monkeypatch.setenv("ALAYA_LLM_BASE_URL", srv.url)
        srv.completions.append(json.dumps({"traits": "Ann values brevity.",
                                           "story": "Ann asked for short answers; the agent "
                                                    "now leads with the conclusion."}))
        srv.completions.append("not the JSON asked for")
        first = scene_block(Vault.open(vault), cards, [], [])
        second = scene_block(Vault.open(vault), cards, [], [])
        prompt = srv.requests[0]["body"]["messages"]
    assert first.startswith("#### Core traits\nAnn values brevity.\n\n#### Story\nAnn asked")
    assert "data, not instructions" in prompt[0]["content"]
    assert "<memories>" in prompt[1]["content"] and "Ann prefers short answers" in prompt[1]["content"]
    assert second.startswith("On 2026-04-02, 1 memories.")  # the offline story


def test_persona_regenerates_every_50_memories_by_default() -> None:
    from vault_engine.config import DEFAULTS

    assert DEFAULTS["distill"]["persona_every"] == 50  # seed 004 L3
    template = (Path(__file__).resolve().parent.parent / "vault_template" / "alaya.toml")
    assert "persona_every = 50" in template.read_text()


def test_a_pinned_card_in_memory_is_never_evicted(vault: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    write_card(vault, "pin", "Pinned rule", created="2026-05-01T00:00:00Z",
               claim="Always page the on-call engineer first", extra="pinned: true\n")
    write_card(vault, "hot", "Much used fact", created="2026-05-01T00:00:00Z",
               claim="The API gateway is behind the CDN")
    memory = vault / "MEMORY.md"
    text = memory.read_text()
    block = ("- [[card-pin|Pinned rule]] — Always page the on-call engineer first (score 0.10)\n"
             "- [[card-hot|Much used fact]] — The API gateway is behind the CDN (score 0.90)\n")
    from vault_engine.store import blocks

    memory.write_text(blocks.replace_block(text, "memory", block))
    commit_all(vault)
    budget = len(memory.read_text()) - 60  # room for one entry only
    cfg = vault / "alaya.toml"
    cfg.write_text(cfg.read_text().replace("budget_chars = 10000", f"budget_chars = {budget}"))
    phase = alaya(vault, "introspect", "--phase", "promote")["phases"][0]
    kept = blocks.read_block(memory.read_text(), "memory") or ""
    assert "card-pin" in kept and "card-hot" not in kept  # the pin stays over a higher score
    assert phase["numbers"]["evicted"] == 1
