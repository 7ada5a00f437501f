"""`alaya compile`: every artifact, incremental, atomic, deterministic, degrading gracefully."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import faiss
import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine import artifacts as A
from vault_engine.care.freshness import check_artifacts
from vault_engine.providers.embedding import EmbeddingError, HashEmbedder
from vault_engine.store.vault import Vault

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "schemas" /
                     "agent-digest.schema.json").read_text())
HASH = HashEmbedder(64)


def compile_(vault: Vault, **kw) -> object:
    return compile_vault(vault, CompileOptions(embedder=kw.pop("embedder", HASH), **kw))


def cli_json(vault_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["--vault", str(vault_path), *args, "--json"], env=env)
    return result.exit_code, json.loads(result.output)


@pytest.fixture
def hash_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")


def test_compile_writes_every_artifact_and_digest_validates(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    stats = compile_(vault)
    build = A.current_build(vault.state_dir)
    assert build is not None and build.build_id == stats.build
    for name in (A.MANIFEST, A.UNITS, A.VECTORS["HOT"], A.LEXICAL, A.GRAPH, A.DIGEST, A.CLAIMS):
        assert build.path(name).exists(), name
    digest = build.digest()
    jsonschema.validate(digest, SCHEMA)
    pages = {p["id"]: p for p in digest["pages"]}
    card = pages["card-7f3a2c"]
    assert card["kind"] == "card" and card["claims"][0]["id"] == "c1"
    assert {"type": "EXTRACTED_FROM", "target": "session-20260331-062900", "weight": 1.0} in \
        card["relations"]
    units = build.units()
    session_units = [u for u in units if u["kind"] == "session"]
    assert [u["anchor"] for u in session_units] == ["t1", "t2", "t3"]
    assert session_units[0]["snippet"].startswith("[2026-03-31] Alice: Why didn't I get")
    claims = build.path(A.CLAIMS).read_text().splitlines()
    assert any(json.loads(c)["claim"] == "c2" for c in claims)
    index = build.vector_index("HOT")
    assert index.ntotal == stats.vectors["HOT"] == len([u for u in units if u["tier"] == "HOT"])


def test_graph_edges(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    (awkward_vault / "cards" / "gotcha" / "Peer.md").write_text(
        "---\nid: card-peer\ntitle: Peer\nrelations:\n  - {type: SIMILAR_TO, target: '[[Brad]]'}\n"
        "---\nsee [[Brad]] and [[bom]]\n", encoding="utf-8")
    compile_(vault)
    graph = A.current_build(vault.state_dir).graph()
    assert graph.nodes["card-peer"]["kind"] == "card"
    assert graph.nodes["ent-brad"]["title"] == "Brad"
    # symmetric: traversable both ways; the body link to Brad is dropped (typed edge exists)
    assert graph.has_edge("card-peer", "ent-brad", key="SIMILAR_TO")
    assert graph.has_edge("ent-brad", "card-peer", key="SIMILAR_TO")
    assert not graph.has_edge("card-peer", "ent-brad", key="RELATES_TO")
    assert graph.has_edge("card-peer", "card-bom", key="RELATES_TO")
    edge = graph.get_edge_data("card-7f3a2c", "session-20260331-062900")["EXTRACTED_FROM"]
    assert edge["type"] == "EXTRACTED_FROM" and edge["weight"] == 1.0


def test_editing_one_claim_embeds_exactly_one_text(awkward_vault: Path, hash_env: None) -> None:
    code, first = cli_json(awkward_vault, "compile")
    # every unit, plus each session turn read with the one before it
    assert code == 0 and first["context_vectors"] > 0
    assert first["embedded"] == first["units"] + first["context_vectors"]
    card = awkward_vault / "cards" / "gotcha" / "网关重启前通知.md"
    card.write_text(card.read_text("utf-8").replace("必须先发", "必须提前发"), encoding="utf-8")
    code, second = cli_json(awkward_vault, "compile")
    assert code == 0
    assert (second["embedded"], second["parsed"]) == (1, 1)
    assert second["unchanged"] == second["notes"] - 1
    code, third = cli_json(awkward_vault, "compile")
    assert (third["embedded"], third["parsed"]) == (0, 0)


def test_rebuild_from_scratch_and_check(awkward_vault: Path, hash_env: None) -> None:
    runner = CliRunner()
    base = ["--vault", str(awkward_vault)]
    assert runner.invoke(cli, base + ["compile", "--check"]).exit_code == 1  # nothing built
    assert runner.invoke(cli, base + ["compile"]).exit_code == 0
    digest_before = A.current_build(awkward_vault / ".alaya").path(A.DIGEST).read_bytes()
    shutil.rmtree(awkward_vault / ".alaya")
    assert runner.invoke(cli, base + ["compile"]).exit_code == 0
    assert A.current_build(awkward_vault / ".alaya").path(A.DIGEST).read_bytes() == digest_before
    assert runner.invoke(cli, base + ["compile", "--check"]).exit_code == 0
    note = awkward_vault / "entities" / "Brad.md"
    note.write_text(note.read_text("utf-8") + "\nMore.\n", encoding="utf-8")
    result = runner.invoke(cli, base + ["compile", "--check", "--json"])
    assert result.exit_code == 1 and json.loads(result.output)["changed"] == ["entities/Brad.md"]


def test_same_vault_compiles_to_identical_digest_and_graph(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    now = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)
    compile_(vault, now=now)
    first = A.current_build(vault.state_dir)
    compile_(vault, now=now, full=True)
    second = A.current_build(vault.state_dir)
    assert first.build_id != second.build_id
    for name in (A.DIGEST, A.GRAPH, A.CLAIMS, A.UNITS):
        assert first.path(name).read_bytes() == second.path(name).read_bytes(), name


def test_malformed_note_is_skipped_and_strict_fails(awkward_vault: Path, hash_env: None) -> None:
    (awkward_vault / "cards" / "gotcha" / "broken.md").write_text("---\ntitle: [x\n---\n")
    code, stats = cli_json(awkward_vault, "compile")
    assert code == 0 and stats["malformed"][0]["path"] == "cards/gotcha/broken.md"
    assert stats["notes"] > 5
    code, _ = cli_json(awkward_vault, "compile", "--strict")
    assert code == 1


def test_deletes_and_renames(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    compile_(vault)
    (awkward_vault / "entities" / "Brad.md").rename(awkward_vault / "entities" / "Bradley.md")
    (awkward_vault / "cards" / "gotcha" / "bom.md").unlink()
    stats = compile_(vault)
    assert stats.deleted == 2 and stats.parsed == 1
    build = A.current_build(vault.state_dir)
    paths = {u["path"] for u in build.units()}
    assert "entities/Bradley.md" in paths and "entities/Brad.md" not in paths
    assert "card-bom" not in {p["id"] for p in build.digest()["pages"]}


def test_old_unused_notes_go_cold_without_vectors_pinned_stay_hot(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    pinned = awkward_vault / "cards" / "gotcha" / "bom.md"
    pinned.write_text(pinned.read_text("utf-8").replace("title:", "pinned: true\ntitle:"),
                      encoding="utf-8")
    compile_(vault, now=dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
    stats = compile_(vault, now=dt.datetime(2027, 1, 1, tzinfo=dt.UTC))
    build = A.current_build(vault.state_dir)
    tiers = {u["note"]: u["tier"] for u in build.units()}
    assert tiers["card-bom"] == "HOT"
    assert tiers["ent-brad"] == "COLD"
    assert stats.vectors["HOT"] + stats.vectors["WARM"] < stats.units
    import bm25s

    docs = sum(bm25s.BM25.load(str(shard)).scores["num_docs"]
               for shard in build.path(A.LEXICAL).glob("shard-*"))
    assert docs == stats.units  # COLD units stay searchable by BM25


def test_warm_index_reads_memory_mapped(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    (awkward_vault / "alaya.toml").write_text(
        (awkward_vault / "alaya.toml").read_text().replace("hot_limit = 5000", "hot_limit = 1"))
    vault = Vault.open(awkward_vault)
    stats = compile_(vault)
    assert stats.tiers["HOT"] == 1 and stats.vectors["WARM"] > 0  # the limit counts notes
    build = A.current_build(vault.state_dir)
    warm = build.vector_index("WARM", mmap=True)
    assert warm.ntotal == stats.vectors["WARM"]
    query = HASH.embed_query("Brad owns Teams routing").reshape(1, -1)
    scores, ids = warm.search(query, 3)
    units = build.units()
    assert all(units[i]["tier"] == "WARM" for i in ids[0] if i >= 0)


class FlakyEmbedder(HashEmbedder):
    """Fails after `ok_calls` calls, like a crash or Ctrl-C in the middle of a long compile."""

    def __init__(self, ok_calls: int) -> None:
        super().__init__(64)
        self.calls = 0
        self.ok_calls = ok_calls
        self.embedded = 0

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls > self.ok_calls:
            raise EmbeddingError("scripted failure")
        self.embedded += len(texts)
        return super().embed_passages(texts)


def test_interrupted_embedding_keeps_what_was_done_and_resumes(vault_path: Path) -> None:
    for i in range(40):
        (vault_path / "cards" / f"c{i}.md").write_text(f"---\nid: card-{i}\ntitle: Card {i}\n"
                                                       f"---\nText number {i}.\n")
    vault = Vault.open(vault_path)
    flaky = FlakyEmbedder(ok_calls=1)
    stats = compile_(vault, embedder=flaky)
    assert stats.embed_error and flaky.embedded == 16  # one batch of 16 made it to the cache
    assert not check_artifacts(vault, "hash:64").ok  # vectors incomplete → stale
    resumed = FlakyEmbedder(ok_calls=100)
    stats = compile_(vault, embedder=resumed)
    assert stats.embed_error is None
    assert stats.embedded == resumed.embedded == stats.units - 16
    assert check_artifacts(vault, "hash:64").ok


def test_changing_the_embedder_re_embeds_everything(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    first = compile_(vault)
    other = HashEmbedder(32)
    second = compile_(vault, embedder=other)
    assert second.embedded == first.embedded
    manifest = A.current_build(vault.state_dir).manifest()
    assert manifest["embedder"] == {"id": "hash:32", "dim": 32}


def test_readers_never_see_a_partial_build(awkward_vault: Path, monkeypatch) -> None:
    vault = Vault.open(awkward_vault)
    compile_(vault)
    before = A.current_build(vault.state_dir)

    def boom(*args, **kwargs):
        raise RuntimeError("crash while writing the graph")

    monkeypatch.setattr("compilers.pipeline.build_graph", boom)
    (awkward_vault / "entities" / "Brad.md").write_text("---\nid: ent-brad\ntitle: B\n---\n")
    with pytest.raises(RuntimeError):
        compile_(vault)
    after = A.current_build(vault.state_dir)
    assert after.build_id == before.build_id and after.path(A.DIGEST).exists()


def test_vectors_are_normalised_and_searchable(awkward_vault: Path) -> None:
    vault = Vault.open(awkward_vault)
    compile_(vault)
    build = A.current_build(vault.state_dir)
    index = build.vector_index("HOT", mmap=False)
    vecs = faiss.downcast_index(index.index).reconstruct_n(0, index.ntotal)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    q = HASH.embed_query("Brad owns Teams routing").reshape(1, -1)
    _, ids = index.search(q, 1)
    assert build.units()[ids[0][0]]["note"] == "ent-brad"


def test_an_edit_rebuilds_one_bm25_shard_and_scores_stay_consistent(vault_path: Path,
                                                                    monkeypatch) -> None:
    import compilers.lexical as lexical

    monkeypatch.setattr(lexical, "SHARD_UNITS", 10)  # force several shards on a small vault
    for i in range(60):
        (vault_path / "cards" / f"c{i}.md").write_text(
            f"---\nid: card-{i}\ntitle: Card {i}\n---\nTopic number {i} about gateway {i % 7}.\n")
    vault = Vault.open(vault_path)
    compile_(vault)
    first = A.current_build(vault.state_dir)
    shards = sorted(p.name for p in first.path(A.LEXICAL).glob("shard-*"))
    assert len(shards) >= 4
    built: list[Path] = []
    original = lexical.build_lexical
    monkeypatch.setattr(lexical, "build_lexical",
                        lambda path, docs, vocab: (built.append(path), original(path, docs, vocab)))
    (vault_path / "cards" / "c5.md").write_text("---\nid: card-5\ntitle: Card 5\n---\nchanged\n")
    compile_(vault)
    assert [p.parent.name for p in built] == [A.LEXICAL]  # one unit shard rebuilt
    from vault_engine.recall.pipeline import recall
    from vault_engine.recall.query import RecallQuery

    result = recall(vault.state_dir, RecallQuery(text="topic number 42", mode="bm25"),
                    embedder=None, telemetry=False)
    assert result["nodes"][0]["id"] == "card-42"
