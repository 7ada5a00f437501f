"""`alaya serve` under load: how many of N concurrent clients are answered, and how fast —
and how long a normal recall takes while slow clients hold connections open.

Each round, N client threads wait on a barrier, then each opens its own connection and POSTs
one recall query (the `alaya recall --json` client does exactly this, after the discovery
challenge where the server has one). A reply with status 200 counts as answered; a refused or
reset connection, or a timeout, does not. Latency is per request, from connect to the last
byte.

Throughput: answered requests per second of wall time, from the moment a round's clients are
released to the last reply (summed over the rounds).

Slow clients (`--slow N`): N connections that each began a request and send one more byte of
it every `--drip` seconds (never finishing); meanwhile `--slow-recalls` normal recalls are
sent one after the other, each with a `--slow-timeout` deadline.

Two servers run at once on the same vault (`--servers` picks), each round going to one and
then the other (the order alternating), so load from other tenants falls on both alike:
- `main`: compilers/serve.py as it is on the `main` branch, run with this checkout's engine so
  only the server layer differs;
- `checkout`: this checkout's server.

The vault: benchmarks/synth.py cards (default 2,000), compiled with the 384-d hash embedder so
the run needs no model; queries are answered in BM25 + graph mode (`"mode": "bm25"`) and in
hybrid mode with the hash embedder.

    .venv/bin/python benchmarks/serve_load.py --clients 50 200 --rounds 5 --slow 40
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
print(srv.url, getattr(srv, "secret", ""), flush=True)
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


def start(kind: str, vault: Path, folder: Path) -> tuple[subprocess.Popen[str], str, str | None]:
    """The server process, its URL and its discovery secret (None on main: no challenge)."""
    if kind == "main":
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
    url, _, secret = proc.stdout.readline().strip().partition(" ")
    return proc, url, secret or None


def one(url: str, body: bytes, timeout: float, secret: str | None = None) -> tuple[bool, float]:
    """One request as `alaya recall --json` sends it (cli/fast.py); (answered, ms)."""
    from cli.fast import Unproven, _post

    start = time.perf_counter()
    try:
        status, _ = _post(url, body, None, timeout, secret=secret)
        ok = status == 200
    except (OSError, ValueError, IndexError, Unproven):
        ok = False
    return ok, (time.perf_counter() - start) * 1000


def pct(values: list[float], p: float) -> float | None:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(p * len(values)))], 1) if values else None


def slow(url: str, secret: str | None, clients: int, drip: float, recalls: int,
         timeout: float) -> dict[str, object]:
    """`recalls` normal recalls, one after the other, while `clients` slow ones drip."""
    import socket

    hostport = url.split("://", 1)[1]
    host, _, port = hostport.rpartition(":")
    socks = []
    for _ in range(clients):
        s = socket.create_connection((host, int(port)))
        s.sendall(f"POST /recall HTTP/1.1\r\nHost: {hostport}\r\nX-Slow: ".encode())
        socks.append(s)
    stop = threading.Event()

    def dripping() -> None:
        while not stop.wait(drip):
            for s in socks:
                try:
                    s.sendall(b"a")
                except OSError:
                    pass

    thread = threading.Thread(target=dripping, daemon=True)
    thread.start()
    time.sleep(drip + 0.5)  # every slow client has dripped once
    results = []
    try:
        for i in range(recalls):
            body = json.dumps({"query": QUERIES[i % len(QUERIES)], "mode": "bm25",
                               "top_k": 5}).encode()
            results.append(one(url, body, timeout, secret))
    finally:
        stop.set()
        thread.join(drip + 5)
        for s in socks:
            s.close()
    answered = [ms for ok, ms in results if ok]
    return {"slow_clients": clients, "recalls": recalls, "answered": len(answered),
            "p50_ms": pct(answered, 0.5), "p95_ms": pct(answered, 0.95),
            "timeout_s": timeout}


def one_round(url: str, clients: int, r: int, mode: str, timeout: float,
              secret: str | None) -> tuple[list[tuple[bool, float]], float]:
    """`clients` requests released at once; (their results, wall seconds to the last)."""
    released: list[float] = []
    barrier = threading.Barrier(clients, action=lambda: released.append(time.perf_counter()))
    results: list[tuple[bool, float]] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        body = json.dumps({"query": QUERIES[(i + r) % len(QUERIES)], "mode": mode,
                           "top_k": 5}).encode()
        barrier.wait()
        res = one(url, body, timeout, secret)
        with lock:
            results.append(res)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, time.perf_counter() - released[0]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(servers: dict[str, tuple[str, str | None, int]], clients: int, rounds: int,
         mode: str, timeout: float) -> list[dict[str, object]]:
    """Rounds of `clients` at once against each server in turn (the order alternating), so
    load from other tenants of the machine falls on every server alike. Besides latency, the
    server process's CPU time per answered request — what the server costs, whatever else
    runs on the machine."""
    got: dict[str, list[tuple[bool, float]]] = {k: [] for k in servers}
    wall = dict.fromkeys(servers, 0.0)
    cpu = dict.fromkeys(servers, 0.0)
    for r in range(rounds):
        for kind in list(servers)[:: 1 if r % 2 == 0 else -1]:
            url, secret, pid = servers[kind]
            before = cpu_seconds(pid)
            results, took = one_round(url, clients, r, mode, timeout, secret)
            cpu[kind] += cpu_seconds(pid) - before
            got[kind] += results
            wall[kind] += took
    rows = []
    for kind, results in got.items():
        latencies = [ms for ok, ms in results if ok]
        answered = len(latencies)
        rows.append({"server": kind, "clients": clients, "mode": mode,
                     "requests": len(results), "answered": answered,
                     "p50_ms": pct(latencies, 0.5), "p95_ms": pct(latencies, 0.95),
                     "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
                     "answered_per_s": round(answered / wall[kind], 1) if wall[kind] else None,
                     "cpu_ms_per_request": round(cpu[kind] * 1000 / answered, 2)
                     if answered else None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--modes", nargs="+", default=["bm25", "hybrid"])
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--servers", nargs="+", choices=["main", "checkout"],
                        default=["main", "checkout"])
    parser.add_argument("--slow", type=int, default=0,
                        help="Slow clients for the slow-client scenario (0: skip it).")
    parser.add_argument("--drip", type=float, default=5.0)
    parser.add_argument("--slow-recalls", type=int, default=20)
    parser.add_argument("--slow-timeout", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=None, help="Also write the rows here.")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        vault = build_vault(folder, args.cards)
        slow_rows = []
        procs = {kind: start(kind, vault, folder) for kind in args.servers}
        servers = {kind: (url, secret, proc.pid) for kind, (proc, url, secret) in procs.items()}
        try:
            for url, secret, _ in servers.values():
                one(url, b'{"query": "warm up", "mode": "bm25"}', args.timeout, secret)
            for mode in args.modes:
                for n in args.clients:
                    for row in load(servers, n, args.rounds, mode, args.timeout):
                        rows.append(row)
                        print(json.dumps(row), flush=True)
            if args.slow:
                for kind, (url, secret, _) in servers.items():
                    row = {"server": kind, **slow(url, secret, args.slow, args.drip,
                                                  args.slow_recalls, args.slow_timeout)}
                    slow_rows.append(row)
                    print(json.dumps(row), flush=True)
        finally:
            for proc, _, _ in procs.values():
                proc.terminate()
                proc.wait(30)
    print(f"\nmachine: {platform.platform()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; vault: {args.cards} cards; {args.rounds} rounds\n")
    print("| server | mode | clients | answered | p50 ms | p95 ms | answered / s | server CPU "
          "ms / request |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['server']} | {r['mode']} | {r['clients']} | {r['answered']}/{r['requests']}"
              f" | {r['p50_ms']} | {r['p95_ms']} | {r['answered_per_s']} | "
              f"{r['cpu_ms_per_request']} |")
    if slow_rows:
        print(f"\n{args.slow} slow clients, a byte every {args.drip:g} s; "
              f"{args.slow_recalls} recalls in a row, each with a {args.slow_timeout:g} s "
              "deadline\n")
        print("| server | answered | p50 ms | p95 ms |")
        print("|---|---|---|---|")
        for r in slow_rows:
            print(f"| {r['server']} | {r['answered']}/{r['recalls']} | {r['p50_ms']} | "
                  f"{r['p95_ms']} |")
    if args.json:
        args.json.write_text(json.dumps(rows + slow_rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
