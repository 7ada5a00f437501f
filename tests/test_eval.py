"""`alaya eval` on a real compiled vault: the seed's metrics and JSON structure, the
telemetry trend, and clear errors for a bad dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli

from .test_recall import graph_vault  # noqa: F401  (fixture)

DATASET = {"qa_pairs": [
    {"type": "CONCEPT_RECALL", "query": "checkout outage", "expected_cards": ["card-outage"],
     "difficulty": "easy"},
    {"type": "CAUSAL_TRACE", "query": "why was there an outage",
     "expected_cards": ["card-outage", "card-config"], "expected_relations": ["CAUSED_BY"],
     "difficulty": "medium"},
    {"type": "NAVIGATION", "query": "outage", "expected_path": ["card-outage", "card-config",
                                                                 "card-merge"],
     "expected_relations": ["CAUSED_BY"], "difficulty": "hard"},
    {"type": "CONCEPT_RECALL", "query": "quantum entanglement of teapots",
     "expected_cards": ["card-nowhere"], "difficulty": "easy"},
]}


def test_eval_reports_the_seed_metrics(graph_vault: Path, tmp_path: Path) -> None:  # noqa: F811
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps(DATASET))
    out = tmp_path / "report.json"
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "eval", "--dataset", str(ds),
                                   "--output", str(out)])
    assert res.exit_code in (0, 1), res.output
    assert "L1 recall quality" in res.output and "Recall@5:" in res.output
    assert "Failed cases (R@5 < 0.6): 1" in res.output  # the teapot question
    report = json.loads(out.read_text())
    assert set(report) >= {"meta", "l1_metrics", "l2_metrics", "by_type", "by_difficulty",
                           "failed_cases", "recommendations"}
    l1 = report["l1_metrics"]
    assert set(l1) >= {"recall_at_5", "recall_at_10", "mrr", "latency_p50", "latency_p95",
                       "temp_accuracy", "hot_tier_hit_rate"}
    assert report["meta"]["total_qa"] == 4
    # the outage card is first for the first question; the teapot question finds nothing
    assert l1["recall_at_10"] == pytest.approx((1 + 1 + 1 + 0) / 4)
    assert report["by_type"]["CONCEPT_RECALL"]["n"] == 2
    assert report["failed_cases"][0]["query"].startswith("quantum")
    nav = report["l2_metrics"]["navigation_efficiency"]
    assert nav["success_rate"] == 1.0 and nav["avg_rounds"] >= 1
    prec = report["l2_metrics"]["relation_precision"]
    assert prec is not None and 0 <= prec["overall"] <= 1
    assert report["l2_metrics"]["graph_gain"] >= 1.0
    assert res.exit_code == (1 if report["recommendations"] else 0)


def test_eval_from_telemetry_compares_windows(graph_vault: Path) -> None:  # noqa: F811
    for q in ("checkout outage", "gateway", "teapots in orbit"):
        assert CliRunner().invoke(cli, ["--vault", str(graph_vault), "recall", q,
                                        "--json"]).exit_code == 0
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "eval", "--from-telemetry",
                                   "--days", "7", "--json"])
    assert res.exit_code == 0, res.output
    trend = json.loads(res.output)
    assert trend["current"]["recalls"] == 3 and trend["previous"]["recalls"] == 0
    assert trend["current"]["hot_tier_hit_rate"] is not None
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "eval", "--from-telemetry"])
    assert "Telemetry eval report" in res.output and "Recalls:" in res.output


def test_bad_dataset_is_a_usage_error_naming_the_line(graph_vault: Path,  # noqa: F811
                                                       tmp_path: Path) -> None:
    ds = tmp_path / "bad.json"
    ds.write_text('{"qa_pairs": [\n  {"query": "x",}\n]}')
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "eval", "--dataset", str(ds)])
    assert res.exit_code == 2 and "bad.json:2:" in res.output and "not valid JSON" in res.output
    ds.write_text('{"qa_pairs": [{"expected_cards": ["a"]}]}')
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "eval", "--dataset", str(ds)])
    assert res.exit_code == 2 and "qa_pairs[0]" in res.output
    res = CliRunner().invoke(cli, ["--vault", str(graph_vault), "eval"])
    assert res.exit_code == 2 and "--dataset" in res.output
