"""`alaya eval`: retrieval quality on a labelled dataset (seed 000 §7.4) and the unlabelled
trend report from recall telemetry (§7.5).

Dataset (seed 000 §7.4; extra keys are optional):

    {"qa_pairs": [{"type": "CAUSAL_TRACE", "query": "why did the deploy fail?",
                   "expected_cards": ["card-abc", "session-…"], "expected_relations": ["CAUSED_BY"],
                   "expected_path": ["card-a", "card-b"], "difficulty": "medium",
                   "kinds": ["session"], "concepts": ["…"], "relations": ["…"]}]}

A returned node covers its own id and, for a card, the sessions it was distilled from — so a
dataset may name the sessions that hold an answer (as LoCoMo's evidence does).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_engine.errors import UsageError
from vault_engine.primitives import now as clock
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.telemetry import note_stats, read_events

TARGETS = {"recall_at_5": (">", 0.8), "latency_p95": ("<", 100.0), "temp_accuracy": (">", 0.9),
           "hot_tier_hit_rate": (">", 0.85), "graph_gain": (">", 1.3),
           "relation_precision": (">", 0.85), "avg_rounds": ("<", 2.5)}
MAX_ROUNDS = 4


@dataclass(frozen=True)
class QA:
    type: str
    query: str
    expected: tuple[str, ...]
    difficulty: str
    relations: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    recall: Mapping[str, Any] | None = None


def load_dataset(path: Path) -> list[QA]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}", path=str(path),
                         fix="pass a dataset JSON file") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"the dataset is not valid JSON: {exc.msg}", path=str(path),
                         line=exc.lineno,
                         fix='the file must hold {"qa_pairs": [...]}') from None
    pairs = data.get("qa_pairs") if isinstance(data, dict) else None
    if not isinstance(pairs, list):
        raise UsageError(f"{path} has no `qa_pairs` list", path=str(path),
                         fix='{"qa_pairs": [{"query": "…", "expected_cards": ["card-…"]}]}')
    out = []
    for i, p in enumerate(pairs):
        if not isinstance(p, dict) or not isinstance(p.get("query"), str):
            raise UsageError(f"qa_pairs[{i}] needs a `query` string", path=str(path),
                             fix='{"query": "…", "expected_cards": ["card-…"]}')
        expected = p.get("expected_cards") or p.get("expected_path") or []
        if not isinstance(expected, list) or not all(isinstance(x, str) for x in expected):
            raise UsageError(f"qa_pairs[{i}].expected_cards must be a list of ids",
                             path=str(path), fix='"expected_cards": ["card-abc"]')
        extra = {k: p[k] for k in ("kinds", "concepts", "relations", "depth", "top_k", "type_filter",
                                   "namespace", "as_of") if k in p}
        if "relations" not in extra and p.get("expected_relations"):
            extra["relations"] = p["expected_relations"]
        out.append(QA(type=str(p.get("type") or "CONCEPT_RECALL").upper(), query=p["query"],
                      expected=tuple(expected), difficulty=str(p.get("difficulty") or "unknown"),
                      relations=tuple(str(r).upper() for r in p.get("expected_relations") or []),
                      path=tuple(p.get("expected_path") or ()), recall=extra))
    return out


def _covers(node: Mapping[str, Any]) -> list[str]:
    return [node["id"], *node.get("source_sessions", [])]


def _ranked(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        for key in _covers(n):
            key = key.strip("[]").split("|")[0].split("#")[0]
            if key not in out:
                out.append(key)
    return out


def _pct(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    return round(v[min(len(v) - 1, int(len(v) * p))], 1)


def _query(qa: QA, expand: bool, top_k: int) -> RecallQuery:
    obj = {"query": qa.query, "top_k": top_k, **{k: v for k, v in (qa.recall or {}).items()
                                                 if k not in ("type_filter",)}}
    if (qa.recall or {}).get("type_filter"):
        obj["type"] = qa.recall["type_filter"]  # type: ignore[index]
    return dataclasses.replace(RecallQuery.from_json(obj), expand=expand)


def evaluate(vault: Any, dataset: Sequence[QA], *, embedder: Any, dataset_name: str = "",
             version: str = "") -> dict[str, Any]:
    settings = RecallSettings.from_config(vault.config)
    state = vault.state_dir
    rows = []
    for qa in dataset:
        t = time.perf_counter()
        with_graph = recall(state, _query(qa, True, 10), embedder=embedder, settings=settings,
                            telemetry=False, caller=vault.caller)
        latency = (time.perf_counter() - t) * 1000
        without = recall(state, _query(qa, False, 10), embedder=embedder, settings=settings,
                         telemetry=False, caller=vault.caller)
        expected = set(qa.expected)
        ranked = _ranked(with_graph["nodes"])
        plain = _ranked(without["nodes"])
        first = next((i for i, k in enumerate(ranked, 1) if k in expected), None)
        row: dict[str, Any] = {
            "qa": qa, "latency": latency,
            "r5": len(expected & set(ranked[:5])) / len(expected) if expected else 0.0,
            "r10": len(expected & set(ranked[:10])) / len(expected) if expected else 0.0,
            "r10_plain": len(expected & set(plain[:10])) / len(expected) if expected else 0.0,
            "mrr": 1 / first if first else 0.0,
            "tiers": [n.get("tier") for n in with_graph["nodes"]],
            "top": ranked[:5],
            "rel_hits": [(n["matched_rel"], n["id"] in expected or bool(
                set(_covers(n)) & expected)) for n in with_graph["nodes"] if n.get("matched_rel")],
        }
        if qa.type == "NAVIGATION" and qa.path:
            row["rounds"] = _navigate(state, qa, embedder, settings, vault.caller)
        rows.append(row)
    return _report(vault, rows, dataset_name, version)


def _navigate(state: Path, qa: QA, embedder: Any, settings: RecallSettings,
              caller: Any) -> int | None:
    """Rounds an agent needs to reach the path's end: a free-text recall, then continuing
    from the best three nodes of the previous round (seed 000 §4.10)."""
    goal = qa.path[-1]
    result = recall(state, _query(qa, True, 10), embedder=embedder, settings=settings,
                    telemetry=False, caller=caller)
    for round_ in range(1, MAX_ROUNDS + 1):
        if goal in _ranked(result["nodes"]):
            return round_
        frontier = [n["id"] for n in result["nodes"][:3]]
        if not frontier:
            return None
        result = recall(state, RecallQuery(from_nodes=tuple(frontier), depth=2, top_k=10,
                                           relations=qa.relations), embedder=embedder,
                        settings=settings, telemetry=False, caller=caller)
    return None


def _group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out = {"n": len(rows),
           "recall_at_5": round(statistics.mean(r["r5"] for r in rows), 3),
           "recall_at_10": round(statistics.mean(r["r10"] for r in rows), 3),
           "mrr": round(statistics.mean(r["mrr"] for r in rows), 3),
           "latency_p50": _pct([r["latency"] for r in rows], 0.5)}
    plain = statistics.mean(r["r10_plain"] for r in rows)
    if plain:
        out["graph_gain"] = round(statistics.mean(r["r10"] for r in rows) / plain, 3)
    return out


def _report(vault: Any, rows: list[dict[str, Any]], name: str, version: str) -> dict[str, Any]:
    if not rows:
        raise UsageError("the dataset has no questions", fix="add qa_pairs")
    lat = [r["latency"] for r in rows]
    tiers = [t for r in rows for t in r["tiers"] if t]
    stats = note_stats(vault.state_dir)
    frequent = {k for k, s in stats.items() if s.access_count > 10}
    tier_of = _current_tiers(vault)
    in_hot = [k for k in frequent if tier_of.get(k) == "HOT"]
    plain = statistics.mean(r["r10_plain"] for r in rows)
    rel: dict[str, list[bool]] = {}
    for r in rows:
        if not r["qa"].relations:
            continue
        for matched, ok in r["rel_hits"]:
            rel.setdefault(matched, []).append(ok)
    precision: dict[str, float | None] = {k: round(sum(v) / len(v), 3) for k, v in rel.items()}
    if rel:
        flat = [x for v in rel.values() for x in v]
        precision["overall"] = round(sum(flat) / len(flat), 3)
    nav = [r for r in rows if "rounds" in r]
    reached = [r["rounds"] for r in nav if r["rounds"] is not None]
    report: dict[str, Any] = {
        "meta": {"dataset": name, "total_qa": len(rows),
                 "timestamp": int(time.time() * 1000), "alaya_version": version,
                 "vault": str(vault.root)},
        "l1_metrics": {
            "recall_at_5": round(statistics.mean(r["r5"] for r in rows), 3),
            "recall_at_10": round(statistics.mean(r["r10"] for r in rows), 3),
            "mrr": round(statistics.mean(r["mrr"] for r in rows), 3),
            "latency_p50": _pct(lat, 0.5), "latency_p95": _pct(lat, 0.95),
            "temp_accuracy": round(len(in_hot) / len(frequent), 3) if frequent else None,
            "hot_tier_hit_rate": round(tiers.count("HOT") / len(tiers), 3) if tiers else None,
        },
        "l2_metrics": {
            "graph_gain": round(statistics.mean(r["r10"] for r in rows) / plain, 3)
            if plain else None,
            "relation_precision": precision or None,
            "navigation_efficiency": {
                "avg_rounds": round(statistics.mean(reached), 2) if reached else None,
                "success_rate": round(len(reached) / len(nav), 3) if nav else None},
        },
        "by_type": {t: _group([r for r in rows if r["qa"].type == t])
                    for t in sorted({r["qa"].type for r in rows})},
        "by_difficulty": {d: _group([r for r in rows if r["qa"].difficulty == d])
                          for d in sorted({r["qa"].difficulty for r in rows})},
        "failed_cases": [
            {"type": r["qa"].type, "query": r["qa"].query, "difficulty": r["qa"].difficulty,
             "recall_at_5": round(r["r5"], 3), "expected": list(r["qa"].expected),
             "missing": [e for e in r["qa"].expected if e not in r["top"]], "top_5": r["top"],
             "suggestion": _suggest(r)}
            for r in rows if r["r5"] < 0.6],
    }
    report["recommendations"] = _recommend(report)
    report["summary"] = _score(report)
    return report


def _current_tiers(vault: Any) -> dict[str, str]:
    from vault_engine import artifacts as A

    build = A.current_build(vault.state_dir)
    if build is None:
        return {}
    return {v["key"]: v.get("tier", "") for v in build.manifest().get("notes", {}).values()}


def _suggest(row: Mapping[str, Any]) -> str:
    qa = row["qa"]
    if qa.type in ("CAUSAL_TRACE", "NAVIGATION") and qa.relations:
        return f"link the missing cards with {', '.join(qa.relations)} (alaya link)"
    if row["r10"] > row["r5"]:
        return "found below the top 5: check the cards' titles and claims for the query's words"
    if row["r10"] > 0:
        return "only part of what is expected was found: link the related cards to each other"
    return "nothing relevant found: is the knowledge in the vault (distilled, compiled)?"


def _passes(metric: str, value: float | None) -> bool | None:
    if value is None or metric not in TARGETS:
        return None
    op, target = TARGETS[metric]
    return value > target if op == ">" else value < target


def metric_rows(report: Mapping[str, Any]) -> list[tuple[str, float | None, bool | None]]:
    l1, l2 = report["l1_metrics"], report["l2_metrics"]
    prec = (l2.get("relation_precision") or {}).get("overall")
    nav = l2["navigation_efficiency"]["avg_rounds"]
    return [(m, v, _passes(m, v)) for m, v in (
        ("recall_at_5", l1["recall_at_5"]), ("recall_at_10", l1["recall_at_10"]),
        ("mrr", l1["mrr"]), ("latency_p50", l1["latency_p50"]),
        ("latency_p95", l1["latency_p95"]), ("temp_accuracy", l1["temp_accuracy"]),
        ("hot_tier_hit_rate", l1["hot_tier_hit_rate"]), ("graph_gain", l2["graph_gain"]),
        ("relation_precision", prec), ("avg_rounds", nav))]


def _recommend(report: Mapping[str, Any]) -> list[str]:
    out = []
    advice = {
        "recall_at_5": "distil more (an LLM distiller finds more facts) and link related cards",
        "latency_p95": "keep `alaya serve` running so the index and model stay resident",
        "temp_accuracy": "run `alaya introspect --phase cooldown` and `alaya compile`",
        "hot_tier_hit_rate": "raise [tiers] hot_limit or let introspect re-tier",
        "graph_gain": "add cross-session relations (CAUSED_BY, DEPENDS_ON) between cards",
        "relation_precision": "review the relations the distiller wrote (`alaya lint`)",
        "avg_rounds": "link cards along the paths agents navigate",
    }
    for metric, value, ok in metric_rows(report):
        if ok is False:
            op, target = TARGETS[metric]
            out.append(f"{metric} {value} (target {op}{target}): {advice[metric]}")
    return out


def _score(report: Mapping[str, Any]) -> dict[str, Any]:
    judged = [ok for _, _, ok in metric_rows(report) if ok is not None]
    return {"passed": sum(1 for ok in judged if ok), "judged": len(judged)}


# -- unlabelled: from telemetry --------------------------------------------------------------

def telemetry_trend(vault: Any, days: int = 7, now: dt.datetime | None = None) -> dict[str, Any]:
    """Seed 000 §7.5: the last `days` against the `days` before, from recall events alone."""
    now = now or clock()
    cur_start = now - dt.timedelta(days=days)
    prev_start = cur_start - dt.timedelta(days=days)
    windows: dict[str, list[dict[str, Any]]] = {"previous": [], "current": []}
    feedback: dict[str, list[str]] = {"previous": [], "current": []}
    caller = getattr(vault, "caller", None)
    for e in read_events(vault.state_dir):
        if caller is not None and not caller.is_owner and e.get("agent") != caller.agent:
            continue  # an agent's trend is of its own recalls: not what others asked
        try:
            ts = dt.datetime.fromisoformat(str(e.get("ts", "")).replace("Z", "+00:00"))
        except ValueError:
            continue
        window = "current" if ts >= cur_start else "previous" if ts >= prev_start else None
        if window is None or ts > now:
            continue
        if "feedback" in e:
            feedback[window].append(str(e["feedback"]))
        elif "hits" in e:
            windows[window].append(e)

    def summary(events: list[dict[str, Any]], verdicts: list[str]) -> dict[str, Any]:
        lat = [float(e.get("latency_ms") or 0) for e in events]
        hits = [h for e in events for h in e.get("hits") or [] if isinstance(h, dict)]
        tiers = [h.get("tier") for h in hits if h.get("tier")]
        expanded = [h for h in hits if (h.get("depth") or 0) > 0]
        useful = verdicts.count("useful")
        return {
            "recalls": len(events),
            "latency_p50": _pct(lat, 0.5) if lat else None,
            "latency_p95": _pct(lat, 0.95) if lat else None,
            "hot_tier_hit_rate": round(tiers.count("HOT") / len(tiers), 3) if tiers else None,
            "graph_share": round(len(expanded) / len(hits), 3) if hits else None,
            "empty_recalls": sum(1 for e in events if not e.get("hits")),
            "useful_rate": round(useful / len(verdicts), 3) if verdicts else None,
        }

    missed: dict[str, int] = {}
    for e in windows["current"]:
        top = max((float(h.get("score") or 0) for h in e.get("hits") or []
                   if isinstance(h, dict)), default=0.0)
        if not e.get("hits") or top < 0.3:
            q = str(e.get("query", ""))
            missed[q] = missed.get(q, 0) + 1
    return {"meta": {"days": days, "from": cur_start.date().isoformat(),
                     "to": now.date().isoformat(), "vault": str(vault.root)},
            "previous": summary(windows["previous"], feedback["previous"]),
            "current": summary(windows["current"], feedback["current"]),
            "top_missed_queries": [{"query": q, "count": c} for q, c in
                                   sorted(missed.items(), key=lambda kv: -kv[1])[:10]]}
