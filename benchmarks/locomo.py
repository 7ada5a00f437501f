"""Session- and turn-level retrieval on LoCoMo through alaya's own pipeline.

Session level: a hit counts for the session it came from. Turn level: the evidence turns
among the turns recall shows, in order (each session hit's best turns, sessions in rank
order). Each conversation becomes one vault: every session converted to the session JSON `alaya
ingest` accepts (speakers as names, `dia_id` as turn ids, the session date as timestamps,
shared-image captions kept in the text), ingested, compiled with the bundled embedder. Every
question of categories 1–4 goes through `recall` (sessions only, no LLM); a hit counts for the
session it came from. Baselines in the same run: BM25 only and vectors only over the same
units. Category 5 (adversarial) is left out.

    .venv/bin/python benchmarks/locomo.py [--data ../shared/data/locomo-dev] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from compilers.options import CompileOptions  # noqa: E402
from compilers.pipeline import compile_vault  # noqa: E402
from vault_engine import artifacts as A  # noqa: E402
from vault_engine.providers.embedding import LocalEmbedder  # noqa: E402
from vault_engine.recall.pipeline import recall  # noqa: E402
from vault_engine.recall.query import RecallQuery, RecallSettings  # noqa: E402
from vault_engine.sessions.ingest import ingest  # noqa: E402
from vault_engine.store.init_vault import init_vault  # noqa: E402
from vault_engine.store.vault import Vault  # noqa: E402

DIA_RE = re.compile(r"D(\d+):(\d+)")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class CachedEmbedder:
    """The bundled embedder with each query's vector kept in `workdir/query-vectors.pkl`: a
    grid of settings asks the same 760 questions many times, and embedding dominates recall
    time. Vectors are exactly the embedder's; only repeated work is saved."""

    def __init__(self, workdir: Path) -> None:
        import pickle

        self.inner = LocalEmbedder()
        self.id = self.inner.id
        self.path = workdir / "query-vectors.pkl"
        self.memo: dict[str, object] = {}
        if self.path.exists():
            self.memo = pickle.loads(self.path.read_bytes())  # written by this script only
        self.added = 0

    def embed_query(self, text: str) -> object:
        vec = self.memo.get(text)
        if vec is None:
            vec = self.memo[text] = self.inner.embed_query(text)
            self.added += 1
        return vec

    def embed_passages(self, texts: list[str]) -> object:
        return self.inner.embed_passages(texts)

    def save(self) -> None:
        import pickle

        if self.added:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.memo))


def session_json(conv: dict, name: str, n: int) -> dict:
    when = dt.datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
    ms = int(when.replace(tzinfo=dt.UTC).timestamp() * 1000)
    turns = []
    for i, t in enumerate(conv[f"session_{n}"]):
        text = t["text"]
        if t.get("blip_caption"):
            text += f" [shares a photo: {t['blip_caption']}]"
        turns.append({"id": t["dia_id"], "role": "user", "name": t["speaker"], "content": text,
                      "timestamp": ms + i * 1000})
    return {"id": f"{name}-s{n}", "timestamp": ms, "channel": "locomo", "turns": turns}


