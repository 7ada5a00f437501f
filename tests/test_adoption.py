"""A vault a person keeps (issue 14, Build 2, 3, 5, 6 and the acceptance lines): maintenance
never rewrites their notes, every link alaya writes opens in Obsidian (checked by the
independent resolver), every id alaya hands out opens."""

from __future__ import annotations

import json
import re
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from benchmarks import obsidian_links as oracle
from cli.main import cli
from vault_engine.collab.review import pending
from vault_engine.store.vault import Vault

from .conftest import commit_as_person

LINK_RE = re.compile(r"!?\[\[([^\]\n]+?)\]\]")


def alaya(root: Path, *args: str) -> dict:
    res = CliRunner().invoke(cli, ["--vault", str(root), *args, "--json"],
                             catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.output)


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def _snapshot(root: Path, paths: list[str]) -> dict[str, bytes]:
    return {p: (root / p).read_bytes() for p in paths}


@pytest.fixture
def kept(vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's notes (Chinese and English) brought in with `alaya import`: two are
    near-duplicates, two share a title but not a text, one links by alias, one by heading.
    A plain note of theirs sits beside them, committed by them."""
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    src = tmp_path / "mine"
    body = ("Redis 持久化：AOF 每秒同步一次，RDB 每小时快照。重启前先确认 AOF 文件完整，"
            "否则数据会丢失。\n\nAOF fsync every second, RDB snapshot hourly.\n")
    _write(src, "运维/Redis 持久化.md", "---\ntags: [redis]\naliases: [持久化]\n---\n"
           "# Redis 持久化\n\n" + body)
    _write(src, "运维/旧笔记/Redis 持久化 (copy).md", "# Redis 持久化\n\n" + body)
    _write(src, "Journal/Plan.md", "# Plan\n\nThe Q3 plan: ship the gateway, hire two.\n")
    _write(src, "Work/Plan.md", "# Plan\n\nTrip plan: Kyoto in April, book the ryokan.\n")
    _write(src, "Home.md", "# Home\n\n- [[持久化]] (an alias: Obsidian won't open it)\n"
           "- [[Redis 持久化#Redis 持久化]]\n- [[Plan]] and [[Journal/Plan]]\n")
    alaya(vault_path, "import", str(src))
    _write(vault_path, "Inbox.md", "# Inbox\n\n- call the plumber\n")
    commit_as_person(vault_path, "我的笔记")
    return vault_path


PERSONS = ["cards/imported/" + p for p in (
    "运维/Redis 持久化.md", "运维/旧笔记/Redis 持久化 (copy).md", "Journal/Plan.md",
    "Work/Plan.md", "Home.md")] + ["Inbox.md"]


def test_introspect_never_rewrites_a_persons_notes_and_proposes_instead(kept: Path) -> None:
    before = _snapshot(kept, PERSONS)
    alaya(kept, "compile")
    out = alaya(kept, "introspect")
    assert _snapshot(kept, PERSONS) == before  # not a byte changed
    assert not list((kept / "archive").glob("*.md"))  # nothing of theirs archived
    consolidate = next(p for p in out["phases"] if p["name"] == "consolidate")
    assert any("merge [[Redis 持久化 (copy)" in p for p in consolidate["proposals"])
    assert not any("Plan" in p for p in consolidate["proposals"])  # same title, other text
    report = next((kept / "reports").glob("introspect-*.md")).read_text(encoding="utf-8")
    assert "proposed (a person's note, not changed): merge" in report
    # the proposal waits in the review queue, where the person decides
    items = pending(Vault.open(kept))
    assert [i.path for i in items] == ["archive/Redis 持久化 (copy).md"]  # moved there
    assert "merged_into: '[[Redis 持久化]]'" in items[0].diff
    # a second run with nothing new: no commit on either branch
    repo = git.Repo(kept)
    head, queue = repo.head.commit.hexsha, repo.commit("alaya/proposals").hexsha
    again = alaya(kept, "introspect")
    assert not any(p["commit"] for p in again["phases"])
    assert repo.head.commit.hexsha == head and repo.commit("alaya/proposals").hexsha == queue


def test_lint_on_a_persons_vault_is_signal(kept: Path) -> None:
    doc = alaya(kept, "lint", "--format", "json")
    codes = {(f["code"], f["path"]) for f in doc["findings"]}
    assert ("alaya-only-link", "cards/imported/Home.md") in codes  # [[持久化]] is an alias
    fix = next(f["fix"] for f in doc["findings"] if f["code"] == "alaya-only-link")
    assert fix == "write [[Redis 持久化|持久化]]"
    assert not any(c in ("missing-source", "missing-type", "near-duplicate")
                   and p.endswith(("Journal/Plan.md", "Work/Plan.md")) for c, p in codes)
    assert not [f for f in doc["findings"] if f["severity"] == "error"]
    assert git.Repo(kept).git.status("--porcelain") == ""  # lint wrote nothing


def _alaya_links(root: Path, rel: str) -> list[str]:
    return [m.group(1) for m in LINK_RE.finditer((root / rel).read_text(encoding="utf-8"))]


def test_every_link_alaya_writes_resolves_under_obsidians_rules(vault_path: Path,
                                                                monkeypatch) -> None:
    """recall --save, traverse --save, introspect (SIMILAR_TO, REFERENCES, merged_into) and
    lint's fixes, with two notes of the same file name: each link is resolved by the
    independent resolver and lands on the note meant."""
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    runner = CliRunner()

    def new(title: str, ctype: str, claim: str, body: str = "") -> None:
        res = runner.invoke(cli, ["--vault", str(vault_path), "new", "--title", title, "--type",
                                  ctype, "--claim", claim, "--body", body])
        assert res.exit_code == 0, res.output

    new("Redis", "fact", "Redis keeps the price cache for 60 seconds")
    _write(vault_path, "cards/decision/Redis.md", "---\nid: card-redis-d\ntitle: Redis streams\n"
           "type: decision\n---\nWe chose Redis streams for the order queue.\n")  # same name
    new("Redis 缓存", "fact", "价格缓存放在 Redis 里，60 秒过期")
    new("Price cache TTL", "fact", "The price cache in Redis expires after 60 seconds")
    new("Price cache TTL copy", "fact", "The price cache in Redis expires after 60 seconds")
    _write(vault_path, "entities/Redis server.md", "---\nid: ent-redis\ntitle: Redis server\n"
           "type: system\naliases: [redis-server]\n---\n")
    new("Ops note", "fact", "The redis-server restarts nightly")
    from .conftest import commit_as_alaya

    commit_as_alaya(vault_path)  # the entity and card, as alaya would have written them
    alaya(vault_path, "compile")
    saved = alaya(vault_path, "recall", "Redis price cache", "--save")["saved"]["path"]
    trav = alaya(vault_path, "traverse", "Price cache TTL", "--save")["saved"]["path"]
    alaya(vault_path, "introspect")
    files = oracle.list_vault_files(vault_path)
    index = Vault.open(vault_path).load()
    checked = 0
    written = [saved, trav] + [n.path for n in index.notes if n.kind in ("card", "archive")]
    for rel in written:
        note = index.by_path(rel)
        targets = _alaya_links(vault_path, rel)
        if rel.startswith("cards/"):  # only what alaya added to frontmatter
            assert note is not None
            targets = [lk.raw[2:-2] for lk in note.links
                       if lk.field in ("relations", "merged_into") and lk.frontmatter]
        for inner in targets:
            target = inner.split("|")[0].split("#")[0]
            hit = oracle.resolve(target, rel, files)
            assert hit is not None and hit.endswith(".md"), (rel, inner)
            checked += 1
    assert checked >= 6
    # same file name in two folders: the link alaya writes is the shortest unambiguous path
    text = (vault_path / saved).read_text(encoding="utf-8")
    assert "[[fact/Redis" in text or "[[decision/Redis" in text
    archived = list((vault_path / "archive").glob("*.md"))
    assert archived and "merged_into: '[[Price cache TTL" in archived[0].read_text()
    # lint's fixes name links Obsidian resolves
    _write(vault_path, "Index.md", "See [[redis-server]] and [[Price cache TTL#Nope]].\n")
    doc = alaya(vault_path, "lint", "--format", "json")
    fixes = [f["fix"] for f in doc["findings"] if f["path"] == "Index.md"]
    assert fixes
    for fix in fixes:
        for m in LINK_RE.finditer(fix):
            assert oracle.resolve(m.group(1).split("|")[0].split("#")[0], "Index.md",
                                  oracle.list_vault_files(vault_path)), fix


def test_every_id_alaya_hands_out_opens(vault_path: Path, monkeypatch) -> None:
    """Plain notes have no id: recall, the digest and traverse call them `path:…`, and show,
    trace, traverse and recall --from-nodes open them."""
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    _write(vault_path, "笔记/部署 checklist.md", "# 部署 checklist\n\n先备份数据库，再部署。\n"
           "Back up the database first. See [[Rollback]].\n")
    _write(vault_path, "Rollback.md", "# Rollback\n\nRoll back with the previous image tag.\n")
    commit_as_person(vault_path)
    alaya(vault_path, "compile")
    nodes = alaya(vault_path, "recall", "部署 备份数据库")["nodes"]
    key = next(n["id"] for n in nodes if n["path"] == "笔记/部署 checklist.md")
    assert key == "path:笔记/部署 checklist.md"
    assert alaya(vault_path, "show", key)["path"] == "笔记/部署 checklist.md"
    assert alaya(vault_path, "trace", key)["path"] == "笔记/部署 checklist.md"
    hood = alaya(vault_path, "traverse", key)
    assert any(n["title"] == "Rollback" for n in hood["nodes"])
    again = alaya(vault_path, "recall", "--from-nodes", key)
    assert any(n["id"] == "path:Rollback.md" for n in again["nodes"])
    # and through MCP, from a real `alaya mcp` process
    from .test_agents import mcp_session, payload

    _, results = mcp_session(vault_path, [("get", {"ref": key}), ("trace", {"card": key})])
    assert payload(results[0])["path"] == "笔记/部署 checklist.md"
    assert not results[1].is_error
