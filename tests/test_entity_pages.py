"""Entity pages: what the memory knows about each person, system or project named across
sessions — written by distill and introspect as a managed block of dated facts, each linked to
its turn; read by recall as facts; followed by graph expansion from a question to the sessions
that hold the facts. English and Chinese; a person's note, a private namespace and a second
run that changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.sessions.distill import distill
from vault_engine.sessions.ingest import ingest
from vault_engine.store.model import Entity, Session
from vault_engine.store.namespaces import Caller
from vault_engine.store.vault import Vault

from .conftest import commit_as_person, git_log

HASH = HashEmbedder(128)
DAY = 86_400_000
T0 = 1_775_000_000_000  # 2026-03-31T23:33:20Z


def session(sid: str, day: int, turns: list[tuple[str, str]]) -> tuple[str, bytes]:
    ms = T0 + day * DAY
    return f"{sid}.json", json.dumps({
        "id": sid, "timestamp": ms, "channel": "chat",
        "turns": [{"id": f"m{i}", "role": "user", "name": who, "content": text,
                   "timestamp": ms + i * 1000} for i, (who, text) in enumerate(turns)]}).encode()


SESSIONS = [
    session("chat-a", 0, [("Melanie", "I signed up for a pottery class yesterday."),
                          ("Caroline", "Wow, so cool!"),
                          ("Melanie", "Pottery helps me express my feelings and relax.")]),
    session("chat-b", 7, [("Melanie", "We went camping in the mountains two weekends ago."),
                          ("Caroline", "Did the kids like the camping trip?"),
                          ("Caroline", "Melanie told me the kids loved the campfire stories.")]),
    session("zh-a", 1, [("李娜", "连接池昨天又满了，支付服务一直超时。"),
                        ("王强", "我上周六把连接池的上限调到了 80。")]),
    session("zh-b", 3, [("李娜", "支付服务今天恢复了，连接池稳定在 40 左右。"),
                        ("王强", "好的")]),
]


def alaya(root: Path, *args: str) -> dict:  # type: ignore[type-arg]
    res = CliRunner().invoke(cli, ["--vault", str(root), *args, "--json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)  # type: ignore[no-any-return]


@pytest.fixture
def pages(vault_path: Path) -> Path:
    ingest(Vault.open(vault_path), SESSIONS)
    distill(Vault.open(vault_path), distiller="rules")
    return vault_path


def entity(root: Path, name: str) -> Entity:
    found = [n for n in Vault.open(root).load().notes if isinstance(n, Entity)
             and n.title == name]
    assert found, [n.title for n in Vault.open(root).load().notes if isinstance(n, Entity)]
    return found[0]


def test_distill_writes_a_page_for_each_name_said_in_two_sessions(pages: Path) -> None:
    mel = entity(pages, "Melanie")
    text = (pages / mel.path).read_text("utf-8")
    assert "<!-- alaya:facts:start -->\n## What we know about Melanie\n" in text
    assert "*person · 4 fact(s) from 2 session(s), 2026-03-31 – 2026-04-07. " in text
    # a dated happening of hers is an event card: it stands for its turn, dated by the day it
    # happened (issue 15: a statement with a day said outright is an event)
    assert "### From the cards\n- Melanie signed up for a pottery class yesterday. " \
           "([[chat-a#^t1|2026-03-30]], [[Melanie signed up for a pottery class yesterday]])" in text
    # her own statements, as said, dated, each linked to its turn
    assert "- Melanie: Pottery helps me express my feelings and relax. [[chat-a#^t3|t3]]" in text
    assert "two weekends ago (week of 2026-03-23)" in text
    assert "- Caroline: Melanie told me the kids loved the campfire stories. " \
           "[[chat-b#^t3|t3]]" in text  # someone else naming her
    assert "Wow, so cool" not in text and "Did the kids" not in text  # no reactions, questions
    assert "### 2026-03-31 · [[chat-a|Session 2026-03-31 23:33 · chat]]" in text
    # Chinese: the person and the system part, with a Chinese heading
    zh = (pages / entity(pages, "连接池").path).read_text("utf-8")
    assert "## 关于连接池，我们知道的" in zh and "*系统 · 来自 2 次会话的 3 条事实（2026-04-01 – 2026-04-03）" in zh
    assert "- 李娜: 连接池昨天（2026-03-31）又满了，支付服务一直超时。 [[zh-a#^t1|t1]]" in zh
    # a card's claim stands for the turn it cites, dated by the day it happened
    assert "### 卡片里的事实\n- 王强上周六把连接池的上限调到了 80。 ([[zh-a#^t2|2026-03-28]], " \
           "[[王强上周六把连接池的上限调到了 80]])" in zh
    assert entity(pages, "李娜").entity_type == "person"
    assert entity(pages, "支付服务").entity_type == "system"
    # distill's own commit for them
    assert any(m.startswith("entities: ") for m in git_log(pages))


def test_every_link_on_a_page_opens_its_turn(pages: Path) -> None:
    """Obsidian renders the page (headings, list items, the block's markers are comments) and
    every link resolves to a note that has the turn's block id."""
    from markdown_it import MarkdownIt

    index = Vault.open(pages).load()
    written = [n for n in index.notes if isinstance(n, Entity) and "alaya:facts" in n.body]
    assert len(written) >= 4
    for note in written:
        links = [link for link in note.links if link.block]
        assert links, note.path
        for link in links:
            target = index.resolver.resolve(link.target, note.path).note
            assert isinstance(target, Session), (note.path, link.raw)
            assert link.block in target.block_ids, (note.path, link.raw)
        tokens = MarkdownIt().parse(note.body)
        kinds = {t.type for t in tokens}
        assert {"heading_open", "bullet_list_open", "html_block"} <= kinds


def test_introspect_refreshes_pages_and_a_second_run_commits_nothing(pages: Path) -> None:
    before = git_log(pages)
    alaya(pages, "introspect", "--phase", "entities")
    assert git_log(pages) == before  # distill already wrote them: nothing new
    ingest(Vault.open(pages), [session("chat-c", 9, [
        ("Melanie", "I finished my first pottery bowl last Friday.")])])
    out = alaya(pages, "introspect", "--phase", "entities")
    phase = out["phases"][0]
    assert phase["numbers"]["pages_written"] >= 1 and phase["commit"]
    assert git_log(pages)[0].startswith("introspect: entities — ")
    text = (pages / entity(pages, "Melanie").path).read_text("utf-8")
    assert "I finished my first pottery bowl last Friday (2026-04-03)." in text
    assert "from 3 session(s)" in text
    again = git_log(pages)
    alaya(pages, "introspect", "--phase", "entities")
    assert git_log(pages) == again


def test_a_persons_entity_note_is_left_alone_unless_it_asks(vault_path: Path) -> None:
    ingest(Vault.open(vault_path), SESSIONS)
    notes = vault_path / "entities"
    notes.mkdir(exist_ok=True)
    mine = "---\ntitle: Melanie\ntype: person\n---\nMy friend from the pottery class.\n"
    theirs = ("---\ntitle: Caroline\ntype: person\n---\nCaroline — my notes.\n\n"
              "<!-- alaya:facts:start -->\n<!-- alaya:facts:end -->\n\nMore of mine below.\n")
    (notes / "Melanie.md").write_text(mine, encoding="utf-8")
    (notes / "Caroline.md").write_text(theirs, encoding="utf-8")
    commit_as_person(vault_path)
    out = alaya(vault_path, "introspect", "--phase", "entities")
    assert (notes / "Melanie.md").read_text("utf-8") == mine  # byte for byte
    assert any("entities/Melanie.md: a person's note without the facts block" in line
               for line in out["phases"][0]["report"])
    text = (notes / "Caroline.md").read_text("utf-8")
    assert text.startswith("---\ntitle: Caroline\ntype: person\n---\nCaroline — my notes.\n\n"
                           "<!-- alaya:facts:start -->\n## What we know about Caroline")
    assert text.endswith("<!-- alaya:facts:end -->\n\nMore of mine below.\n")


def test_a_private_session_never_reaches_a_shared_page(vault_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(Vault.open(vault_path), SESSIONS[:2])
    bob = Vault.open(vault_path, caller=Caller.of_agent("bob"))
    ingest(bob, [session("bob-1", 2, [("Melanie", "My secret plan is a surprise party.")])])
    alaya(vault_path, "introspect", "--phase", "entities")
    page = (vault_path / entity(vault_path, "Melanie").path).read_text("utf-8")
    assert "surprise party" not in page and "bob-1" not in page
    private = [n for n in Vault.open(vault_path).load().notes if isinstance(n, Session)
               and n.namespace == "bob"]
    assert private  # the session is there, in bob's namespace


def _curated_vault(root: Path) -> Vault:
    """Three sessions and an entity page whose facts say more than the turns they cite."""
    ingest(Vault.open(root), [
        session("s-a", 0, [("Mel", "Hello there, long week.")]),
        session("s-b", 1, [("Mel", "Yes, started it last week, finally!")]),
        session("s-c", 2, [("Mel", "The violin lessons went fine.")]),
    ])
    (root / "entities").mkdir(exist_ok=True)
    (root / "entities" / "Mel.md").write_text(
        "---\nid: ent-mel\ntitle: Mel\ntype: person\n---\n<!-- alaya:facts:start -->\n"
        "## What we know about Mel\n\n### 2026-04-01 · [[s-b|Session]]\n"
        "- Mel took up ceramics and pottery glazing. [[s-b#^t1|t1]]\n\n"
        "### 2026-04-02 · [[s-c|Session]]\n- Mel plays the violin. [[s-c#^t1|t1]]\n\n"
        "See also [[s-a]].\n<!-- alaya:facts:end -->\n", encoding="utf-8")
    vault = Vault.open(root)
    compile_vault(vault, CompileOptions(embedder=HASH))
    return vault


def test_expansion_goes_from_a_question_to_the_sessions_of_the_facts_it_matched(
        vault_path: Path) -> None:
    vault = _curated_vault(vault_path)

    def sessions(kinds: tuple[str, ...], expand: bool) -> dict[str, dict]:  # type: ignore[type-arg]
        nodes = recall(vault.state_dir, RecallQuery(text="ceramics pottery glazing", mode="bm25",
                                                    kinds=kinds, expand=expand),
                       embedder=None, settings=RecallSettings(), telemetry=False)["nodes"]
        return {n["id"]: n for n in nodes}

    plain = sessions((), False)
    assert "s-b" not in plain  # its turn does not say "pottery"
    assert plain["ent-mel"]["facts"][0] == {
        "text": "[2026-04-01] Mel took up ceramics and pottery glazing.", "source": "[[s-b#^t1]]"}
    found = sessions(("session",), True)
    assert list(found) == ["s-b"]  # only the session of the matched fact, not s-a or s-c
    assert found["s-b"]["via"] == "ent-mel" and found["s-b"]["depth"] == 1
    # asked for by name (--from-nodes), the page leads to every session it links
    nav = recall(vault.state_dir, RecallQuery(from_nodes=("Mel",), kinds=("session",)),
                 embedder=None, telemetry=False)["nodes"]
    assert {n["id"] for n in nav} == {"s-a", "s-b", "s-c"}


def test_an_entity_hit_scores_as_its_best_fact_and_yields_to_new_sessions(
        vault_path: Path) -> None:
    """A page restates turns: it scores as its best fact (not the sum of its facts, not the
    page as one document) and, like a hit graph expansion added, moves below the hits that
    bring a session not shown yet when its facts' sessions are already above it."""
    vault = _curated_vault(vault_path)
    ingest(Vault.open(vault_path), [session("s-d", 3, [(
        "Ann", "Ann bought new strings for the old violin she keeps in the attic at her "
               "parents' house near the lake.")])])
    compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))

    def nodes(diversify: bool) -> list[dict]:  # type: ignore[type-arg]
        return recall(vault.state_dir, RecallQuery(text="violin lessons", mode="bm25", expand=False),
                      embedder=None, settings=RecallSettings(diversify=diversify,
                                                             mmr_lambda=1.0),
                      telemetry=False)["nodes"]

    plain = nodes(False)
    page = next(n for n in plain if n["kind"] == "entity")
    assert [f["source"] for f in page["facts"]] == ["[[s-c#^t1]]"]  # its one matching fact
    assert page["score"] < 0.5 < plain[0]["score"]  # as good as that fact, no more
    assert [n["id"] for n in plain] == ["s-c", "ent-mel", "s-d"]  # by score …
    assert [n["id"] for n in nodes(True)] == ["s-c", "s-d", "ent-mel"]  # … s-d brings news