def build_vault(path: Path, sample: dict, name: str, embedder: LocalEmbedder,
                distill: bool = False, entities: bool = False,
                embed_cache: Path | None = None) -> Vault:
    """Ingest (and distil, and write entity pages) once per workdir, then compile. An
    `embed_cache` (another workdir's vault of the same conversation) lends its embedding
    cache: the same texts are not embedded twice, and nothing else is shared."""
    conv = sample.get("conversation", sample)  # the dev files are flattened
    sessions = sorted(int(k.split("_")[1]) for k in conv
                      if k.startswith("session_") and k.count("_") == 1)
    if not (path / "alaya.toml").exists():
        init_vault(path)
        vault = Vault.open(path)
        inputs = [(f"{name}-s{n}.json", json.dumps(session_json(conv, name, n)).encode())
                  for n in sessions]
        ingest(vault, inputs)
        if distill:
            from vault_engine.sessions.distill import distill as run_distill

            run_distill(vault, distiller="rules")
        if entities:
            from vault_engine.sessions.distill.entity_pages import refresh_pages

            result, _ = refresh_pages(vault)
            print(f"  {name}: entity pages {result.line()}", file=sys.stderr)
        source = embed_cache / A.EMBED_CACHE if embed_cache is not None else None
        if source is not None and source.exists():
            import shutil

            (path / ".alaya" / "cache").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, path / ".alaya" / A.EMBED_CACHE)
    vault = Vault.open(path)
    stats = compile_vault(vault, CompileOptions(embedder=embedder))
    print(f"  {name}: {stats.units} units, embedded {stats.embedded} "
          f"({stats.ms.get('total', 0) / 1000:.1f} s)", file=sys.stderr)
    return vault


def turn_ids(sample: dict, name: str) -> dict[tuple[str, str], str]:
    """(session id, turn anchor) → LoCoMo dia_id: ingest numbers a session's turns t1, t2, …
    in the order they come."""
    conv = sample.get("conversation", sample)
    out = {}
    for key, turns in conv.items():
        if key.startswith("session_") and key.count("_") == 1 and isinstance(turns, list):
            for i, t in enumerate(turns, 1):
                out[(f"{name}-s{int(key.split('_')[1])}", f"t{i}")] = t["dia_id"]
    return out


def evaluate(vault: Vault, name: str, sample: dict, embedder: Any, mode: str,
             settings: RecallSettings, cards_vote: bool = False,
             expand: bool = False, reranker: Any = None) -> list[dict]:
    rows = []
    dia = turn_ids(sample, name)
    for qa in sample["qa"]:
        cat = qa.get("category")
        if cat not in CATEGORIES:
            continue
        gold_turns = {m.group(0) for e in qa.get("evidence", [])
                      for m in DIA_RE.finditer(str(e))}  # a few ids are malformed ("D:11:2")
        gold = {f"{name}-s{int(t[1:].split(':')[0])}" for t in gold_turns}
        if not gold:
            continue
        start = time.perf_counter()
        kinds = ("session",) if not cards_vote else ()
        result = recall(vault.state_dir, RecallQuery(text=qa["question"], kinds=kinds,
                                                     top_k=30 if cards_vote else 10, mode=mode,
                                                     expand=expand),
                        embedder=embedder, settings=settings, telemetry=False,
                        reranker=reranker)
        failed = [w for w in result.get("warnings") or [] if "reranker" in w]
        if reranker is not None and failed:
            raise SystemExit(f"{name}: {failed[0]}")  # no silent offline fallback
        latency = (time.perf_counter() - start) * 1000
        ranked = []
        for n in result["nodes"]:  # a card stands for the sessions its claims came from
            for sid in ([n["id"]] if n["kind"] == "session" else n["source_sessions"]):
                if sid not in ranked:
                    ranked.append(sid)
        first = next((i for i, s in enumerate(ranked, 1) if s in gold), None)
        # turn level: the evidence turns among the turns recall shows, in its order (each
        # session hit's best turns, up to three, sessions in rank order)
        turns = [dia.get((n["id"], a)) for n in result["nodes"] if n["kind"] == "session"
                 for a in n.get("anchors", [])]
        first_turn = next((i for i, t in enumerate(turns, 1) if t in gold_turns), None)
        rows.append({
            "category": cat, "latency_ms": latency, "question": f"{name}: {qa['question']}",
            "gold_ranks": {g: ranked.index(g) + 1 if g in ranked else None for g in sorted(gold)},
            "r5": len(gold & set(ranked[:5])) / len(gold),
            "r10": len(gold & set(ranked[:10])) / len(gold),
            "mrr": 1 / first if first else 0.0,
            "turn_r5": len(gold_turns & set(turns[:5])) / len(gold_turns),
            "turn_r10": len(gold_turns & set(turns[:10])) / len(gold_turns),
            "turn_mrr": 1 / first_turn if first_turn else 0.0,
        })
    return rows


