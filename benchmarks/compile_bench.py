"""Compile benchmarks: full compile, incremental after one edit, watcher latency, sizes, loads.

Each size gets a synthetic vault (benchmarks/synth.py). Embeddings come from the cache: the
first pass fills it with a 384-dimensional hash embedder (the bundled model's shape), so the
timed passes measure the compiler, not the model. `--local-sample N` separately measures the
bundled model's throughput on N real card texts.

    .venv/bin/python benchmarks/compile_bench.py --sizes 1000 10000 [--local-sample 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from benchmarks.synth import write_vault  # noqa: E402

ALAYA = str(Path(sys.executable).parent / "alaya")
ENV = dict(os.environ, ALAYA_EMBED_PROVIDER="hash384", NO_COLOR="1")


def alaya(vault: Path, *args: str) -> tuple[dict, float, int]:
    """Run the installed alaya; (json output, wall seconds, child max RSS in MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    out = subprocess.run([ALAYA, "--vault", str(vault), *args, "--json"], env=ENV,
                         capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if out.returncode not in (0, 1):
        raise SystemExit(out.stderr)
    return json.loads(out.stdout), wall, max(rss, before) // 1024


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


_LOAD_SCRIPT = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import bm25s
from vault_engine import artifacts as A
b = A.current_build(Path(sys.argv[2]) / ".alaya")
out = {}
for name, fn in [("graph.pickle", b.graph), ("agent-digest.json", b.digest),
                 ("vectors-hot (mmap)", lambda: b.vector_index("HOT", mmap=True)),
                 ("lexical (mmap)", lambda: [bm25s.BM25.load(str(s), mmap=True)
                                             for s in b.path(A.LEXICAL).glob("shard-*")]),
                 ("units.jsonl", b.units)]:
    t = time.perf_counter()
    fn()
    out[name] = round((time.perf_counter() - t) * 1000, 1)
print(json.dumps(out))
"""


def load_times(vault: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _LOAD_SCRIPT, str(ROOT), str(vault)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def watcher_latency(vault: Path, rounds: int = 5) -> list[float]:
    """Save a note → the published build changes; measured against a running `alaya watch`."""
    proc = subprocess.Popen([ALAYA, "--vault", str(vault), "watch", "--json", "--debounce", "0.2",
                             "--no-introspect"],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: [lines.append(ln) for ln in proc.stdout], daemon=True)
    reader.start()
    while not lines:
        time.sleep(0.05)
    current = vault / ".alaya" / "current.json"
    target = next((vault / "cards").rglob("*.md"))
    out = []
    try:
        for r in range(rounds):
            before = current.read_bytes()
            start = time.perf_counter()
            target.write_text(target.read_text("utf-8") + f"\nEdit {r}.\n", encoding="utf-8")
            while current.read_bytes() == before:
                time.sleep(0.005)
            out.append(time.perf_counter() - start)
            time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(10)
    return out


def bench(n: int, workdir: Path) -> dict:
    vault = workdir / f"vault-{n}"
    if not vault.exists():
        t = time.perf_counter()
        write_vault(vault, n)
        print(f"  generated {n} cards in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    shutil.rmtree(vault / ".alaya", ignore_errors=True)
    first, first_s, first_rss = alaya(vault, "compile")  # fills the embedding cache
    # full compile with cached embeddings: drop builds and the record cache, keep embeddings
    fulls = []
    for _ in range(2):
        shutil.rmtree(vault / ".alaya" / "builds")
        (vault / ".alaya" / "current.json").unlink()
        (vault / ".alaya" / "cache" / "records.pickle").unlink()
        stats, secs, rss = alaya(vault, "compile")
        fulls.append((secs, stats, rss))
    incr = []
    card = next((vault / "cards").rglob("*.md"))
    for r in range(5):
        text = card.read_text("utf-8")
        card.write_text(text.replace('text: "', f'text: "Edited {r}: ', 1), encoding="utf-8")
        stats, secs, _ = alaya(vault, "compile")
        incr.append((secs, stats))
    latency = watcher_latency(vault)
    build = vault / ".alaya" / "builds"
    current = json.loads((vault / ".alaya" / "current.json").read_text())["build"]
    sizes = {p.name: round(p.stat().st_size / 1e6, 2) if p.is_file() else round(dir_mb(p), 2)
             for p in (build / current).iterdir()}
    return {
        "cards": n, "notes": first["notes"], "units": first["units"],
        "first_compile_s": round(first_s, 2), "first_embedded": first["embedded"],
        "full_compile_s": round(statistics.median(s for s, _, _ in fulls), 2),
        "full_compile_phases_ms": fulls[-1][1]["ms"],
        "full_compile_max_rss_mb": max(r for _, _, r in fulls),
        "incremental_s_median": round(statistics.median(s for s, _ in incr), 3),
        "incremental_embedded": [s["embedded"] for _, s in incr],
        "incremental_phases_ms": incr[-1][1]["ms"],
        "watch_latency_s_median": round(statistics.median(latency), 3),
        "watch_latency_s_max": round(max(latency), 3),
        "artifact_mb": sizes, "load_ms": load_times(vault),
    }


def local_throughput(sample: int) -> dict:
    from benchmarks.synth import cards
    from compilers.records import build_record
    from vault_engine.providers.embedding import LocalEmbedder
    from vault_engine.store.notes import parse_note

    texts = [build_record(parse_note(f"cards/x{i}.md", t)).units[0].embed_text
             for i, t in enumerate(cards(sample, seed=11))]
    emb = LocalEmbedder()
    emb.embed_passages(texts[:2])  # load the model
    t = time.perf_counter()
    emb.embed_passages(texts)
    secs = time.perf_counter() - t
    return {"sample": sample, "seconds": round(secs, 2), "cards_per_s": round(sample / secs, 1),
            "first_compile_10k_min_est": round(10_000 / (sample / secs) / 60, 1),
            "mean_chars": round(statistics.mean(len(x) for x in texts))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-bench"))
    ap.add_argument("--local-sample", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    results = {"machine": f"{os.cpu_count()} cores, {platform.machine()}, python "
                          f"{platform.python_version()}", "runs": []}
    for n in args.sizes:
        print(f"size {n}", file=sys.stderr)
        results["runs"].append(bench(n, args.workdir))
        print(json.dumps(results["runs"][-1], indent=1), file=sys.stderr)
    if args.local_sample:
        results["local_model"] = local_throughput(args.local_sample)
    report(results, args.out)


if __name__ == "__main__":
    main()
