"""alaya's own link reading and resolution (vault_engine/store/links.py) against the fixture
vault built from Obsidian's documented behaviour (tests/fixtures/obsidian_rules and its
hand-reasoned expectations), and every link alaya writes checked by the independent
resolver (benchmarks/obsidian_links.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks import obsidian_links as oracle
from cli.main import cli
from vault_engine.store.links import has_block, has_heading, scan_body
from vault_engine.store.model import Session
from vault_engine.store.notes import parse_note
from vault_engine.store.vault import Vault

FIXTURES = Path(__file__).parent / "fixtures"
VAULT = FIXTURES / "obsidian_rules"
EXPECTED = json.loads((FIXTURES / "obsidian_rules.expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def index():  # type: ignore[no-untyped-def]
    return Vault(VAULT).load()


def _body_links(index, source: str):  # type: ignore[no-untyped-def]
    note = index.by_path(source)
    assert note is not None, source
    return note, [lk for lk in note.links if not lk.frontmatter]


def test_alaya_reads_every_link_obsidian_reads_and_nothing_else(index) -> None:  # type: ignore[no-untyped-def]
    want: dict[str, list[tuple[int, str]]] = {}
    for e in EXPECTED["links"]:
        want.setdefault(e["source"], []).append((e["line"], e["raw"]))
    for source in EXPECTED["notes"]:
        _, links = _body_links(index, source)
        got = sorted((lk.line, lk.raw) for lk in links)
        assert got == sorted(want.get(source, [])), source


@pytest.mark.parametrize("entry", EXPECTED["links"],
                         ids=lambda e: f"{e['source']}:{e['line']}:{e['raw']}")
def test_alaya_resolves_each_link_as_obsidian(entry: dict, index) -> None:  # type: ignore[no-untyped-def]
    note, links = _body_links(index, entry["source"])
    link = next(lk for lk in links if (lk.line, lk.raw) == (entry["line"], entry["raw"]))
    res = index.resolver.resolve_link(link, note.path)
    assert res.file == entry["target_path"], entry["why"]
    ok = None
    if res.note is not None and (link.heading or link.block):
        ok = has_block(res.note.block_ids, link.block) if link.block else \
            has_heading(res.note.headings, link.heading)
        if link.block and isinstance(res.note, Session):
            ok = ok or res.note.turn(link.block) is not None
    assert ok == entry["heading_ok"], entry["why"]


@pytest.mark.parametrize("entry", EXPECTED["not_links"], ids=lambda e: f"{e['source']}:{e['raw']}")
def test_not_links_are_not_links_for_alaya(entry: dict, index) -> None:  # type: ignore[no-untyped-def]
    _, links = _body_links(index, entry["source"])
    assert entry["raw"] not in [lk.raw for lk in links], entry["why"]


def test_graph_pairs_match_the_oracle_on_the_fixture(tmp_path: Path) -> None:
    """The compiled graph's note-to-note pairs are Obsidian's (oracle) pairs."""
    from compilers.options import CompileOptions
    from compilers.pipeline import compile_vault
    from vault_engine.artifacts import current_build
    from vault_engine.providers.embedding import HashEmbedder

    root = tmp_path / "v"
    shutil.copytree(VAULT, root)
    (root / "alaya.toml").write_text("")
    vault = Vault(root)
    compile_vault(vault, CompileOptions(embedder=HashEmbedder(64)))
    build = current_build(vault.state_dir)
    assert build is not None
    graph = build.graph()
    path_of = {k: d["path"] for k, d in graph.nodes(data=True)}
    got = {(path_of[a], path_of[b]) for a, b, d in graph.edges(data=True)
           if d.get("origin") in ("body", "embed", "inline") and a != b}
    want = oracle.vault_pairs(root, include_self=False)
    assert got == want


def test_lint_has_no_false_link_error_on_the_fixture(tmp_path: Path) -> None:
    """Every link error lint reports is one Obsidian would show too (unresolved, or a
    heading/block that does not exist); links to notes not created yet are warnings."""
    root = tmp_path / "v"
    shutil.copytree(VAULT, root)
    (root / "alaya.toml").write_text("")
    res = CliRunner().invoke(cli, ["--vault", str(root), "lint", "--format", "json",
                                   "--select", "broken-wikilink"])
    doc = json.loads(res.output)
    errors = {(f["path"], f["line"]) for f in doc["findings"] if f["severity"] == "error"}
    truly = {(e["source"], e["line"]) for e in EXPECTED["links"]
             if e["heading_ok"] is False or (e["target_path"] is None and e["raw"].startswith(
                 ("[[../", "[[./")))}
    assert errors <= truly, errors - truly
    warned = {(f["path"], f["line"]) for f in doc["findings"] if f["code"] == "unresolved-link"}
    missing = {(e["source"], e["line"]) for e in EXPECTED["links"] if e["target_path"] is None}
    assert warned <= missing


def test_scan_body_edge_cases_in_chinese_and_english() -> None:
    body = ("见 [[部署指南#步骤 1：安装|安装步骤]] 和 ![[架构图.png]]\n"
            "| a | [[Note\\|别名]] |\n"
            "`[[not a link]]` $[[math]]$ %%[[comment]]%% <!-- [[html]] -->\n"
            "[相对](../上级/笔记.md) [外部](https://example.org/x.md) [空格](<My Note.md#Part 2>)\n")
    links, _ = scan_body(body)
    assert [(lk.target, lk.heading, lk.display, lk.embed, lk.kind) for lk in links] == [
        ("部署指南", "步骤 1：安装", "安装步骤", False, "wiki"),
        ("架构图.png", None, None, True, "wiki"),
        ("Note", None, "别名", False, "wiki"),
        ("../上级/笔记.md", None, "相对", False, "markdown"),
        ("My Note.md", "Part 2", "空格", False, "markdown"),
    ]
    note = parse_note("a/b.md", "---\ntags: [x]\n---\n# 标题 #不是标签吗\n正文 #部署/生产 #123 "
                                "`#code` [[L#not-a-tag]]\n")
    assert note.tags == ("x", "不是标签吗", "部署/生产")


def test_heading_matching_ignores_case_punctuation_and_markup() -> None:
    heads = [(1, "Settings"), (2, "General"), (3, "Account?"), (2, "The **bold** part"),
             (2, "步骤 1：安装")]
    assert has_heading(heads, "settings#general#account")  # nested, case, trailing ?
    assert has_heading(heads, "General#Account")
    assert has_heading(heads, "The bold part")
    assert has_heading(heads, "步骤 1：安装")
    assert not has_heading(heads, "Account#General")  # order matters
    assert not has_heading(heads, "Nope")
