"""A technical agent-session set: gotchas, decisions and causal chains across sessions, where
graph expansion should find what the query's own words do not (seed 000 §7.2 "graph gain").

Eight ops sessions (benchmarks/agentops/sessions/) are ingested, distilled with the offline
rules and compiled with the bundled embedder; each question of benchmarks/agentops/
questions.json names the sessions that hold its answer — for a causal question, both the
symptom's and the cause's. Hits count for the sessions they come from (a card for its
source sessions). Measured with and without graph expansion, for hybrid, BM25-only and
vector-only retrieval; graph gain = R@3 with expansion / R@3 without.

    .venv/bin/python benchmarks/agentops.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from compilers.options import CompileOptions  # noqa: E402
from compilers.pipeline import compile_vault  # noqa: E402
from vault_engine.providers.embedding import LocalEmbedder  # noqa: E402
from vault_engine.recall.pipeline import recall  # noqa: E402
from vault_engine.recall.query import RecallQuery, RecallSettings  # noqa: E402
from vault_engine.sessions.distill import distill  # noqa: E402
from vault_engine.sessions.ingest import ingest, read_inputs  # noqa: E402
from vault_engine.store.init_vault import init_vault  # noqa: E402
from vault_engine.store.vault import Vault  # noqa: E402

HERE = ROOT / "benchmarks" / "agentops"


def sessions_of(nodes: list[dict]) -> list[str]:
    """The sessions the nodes stand for, in order: a session itself, a card its source
    sessions, an entity page the sessions of the facts it shows (at most three, each linked
    to its turn — as recall's own session diversity counts them)."""
    ranked: list[str] = []
    for n in nodes:
        if n["kind"] == "session":
            sids = [n["id"]]
        elif n["kind"] == "entity":
            sids = [f["source"].strip("[]").split("#")[0] for f in n.get("facts") or []]
        else:
            sids = n["source_sessions"]
        for sid in sids:
            if sid not in ranked:
                ranked.append(sid)
    return ranked


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-agentops"))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--depth", type=int, default=1, help="graph expansion depth")
    ap.add_argument("--set", type=Path, default=HERE, dest="data",
                    help="a folder with sessions/*.json and questions.json (default: the main "
                         "set; benchmarks/agentops/heldout is a second set written before the "
                         "graph-ranking work, for checking changes on questions not tuned to)")
    ap.add_argument("--introspect", action="store_true",
                    help="run `introspect --phase consolidate` before compiling (entity links, "
                         "SIMILAR_TO across sessions)")
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    init_vault(args.workdir)
    vault = Vault.open(args.workdir)
    ingest(vault, read_inputs([str(p) for p in sorted((args.data / "sessions").glob("*.json"))]))
    distill(vault, distiller="rules")
    if args.introspect:
        from vault_engine.care.introspect.runner import introspect

        introspect(vault, phases=("consolidate",))
    embedder = LocalEmbedder()
    compile_vault(vault, CompileOptions(embedder=embedder))
    questions = json.loads((args.data / "questions.json").read_text())
    settings = RecallSettings()
    out: dict[str, dict] = {}
    for mode in ("hybrid", "bm25", "vector"):
        for expand in (False, True):
            rows = []
            for q in questions:
                result = recall(vault.state_dir, RecallQuery(text=q["query"], top_k=5, mode=mode,
                                                             expand=expand, depth=args.depth),
                                embedder=embedder, settings=settings, telemetry=False)
                ranked = sessions_of(result["nodes"])
                gold = set(q["expected_sessions"])
                first = next((i for i, s in enumerate(ranked, 1) if s in gold), None)
                rows.append({"type": q["type"], "r3": len(gold & set(ranked[:3])) / len(gold),
                             "r5": len(gold & set(ranked[:5])) / len(gold),
                             "mrr": 1 / first if first else 0.0})
            summary = {k: round(statistics.mean(r[k] for r in rows), 3) for k in ("r3", "r5", "mrr")}
            summary["by_type"] = {t: round(statistics.mean(r["r3"] for r in rows if r["type"] == t), 3)
                                  for t in sorted({r["type"] for r in rows})}
            out[f"{mode}{' + graph' if expand else ''}"] = summary
        base, graph = out[mode]["r3"], out[f"{mode} + graph"]["r3"]
        out[f"{mode} + graph"]["graph_gain_r3"] = round(graph / base, 3) if base else None
    report(out, args.out)


if __name__ == "__main__":
    main()
