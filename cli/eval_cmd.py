"""`alaya eval`: the seed's metrics on a labelled dataset, or the trend from telemetry."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .output import echo, emit_json, json_option, pass_json, style

RULE = "━" * 51


@click.command("eval")
@click.option("--dataset", type=click.Path(path_type=Path), default=None,
              help="QA dataset (seed 000 §7.4 format: {\"qa_pairs\": [...]}).")
@click.option("--output", type=click.Path(path_type=Path), default=None,
              help="Write the JSON report here (default .alaya/eval/report-<time>.json).")
@click.option("--from-telemetry", is_flag=True,
              help="No dataset: compare the last --days of recall telemetry with the days before.")
@click.option("--days", type=click.IntRange(1, 365), default=7, show_default=True)
@json_option
@click.pass_obj
@pass_json
def eval_cmd(obj: Any, dataset: Path | None, output: Path | None, from_telemetry: bool,
             days: int, as_json: bool) -> None:
    """Measure recall: recall@5/@10, MRR, latency, tier hit rate, graph gain (with vs without
    graph expansion), relation precision, navigation rounds — by type and difficulty, with
    the failed cases. Or, with --from-telemetry, the unlabelled trend of real recalls.

    Exit 1 when a judged metric misses its target (seed 000 §7.2), else 0.

    \b
    Examples:
      alaya eval --dataset eval/questions.json --output report.json
      alaya eval --from-telemetry --days 7
    """
    from vault_engine.errors import UsageError

    vault = obj.vault()
    if from_telemetry:
        from vault_engine.care.evaluate import telemetry_trend

        trend = telemetry_trend(vault, days)
        if output:
            output.write_text(json.dumps(trend, indent=2) + "\n", encoding="utf-8")
        if as_json:
            emit_json(trend)
        else:
            _render_trend(trend)
        return
    if dataset is None:
        raise UsageError("give --dataset FILE or --from-telemetry",
                         fix="alaya eval --dataset questions.json")
    from vault_engine.care.evaluate import evaluate, load_dataset, metric_rows
    from vault_engine.providers.embedding import get_embedder

    from .main import __version__

    qas = load_dataset(dataset)
    try:
        embedder = get_embedder(vault.config)
    except Exception as exc:  # noqa: BLE001 - like recall: degrade to BM25, say so
        echo(style(f"! embedder unavailable ({exc}): BM25 and graph only", fg="yellow"), err=True)
        embedder = None
    if not as_json:
        echo(f"🧪 Evaluating alaya with dataset: {dataset.name}\n   Total QA pairs: {len(qas)}\n")
    report = evaluate(vault, qas, embedder=embedder, dataset_name=dataset.name,
                      version=__version__)
    if output is None:
        import time

        output = vault.state_dir / "eval" / f"report-{time.strftime('%Y%m%d-%H%M%S')}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if as_json:
        emit_json(report)
    else:
        _render(report, output)
    failed = any(ok is False for _, _, ok in metric_rows(report))
    sys.exit(1 if failed else 0)


def _mark(ok: bool | None) -> str:
    if ok is None:
        return ""
    return style("✓", fg="green") if ok else style("✗", fg="red")


def _render(report: dict[str, Any], output: Path) -> None:
    from vault_engine.care.evaluate import TARGETS, metric_rows

    rows = {m: (v, ok) for m, v, ok in metric_rows(report)}

    def line(label: str, metric: str, unit: str = "") -> None:
        value, ok = rows[metric]
        shown = "n/a" if value is None else (f"{value:.0f}{unit}" if unit else f"{value:.3f}")
        target = f" (target: {TARGETS[metric][0]}{TARGETS[metric][1]:g}{unit})" \
            if metric in TARGETS else ""
        echo(f"  {label:<20}{shown:<8} {_mark(ok)}{target if ok is not None else ''}")

    echo(RULE + "\nL1 recall quality\n" + RULE)
    line("Recall@5:", "recall_at_5")
    line("Recall@10:", "recall_at_10")
    line("MRR:", "mrr")
    line("Latency (p50):", "latency_p50", "ms")
    line("Latency (p95):", "latency_p95", "ms")
    line("Temp Accuracy:", "temp_accuracy")
    line("HOT Tier Hit Rate:", "hot_tier_hit_rate")
    echo("\n" + RULE + "\nL2 association quality\n" + RULE)
    line("Graph Gain:", "graph_gain")
    prec = report["l2_metrics"]["relation_precision"] or {}
    if prec:
        echo("  Relation Precision:")
        for rel, v in prec.items():
            echo(f"    {rel + ':':<18}{v:.2f}   {_mark(v > 0.85)}")
    nav = report["l2_metrics"]["navigation_efficiency"]
    if nav["success_rate"] is not None:
        echo("  Navigation Efficiency:")
        line("  Avg rounds:", "avg_rounds")
        echo(f"    Success rate:     {nav['success_rate']:.2f}")
    for title, key in (("By query type", "by_type"), ("By difficulty", "by_difficulty")):
        echo("\n" + RULE + f"\n{title}\n" + RULE)
        for name, g in report[key].items():
            gain = f", Graph Gain={g['graph_gain']:.2f}" if "graph_gain" in g else ""
            echo(f"  {name:<16}({g['n']} pairs):  R@5={g['recall_at_5']:.2f}, "
                 f"R@10={g['recall_at_10']:.2f}, MRR={g['mrr']:.2f}, "
                 f"Latency={g['latency_p50']:.0f}ms{gain}")
    failed = report["failed_cases"]
    echo("\n" + RULE + f"\nFailed cases (R@5 < 0.6): {len(failed)}\n" + RULE)
    for f in failed[:10]:
        echo(f"  [{f['type']}] \"{f['query']}\"\n    → R@5={f['recall_at_5']}, missing "
             f"{', '.join(f['missing'][:5])}\n    → {f['suggestion']}")
    s = report["summary"]
    echo("\n" + RULE + "\nSummary\n" + RULE)
    echo(f"  Passed: {s['passed']} / {s['judged']} metrics")
    for i, r in enumerate(report["recommendations"], 1):
        echo(f"  {i}. {r}")
    echo(f"\nReport saved to: {output}")


def _render_trend(trend: dict[str, Any]) -> None:
    m = trend["meta"]
    echo(f"📊 Telemetry eval report ({m['from']} to {m['to']})\n")
    prev, cur = trend["previous"], trend["current"]
    for key, label in (("recalls", "Recalls"), ("latency_p50", "Latency p50"),
                       ("latency_p95", "Latency p95"), ("hot_tier_hit_rate", "HOT hit rate"),
                       ("graph_share", "Graph share"), ("empty_recalls", "Empty recalls"),
                       ("useful_rate", "Useful rate")):
        a, b = prev[key], cur[key]
        change = ""
        if isinstance(a, int | float) and isinstance(b, int | float) and a:
            change = f"  ({(b - a) / a:+.1%})"
        echo(f"  {label + ':':<16}{'n/a' if a is None else a} → {'n/a' if b is None else b}{change}")
    if trend["top_missed_queries"]:
        echo("\nTop missed queries (no hit, or a weak best hit):")
        for i, q in enumerate(trend["top_missed_queries"], 1):
            echo(f"  {i}. \"{q['query']}\" ({q['count']}×)")
