"""Write → visible: how long from `alaya new` to a recall that returns the new card, and what
the staleness check costs recall — at 1k and 10k notes (docs/benchmarks.md, "Read your own
writes").

Vaults: benchmarks/synth.py (N cards, one in four Chinese, N/20 sessions). They are compiled
once with the 384-d hash embedder (embedding 15k units with the bundled model would take an
hour); then, a benchmark-only step, the cached vectors are copied under the bundled model's
id, so every compile after it runs with the real bundled model and embeds only what is new —
the new card, with the real model, as a user's vault would.

Each round writes one card (English and Chinese titles alternate) and recalls its title, in
fresh processes, timed from outside (spawn to exit):

- `refresh`: `alaya new` (which compiles incrementally right after the write, the default)
  then `alaya recall … --json`;
- `fresh-read`: the alternative — `[compile] after_write = false`, then `alaya recall
  --fresh` (the compile paid by the read);
- `serve`: as `refresh`, with `alaya serve` running (recall answered by the resident server);
- `mcp`: the tools `new` then `recall` of one resident `alaya mcp` (stdio, the real client):
  the server compiles after its own write with the compile state it keeps in memory.

Each command's wall time (what an agent waits for) and CPU time (user + sys of the child:
what the machine's other tenants cannot inflate) are reported. In-process, the staleness
check alone (vault_engine.stamps.check) on the current build:
the vault unchanged, and with one note edited in place.

    .venv/bin/python benchmarks/write_visible.py --sizes 1000 10000 --rounds 8
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from benchmarks.synth import write_vault  # noqa: E402

ALAYA = str(Path(sys.executable).parent / "alaya")
TITLES = ["Rotate the {w} API key every 90 days {i}", "灰度发布前先检查 {w} 主从延迟 {i}",
          "The {w} worker leaks file handles on reload {i}", "{w} 重启后需要重新加载证书 {i}"]
WORDS = ["Grafana", "Redis", "Kafka", "Nginx", "Postgres", "Consul", "Vault", "Envoy"]


CPU: dict[str, float] = {"last": 0.0}  # CPU seconds (user + sys) of the last command


def run(*args: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    """(JSON output, wall ms) of one `alaya` process; its CPU time goes to CPU["last"]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([ALAYA, *args], capture_output=True, text=True, env=env, check=True)
    wall = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["last"] = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return json.loads(out.stdout), wall


def stats(values: list[float]) -> dict[str, float]:
    s = sorted(values)
    return {"p50": round(statistics.median(s), 1),
            "p95": round(s[min(len(s) - 1, int(len(s) * 0.95))], 1),
            "max": round(s[-1], 1)}


def prepare(vault: Path, n: int) -> None:
    """The synthetic vault, compiled, its vectors cached under the bundled model's id."""
    from vault_engine.providers.embedding import HashEmbedder, LocalEmbedder

    if not (vault / "alaya.toml").exists():
        write_vault(vault, n)
        subprocess.run(["git", "init", "-q", str(vault)], check=True)
        subprocess.run(["git", "-C", str(vault), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(vault), "-c", "user.name=bench", "-c",
                        "user.email=bench@localhost", "commit", "-qm", "synthetic vault"],
                       check=True)
    subprocess.run([ALAYA, "--vault", str(vault), "compile"], capture_output=True, check=True,
                   env=dict(os.environ, ALAYA_EMBED_PROVIDER="hash384"))
    db = sqlite3.connect(vault / ".alaya" / "cache" / "embeddings.sqlite")
    with db:
        db.execute("INSERT OR IGNORE INTO vectors (embedder, key, dim, vec) SELECT ?, key, dim, "
                   "vec FROM vectors WHERE embedder = ?", (LocalEmbedder().id,
                                                           HashEmbedder(384).id))
    db.close()
    stats_, _ = run("--vault", str(vault), "compile", "--json", env=bundled_env())
    assert stats_["embedder"].startswith("local:") and stats_["embedded"] == 0, stats_


def bundled_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ALAYA_EMBED_PROVIDER", None)
    return env


def set_after_write(vault: Path, value: bool) -> None:
    cfg = vault / "alaya.toml"
    text = cfg.read_text()
    cfg.write_text(text.replace(f"after_write = {str(not value).lower()}",
                                f"after_write = {str(value).lower()}"))


def round_trip(vault: Path, title: str, mode: str) -> dict[str, Any]:
    env = bundled_env()
    v = ["--vault", str(vault)]
    t0 = time.perf_counter()
    made, write_ms = run(*v, "new", "--title", title, "--type", "gotcha", "--claim",
                         title + ".", "--json", env=env)
    write_cpu = CPU["last"]
    recall_args = [*v, "recall", title, "--json"] + (["--fresh"] if mode == "fresh-read" else [])
    found, recall_ms = run(*recall_args, env=env)
    visible_ms = (time.perf_counter() - t0) * 1000
    top = [n["id"] for n in found["nodes"][:3]]
    return {"write_ms": write_ms, "refresh_ms": (made.get("refresh") or {}).get("ms") or 0.0,
            "recall_ms": recall_ms, "visible_ms": visible_ms, "write_cpu_ms": write_cpu,
            "recall_cpu_ms": CPU["last"], "visible_cpu_ms": write_cpu + CPU["last"],
            "top3": made["id"] in top, "stale": found["stale"]}


