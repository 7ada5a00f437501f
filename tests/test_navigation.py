"""traverse, schema, status, export and saved queries, through the CLI on a compiled vault."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from cli.main import cli

from .conftest import git_log
from .test_recall import graph_vault  # noqa: F401  (fixture)


def run(vault: Path, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args, "--json"])
    return result.exit_code, json.loads(result.output)


def test_traverse_paths_are_scored_by_edge_weights(graph_vault: Path) -> None:  # noqa: F811
    code, out = run(graph_vault, "traverse", "Bad merge", "Gateway", "--max-hops", "3")
    assert code == 0
    best = out["paths"][0]
    assert [s["target"] for s in best["steps"]] == ["card-config", "card-outage", "card-gateway"]
    assert [s["reverse"] for s in best["steps"]] == [True, True, False]
    assert best["score"] == 1.0 and best["hops"] == 3
    code, none = run(graph_vault, "traverse", "Bad merge", "Gateway", "--max-hops", "2")
    assert none["paths"] == []


def test_traverse_neighbourhood_along_one_relation(graph_vault: Path) -> None:  # noqa: F811
    code, out = run(graph_vault, "traverse", "card-outage", "--rel", "CAUSED_BY", "--depth", "2")
    assert [(n["id"], n["depth"]) for n in out["nodes"]] == [("card-config", 1),
                                                             ("card-merge", 2)]
    code, everything = run(graph_vault, "traverse", "card-outage")
    assert {n["rel"] for n in everything["nodes"]} >= {"CAUSED_BY", "DEPENDS_ON", "LED_TO"}


def test_saved_traverse_and_recall_are_notes_with_links(graph_vault: Path) -> None:  # noqa: F811
    code, out = run(graph_vault, "traverse", "Bad merge", "Gateway", "--save")
    saved = graph_vault / out["saved"]["path"]
    assert saved.parent.name == "queries" and "[[Gateway]]" in saved.read_text()
    assert git_log(graph_vault)[0].startswith('traverse: save "Bad merge → Gateway"')
    code, rec = run(graph_vault, "recall", "checkout outage", "--save")
    assert "[[Outage]]" in (graph_vault / rec["saved"]["path"]).read_text()


def test_schema_status_export(graph_vault: Path, tmp_path: Path) -> None:  # noqa: F811
    code, rels = run(graph_vault, "schema", "--relations")
    core = {r["type"]: r["uses"] for r in rels["core"]}
    assert core["CAUSED_BY"] == 2 and core["DEPENDS_ON"] == 1
    assert [c["type"] for c in rels["custom"]] == ["LED_TO"]
    code, nodes = run(graph_vault, "schema", "--node-types")
    assert nodes["cards"] == 7
    code, st = run(graph_vault, "status")
    assert code == 0 and st["stale"]["stale"] is False and st["graph"]["by_kind"]["card"] == 7
    (graph_vault / "cards" / "fact" / "Gateway.md").write_text("---\nid: card-gateway\n---\nx\n")
    code, st = run(graph_vault, "status")
    assert code == 1 and st["stale"]["changed"] == ["cards/fact/Gateway.md"]
    code, gml = run(graph_vault, "export", "--format", "graphml", "--output",
                    str(tmp_path / "g.graphml"))
    graph = nx.read_graphml(tmp_path / "g.graphml", force_multigraph=True)
    assert set(graph.nodes) >= {"card-outage", "card-config"}
    assert graph.number_of_edges() == gml["edges"]
    assert graph.has_edge("card-outage", "card-config")
    code, md = run(graph_vault, "export", "--format", "markdown", "--output",
                   str(tmp_path / "md"))
    assert md["cards"] == 7 and (tmp_path / "md" / "index.md").exists()
    assert (tmp_path / "md" / "cards" / "untyped" / "Outage.md").exists()  # no type: key


def test_navigation_before_compile_says_what_to_do(vault_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault_path), "status"])
    assert result.exit_code == 1 and "alaya compile" in result.output


@pytest.mark.parametrize("args", [["traverse", "nope", "Outage"], ["traverse", "Outage", "X",
                                                                       "--rel", "CAUSES"]])
def test_traverse_bad_input(graph_vault: Path, args: list[str]) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["--vault", str(graph_vault), *args])
    assert result.exit_code == 2
