"""Can the session score be learned? LoCoMo dev, leave one conversation out (issue 18).

The session score recall ships is a hand-weighted sum (fusion.score_notes): its best three
turns' fused scores (weights 1, 0.5, 0.25), its whole-session BM25 (0.4) and a date match
(0.3). This script computes, through recall's own stage functions, the features the pipeline
already has for every candidate session of every question — the best three turns' fused, dense
and BM25 scores, whole-session BM25, date match, how many of its turns match well, its length —
and fits the weights of a linear scorer (listwise softmax, numpy only) on four conversations,
scoring the fifth. Only held-out folds are reported, next to the shipped formula on the same
footing (sessions ordered by score alone: no MMR, no superseded/named-person factors, which do
not fire on LoCoMo's two-person conversations).

    .venv/bin/python benchmarks/locomo_fusion.py --workdir /tmp/alaya-locomo [--out FILE]

The vaults are those `benchmarks/locomo.py` builds in the same workdir (run it first).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from benchmarks.locomo import CATEGORIES, DIA_RE, CachedEmbedder  # noqa: E402
from vault_engine.recall.fusion import boost_timed, date_match, weighted_fusion  # noqa: E402
from vault_engine.recall.index import open_index  # noqa: E402
from vault_engine.recall.intent import query_intent  # noqa: E402
from vault_engine.recall.query import RecallSettings, dates_in_query  # noqa: E402
from vault_engine.recall.retrieval import (  # noqa: E402
    blend_context,
    bm25_ranking,
    bm25_scores,
    complete_rankings,
    dense_query,
    note_bm25_scores,
    vector_ranking,
)

FEATURES = ("f1", "f2", "f3", "d1", "d2", "d3", "l1", "l2", "l3", "note_bm25", "date",
            "n_good", "log_len", "list_f2", "list_f3")
SHIPPED = {"f1": 1.0, "f2": 0.5, "f3": 0.25, "note_bm25": 0.4, "date": 0.3}


def session_features(index: Any, embedder: Any, text: str, s: RecallSettings) -> dict[int, dict]:
    """node → feature dict, from the same stage functions recall runs (pipeline.first_stage)."""
    qvec = embedder.embed_query(dense_query(index, text))
    lexical_scores = bm25_scores(index, text)
    lexical = bm25_ranking(lexical_scores, 200)
    vec = vector_ranking(index, qvec, 200)
    rankings = [vec, lexical]
    if lexical_scores is not None:
        rankings = complete_rankings(index, rankings, lexical_scores, qvec)
    rankings[0] = blend_context(index, rankings[0], qvec, s.context_weight)
    dense = weighted_fusion([(1.0, rankings[0])])
    lex = weighted_fusion([(1.0, rankings[1])]) if len(rankings) > 1 else {}
    fused = weighted_fusion([(s.dense_weight, rankings[0]), (1 - s.dense_weight, rankings[1])])
    intent = query_intent(text)
    if intent.when:
        fused = boost_timed(index, fused, s.time_weight)
    by_node: dict[int, list[int]] = {}
    for unit in fused:
        by_node.setdefault(int(index.unit_node[unit]), []).append(unit)
    best = max(fused.values(), default=1.0) or 1.0
    lex_top = float(lexical_scores.max()) if lexical_scores is not None else 0.0
    node_lex = note_bm25_scores(index, text) if lex_top > 0 else {}
    dates = dates_in_query(text)
    out: dict[int, dict] = {}
    for node, units in by_node.items():
        units.sort(key=lambda u: -fused[u])
        top = units[:3] + [None] * (3 - len(units[:3]))
        f = {}
        for i, u in enumerate(top, 1):
            f[f"f{i}"] = fused[u] / best if u is not None else 0.0
            f[f"d{i}"] = dense.get(u, 0.0) if u is not None else 0.0
            f[f"l{i}"] = lex.get(u, 0.0) if u is not None else 0.0
        f["note_bm25"] = node_lex.get(node, 0.0) if node_lex else 0.0
        date = 0.0
        if dates:
            rows = [index.row(u) for u in units[:3]]
            date = max([date_match(rows[0].get("when"), dates)]
                       + [date_match(d, dates) for r in rows for d in r.get("dates") or ()])
        f["date"] = date
        f["n_good"] = math.log1p(sum(1 for u in units if fused[u] / best >= 0.6))
        f["log_len"] = math.log1p(int(index.node_units[node]))
        f["list_f2"] = f["f2"] if intent.listing else 0.0
        f["list_f3"] = f["f3"] if intent.listing else 0.0
        out[node] = f
    return out


def collect(workdir: Path, data: Path) -> list[dict]:
    """One record per question: its conversation, category, candidate sessions' features,
    which are gold."""
    embedder = CachedEmbedder(workdir)
    s = RecallSettings()
    records = []
    for path in sorted(data.glob("conv-*.json")):
        name = path.stem
        sample = json.loads(path.read_text())
        index = open_index(workdir / name / ".alaya", resident=True)
        key_of = {}
        for qa in sample["qa"]:
            cat = qa.get("category")
            if cat not in CATEGORIES:
                continue
            gold = {f"{name}-s{int(m.group(0)[1:].split(':')[0])}" for e in qa.get("evidence", [])
                    for m in DIA_RE.finditer(str(e))}
            if not gold:
                continue
            feats = session_features(index, embedder, qa["question"], s)
            nodes = sorted(feats)
            for n in nodes:
                if n not in key_of:
                    key_of[n] = index.node_key(n)
            records.append({"conv": name, "cat": cat, "n_gold": len(gold),
                            "x": [[feats[n][k] for k in FEATURES] for n in nodes],
                            "y": [key_of[n] in gold for n in nodes]})
        print(f"  {name}: {sum(r['conv'] == name for r in records)} questions", file=sys.stderr)
    embedder.save()
    return records


def metrics(records: list[dict], scores: list[Any]) -> dict:
    import numpy as np

    rows = []
    for r, sc in zip(records, scores, strict=True):
        order = np.argsort(-np.asarray(sc), kind="stable")
        y = np.asarray(r["y"])[order]
        first = next((i for i, g in enumerate(y, 1) if g), None)
        rows.append({"cat": r["cat"], "r5": y[:5].sum() / r["n_gold"],
                     "r10": y[:10].sum() / r["n_gold"], "mrr": 1 / first if first else 0.0})

    def agg(sel: list[dict]) -> dict:
        return {k: round(statistics.mean(x[k] for x in sel), 3) for k in ("r5", "r10", "mrr")}

    out = {"all": agg(rows)}
    for cat, label in CATEGORIES.items():
        out[f"{cat} {label}"] = agg([x for x in rows if x["cat"] == cat])
    return out


def fit(records: list[dict], cols: list[int], l2: float, steps: int = 400) -> Any:
    """Linear weights over the chosen feature columns: listwise softmax cross-entropy (the
    probability mass on a question's gold sessions), L2, full-batch Adam."""
    import numpy as np

    xs = [np.asarray(r["x"], dtype=np.float64)[:, cols] for r in records]
    ys = [np.asarray(r["y"], dtype=bool) for r in records]
    w = np.zeros(len(cols))
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        grad = 2 * l2 * w
        for x, y in zip(xs, ys, strict=True):
            if not y.any():
                continue
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            pg = p * y
            pg /= pg.sum()
            grad += (p - pg) @ x / len(xs)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        w -= 0.05 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


def main() -> None:
    import numpy as np

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "locomo-dev")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-locomo"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    records = collect(args.workdir, args.data)
    convs = sorted({r["conv"] for r in records})

    def score_with(weights: dict[str, float], r: dict) -> Any:
        w = np.array([weights.get(k, 0.0) for k in FEATURES])
        return np.asarray(r["x"]) @ w

    out: dict[str, Any] = {"shipped formula": metrics(
        records, [score_with(SHIPPED, r) for r in records])}
    models = {"refit the shipped five": [FEATURES.index(k) for k in SHIPPED],
              "all features": list(range(len(FEATURES)))}
    for label, cols in models.items():
        for l2 in (0.001, 0.01, 0.1):
            held: list[Any] = [None] * len(records)
            weights = {}
            for conv in convs:
                train = [r for r in records if r["conv"] != conv]
                w = fit(train, cols, l2)
                weights[conv] = {FEATURES[c]: round(float(x), 3) for c, x in zip(cols, w,
                                                                               strict=True)}
                for i, r in enumerate(records):
                    if r["conv"] == conv:
                        held[i] = np.asarray(r["x"])[:, cols] @ w
            out[f"{label}, l2 {l2} (held out)"] = {**metrics(records, held), "weights": weights}
            print(f"  {label} l2={l2}: {out[f'{label}, l2 {l2} (held out)']['all']}",
                  file=sys.stderr)
    report(out, args.out)


if __name__ == "__main__":
    main()