def mcp_rounds(vault: Path, titles: list[str]) -> list[dict[str, Any]]:
    import asyncio

    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=ALAYA, args=["--vault", str(vault), "mcp"],
                                   env=bundled_env())

    async def run_all() -> list[dict[str, Any]]:
        rows = []
        async with Client(params) as client:
            await client.call_tool("recall", {"query": "warm up"})  # load model and index
            for title in titles:
                t0 = time.perf_counter()
                made = json.loads((await client.call_tool("new", {
                    "title": title, "type": "gotcha", "claims": [title + "."]})).content[0].text)
                t1 = time.perf_counter()
                found = json.loads((await client.call_tool("recall", {"query": title}))
                                   .content[0].text)
                t2 = time.perf_counter()
                rows.append({"write_ms": (t1 - t0) * 1000, "refresh_ms": made["refresh"]["ms"],
                             "recall_ms": (t2 - t1) * 1000, "visible_ms": (t2 - t0) * 1000,
                             "top3": made["id"] in [n["id"] for n in found["nodes"][:3]],
                             "stale": found["stale"]})
        return rows

    return asyncio.run(run_all())


def check_cost(vault: Path, repeat: int = 30) -> dict[str, Any]:
    """The staleness check alone, on the current build, for a recall's ten results: as it
    runs (folders + results, or every note in a vault of at most FULL_CHECK_NOTES), and with
    every note compared whatever the size; the vault unchanged, then one result edited."""
    from vault_engine import artifacts as A
    from vault_engine import stamps
    from vault_engine.recall.index import open_index

    index = open_index(vault / ".alaya")
    results = [(i, index.row(int(index.node_unit[i])).get("path")) for i in range(10)
               if int(index.node_unit[i]) >= 0]
    out: dict[str, Any] = {"notes": A.current_build(vault / ".alaya").manifest()["counts"]["notes"],
                           "full_check_notes": stamps.FULL_CHECK_NOTES}
    default = stamps.FULL_CHECK_NOTES

    def timed(label: str) -> None:
        for mode, limit in (("as configured", default), ("every note", 10**9)):
            stamps.FULL_CHECK_NOTES = limit
            lat = []
            for _ in range(repeat):
                t = time.perf_counter()
                stale = index.staleness(vault, results)
                lat.append((time.perf_counter() - t) * 1000)
            out[f"{label}, {mode}"] = {**stats(lat), "stale": stale.stale}
        stamps.FULL_CHECK_NOTES = default

    timed("unchanged")
    edited = vault / str(results[0][1])
    original = edited.read_bytes()
    edited.write_bytes(original + b"\nedited in place\n")
    try:
        timed("a result edited in place")
    finally:
        edited.write_bytes(original)
    return out


def bench(vault: Path, n: int, rounds: int) -> dict[str, Any]:
    prepare(vault, n)
    result: dict[str, Any] = {"cards": n}
    i = 0
    run_id = int(time.time()) % 100_000  # titles never repeat across runs on one vault
    titles = [TITLES[j % len(TITLES)].format(w=WORDS[j % len(WORDS)], i=f"{run_id}-m{j}")
              for j in range(rounds)]
    mcp = mcp_rounds(vault, titles)
    result["mcp"] = {k: stats([r[k] for r in mcp]) for k in
                     ("write_ms", "refresh_ms", "recall_ms", "visible_ms")}
    result["mcp"]["top3"] = f"{sum(r['top3'] for r in mcp)}/{len(mcp)}"
    result["mcp"]["stale_answers"] = sum(bool(r["stale"]) for r in mcp)
    print(json.dumps({"mcp": result["mcp"]}), file=sys.stderr)
    for mode in ("refresh", "fresh-read", "serve"):
        set_after_write(vault, mode != "fresh-read")
        server = None
        if mode == "serve":
            server = subprocess.Popen([ALAYA, "--vault", str(vault), "serve", "--no-introspect"],
                                      env=bundled_env(), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            for _ in range(600):
                if (vault / ".alaya" / "serve.json").exists():
                    break
                time.sleep(0.1)
        try:
            rows = []
            for _ in range(rounds):
                title = TITLES[i % len(TITLES)].format(w=WORDS[i % len(WORDS)],
                                                       i=f"{run_id}-{i}")
                rows.append(round_trip(vault, title, mode))
                i += 1
        finally:
            if server is not None:
                server.terminate()
                server.wait(20)
        result[mode] = {k: stats([r[k] for r in rows]) for k in
                        ("write_ms", "refresh_ms", "recall_ms", "visible_ms", "write_cpu_ms",
                         "recall_cpu_ms", "visible_cpu_ms")}
        result[mode]["top3"] = f"{sum(r['top3'] for r in rows)}/{len(rows)}"
        result[mode]["stale_answers"] = sum(bool(r["stale"]) for r in rows)
        print(json.dumps({mode: result[mode]}), file=sys.stderr)
    set_after_write(vault, True)
    result["staleness_check_ms"] = check_cost(vault)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-bench-writes"))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--check-only", action="store_true",
                    help="only the staleness check, on vaults prepared by an earlier run")
    args = ap.parse_args()
    if args.check_only:
        report([check_cost(args.workdir / f"vault-{n}") for n in args.sizes], args.out)
        return
    results = [bench(args.workdir / f"vault-{n}", n, args.rounds) for n in args.sizes]
    report(results, args.out)


if __name__ == "__main__":
    main()