def summarise(rows: list[dict]) -> dict:
    def agg(sel: list[dict]) -> dict:
        keys = ("r5", "r10", "mrr", "turn_r5", "turn_r10", "turn_mrr")
        return {"n": len(sel), **{k: round(statistics.mean(r[k] for r in sel), 3)
                                  for k in keys if k in sel[0]}}

    out = {"all": agg(rows)}
    for cat, label in CATEGORIES.items():
        sel = [r for r in rows if r["category"] == cat]
        if sel:
            out[f"{cat} {label}"] = agg(sel)
    lat = sorted(r["latency_ms"] for r in rows)
    out["latency_ms"] = {"p50": round(lat[len(lat) // 2], 1),
                         "p95": round(lat[int(len(lat) * 0.95)], 1)}
    return out


# The weights each issue added, each chosen by leave-one-conversation-out cross-validation
# (`--cross-validate`; `--grid KEY=V1,V2 …` replaces this grid).
GRID_AXES: dict[str, list[object]] = {"other_speaker_factor": [1.0, 0.8, 0.6, 0.4],
                                      "asking_factor": [1.0, 0.8, 0.6, 0.4]}

# Each mechanism and the settings that switch it off, for the ablation table (`--ablation`).
MECHANISMS: dict[str, dict[str, object]] = {
    "time questions rank turns that say when": {"time_weight": 0.0},
    "turn context": {"context_weight": 0.0},
    "whole-session BM25": {"session_bm25_weight": 0.0},
    "date match": {"date_weight": 0.0},
    "score completion": {"complete_scores": False},
    "shown turns: the named person's first": {"other_speaker_factor": 1.0},
    "shown turns: answers before questions": {"asking_factor": 1.0},
}


def load_conversations(args: argparse.Namespace, embedder: CachedEmbedder) -> list[tuple]:
    out = []
    for path in sorted(args.data.glob("conv-*.json")):
        sample = json.loads(path.read_text())
        vault = build_vault(vault_dir(args) / path.stem, sample, path.stem, embedder.inner,
                            distill=args.distill, entities=args.entities,
                            embed_cache=args.embed_cache / path.stem / ".alaya"
                            if args.embed_cache else None)
        out.append((path.stem, sample, vault))
    return out


def vault_dir(args: argparse.Namespace) -> Path:
    """The workdir of this kind of vault: `-distilled`, `-entities` suffixes."""
    suffix = ("-distilled" if args.distill else "") + ("-entities" if args.entities else "")
    return args.workdir.with_name(args.workdir.name + suffix) if suffix else args.workdir


def grid_of(specs: list[str]) -> list[dict[str, object]]:
    axes = dict(GRID_AXES)
    if specs:
        axes = {k: [json.loads(x) for x in v.split(",")]
                for k, v in (item.split("=", 1) for item in specs)}
    grid: list[dict[str, object]] = [{}]
    for key, values in axes.items():
        grid = [{**g, key: v} for g in grid for v in values]
    return grid


def cross_validate(args: argparse.Namespace) -> None:
    """Are the default weights tuned to these five conversations? For each conversation,
    choose the weights that do best (MRR) on the other four and score it with them."""
    embedder = CachedEmbedder(args.workdir)
    convs = load_conversations(args, embedder)
    grid = grid_of(args.grid)
    per: dict[str, dict[int, list[dict]]] = {}
    for name, sample, vault in convs:
        per[name] = {i: evaluate(vault, name, sample, embedder, "hybrid", RecallSettings(**cfg),
                                 expand=args.expand)
                     for i, cfg in enumerate(grid)}
    embedder.save()
    held_out: list[dict] = []
    chosen = {}
    for conv in per:
        def mrr_elsewhere(i: int, conv: str = conv) -> tuple[float, float]:
            """Session MRR on the other four; turn MRR breaks a tie (a weight that only
            chooses which turns a session shows leaves session MRR as it is)."""
            rows = [r for other, by_cfg in per.items() if other != conv for r in by_cfg[i]]
            return (round(statistics.mean(r["mrr"] for r in rows), 6),
                    statistics.mean(r["turn_mrr"] for r in rows))

        best = max(range(len(grid)), key=mrr_elsewhere)
        chosen[conv] = grid[best]
        held_out += per[conv][best]
    defaults = RecallSettings()
    default = next((i for i, c in enumerate(grid)
                    if all(getattr(defaults, k) == v for k, v in c.items())), None)
    report({"held_out_with_weights_chosen_on_the_others": summarise(held_out),
            "defaults_on_all": summarise([r for by_cfg in per.values() for r in by_cfg[default]])
            if default is not None else None,
            "each_setting_on_all": {json.dumps(cfg): summarise(
                [r for by_cfg in per.values() for r in by_cfg[i]])["all"]
                for i, cfg in enumerate(grid)},
            "chosen": chosen}, args.out)


def ablation(args: argparse.Namespace) -> None:
    """The defaults, then each mechanism switched off alone: per category, session and turn
    level (docs/benchmarks.md, the ablation table)."""
    embedder = CachedEmbedder(args.workdir)
    convs = load_conversations(args, embedder)
    variants = {"defaults": {}, **{f"without {k}": v for k, v in MECHANISMS.items()}}
    out = {}
    for label, overrides in variants.items():
        rows: list[dict] = []
        for name, sample, vault in convs:
            rows += evaluate(vault, name, sample, embedder, "hybrid", RecallSettings(**overrides),
                             expand=args.expand)
        out[label] = summarise(rows)
        print(f"  {label}: R@10 {out[label]['all']['r10']} MRR {out[label]['all']['mrr']}",
              file=sys.stderr)
    embedder.save()
    report(out, args.out)


EVAL_TYPES = {1: ("MULTI_HOP", "hard"), 2: ("TEMPORAL_ORDER", "medium"),
              3: ("OPEN_DOMAIN", "hard"), 4: ("CONCEPT_RECALL", "easy")}


def export_eval(data: Path, out: Path) -> None:
    """The dev questions in the seed 000 §7.4 dataset format, one file per conversation, for
    `alaya eval` (expected_cards: the gold sessions; recall restricted to sessions)."""
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(data.glob("conv-*.json")):
        sample = json.loads(path.read_text())
        pairs = []
        for qa in sample["qa"]:
            cat = qa.get("category")
            if cat not in EVAL_TYPES:
                continue
            gold = sorted({f"{path.stem}-s{int(m.group(1))}" for e in qa.get("evidence", [])
                           for m in DIA_RE.finditer(str(e))})
            if gold:
                kind, difficulty = EVAL_TYPES[cat]
                pairs.append({"type": kind, "query": qa["question"], "expected_cards": gold,
                              "difficulty": difficulty, "kinds": ["session"],
                              "explanation": f"LoCoMo category {cat}"})
        (out / f"{path.stem}.json").write_text(json.dumps({"qa_pairs": pairs}, indent=1) + "\n")
        print(f"  {path.stem}: {len(pairs)} questions → {out / (path.stem + '.json')}",
              file=sys.stderr)


def reranker(args: argparse.Namespace) -> Any:
    """`--rerank openai|llm`: the reranker of docs/configuration.md [rerank] at the endpoint
    ALAYA_RERANK_BASE_URL (model ALAYA_RERANK_MODEL, key ALAYA_RERANK_API_KEY), reordering
    the best `--rerank-top-n` candidates of every question."""
    if not args.rerank:
        return None
    from vault_engine.providers.rerank import Reranker, RerankSettings

    return Reranker(RerankSettings(
        provider=args.rerank, base_url=os.environ.get("ALAYA_RERANK_BASE_URL", ""),
        model=os.environ.get("ALAYA_RERANK_MODEL") or "default",
        api_key=os.environ.get("ALAYA_RERANK_API_KEY") or None, top_n=args.rerank_top_n,
        timeout_s=60.0, max_retries=2))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "locomo-dev")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-locomo"))
    ap.add_argument("--modes", nargs="+", default=["hybrid", "bm25", "vector"])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--fusion", choices=["rrf", "weighted"], default="weighted")
    ap.add_argument("--distill", action="store_true",
                    help="Also distil the sessions (offline rules) and let cards vote for the "
                         "sessions they came from (workdir gets a -distilled suffix).")
    ap.add_argument("--entities", action="store_true",
                    help="Also write entity pages (vault_engine/sessions/distill/entity_pages.py) "
                         "before compiling (workdir gets an -entities suffix).")
    ap.add_argument("--rerank", choices=["openai", "llm"], default=None,
                    help="rerank with a model at ALAYA_RERANK_BASE_URL: a /rerank endpoint "
                         "(cross-encoder) or a chat model (the [rerank] reranker)")
    ap.add_argument("--rerank-top-n", type=int, default=20, metavar="N")
    ap.add_argument("--expand", action="store_true",
                    help="Recall with graph expansion (default: off, sessions by retrieval only).")
    ap.add_argument("--embed-cache", type=Path, default=None, metavar="WORKDIR",
                    help="Copy each conversation's embedding cache from this workdir's vaults "
                         "into new vaults (nothing re-embedded that was embedded there).")
    ap.add_argument("--mmr", type=float, default=0.7)
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=JSON",
                    help="Override a RecallSettings field for an ablation, e.g. "
                         "--set session_bm25_weight=0.2")
    ap.add_argument("--cross-validate", action="store_true",
                    help="Leave one conversation out: pick the fusion weights on the other "
                         "four, score the held-out one; compare with the defaults.")
    ap.add_argument("--grid", nargs="*", default=[], metavar="KEY=V1,V2",
                    help="The weights --cross-validate chooses among (default: the newest "
                         "weights, GRID_AXES), e.g. --grid time_weight=0,0.1 date_weight=0.1,0.3")
    ap.add_argument("--ablation", action="store_true",
                    help="The defaults and each mechanism switched off alone, per category.")
    ap.add_argument("--misses", action="store_true",
                    help="Also list (on stderr) each question with a gold session outside the "
                         "top 10, and where its gold sessions ranked (None: not in the top 10).")
    ap.add_argument("--export-eval", type=Path, default=None, metavar="DIR",
                    help="Write the questions as `alaya eval` datasets (seed 000 §7.4) and exit.")
    args = ap.parse_args()
    if args.export_eval:
        export_eval(args.data, args.export_eval)
        return
    if args.cross_validate:
        cross_validate(args)
        return
    if args.ablation:
        ablation(args)
        return
    cached = CachedEmbedder(args.workdir)
    embedder = cached.inner
    overrides = {k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}
    settings = RecallSettings(fusion=args.fusion, mmr_lambda=args.mmr, **overrides)
    results: dict[str, list[dict]] = {m: [] for m in args.modes}
    for path in sorted(args.data.glob("conv-*.json")):
        sample = json.loads(path.read_text())
        name = path.stem
        vault = build_vault(vault_dir(args) / name, sample, name, embedder,
                            distill=args.distill, entities=args.entities,
                            embed_cache=args.embed_cache / name / ".alaya"
                            if args.embed_cache else None)
        for mode in args.modes:
            results[mode] += evaluate(vault, name, sample, cached, mode, settings,
                                      cards_vote=args.distill, expand=args.expand,
                                      reranker=reranker(args))
    cached.save()
    if args.misses:
        for mode, rows in results.items():
            for r in rows:
                if r["r10"] < 1:
                    print(f"  [{mode}, {CATEGORIES[r['category']]}] {r['question']} — gold "
                          f"session ranks {r['gold_ranks']}", file=sys.stderr)
    report({mode: summarise(rows) for mode, rows in results.items()}, args.out)


if __name__ == "__main__":
    main()
