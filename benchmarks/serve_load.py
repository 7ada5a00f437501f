"""`alaya serve` under load: how many of N concurrent clients are answered, and how fast.

Each round, N client threads wait on a barrier, then each opens its own connection and POSTs
one recall query (the `alaya recall --json` client does exactly this). A reply with status 200
counts as answered; a refused or reset connection, or a timeout, does not. Latency is per
request, from connect to the last byte.

Throughput: answered requests per second of wall time, from the moment a round's clients are
released to the last reply (summed over the rounds).

Two servers run in the same run, on the same vault, one after the other (`--servers` picks):
- `today`: compilers/serve.py as it is on the `main` branch (ThreadingHTTPServer: a thread
  per connection, the default listen backlog of 5), run with this checkout's engine so only
  the server layer differs;
- `pooled`: this checkout's server (backlog 1024, a bounded pool of worker threads).

The vault: benchmarks/synth.py cards (default 2,000), compiled with the 384-d hash embedder so
the run needs no model; queries are answered in BM25 + graph mode (`"mode": "bm25"`) and in
hybrid mode with the hash embedder.

    .venv/bin/python benchmarks/serve_load.py --clients 50 200 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUERIES = ["gateway restart notice telegram", "database migration rollback failed",
           "cache timeout retry queue worker", "网关 重启 通知", "deploy rollback config change"]

SERVER = """
import sys, threading, time
sys.path.insert(0, {root!r})
{load}
from vault_engine.store.vault import Vault
srv = RecallServer(Vault.open({vault!r}), watch=False)
print(srv.url, flush=True)
srv.serve_forever()
"""


def build_vault(folder: Path, cards: int) -> Path:
    from benchmarks.synth import write_vault

    vault = folder / "vault"
    write_vault(vault, cards)
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash384"}
    subprocess.run([sys.executable, "-c", "from cli.main import main; main()", "--vault",
                    str(vault), "compile"], cwd=ROOT, env=env, check=True, capture_output=True)
    return vault


def start(kind: str, vault: Path, folder: Path) -> tuple[subprocess.Popen[str], str]:
    if kind == "today":
        old = subprocess.run(["git", "-C", str(ROOT), "show", "main:compilers/serve.py"],
                             capture_output=True, text=True, check=True).stdout
        (folder / "serve_today.py").write_text(old, encoding="utf-8")
        load = f"sys.path.insert(0, {str(folder)!r}); from serve_today import RecallServer"
    else:
        load = "from compilers.serve import RecallServer"
    code = SERVER.format(root=str(ROOT), load=load, vault=str(vault))
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash384"}
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    return proc, url


def one(url: str, body: bytes, timeout: float) -> tuple[bool, float]:
    """One request as `alaya recall --json` sends it (cli/fast.py); (answered, ms)."""
    from cli.fast import _post

    start = time.perf_counter()
    try:
        status, _ = _post(url, body, None, timeout)
        ok = status == 200
    except (OSError, ValueError, IndexError):
        ok = False
    return ok, (time.perf_counter() - start) * 1000


def load(url: str, clients: int, rounds: int, mode: str, timeout: float) -> dict[str, object]:
    latencies: list[float] = []
    answered = total = 0
    wall = 0.0
    for r in range(rounds):
        released: list[float] = []

        def release(released: list[float] = released) -> None:
            released.append(time.perf_counter())

        barrier = threading.Barrier(clients, action=release)
        results: list[tuple[bool, float]] = []
        lock = threading.Lock()

        def client(i: int, r: int = r, barrier: threading.Barrier = barrier,
                   results: list[tuple[bool, float]] = results,
                   lock: threading.Lock = lock) -> None:
            body = json.dumps({"query": QUERIES[(i + r) % len(QUERIES)], "mode": mode,
                               "top_k": 5}).encode()
            barrier.wait()
            res = one(url, body, timeout)
            with lock:
                results.append(res)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall += time.perf_counter() - released[0]
        total += len(results)
        answered += sum(ok for ok, _ in results)
        latencies += [ms for ok, ms in results if ok]
    latencies.sort()

    def pct(p: float) -> float | None:
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))], 1) \
            if latencies else None

    return {"clients": clients, "mode": mode, "requests": total, "answered": answered,
            "p50_ms": pct(0.5), "p95_ms": pct(0.95),
            "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
            "answered_per_s": round(answered / wall, 1) if wall else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--modes", nargs="+", default=["bm25", "hybrid"])
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--servers", nargs="+", choices=["today", "pooled"],
                        default=["today", "pooled"])
    parser.add_argument("--json", type=Path, default=None, help="Also write the rows here.")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        vault = build_vault(folder, args.cards)
        for kind in args.servers:
            proc, url = start(kind, vault, folder)
            try:
                one(url, b'{"query": "warm up", "mode": "bm25"}', args.timeout)
                for mode in args.modes:
                    for n in args.clients:
                        row = {"server": kind, **load(url, n, args.rounds, mode, args.timeout)}
                        rows.append(row)
                        print(json.dumps(row), flush=True)
            finally:
                proc.terminate()
                proc.wait(10)
    print(f"\nmachine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; vault: {args.cards} cards; {args.rounds} rounds\n")
    print("| server | mode | clients | answered | p50 ms | p95 ms | answered / s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['server']} | {r['mode']} | {r['clients']} | {r['answered']}/{r['requests']}"
              f" | {r['p50_ms']} | {r['p95_ms']} | {r['answered_per_s']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
