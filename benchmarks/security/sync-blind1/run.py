#!/usr/bin/env python3
"""Blind security cases for alaya: git remotes, imported folders, discovery files,
HTTP clients of `alaya serve`, and crashes.

Standalone (Python 3.11 stdlib only). Drives the installed `alaya` CLI by subprocess,
builds throwaway vaults under one temp folder, runs every case in cases.json and prints a
JSON summary. Exit status is always 0: this is a measurement.

    python3 run.py [--alaya PATH] [--cases cases.json] [--json-out FILE] [--only ID,...] [--keep]

Must run as root (tmpfs mounts for the full-disk and read-only cases, chattr, chown).
Every server process and mount it starts is cleaned up at the end (also on Ctrl-C).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import http.client
import json
import os
import pickle
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
TB = "Traceback (most recent call last)"
NOBODY = 65534


# --------------------------------------------------------------------------- fake servers
# `run.py --fake MODE --log FILE --nonce N [--port P] [--extra X]` is an attacker's server,
# started as its own process (so it has its own pid). It logs every request as JSON lines.

def _fake_recall_answer(nonce: str) -> dict:
    return {
        "query": {"text": "", "concepts": [], "relations": [], "depth": 1, "from_nodes": [],
                  "top_k": 10, "mode": "hybrid"},
        "nodes": [{"id": "card-fa4e0001", "title": f"FAKE-ANSWER-{nonce}", "kind": "card",
                   "type": "fact", "path": "cards/fact/fake.md", "score": 0.99,
                   "h_distance": 0.01, "matched_rel": None, "rel_similarity": None, "depth": 0,
                   "via": None, "tier": "HOT", "namespace": "shared", "source_sessions": [],
                   "snippet": f"The root password is now hunter2 (FAKE-ANSWER-{nonce})"}],
        "explorable": [], "h_distance_avg": 0.01, "latency_ms": 1.0, "build": "fake",
        "compiled_at": "2026-01-01T00:00:00Z", "stale": False, "changed_notes": [],
        "warnings": [],
    }


def _vec(text: str, dim: int = 16) -> list[float]:
    h = hashlib.sha256(text.encode("utf-8", "replace")).digest()
    v = [((h[i % len(h)] / 255.0) - 0.5) + 0.01 for i in range(dim)]
    n = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / n for x in v]


def fake_main(mode: str, port: int, log: str, nonce: str, extra: str) -> None:
    lock = threading.Lock()
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(256)
    print(srv.getsockname()[1], flush=True)

    def record(head: bytes, body: bytes) -> None:
        with lock, open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"t": time.time(), "mode": mode,
                                 "head": head.decode("latin-1"),
                                 "body": body[:200000].decode("utf-8", "replace")}) + "\n")

    def send_json(c: socket.socket, obj, status: str = "200 OK") -> None:
        data = json.dumps(obj).encode()
        c.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)

    def handle(c: socket.socket) -> None:
        try:
            c.settimeout(15)
            buf = b""
            while b"\r\n\r\n" not in buf and len(buf) < 1 << 20:
                chunk = c.recv(65536)
                if not chunk:
                    break
                buf += chunk
            head, _, body = buf.partition(b"\r\n\r\n")
            m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            want = int(m.group(1)) if m else 0
            while len(body) < min(want, 20 << 20):
                chunk = c.recv(65536)
                if not chunk:
                    break
                body += chunk
            record(head, body)
            if mode == "blackhole":
                time.sleep(60)
                return
            if mode == "drip":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100000\r\n\r\n")
                for _ in range(60):
                    c.sendall(b" ")
                    time.sleep(1)
                return
            if mode == "huge":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 400000000\r\n\r\n{\"nodes\": [\"")
                blob = (b"FAKE-ANSWER-" + nonce.encode() + b" ") * 4096
                for _ in range(600):
                    c.sendall(blob)
                return
            if mode == "badjson":
                data = f"{{not json at all FAKE-ANSWER-{nonce}".encode()
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
                return
            if mode == "401":
                send_json(c, {"error": "Unauthorized", "message": "bad token"}, "401 Unauthorized")
                return
            if mode == "redirect":
                c.sendall(f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {extra}\r\n"
                          f"Content-Length: 0\r\nConnection: close\r\n\r\n".encode())
                return
            # mode "api": recall / health / embeddings / rerank / chat
            first = head.split(b"\r\n", 1)[0]
            if first.startswith(b"GET"):
                send_json(c, {"ok": True, "vault": "/nonexistent", "nonce": nonce})
                return
            try:
                req = json.loads(body or b"{}")
            except ValueError:
                req = {}
            if isinstance(req, dict) and "input" in req:
                inp = req["input"]
                texts = [inp] if isinstance(inp, str) else list(inp)
                send_json(c, {"object": "list", "model": req.get("model", "x"),
                              "data": [{"object": "embedding", "index": i, "embedding": _vec(str(t))}
                                       for i, t in enumerate(texts)],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            elif isinstance(req, dict) and "documents" in req:
                docs = req.get("documents") or []
                send_json(c, {"results": [{"index": i, "relevance_score": 1.0 / (i + 1)}
                                          for i in range(len(docs))]})
            elif isinstance(req, dict) and "messages" in req:
                send_json(c, {"id": "x", "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "[1]"},
                     "finish_reason": "stop"}]})
            else:
                send_json(c, _fake_recall_answer(nonce))
        except Exception:
            pass
        finally:
            try:
                c.close()
            except OSError:
                pass

    while True:
        c, _ = srv.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


# --------------------------------------------------------------------------- processes

class Res:
    def __init__(self, argv, rc, out, err, secs, timed_out):
        self.argv, self.rc, self.out, self.err, self.secs, self.timed_out = argv, rc, out, err, secs, timed_out

    @property
    def text(self) -> str:
        return (self.out or "") + "\n" + (self.err or "")

    def json(self):
        try:
            return json.loads(self.out)
        except (ValueError, TypeError):
            return None


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_proc(argv, cwd=None, env=None, timeout=60.0, stdin: bytes | None = None) -> Res:
    t0 = time.monotonic()
    p = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env,
                         stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = False
    try:
        out, err = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _killpg(p.pid)
        out, err = p.communicate()
    return Res(argv, p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
               time.monotonic() - t0, timed_out)


def cmd_name(argv) -> str:
    """The alaya subcommand of an argv (after --vault P / --agent N)."""
    i = 1
    while i < len(argv) and str(argv[i]) in ("--vault", "--agent"):
        i += 2
    return str(argv[i]) if i < len(argv) else "?"


def tb_last(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if TB in ln:
            tail = [x for x in lines[i + 1:] if not x.startswith((" ", "\t"))]
            return (tail[-1] if tail else "?")[:160]
    return ""


def short(s: str, n: int = 160) -> str:
    s = " ".join((s or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def evidence(res: Res, n: int = 140) -> str:
    """What a failed command said: the traceback's last line, else its output."""
    if TB in res.text:
        return "traceback, " + tb_last(res.text)
    return short(res.text, n)


def one_line_message(res: Res) -> bool:
    """A failure told in one line (or two), with no traceback."""
    if TB in res.text:
        return False
    lines = [ln for ln in (res.err.strip() or res.out.strip()).splitlines() if ln.strip()]
    if res.out.strip().startswith("{"):
        d = res.json()
        if isinstance(d, dict) and (d.get("message") or d.get("error")):
            return True
    return 1 <= len(lines) <= 2


# --------------------------------------------------------------------------- context

class Ctx:
    def __init__(self, alaya: str, keep: bool):
        self.alaya = alaya
        self.py = str(Path(alaya).parent / "python")
        self.base = Path(tempfile.mkdtemp(prefix="alaya-syncblind-"))
        os.chmod(self.base, 0o755)
        self.home = self.base / "home"
        self.home.mkdir()
        self.cache = self.base / "cache"
        self.cache.mkdir()
        self.gitconfig = self.home / ".gitconfig"
        self.gitconfig.write_text("[user]\n\tname = Alice Human\n\temail = alice@example.org\n"
                                  "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")
        self.keep = keep
        self.procs: list[subprocess.Popen] = []
        self.mounts: list[Path] = []
        self.immutable: list[Path] = []
        self.shared: dict = {}

    def env(self, extra: dict | None = None, home: str | None = None) -> dict:
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("ALAYA_", "GIT_", "PYTHONPATH", "PYTHONHOME"))}
        e.update({"HOME": str(home or self.home), "GIT_CONFIG_GLOBAL": str(self.gitconfig),
                  "GIT_CONFIG_NOSYSTEM": "1", "ALAYA_CACHE_DIR": str(self.cache),
                  "NO_COLOR": "1", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                  "GIT_TERMINAL_PROMPT": "0"})
        for k, v in (extra or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = str(v)
        return e

    def spawn(self, argv, cwd=None, env=None, stdout=None, stderr=None) -> subprocess.Popen:
        p = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=stdout or subprocess.DEVNULL, stderr=stderr or subprocess.DEVNULL,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, sig=signal.SIGTERM, wait=5.0) -> None:
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                _killpg(p.pid)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    pass
        else:
            _killpg(p.pid)  # children left in its session

    def cleanup(self) -> None:
        for p in reversed(self.procs):
            try:
                self.stop(p, wait=3)
            except Exception:
                pass
        for path in self.immutable:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        for m in reversed(self.mounts):
            r = subprocess.run(["umount", str(m)], capture_output=True)
            if r.returncode != 0:
                subprocess.run(["umount", "-l", str(m)], capture_output=True)
        self.mounts.clear()
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)


class Fake:
    def __init__(self, cr: "CR", name: str, mode: str, port: int = 0, extra: str = ""):
        self.name, self.mode = name, mode
        self.log = cr.dir / f"fake-{name}.jsonl"
        self.log.write_text("")   # a fresh log per server (a name can be reused within a case)
        p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--fake", mode,
                              "--port", str(port), "--log", str(self.log), "--nonce", cr.nonce,
                              "--extra", extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        cr.ctx.procs.append(p)
        self.proc = p
        line = p.stdout.readline().decode().strip()
        if not line.isdigit():
            raise RuntimeError(f"fake server {name} did not start")
        self.port = int(line)
        self.pid = p.pid
        self.url = f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[dict]:
        out = []
        for ln in self.log.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(ln))
            except ValueError:
                pass
        return out

    def reset(self) -> None:
        self.log.write_text("")

    def first(self) -> str:
        r = self.requests()
        return short(r[0]["head"].split("\r\n")[0] if r else "", 80)


# --------------------------------------------------------------------------- one case

class CR:
    """The state of one running case: its folder, variables, commands and findings."""

    def __init__(self, ctx: Ctx, case: dict):
        self.ctx, self.case = ctx, case
        self.id = case["id"]
        self.dir = Path(tempfile.mkdtemp(prefix=self.id + "-", dir=ctx.base))
        os.chmod(self.dir, 0o755)
        self.mark = self.dir / "marks"
        self.mark.mkdir()
        os.chmod(self.mark, 0o777)
        self.out = self.dir / "outside"
        self.out.mkdir()
        self.nonce = hashlib.sha1(self.id.encode()).hexdigest()[:10]
        self.vars: dict[str, str] = {"MARK": str(self.mark), "OUT": str(self.out),
                                     "NONCE": self.nonce, "CASE": str(self.dir), "PY": ctx.py}
        self.results: list[tuple[Res, str | None]] = []   # (result, agent)
        self.problems: list[str] = []
        self.fails: list[str] = []
        self.info: list[str] = []
        self.fakes: dict[str, Fake] = {}
        self.killed: set[int] = set()
        self.sockets: list[socket.socket] = []

    # placeholders: {NAME} for known variables only
    def sub(self, v):
        if isinstance(v, str):
            def rep(m):
                k = m.group(1)
                return self.vars[k] if k in self.vars else m.group(0)
            return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", rep, v)
        if isinstance(v, list):
            return [self.sub(x) for x in v]
        if isinstance(v, dict):
            return {self.sub(k): self.sub(x) for k, x in v.items()}
        return v

    def fail(self, msg: str) -> None:
        self.fails.append(msg)

    def note_result(self, res: Res, agent=None, killed_ok=False) -> Res:
        self.results.append((res, agent))
        rest = [str(a) for a in res.argv[1:]]
        while rest[:1] and rest[0] in ("--vault", "--agent"):
            rest = rest[2:]
        name = "alaya " + " ".join(a for a in rest if not a.startswith("/"))[:60]
        if res.timed_out:
            self.problems.append(f"`{short(name, 50)}` hung past its {int(res.secs)}s timeout")
        elif TB in res.text:
            self.problems.append(f"`{short(name, 50)}` crashed with a Python traceback: {tb_last(res.text)}")
        elif res.rc is not None and res.rc < 0 and not killed_ok:
            self.problems.append(f"`{short(name, 50)}` died of signal {-res.rc}")
        return res

    def alaya(self, argv, vault=None, cwd=None, env=None, timeout=90.0, stdin=None, agent=None,
              home=None, user=None) -> Res:
        full = [self.ctx.alaya]
        if vault is not None:
            full += ["--vault", str(vault)]
        if agent:
            full += ["--agent", agent]
        full += [str(a) for a in argv]
        if user is not None:
            full = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] + full
        res = run_proc(full, cwd=cwd or self.dir, env=self.ctx.env(env, home), timeout=timeout,
                       stdin=stdin)
        if user is not None:
            res.argv = full[5:]
        return self.note_result(res, agent)

    def git(self, args, cwd, check=True, timeout=60.0, env=None) -> Res:
        res = run_proc(["git"] + [str(a) for a in args], cwd=cwd, env=self.ctx.env(env), timeout=timeout)
        if check and res.rc != 0:
            raise RuntimeError(f"git {' '.join(map(str, args))[:80]} failed: {short(res.err, 200)}")
        return res

    def fake(self, name: str, mode: str = "api", port: int = 0, extra: str = "") -> Fake:
        f = Fake(self, name, mode, port, extra)
        self.fakes[name] = f
        self.vars[f"URL_{name}"] = f.url
        self.vars[f"PORT_{name}"] = str(f.port)
        self.vars[f"PID_{name}"] = str(f.pid)
        return f

    def outputs(self, agent_only=None) -> str:
        return "\n".join(r.text for r, a in self.results if agent_only is None or a == agent_only)

    def verdict(self) -> tuple[bool, str]:
        bad = self.fails + self.problems
        if bad:
            return False, "; ".join(dict.fromkeys(bad))[:900]
        return True, "; ".join(self.info)[:900] or "held"


# --------------------------------------------------------------------------- file helpers

def write_spec(cr: CR, root: Path, spec: dict) -> None:
    """Write one file described by spec into root."""
    path = root / cr.sub(spec["path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if "pickle_cmd" in spec:
        cmd = cr.sub(spec["pickle_cmd"])

        class Evil:
            def __reduce__(self):
                return (os.system, (cmd,))
        path.write_bytes(pickle.dumps(Evil(), protocol=2))
    elif "script" in spec:
        body = cr.sub(spec["script"])
        path.write_text("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
    elif "repeat" in spec:
        unit = cr.sub(spec["repeat"]).encode()
        n = int(spec["bytes"])
        head = cr.sub(spec.get("head", "")).encode()
        with open(path, "wb") as fh:
            fh.write(head)
            left = n
            blk = unit * max(1, (1 << 20) // max(1, len(unit)))
            while left > 0:
                piece = blk[:left]
                fh.write(piece)
                left -= len(piece)
            fh.write(cr.sub(spec.get("tail", "")).encode())
    elif "bytes_hex" in spec:
        path.write_bytes(bytes.fromhex(spec["bytes_hex"]))
    else:
        data = cr.sub(spec.get("text", ""))
        enc = spec.get("encoding", "utf-8")
        path.write_bytes(data.encode(enc))
    if spec.get("mode"):
        os.chmod(path, int(spec["mode"], 8))


def apply_edits(cr: CR, root: Path, edits: list[dict]) -> None:
    for ed in edits:
        p = root / cr.sub(ed["path"])
        t = p.read_text(encoding="utf-8")
        if "replace" in ed:
            old, new = cr.sub(ed["replace"])
            if old not in t:
                raise RuntimeError(f"edit: {old!r} not in {p.name}")
            t = t.replace(old, new, 1)
        for key, val in cr.sub(ed.get("fm_set", {})).items():
            head, sep, rest = t.partition("\n---")
            new, n = re.subn(rf"(?m)^{re.escape(key)}:.*$", lambda m: f"{key}: {val}", head, count=1)
            if not n:
                raise RuntimeError(f"edit: no {key}: in {p.name}")
            t = new + sep + rest
        if "fm_insert" in ed:
            if not t.startswith("---"):
                raise RuntimeError(f"edit: {p.name} has no frontmatter")
            i = t.index("\n") + 1
            t = t[:i] + cr.sub(ed["fm_insert"]) + ("" if ed["fm_insert"].endswith("\n") else "\n") + t[i:]
        if "append" in ed:
            t = t + ("" if t.endswith("\n") else "\n") + cr.sub(ed["append"])
        p.write_text(t, encoding="utf-8")


def toml_set(cr: CR, path: Path, settings: dict) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    for dotted, value in cr.sub(settings).items():
        sect, key = dotted.rsplit(".", 1)
        val = value if isinstance(value, str) and value.startswith("RAW:") else json.dumps(value, ensure_ascii=False)
        if isinstance(val, str) and val.startswith("RAW:"):
            val = val[4:]
        hdr = f"[{sect}]"
        try:
            start = next(i for i, ln in enumerate(lines) if ln.split("#")[0].strip() == hdr)
        except StopIteration:
            lines += ["", hdr, f"{key} = {val}"]
            continue
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
        for i in range(start + 1, end):
            if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
                lines[i] = f"{key} = {val}"
                break
        else:
            lines.insert(start + 1, f"{key} = {val}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def snapshot(root: Path) -> dict:
    snap = {}
    if not root.exists():
        return snap
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            p = Path(dp) / n
            rel = str(p.relative_to(root))
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if os.path.islink(p):
                snap[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                snap[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                snap[rel] = "dir"
    return snap


def grep_tree(root: Path, needles: list[str], skip_git=True) -> list[str]:
    hits = []
    bneedles = [n.encode() for n in needles]
    for dp, dns, fns in os.walk(root):
        if skip_git and ".git" in dns:
            dns.remove(".git")
        for n in fns:
            p = Path(dp) / n
            if os.path.islink(p) or not p.is_file():
                continue
            try:
                if p.stat().st_size > 64 << 20:
                    continue
                data = p.read_bytes()
            except OSError:
                continue
            for bn in bneedles:
                if bn in data:
                    hits.append(str(p.relative_to(root)))
                    break
    return hits


def find_named(root: Path, prefix: str) -> list[str]:
    hits = []
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            if n.startswith(prefix):
                hits.append(str((Path(dp) / n).relative_to(root)))
    return hits


def node_titles(res: Res) -> list[str]:
    d = res.json()
    if not isinstance(d, dict):
        return []
    return [str(n.get("title", "")) for n in d.get("nodes", []) if isinstance(n, dict)]


# --------------------------------------------------------------------------- vault helpers

def new_vault(cr: CR, path: Path, cards: list[dict] | None = None, env=None) -> Path:
    r = cr.alaya(["init", str(path)], env=env)
    if r.rc != 0:
        raise RuntimeError(f"alaya init failed: {short(r.text)}")
    for c in cards or []:
        add_card(cr, path, c, env=env)
    return path


def add_card(cr: CR, vault: Path, c: dict, env=None, save_as: str | None = None) -> dict:
    c = cr.sub(c)
    argv = ["new", "--title", c["title"], "--type", c.get("type", "fact"), "--json"]
    for cl in c.get("claims", []):
        argv += ["--claim", cl]
    if c.get("body"):
        argv += ["--body", c["body"]]
    if c.get("namespace"):
        argv += ["--namespace", c["namespace"]]
    for t in c.get("tags", []):
        argv += ["--tag", t]
    r = cr.alaya(argv, vault=vault, env=env, agent=c.get("as"))
    d = r.json()
    if r.rc != 0 or not isinstance(d, dict) or "id" not in d:
        raise RuntimeError(f"alaya new failed in setup: {short(r.text)}")
    if save_as:
        cr.vars[f"{save_as}_ID"] = d["id"]
        cr.vars[f"{save_as}_PATH"] = d["path"]
        cr.vars[f"{save_as}_TITLE"] = c["title"]
    return d


def make_pair(cr: CR, inp: dict, env=None) -> tuple[Path, Path, Path]:
    remote = cr.dir / "remote.git"
    cr.git(["init", "-q", "--bare", "-b", "main", str(remote)], cwd=cr.dir)
    a = cr.dir / "a"
    new_vault(cr, a, env=env)
    cr.git(["remote", "add", "origin", str(remote)], cwd=a)
    cr.vars.update({"A": str(a), "REMOTE": str(remote), "B": str(cr.dir / "b")})
    for st in inp.get("pre", []):
        run_step(cr, st, a, None, env)
    add_card(cr, a, inp["seed"], env=env, save_as="SEED")
    for i, extra in enumerate(inp.get("seed_more", [])):
        add_card(cr, a, extra, env=env, save_as=f"SEED{i + 2}")
    r = cr.alaya(["sync", "--json"], vault=a, env=env)
    if r.rc != 0:
        raise RuntimeError(f"first sync failed in setup: {short(r.text)}")
    b = cr.dir / "b"
    cr.git(["clone", "-q", str(remote), str(b)], cwd=cr.dir)
    cr.git(["config", "user.name", "Bob Remote"], cwd=b)
    cr.git(["config", "user.email", "bob@attacker.example"], cwd=b)
    return remote, a, b


def build_src(cr: CR, spec: dict, root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for f in spec.get("files", []):
        write_spec(cr, root, f)
    for s in spec.get("symlinks", []):
        p = root / cr.sub(s["path"])
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(cr.sub(s["target"]), p)
    g = spec.get("git")
    if g:
        cr.git(["init", "-q", "-b", "main"], cwd=root)
        cr.git(["config", "user.name", "Folder Owner"], cwd=root)
        cr.git(["config", "user.email", "owner@example.org"], cwd=root)
        cr.git(["add", "-A"], cwd=root)
        cr.git(["commit", "-q", "-m", g.get("msg", "notes")], cwd=root)
        for path, text in g.get("later_commits", {}).items():
            (root / path).write_text(cr.sub(text), encoding="utf-8")
            cr.git(["add", "-A"], cwd=root)
            cr.git(["commit", "-q", "-m", "update " + path], cwd=root)
        if g.get("signed_head"):
            tree = cr.git(["rev-parse", "HEAD^{tree}"], cwd=root).out.strip()
            parent = cr.git(["rev-parse", "HEAD"], cwd=root).out.strip()
            body = (f"tree {tree}\nparent {parent}\nauthor Folder Owner <owner@example.org> 1760000000 +0800\n"
                    f"committer Folder Owner <owner@example.org> 1760000000 +0800\n"
                    "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEs1gn3dW0bH0\n =abcd\n"
                    " -----END PGP SIGNATURE-----\n\n" + g.get("signed_msg", "signed notes") + "\n")
            p = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=root,
                               input=body.encode(), capture_output=True, env=cr.ctx.env())
            sha = p.stdout.decode().strip()
            cr.git(["update-ref", "refs/heads/main", sha], cwd=root)
        for f in g.get("payloads", []):
            write_spec(cr, root, f)
        for k, v in g.get("config", {}).items():
            cr.git(["config", k, cr.sub(v)], cwd=root)
        hooks = g.get("hooks")
        if hooks:
            hdir = root / ".git" / "hooks"
            hdir.mkdir(exist_ok=True)
            for h in hooks:
                write_spec(cr, hdir, {"path": h, "script": f"touch {{MARK}}/hook-{h}"})
        if g.get("touch_after"):
            later = time.time() + 5
            for dp, dns, fns in os.walk(root):
                if ".git" in dns:
                    dns.remove(".git")
                for n in fns:
                    os.utime(os.path.join(dp, n), (later, later))
    for fifo in spec.get("fifos", []):
        (root / fifo).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / fifo)
    for sk in spec.get("sockets", []):
        (root / sk).parent.mkdir(parents=True, exist_ok=True)
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(root / sk))
        cr.sockets.append(s)
    return root


def run_step(cr: CR, st: dict, a: Path, b: Path | None, env=None) -> Res | None:
    do = st["do"]
    if do == "a":
        argv = cr.sub(st["argv"])
        e = dict(env or {})
        e.update(cr.sub(st.get("env", {})))
        cwd = Path(cr.sub(st["cwd"])) if st.get("cwd") else None
        vault = None if st.get("no_vault") else a
        r = cr.alaya(argv, vault=vault, cwd=cwd, env=e, timeout=st.get("timeout", 90), agent=st.get("as"),
                     stdin=cr.sub(st["stdin"]).encode() if "stdin" in st else None)
        if st.get("max_secs") and r.secs > st["max_secs"] and not r.timed_out:
            cr.fail(f"`alaya {short(' '.join(argv), 40)}` took {r.secs:.1f}s (> {st['max_secs']}s)")
        if st.get("expect_rc0") and r.rc != 0:
            cr.fail(f"`alaya {short(' '.join(argv), 40)}` exit {r.rc}: {short(r.text, 140)}")
        for var, key in st.get("save", {}).items():
            d = r.json()
            if isinstance(d, dict) and key in d:
                cr.vars[var] = str(d[key])
            else:
                raise RuntimeError(f"step save: no {key} in output of alaya {argv[0]}: {short(r.text)}")
        return r
    if do in ("b_commit", "a_commit"):
        root = b if do == "b_commit" else a
        if do == "b_commit":
            cr.git(["pull", "-q", "--no-rebase", "origin", "main"], cwd=root, check=False)
        for d in st.get("delete", []):
            p = root / cr.sub(d)
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        for f in st.get("write", []):
            write_spec(cr, root, f)
        for s in st.get("symlink", []):
            p = root / cr.sub(s["path"])
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(cr.sub(s["target"]), p)
        apply_edits(cr, root, st.get("edit", []))
        if st.get("toml"):
            toml_set(cr, root / "alaya.toml", st["toml"])
        if "toml_text" in st:
            (root / "alaya.toml").write_text(cr.sub(st["toml_text"]), encoding="utf-8")
        for gl in st.get("gitlink", []):
            sha = cr.git(["rev-parse", "HEAD"], cwd=root).out.strip()
            cr.git(["update-index", "--add", "--cacheinfo", f"160000,{sha},{cr.sub(gl)}"], cwd=root)
        cr.git(["add", "-A", "-f"] if st.get("force", True) else ["add", "-A"], cwd=root)
        cr.git(["commit", "-q", "--no-verify", "-m", cr.sub(st.get("msg", "update"))], cwd=root)
        if do == "b_commit":
            cr.git(["push", "-q", "origin", "HEAD:main"], cwd=root)
        return None
    if do == "write_file":
        write_spec(cr, Path(cr.sub(st["root"])), st["file"])
        return None
    if do == "find":
        name = cr.sub(st["name"])
        hits = [p for p in a.rglob("*") if p.name == name and ".git" not in p.parts]
        cr.vars[st["var"]] = str(hits[0].parent if hits else a / st.get("default", "."))
        if not hits:
            cr.info.append(f"{name} not found in the vault after the step before")
        return None
    if do == "sleep":
        time.sleep(st["secs"])
        return None
    raise RuntimeError(f"unknown step {do}")


# --------------------------------------------------------------------------- checks

def run_checks(cr: CR, checks: dict, a: Path, env=None) -> None:
    if checks.get("no_marker"):
        hits = sorted(p.name for p in cr.mark.iterdir())
        if hits:
            cr.fail("attacker code ran: marker file(s) " + ", ".join(hits))
    for name in checks.get("fake_untouched", []):
        f = cr.fakes[name]
        n = len(f.requests())
        if n:
            cr.fail(f"{n} request(s) reached the {name} server, first: {f.first()}")
    for name, needles in checks.get("fake_no_secret", {}).items():
        f = cr.fakes[name]
        for nd in cr.sub(needles):
            for rq in f.requests():
                if nd in rq["head"] or nd in rq["body"]:
                    cr.fail(f"the {name} server received {nd!r} ({short(rq['head'].splitlines()[0], 50)})")
                    break
    oe = checks.get("outputs_exclude")
    if oe:
        text = cr.outputs(oe.get("only_as"))
        for nd in cr.sub(oe["strings"]):
            if nd in text:
                i = text.index(nd)
                cr.fail(f"output shows {nd!r}: …{short(text[max(0, i - 60):i + 40], 110)}…")
    for te in checks.get("tree_exclude", []):
        root = Path(cr.sub(te["root"]))
        hits = grep_tree(root, cr.sub(te["strings"]))
        if hits:
            cr.fail(f"{te.get('what', 'vault')} holds the outside secret in: {', '.join(hits[:4])}")
    for ou in checks.get("outside_unchanged", []):
        root = Path(cr.sub(ou))
        before = cr.vars.get("_snap:" + str(root))
        after = snapshot(root)
        if before is not None:
            changed = [k for k in set(before) | set(after) if before.get(k) != after.get(k)]
            if changed:
                cr.fail(f"files outside the vault written: {', '.join(sorted(changed)[:4])}")
    for rh in checks.get("recall_has", []):
        rh = cr.sub(rh)
        argv = ["recall", rh["query"], "--json", "--top-k", str(rh.get("top_k", 10))]
        if rh.get("all"):
            argv.append("--all-namespaces")
        r = cr.alaya(argv, vault=None if rh.get("no_vault") else a, env=env, agent=rh.get("as"),
                     cwd=Path(rh["cwd"]) if rh.get("cwd") else None)
        titles = node_titles(r)
        if not any(rh["title"] in t for t in titles):
            cr.fail(f"recall {rh['query']!r} lost {rh['title']!r} (got {short(', '.join(titles[:3]), 80) or short(r.text, 80)})")
    for sh in checks.get("show", []):
        sh = cr.sub(sh)
        r = cr.alaya(["show", sh["ref"], "--json"], vault=a, env=env, agent=sh.get("as"))
        txt = r.text
        ok_amb = sh.get("or_ambiguous") and r.rc != 0 and "ambiguous" in txt.lower()
        if not ok_amb:
            for c in sh.get("contains", []):
                if c not in txt:
                    cr.fail(f"show {short(sh['ref'], 30)} does not give {c!r} (got {short(txt, 90)})")
            for c in sh.get("excludes", []):
                if c in txt:
                    cr.fail(f"show {short(sh['ref'], 30)} gives {c!r} (another note answered for it)")
    lc = checks.get("lint")
    if lc:
        r = cr.alaya(["lint", "--format", "json", "--no-report"] if lc.get("no_report") else ["lint", "--format", "json"],
                     vault=a, env=env)
        d = r.json() or {}
        codes = [(f.get("code"), f.get("path", "")) for f in d.get("findings", []) if isinstance(f, dict)]
        for code in lc.get("present", []):
            if not any(c == code for c, _ in codes):
                cr.fail(f"lint does not report {code}")
        for code in lc.get("absent", []):
            bad = [p for c, p in codes if c == code]
            if bad:
                cr.fail(f"lint: {code} in {', '.join(bad[:3])}")
    for hg in checks.get("head_grep", []):
        hg = cr.sub(hg)
        r = cr.git(["grep", "-F", "-l", hg["text"], "HEAD", "--"] + hg.get("paths", []), cwd=a, check=False)
        n = len([x for x in r.out.splitlines() if x.strip()])
        if n < hg.get("min", 1):
            cr.fail(f"{hg['text']!r} is not in any committed note (lost)")
    for fg in checks.get("file_grep", []):
        fg = cr.sub(fg)
        p = a / fg["path"]
        t = p.read_text(encoding="utf-8", errors="replace") if p.is_file() else ""
        if not p.is_file():
            cr.fail(f"{fg['path']} is gone from the vault")
        for c in fg.get("text", []):
            if p.is_file() and c not in t:
                cr.fail(f"{fg['path']} lost {c!r}")
    if checks.get("no_conflict_markers"):
        r = cr.git(["grep", "-l", "-E", "^(<<<<<<<|>>>>>>>) ", "--", "*.md"], cwd=a, check=False)
        if r.out.strip():
            cr.fail("conflict markers in " + ", ".join(r.out.split()[:3]))
    nf = checks.get("no_files_named")
    if nf:
        hits = []
        for root in cr.sub(nf["roots"]):
            hits += find_named(Path(root), nf["prefix"])
        if hits:
            cr.fail("a file git was told to write appeared: " + ", ".join(hits[:3]))
    for ab in checks.get("absent_names", []):
        ab = cr.sub(ab)
        hits = [h for h in find_named(a / ab["under"], ab["name"]) if Path(h).name == ab["name"]]
        if hits:
            cr.fail(f"{ab['name']} from the imported folder landed in the vault: {ab['under']}/{hits[0]}")
    cm = checks.get("committed_md")
    if cm:
        r = cr.git(["ls-files", "--", cm["dir"]], cwd=a, check=False)
        n = len([x for x in r.out.splitlines() if x.endswith(".md")])
        if n < cm["min"]:
            cr.fail(f"only {n} of {cm['min']} imported notes are committed under {cm['dir']}")
    mx = checks.get("max_md")
    if mx:
        n = sum(1 for _ in a.rglob("*.md"))
        if n > mx:
            cr.fail(f"the vault grew to {n} notes (> {mx}): import recursed into itself")
    if checks.get("remote_configured"):
        r = cr.git(["remote", "get-url", "origin"], cwd=a, check=False)
        if r.rc != 0:
            cr.fail("the remote is no longer configured")
    nsf = checks.get("no_namespace_in")
    if nsf:
        for p in (a / nsf["dir"]).rglob("*.md"):
            t = p.read_text(encoding="utf-8", errors="replace")
            if re.search(rf"(?m)^namespace:\s*['\"]?{re.escape(nsf['namespace'])}['\"]?\s*$", t):
                cr.fail(f"agent {nsf['by']} wrote into namespace {nsf['namespace']}: {p.relative_to(a)}")
    ol = checks.get("one_line_errors")
    if ol:
        for r, _ in cr.results:
            if r.rc not in (0, None) and r.rc > 0 and not one_line_message(r):
                cr.fail(f"`alaya {cmd_name(r.argv)}` failed without a one-line answer: {evidence(r)}")


def scenario(cr: CR, inp: dict) -> None:
    """remote and import cases: setup, steps, checks."""
    env = cr.sub(inp.get("env", {}))
    for name, mode in inp.get("servers", {}).items():
        cr.fake(name, mode)
    for f in inp.get("outside", []):
        write_spec(cr, cr.out, f)
    a = b = None
    if inp["kind"] == "remote":
        _, a, b = make_pair(cr, inp, env)
    else:
        a = new_vault(cr, cr.dir / "a", env=env)
        cr.vars["A"] = str(a)
        for st in inp.get("pre", []):
            run_step(cr, st, a, None, env)
        add_card(cr, a, inp["seed"], env=env, save_as="SEED")
        for c in inp.get("cards", []):
            add_card(cr, a, c, env=env)
        if "src" in inp:
            cr.vars["SRC"] = str(cr.dir / "src")
            build_src(cr, inp["src"], cr.dir / "src")
    for root in inp.get("watch_outside", [str(cr.out)]):
        cr.vars["_snap:" + str(Path(cr.sub(root)))] = snapshot(Path(cr.sub(root)))
    for f in cr.fakes.values():
        f.reset()
    n0 = len(cr.results)
    for st in inp["steps"]:
        run_step(cr, st, a, b, env)
    steps = [f"{cmd_name(r.argv)}={r.rc}" for r, _ in cr.results[n0:]]
    run_checks(cr, inp.get("checks", {}), a, env)
    if b is not None:
        bh = cr.git(["rev-parse", "HEAD"], cwd=b).out.strip()
        got = cr.git(["merge-base", "--is-ancestor", bh, "HEAD"], cwd=a, check=False).rc == 0
        cr.info.insert(0, f"B's last commit {'reached' if got else 'did NOT reach'} A's HEAD")
    cr.info.insert(1 if b is not None else 0, "exit codes: " + " ".join(steps))


# --------------------------------------------------------------------------- serve helpers

def start_serve(cr: CR, vault: Path, extra=(), env=None, name="serve") -> tuple[subprocess.Popen, int, Path]:
    sj = vault / ".alaya" / "serve.json"
    if sj.exists() or sj.is_symlink():
        sj.unlink()
    errf = cr.dir / f"{name}.err"
    outf = cr.dir / f"{name}.out"
    p = cr.ctx.spawn([cr.ctx.alaya, "--vault", str(vault), "serve", "--no-watch", "--no-introspect", *extra],
                     cwd=cr.dir, env=cr.ctx.env(env), stdout=open(outf, "wb"), stderr=open(errf, "wb"))
    deadline = time.monotonic() + 40
    port = None
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise RuntimeError(f"alaya serve exited: {short(errf.read_text(errors='replace'), 200)}")
        try:
            port = int(json.loads(sj.read_text())["url"].rsplit(":", 1)[1].split("/")[0])
            st, _, _ = http_req(port, "GET", "/health", timeout=2)
            if st == 200:
                return p, port, errf
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    raise RuntimeError("alaya serve did not come up in 40 s")


def http_req(port, method, path, body=None, headers=None, timeout=5.0):
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        data = json.dumps(body, ensure_ascii=False).encode() if isinstance(body, (dict, list)) else body
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace"), time.monotonic() - t0
    finally:
        c.close()


def probe_recall(port, query, title, timeout=5.0, headers=None) -> tuple[bool, float, str]:
    try:
        st, body, secs = http_req(port, "POST", "/recall", {"query": query, "top_k": 5}, headers, timeout)
    except (OSError, http.client.HTTPException) as e:
        return False, timeout, f"{type(e).__name__}"
    ok = st == 200 and title in body
    return ok, secs, f"{st}"


def raw_http(port: int, data: bytes, timeout: float = 3.0, half_close=False, window: float = 0.0):
    """Send raw bytes; read until the server closes, a full response is in, or timeout.
    Returns (bytes, seconds, how) with how in closed|complete|timeout|reset."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    buf = b""
    how = "timeout"
    try:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        end = t0 + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            s.settimeout(left)
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                how = "reset"
                break
            if not chunk:
                how = "closed"
                break
            buf += chunk
            if not window and response_complete(buf):
                how = "complete"
                break
    except (BrokenPipeError, ConnectionResetError):
        how = "reset"
        try:
            buf += s.recv(65536)
        except OSError:
            pass
    finally:
        s.close()
    return buf, time.monotonic() - t0, how


def response_complete(buf: bytes) -> bool:
    if b"\r\n\r\n" not in buf:
        return False
    head, _, body = buf.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return bool(m) and len(body) >= int(m.group(1))


def status_of(buf: bytes) -> int | None:
    m = re.match(rb"HTTP/1\.[01] (\d{3})", buf)
    return int(m.group(1)) if m else None


# --------------------------------------------------------------------------- discovery cases

def discovery_vault(cr: CR) -> Path:
    """The victim's vault for discovery cases (one per case: cheap, and no leftovers)."""
    inp = cr.case["input"]
    v = new_vault(cr, cr.dir / "v1")
    for c in inp["cards"]:
        add_card(cr, v, c)
    cr.vars["V1"] = str(v)
    return v


def recall_check(cr: CR, v: Path | None, inp: dict, label: str, env=None, cwd=None, home=None,
                 max_secs: float = 5.0) -> Res:
    argv = ["recall", cr.sub(inp["query"]), "--json"]
    r = cr.alaya(argv, vault=v, env=env, cwd=cwd, home=home, timeout=40)
    if r.secs > max_secs and not r.timed_out:
        cr.fail(f"{label}: recall took {r.secs:.1f}s")
    nonce = f"FAKE-ANSWER-{cr.nonce}"
    if nonce in r.text:
        cr.fail(f"{label}: recall printed the forged answer {nonce}")
    elif inp.get("title") and not any(cr.sub(inp["title"]) in t for t in node_titles(r)):
        if r.rc == 0:
            cr.fail(f"{label}: recall did not give the vault's own answer ({short(r.text, 80)})")
        elif not one_line_message(r):
            cr.fail(f"{label}: recall failed without a one-line answer: {evidence(r)}")
        else:
            cr.info.append(f"{label}: recall refused in one line: {short(r.text, 80)}")
    return r


def write_discovery(cr: CR, v: Path, variant: dict, fake: Fake | None) -> Path:
    sj = v / ".alaya" / "serve.json"
    if sj.exists() or sj.is_symlink():
        sj.unlink()
    raw = variant.get("raw")
    content = cr.sub(raw) if raw is not None else json.dumps(cr.sub(variant["content"]))
    if "pid" in variant:
        obj = json.loads(content)
        pid = variant["pid"]
        obj["pid"] = fake.pid if pid == "fake" else pid
        content = json.dumps(obj)
    if variant.get("big_mb"):
        content = content[:-1] + ', "pad": "' + "x" * (variant["big_mb"] << 20) + '"}'
    target = sj
    if variant.get("symlink"):
        target = cr.dir / "attacker" / "serve.json"
        target.parent.mkdir(exist_ok=True)
        os.chmod(target.parent, 0o777)
    target.write_text(content, encoding="utf-8")
    os.chmod(target, int(variant.get("mode", "0600"), 8))
    if variant.get("owner") == "nobody":
        os.chown(target, NOBODY, NOBODY)
    if variant.get("symlink"):
        os.symlink(target, sj)
    return sj


def case_dc_forged(cr: CR, inp: dict) -> None:
    v = discovery_vault(cr)
    for i, var in enumerate(inp["variants"]):
        for f in list(cr.fakes.values()):
            cr.ctx.stop(f.proc, wait=2)
        cr.fakes.clear()
        mode = var.get("fake_mode", inp.get("fake_mode", "api"))
        extra = ""
        if mode == "redirect":
            extra = cr.fake("redirected", "api").url + "/recall"
        fake = cr.fake("attacker", mode, extra=extra)
        write_discovery(cr, v, var, fake)
        env = cr.sub(var.get("env", {}))
        label = var.get("label", f"variant {i + 1}")
        recall_check(cr, v, inp, label, env=env, max_secs=inp.get("max_secs", 5.0))
        untouched = var.get("untouched", inp.get("untouched", True))
        for n, f in cr.fakes.items():
            reqs = f.requests()
            if (untouched or n == "redirected") and reqs:
                cr.fail(f"{label}: the query went to the {n} server "
                        f"({short(reqs[0]['head'].splitlines()[0], 40)})")
            for nd in cr.sub(inp.get("secrets", [])):
                if any(nd in rq["head"] or nd in rq["body"] for rq in reqs):
                    cr.fail(f"{label}: the {n} server received {nd!r}")
    sj = v / ".alaya" / "serve.json"
    if sj.exists() or sj.is_symlink():
        sj.unlink()


def case_dc_port_squat(cr: CR, inp: dict) -> None:
    v = discovery_vault(cr)
    p, port, _ = start_serve(cr, v)
    cr.ctx.stop(p, sig=signal.SIGKILL)
    fake = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            fake = cr.fake("attacker", "api", port=port)
            break
        except RuntimeError:
            time.sleep(0.2)
    if fake is None:
        raise RuntimeError("could not bind the dead server's port")
    recall_check(cr, v, inp, "after kill -9")
    if fake.requests():
        cr.fail(f"the query went to the process now on the dead server's port ({fake.first()})")


def case_dc_other_vault(cr: CR, inp: dict) -> None:
    v = discovery_vault(cr)
    v2 = new_vault(cr, cr.dir / "v2")
    for c in inp["attacker_cards"]:
        add_card(cr, v2, c)
    p, port, _ = start_serve(cr, v2, name="serve-v2")
    sj2 = (v2 / ".alaya" / "serve.json").read_text()
    (v / ".alaya" / "serve.json").write_text(sj2)
    os.chmod(v / ".alaya" / "serve.json", 0o600)
    recall_check(cr, v, inp, "serve.json of another vault")
    if cr.sub(inp["attacker_marker"]) in cr.outputs():
        cr.fail("recall answered from the other vault's server")
    cr.ctx.stop(p)


def case_dc_parent_vault(cr: CR, inp: dict) -> None:
    home = cr.dir / "home"
    home.mkdir()
    own = new_vault(cr, home / ".alaya", env={"HOME": str(home)})
    for c in inp["cards"]:
        add_card(cr, own, c, env={"HOME": str(home)})
    shared = cr.dir / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    fake = cr.fake("attacker", "api")
    (shared / "alaya.toml").write_text("[vault]\ndefault_namespace = \"shared\"\n")
    st = shared / ".alaya"
    (st / "cache").mkdir(parents=True)
    (st / "serve.json").write_text(json.dumps({"url": fake.url, "pid": fake.pid, "token": None}))
    for f in inp.get("plant", []):
        write_spec(cr, shared, f)
    for dp, dns, fns in os.walk(shared):
        for n in dns + fns:
            os.lchown(os.path.join(dp, n), NOBODY, NOBODY)
    os.chown(shared / "alaya.toml", NOBODY, NOBODY)
    work = shared / "victim-work"
    work.mkdir()
    fake.reset()
    cwd_inp = dict(inp)
    recall_check(cr, None, cwd_inp, "recall from a folder under the planted vault", cwd=work,
                 home=str(home), env={"HOME": str(home)})
    r = cr.alaya(["new", "--title", cr.sub(inp["new_title"]), "--type", "fact", "--json"],
                 cwd=work, home=str(home), env={"HOME": str(home)})
    cr.alaya(["status", "--json"], cwd=work, home=str(home), env={"HOME": str(home)})
    if fake.requests():
        cr.fail(f"the query went to the planted vault's server ({fake.first()})")
    hits = sorted(p.name for p in cr.mark.iterdir())
    if hits:
        cr.fail("the planted vault's pickle ran: " + ", ".join(hits))
    if grep_tree(shared, [cr.nonce]):
        cr.fail("the user's new card was written into the planted vault (owned by another user)")


# --------------------------------------------------------------------------- HTTP cases

def http_server(cr: CR, pinned: bool = False) -> dict:
    key = "serve_pinned" if pinned else "serve"
    sh = cr.ctx.shared
    if key in sh and sh[key]["proc"].poll() is None:
        return sh[key]
    inp = cr.case["input"]
    hv = sh.get("http_vault")
    if hv is None:
        base = Path(tempfile.mkdtemp(prefix="http-vault-", dir=cr.ctx.base))
        hv = base / "vh"
        cards = cr.ctx.shared["http_cards"]
        new_vault(cr, hv)
        for c in cards:
            add_card(cr, hv, c)
        sh["http_vault"] = hv
    vault = hv
    if pinned:
        vault = hv.parent / "vh-bob"
        if not vault.exists():
            shutil.copytree(hv, vault, symlinks=True)
            sj = vault / ".alaya" / "serve.json"
            if sj.exists():
                sj.unlink()
    p, port, errf = start_serve(cr, vault, extra=("--agent", "bob") if pinned else (), name=key)
    sh[key] = {"proc": p, "port": port, "err": errf}
    return sh[key]


def server_after(cr: CR, srv: dict, inp: dict, err_before: int) -> None:
    """The server still answers a normal recall within a second, and logged no traceback."""
    q, title = inp["probe"]["query"], inp["probe"]["title"]
    ok = False
    deadline = time.monotonic() + inp.get("recover_s", 15)
    secs = 0.0
    while time.monotonic() < deadline:
        if srv["proc"].poll() is not None:
            cr.fail("alaya serve died")
            return
        ok, secs, st = probe_recall(srv["port"], q, title, timeout=3)
        if ok and secs < 1.0:
            break
        time.sleep(0.5)
    if not (ok and secs < 1.0):
        cr.fail(f"after the attack a normal recall still does not answer within 1 s ({secs:.2f}s, {st})")
    err = srv["err"].read_bytes()[err_before:].decode("utf-8", "replace")
    if TB in err:
        cr.fail(f"alaya serve logged a traceback: {tb_last(err)}")


def case_hc_slow(cr: CR, inp: dict) -> None:
    srv = http_server(cr, inp.get("pinned", False))
    port = srv["port"]
    err0 = srv["err"].stat().st_size
    base_ok, base_s, _ = probe_recall(port, inp["probe"]["query"], inp["probe"]["title"])
    if not base_ok:
        raise RuntimeError("baseline recall through serve failed")
    n, style = inp["connections"], inp["style"]
    socks = []
    host = f"127.0.0.1:{port}"
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=3)
            s.setblocking(False)
            if style == "headers":
                s.send(f"POST /recall HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode())
            elif style == "body":
                s.send(f"POST /recall HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {inp.get('content_length', 4096)}\r\n\r\n{{\"query\": \"".encode())
            socks.append(s)
        except OSError:
            break
    stop = threading.Event()

    def drip():
        while not stop.is_set():
            for s in socks:
                if style == "idle":
                    continue
                try:
                    s.send(b"a" if style == "body" else b"x")
                except (BlockingIOError, OSError):
                    pass
            stop.wait(inp.get("drip_every_s", 1.0))
    th = threading.Thread(target=drip, daemon=True)
    th.start()
    lat = []
    t_end = time.monotonic() + inp.get("duration_s", 12)
    time.sleep(inp.get("first_probe_s", 2))
    while time.monotonic() < t_end:
        ok, secs, st = probe_recall(port, inp["probe"]["query"], inp["probe"]["title"], timeout=5)
        lat.append((ok, secs, st))
        time.sleep(max(0.0, inp.get("probe_every_s", 3) - secs))
    stop.set()
    th.join(3)
    for s in socks:
        try:
            s.close()
        except OSError:
            pass
    slow = [f"{s:.2f}s/{st}" for ok, s, st in lat if not ok or s >= 1.0]
    cr.info.append(f"{len(socks)} connections; baseline {base_s * 1000:.0f} ms; probes " +
                   ", ".join(f"{s:.2f}s" for _, s, _ in lat))
    if slow:
        cr.fail(f"with {len(socks)} {style} connections open, normal recalls were slow or failed: "
                + ", ".join(slow[:5]) + f" (baseline {base_s * 1000:.0f} ms)")
    server_after(cr, srv, inp, err0)


def case_hc_raw(cr: CR, inp: dict) -> None:
    """A list of raw requests, each with what answer it must get."""
    srv = http_server(cr, inp.get("pinned", False))
    port = srv["port"]
    err0 = srv["err"].stat().st_size
    host = f"127.0.0.1:{port}"
    cr.vars.update({"HOST": host, "PORT": str(port)})
    for rq in inp["requests"]:
        label = rq["label"]
        if "raw_hex" in rq:
            data = bytes.fromhex(rq["raw_hex"])
        else:
            data = cr.sub(rq["raw"]).encode(rq.get("encoding", "utf-8"), "surrogateescape")
        if rq.get("pad_header_bytes"):
            data = data.replace(b"@PAD@", b"a" * rq["pad_header_bytes"])
        if rq.get("many_headers"):
            data = data.replace(b"@MANY@", b"".join(b"X-H%d: v\r\n" % i for i in range(rq["many_headers"])))
        if rq.get("pad_target_bytes"):
            data = data.replace(b"@TARGET@", b"/recall?" + b"q" * rq["pad_target_bytes"])
        if "body_hex" in rq:
            data += bytes.fromhex(rq["body_hex"])
        try:
            buf, secs, how = raw_http(port, data, timeout=rq.get("timeout", 3.0),
                                      half_close=rq.get("half_close", False),
                                      window=rq.get("window", 0.0))
        except OSError as e:
            cr.fail(f"{label}: connection failed ({type(e).__name__})")
            continue
        st = status_of(buf)
        n_resp = len(re.findall(rb"(?m)^HTTP/1\.[01] \d{3}", buf))
        expect = rq.get("expect", "error")
        desc = f"{st or 'no status line'}" + ("" if st else f" ({how}, {len(buf)} bytes: {short(buf[:40].decode('latin-1'), 40)})")
        if expect == "error":
            good = st is not None and 400 <= st <= 599
        elif expect == "4xx":
            good = st is not None and 400 <= st <= 499
        elif expect == "denied":
            good = st in (400, 403, 421)
        elif expect == "answer":   # any status line, not a 5xx
            good = st is not None and st < 500
        else:
            good = st in expect
        if rq.get("json_body") and good and st and st >= 400:
            body = buf.partition(b"\r\n\r\n")[2]
            try:
                json.loads(body.decode("utf-8"))
            except ValueError:
                cr.fail(f"{label}: error {st} without a JSON body")
        if not good:
            cr.fail(f"{label}: got {desc}, wanted {expect}")
        if rq.get("single_response") and n_resp > 1:
            cr.fail(f"{label}: {n_resp} responses to one request (the smuggled one was answered)")
        for nd in cr.sub(rq.get("must_not_contain", [])):
            if nd.encode() in buf:
                cr.fail(f"{label}: answer contains {nd!r}")
        if secs > rq.get("max_secs", 3.0) + 0.5:
            cr.fail(f"{label}: answered only after {secs:.1f}s")
    server_after(cr, srv, inp, err0)


# --------------------------------------------------------------------------- crash cases

def titles_at_head(cr: CR, a: Path, titles: list[str], rev="HEAD", git_dir=None) -> list[str]:
    missing = []
    for t in titles:
        args = (["--git-dir", str(git_dir)] if git_dir else []) + ["grep", "-F", "-q", t, rev, "--", "*.md"]
        r = cr.git(args, cwd=a, check=False)
        if r.rc != 0:
            missing.append(t)
    return missing


def kill_after(cr: CR, argv, vault, delay: float, env=None, timeout=90.0) -> tuple[bool, Res]:
    full = [cr.ctx.alaya, "--vault", str(vault)] + [str(x) for x in argv]
    t0 = time.monotonic()
    p = subprocess.Popen(full, cwd=cr.dir, env=cr.ctx.env(env), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    killed = False
    try:
        p.wait(delay)
    except subprocess.TimeoutExpired:
        _killpg(p.pid)
        killed = True
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _killpg(p.pid)
        out, err = p.communicate()
    res = Res(full, p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
              time.monotonic() - t0, False)
    cr.note_result(res, killed_ok=True)
    return killed, res


def recover(cr: CR, argv, vault, label: str, env=None, timeout=120.0) -> Res:
    """The command after a crash: it recovers, or says what to do in one line (then we do
    `alaya doctor --fix` and try again, which must work)."""
    r = cr.alaya(argv, vault=vault, env=env, timeout=timeout)
    if r.rc == 0:
        return r
    if not one_line_message(r):
        cr.fail(f"{label}: `alaya {argv[0]}` failed without a one-line answer: {evidence(r)}")
    else:
        cr.info.append(f"{label}: {short(r.text, 90)}")
    cr.alaya(["doctor", "--fix"], vault=vault, env=env)
    r2 = cr.alaya(argv, vault=vault, env=env, timeout=timeout)
    if r2.rc != 0:
        cr.fail(f"{label}: still failing after `doctor --fix`: {evidence(r2)}")
    return r2


def case_cr_kill_sync(cr: CR, inp: dict) -> None:
    rnd = random.Random(inp.get("seed_rand", 7))
    _, a, b = make_pair(cr, inp)
    remote = cr.dir / "remote.git"
    expected = [cr.vars["SEED_TITLE"]]
    in_seed: list[str] = []
    conflict = inp.get("same_card", False)
    for rnd_i in range(inp["rounds"]):
        # B: new cards (or an edit of the shared card)
        cr.git(["pull", "-q", "--no-rebase", "origin", "main"], cwd=b, check=False)
        for j in range(inp.get("b_cards", 5)):
            t = cr.sub(inp["b_title"]).format(r=rnd_i, j=j)
            body = cr.sub(inp["b_body"]).format(r=rnd_i, j=j)
            (b / "cards" / "fact").mkdir(parents=True, exist_ok=True)
            (b / "cards" / "fact" / f"{t}.md").write_text(
                f"---\ntitle: {t}\ntype: fact\n---\n{body}\n", encoding="utf-8")
            expected.append(t)
        if conflict:
            line = cr.sub(inp["b_line"]).format(r=rnd_i)
            apply_edits(cr, b, [{"path": cr.vars["SEED_PATH"], "append": line + "\n"}])
            in_seed.append(line)
        cr.git(["add", "-A"], cwd=b)
        cr.git(["commit", "-q", "-m", f"B round {rnd_i}"], cwd=b)
        cr.git(["push", "-q", "origin", "HEAD:main"], cwd=b)
        # A: local cards (or a link on the shared card), then a sync killed at random
        for j in range(inp.get("a_cards", 2)):
            t = cr.sub(inp["a_title"]).format(r=rnd_i, j=j)
            d = add_card(cr, a, {"title": t, "type": "fact", "claims": [cr.sub(inp["a_claim"]).format(r=rnd_i, j=j)]})
            expected.append(t)
            if conflict and j == 0:
                r = cr.alaya(["link", cr.vars["SEED_ID"], d["id"], "--rel", "DEPENDS_ON"], vault=a)
                if r.rc == 0:
                    in_seed.append(t)
                else:
                    cr.fail(f"round {rnd_i}: link after the previous kill failed: {evidence(r)}")
        delay = rnd.uniform(*inp["delay"])
        killed, _ = kill_after(cr, ["sync", "--json"], a, delay)
        cr.info.append(f"round {rnd_i}: kill at {delay:.2f}s{'' if killed else ' (had finished)'}")
        recover(cr, ["sync", "--json"], a, f"round {rnd_i}")
    r = cr.alaya(["sync", "--json"], vault=a)
    if r.rc != 0:
        cr.fail(f"final sync failed: {evidence(r)}")
    miss = titles_at_head(cr, a, expected)
    if miss:
        cr.fail(f"lost in A's HEAD after recovery: {', '.join(miss[:4])}")
    miss_r = titles_at_head(cr, a, expected, rev="main", git_dir=remote)
    if miss_r:
        cr.fail(f"missing on the remote after the last sync: {', '.join(miss_r[:4])}")
    if in_seed:
        head_seed = cr.git(["show", "HEAD:" + cr.vars["SEED_PATH"]], cwd=a, check=False).out
        lost = [x for x in in_seed if x not in head_seed]
        if lost:
            cr.fail(f"the shared card lost after recovery: {', '.join(lost[:3])}")
    if cr.git(["rev-parse", "-q", "--verify", "MERGE_HEAD"], cwd=a, check=False).rc == 0:
        cr.fail("a half-done merge (MERGE_HEAD) is left")
    run_checks(cr, {"no_conflict_markers": True, "remote_configured": True}, a)


def case_cr_kill_writer(cr: CR, inp: dict) -> None:
    rnd = random.Random(inp.get("seed_rand", 11))
    a = new_vault(cr, cr.dir / "a")
    target = add_card(cr, a, cr.sub(inp["link_target"]))
    titles = []
    for i in range(inp["iterations"]):
        t = cr.sub(inp["title"]).format(i=i)
        titles.append(t)
        argv = ["new", "--title", t, "--type", "fact", "--claim", cr.sub(inp["claim"]).format(i=i), "--json"]
        delay = rnd.uniform(*inp["delay"])
        kill_after(cr, argv, a, delay)
        if i % 2 == 1 and inp.get("links", True):
            prev = titles[i - 1]
            kill_after(cr, ["link", prev, target["id"], "--rel", "DEPENDS_ON"], a, rnd.uniform(*inp["delay"]))
    final = cr.alaya(["new", "--title", cr.sub(inp["final_title"]), "--type", "fact", "--json"], vault=a)
    if final.rc != 0:
        cr.fail(f"the next write after the kills failed: {short(final.text, 120)}")
    cr.alaya(["doctor", "--fix"], vault=a)
    doc = cr.alaya(["doctor"], vault=a)
    if doc.rc != 0:
        cr.fail(f"doctor still reports errors after --fix: {short(doc.text[-200:], 140)}")
    for t in titles:
        files = [p for p in (a / "cards").rglob("*.md") if t in p.read_text(encoding="utf-8", errors="replace")]
        if not files:
            continue  # never written: fine
        for p in files:
            rel = str(p.relative_to(a))
            if cr.git(["cat-file", "-e", f"HEAD:{rel}"], cwd=a, check=False).rc != 0:
                cr.fail(f"card {t!r} is on disk but its commit was lost ({rel})")
            r = cr.alaya(["show", t, "--json"], vault=a)
            if r.rc != 0:
                cr.fail(f"card {t!r} is on disk but unreadable: {evidence(r)}")
    left = [str(p.relative_to(a)) for p in a.rglob("*alaya-tmp*") if ".git" not in p.parts]
    if left:
        cr.fail("temp files left after doctor --fix: " + ", ".join(left[:3]))
    if cr.git(["fsck", "--no-progress"], cwd=a, check=False).rc != 0:
        cr.fail("git fsck fails")
    st = cr.git(["status", "--porcelain", "--", "cards"], cwd=a, check=False).out.strip()
    if st:
        cr.fail(f"uncommitted cards after the next write and doctor --fix: {short(st, 100)}")


def plain_notes(cr: CR, root: Path, spec: dict, k: int, commit: bool, offset: int = 0) -> list[str]:
    titles = []
    d = root / cr.sub(spec.get("dir", "notes"))
    d.mkdir(parents=True, exist_ok=True)
    for i in range(offset, offset + k):
        t = cr.sub(spec["title"]).format(i=i)
        body = cr.sub(spec["body"]).format(i=i)
        (d / f"{t}.md").write_text(f"---\ntitle: {t}\ntags: [ops]\n---\n{body}\n", encoding="utf-8")
        titles.append(t)
    if commit:
        cr.git(["add", "-A"], cwd=root)
        cr.git(["commit", "-q", "-m", f"notes {offset}"], cwd=root)
    return titles


def case_cr_kill_compile(cr: CR, inp: dict) -> None:
    rnd = random.Random(inp.get("seed_rand", 13))
    a = new_vault(cr, cr.dir / "a")
    titles = plain_notes(cr, a, inp["notes"], inp["per_round"], True)
    cr.alaya(["compile"], vault=a, timeout=180)
    for rnd_i in range(inp["rounds"]):
        titles += plain_notes(cr, a, inp["notes"], inp["per_round"], True, offset=(rnd_i + 1) * 1000)
        delay = rnd.uniform(*inp["delay"])
        killed, _ = kill_after(cr, ["compile"], a, delay, timeout=180)
        cr.info.append(f"round {rnd_i}: kill at {delay:.2f}s{'' if killed else ' (had finished)'}")
        r = cr.alaya(["recall", cr.sub(inp["query"]), "--json"], vault=a)
        if r.rc != 0 and not one_line_message(r):
            cr.fail(f"round {rnd_i}: recall after the kill failed: {evidence(r)}")
        if r.rc == 0 and not node_titles(r):
            cr.fail(f"round {rnd_i}: recall after the kill found nothing")
    cr.alaya(["doctor", "--fix"], vault=a)
    r = cr.alaya(["compile", "--json"], vault=a, timeout=240)
    if r.rc != 0:
        cr.fail(f"compile after the kills failed: {evidence(r)}")
    chk = cr.alaya(["compile", "--check"], vault=a)
    if chk.rc != 0:
        cr.fail(f"compile --check after recovery: {short(chk.text, 100)}")
    last = titles[-1]
    r = cr.alaya(["recall", last, "--json", "--top-k", "50", "--mode", "bm25"], vault=a)
    if not any(last in t for t in node_titles(r)):
        cr.fail(f"after recovery recall does not find {last!r}")
    builds = [p.name for p in (a / ".alaya" / "builds").iterdir() if p.name.endswith(".partial")] \
        if (a / ".alaya" / "builds").is_dir() else []
    if builds:
        cr.fail(f"unfinished builds left after doctor --fix: {builds[:2]}")


def case_cr_kill_import(cr: CR, inp: dict) -> None:
    rnd = random.Random(inp.get("seed_rand", 17))
    a = new_vault(cr, cr.dir / "a")
    total = []
    for rnd_i in range(inp["rounds"]):
        src = cr.dir / f"src{rnd_i}"
        src.mkdir()
        titles = plain_notes(cr, src, inp["notes"], inp["notes_per_folder"], False, offset=rnd_i * 1000)
        total += titles
        delay = rnd.uniform(*inp["delay"])
        killed, _ = kill_after(cr, ["import", str(src)], a, delay, timeout=180)
        cr.info.append(f"round {rnd_i}: kill at {delay:.2f}s{'' if killed else ' (had finished)'}")
        recover(cr, ["import", str(src), "--json"], a, f"round {rnd_i}", timeout=240)
    cr.alaya(["doctor", "--fix"], vault=a)
    for t in total:
        files = [p for p in (a / "cards").rglob("*.md") if f"title: {t}\n" in p.read_text(encoding="utf-8", errors="replace")]
        if len(files) != 1:
            cr.fail(f"{t!r} imported {len(files)} times")
            break
    r = cr.git(["status", "--porcelain", "--", "cards"], cwd=a, check=False)
    if r.out.strip():
        cr.fail(f"imported notes left uncommitted: {short(r.out, 100)}")
    miss = titles_at_head(cr, a, total[:: max(1, len(total) // 20)])
    if miss:
        cr.fail(f"imported notes not committed: {', '.join(miss[:3])}")


def case_cr_kill_distill(cr: CR, inp: dict) -> None:
    rnd = random.Random(inp.get("seed_rand", 19))
    a = new_vault(cr, cr.dir / "a")
    for rnd_i in range(inp["rounds"]):
        sess = {"id": f"session-crash-{rnd_i}",
                "turns": [{"role": "user" if k % 2 == 0 else "assistant", "name": "王磊" if k % 2 == 0 else "main",
                           "content": cr.sub(inp["turns"][k % len(inp["turns"])]).format(r=rnd_i, k=k)}
                          for k in range(inp["turns_per_session"])]}
        f = cr.dir / f"s{rnd_i}.json"
        f.write_text(json.dumps(sess, ensure_ascii=False), encoding="utf-8")
        r = cr.alaya(["ingest", str(f)], vault=a)
        if r.rc != 0:
            raise RuntimeError(f"ingest failed in setup: {short(r.text)}")
        delay = rnd.uniform(*inp["delay"])
        killed, _ = kill_after(cr, ["distill"], a, delay, timeout=180)
        cr.info.append(f"round {rnd_i}: kill at {delay:.2f}s{'' if killed else ' (had finished)'}")
        recover(cr, ["distill"], a, f"round {rnd_i}", timeout=180)
    cr.alaya(["doctor", "--fix"], vault=a)
    titles = {}
    for p in (a / "cards").rglob("*.md"):
        m = re.search(r"(?m)^title:\s*(.+)$", p.read_text(encoding="utf-8", errors="replace"))
        if m:
            titles.setdefault(m.group(1).strip().strip("'\""), []).append(p.name)
    dup = {t: v for t, v in titles.items() if len(v) > 1}
    if dup:
        t = next(iter(dup))
        cr.fail(f"card distilled twice after the kill: {t!r} ({len(dup[t])} files)")
    st = cr.git(["status", "--porcelain", "--", "cards", "sessions"], cwd=a, check=False).out.strip()
    if st:
        cr.fail(f"uncommitted distilled files after recovery: {short(st, 100)}")
    if not titles:
        cr.fail("no card was distilled at all after recovery")


def mount_tmpfs(cr: CR, where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"mount tmpfs failed: {r.stderr.decode()[:100]}")
    cr.ctx.mounts.append(where)


def umount(cr: CR, where: Path) -> None:
    r = subprocess.run(["umount", str(where)], capture_output=True)
    if r.returncode != 0:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
    if where in cr.ctx.mounts:
        cr.ctx.mounts.remove(where)


def fill_disk(where: Path, leave: int = 0) -> Path:
    """Fill the filesystem at `where`, leaving about `leave` bytes free."""
    st = os.statvfs(where)
    free = st.f_bavail * st.f_frsize
    f = where / "filler.bin"
    fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    target = max(0, free - leave)
    written = 0
    try:
        for size in (1 << 20, 4096, 512, 1):
            blk = b"\0" * size
            while written + size <= target:
                try:
                    n = os.write(fd, blk)
                except OSError:
                    break
                written += n
            if leave == 0:
                while True:
                    try:
                        os.write(fd, blk)
                    except OSError:
                        break
    finally:
        os.close(fd)
    return f


def vault_hashes(a: Path) -> dict:
    out = {}
    for p in a.rglob("*.md"):
        if ".git" in p.parts or ".alaya" in p.parts:
            continue
        out[str(p.relative_to(a))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def case_cr_full_disk(cr: CR, inp: dict) -> None:
    disk = cr.dir / "disk"
    mount_tmpfs(cr, disk, "256m")
    op = inp["op"]
    b = remote = None
    a = new_vault(cr, disk / "a")
    if op == "sync":
        remote = cr.dir / "remote.git"
        cr.git(["init", "-q", "--bare", "-b", "main", str(remote)], cwd=cr.dir)
        cr.git(["remote", "add", "origin", str(remote)], cwd=a)
    add_card(cr, a, inp["seed"], save_as="SEED")
    expected = [cr.vars["SEED_TITLE"]]
    if op == "sync":
        cr.alaya(["sync", "--json"], vault=a)
        b = cr.dir / "b"
        cr.git(["clone", "-q", str(remote), str(b)], cwd=cr.dir)
        cr.git(["config", "user.name", "Bob"], cwd=b)
        cr.git(["config", "user.email", "b@b"], cwd=b)
    rnd = random.Random(5)
    for k, leave in enumerate(inp["leave_bytes"]):
        # what this round has to write: remote cards to fetch, notes to compile
        if op == "sync":
            cr.git(["pull", "-q", "--no-rebase", "origin", "main"], cwd=b, check=False)
            words = cr.sub(inp["words"]).split()
            for j in range(inp["b_cards"]):
                t = cr.sub(inp["b_title"]).format(j=f"{k}-{j}")
                body = " ".join(rnd.choice(words) for _ in range(inp["b_words"]))
                (b / "cards" / "fact").mkdir(parents=True, exist_ok=True)
                (b / "cards" / "fact" / f"{t}.md").write_text(f"---\ntitle: {t}\ntype: fact\n---\n{body}\n", encoding="utf-8")
                expected.append(t)
            cr.git(["add", "-A"], cwd=b)
            cr.git(["commit", "-q", "-m", f"B: many cards {k}"], cwd=b)
            cr.git(["push", "-q", "origin", "HEAD:main"], cwd=b)
        if op == "compile":
            expected += plain_notes(cr, a, inp["notes"], inp["notes_n"], True, offset=k * 1000)
        hashes0 = vault_hashes(a)
        used = int(subprocess.run(["du", "-sb", str(disk)], capture_output=True).stdout.split()[0])
        subprocess.run(["mount", "-o", f"remount,size={used + (8 << 20)}", str(disk)], capture_output=True)
        filler = fill_disk(disk, leave)
        label = f"{op} with {leave} bytes free"
        if op == "new":
            r = cr.alaya(["new", "--title", cr.sub(inp["new_title"]), "--type", "fact", "--claim",
                          cr.sub(inp["new_claim"]), "--json"], vault=a)
            sess = cr.dir / f"sess{k}.json"
            sess.write_text(json.dumps({"id": f"session-diskfull-{k}", "turns": [
                {"role": "user", "content": cr.sub(inp["new_claim"])}]}, ensure_ascii=False), encoding="utf-8")
            r2 = cr.alaya(["ingest", str(sess)], vault=a)
            results = [r, r2]
        elif op == "sync":
            results = [cr.alaya(["sync", "--json"], vault=a, timeout=120)]
        else:
            results = [cr.alaya(["compile"], vault=a, timeout=180)]
            rr = cr.alaya(["recall", cr.sub(inp["query"]), "--json"], vault=a)
            if rr.rc != 0 and not one_line_message(rr):
                cr.fail(f"{label}: recall with the disk full failed: {evidence(rr)}")
            results.append(rr)
        for r in results:
            if r.rc != 0 and not one_line_message(r):
                cr.fail(f"{label}: `alaya {cmd_name(r.argv)}` failed without a one-line answer: {evidence(r)}")
            elif r.rc != 0:
                cr.info.append(f"{label}: {evidence(r)}")
        now = vault_hashes(a)
        damaged = [x for x, h in hashes0.items() if now.get(x) != h and x.startswith("cards/")]
        if op != "sync" and damaged:
            cr.fail(f"{label}: existing cards changed or lost: {', '.join(damaged[:3])}")
        filler.unlink()
        subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], capture_output=True)
        if cr.git(["fsck", "--no-progress"], cwd=a, check=False).rc != 0:
            cr.fail(f"{label}: git fsck fails after the full disk")
        # the next command, with space again, recovers
        if op == "new":
            t = cr.sub(inp["new_title"]) + f" {leave}"
            recover(cr, ["new", "--title", t, "--type", "fact", "--json"], a, label + ", then space again")
            expected.append(t)
        elif op == "sync":
            recover(cr, ["sync", "--json"], a, label + ", then space again")
        else:
            recover(cr, ["compile"], a, label + ", then space again", timeout=240)
    miss = titles_at_head(cr, a, expected)
    if miss:
        cr.fail(f"lost after the full disk: {', '.join(miss[:3])}")
    if op == "sync":
        miss = titles_at_head(cr, a, expected, rev="main", git_dir=remote)
        if miss:
            cr.fail(f"not on the remote after recovery: {', '.join(miss[:3])}")
        run_checks(cr, {"remote_configured": True}, a)
    if op == "compile":
        chk = cr.alaya(["compile", "--check"], vault=a)
        if chk.rc != 0:
            cr.fail(f"compile --check after recovery: {short(chk.text, 100)}")
    cr.alaya(["doctor", "--fix"], vault=a)
    doc = cr.alaya(["doctor"], vault=a)
    if doc.rc != 0:
        cr.fail(f"doctor reports errors after recovery: {short(doc.text[-200:], 140)}")
    st = cr.git(["status", "--porcelain", "--", "cards", "sessions", "notes"], cwd=a, check=False).out.strip()
    if st:
        cr.fail(f"uncommitted notes left after recovery: {short(st, 100)}")
    for t in expected:
        n = sum(1 for p in (a / "cards").rglob("*.md") if p.stem == t or p.stem.startswith(t + " (card-"))
        if n > 1:
            cr.fail(f"{t!r} exists {n} times after recovery")
    umount(cr, disk)


def case_cr_readonly(cr: CR, inp: dict) -> None:
    disk = cr.dir / "disk"
    mount_tmpfs(cr, disk, "128m")
    remote = cr.dir / "remote.git"
    cr.git(["init", "-q", "--bare", "-b", "main", str(remote)], cwd=cr.dir)
    a = new_vault(cr, disk / "a")
    cr.git(["remote", "add", "origin", str(remote)], cwd=a)
    for c in inp["cards"]:
        add_card(cr, a, c, save_as="SEED" if "SEED_ID" not in cr.vars else None)
    cr.alaya(["sync", "--json"], vault=a)
    h0 = vault_hashes(a)
    r = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("remount ro failed")
    try:
        for rd in inp["reads"]:
            rd = cr.sub(rd)
            r = cr.alaya(rd["argv"], vault=a)
            if rd.get("title"):
                if r.rc != 0 or not any(rd["title"] in t for t in node_titles(r)):
                    cr.fail(f"read-only vault: `alaya {rd['argv'][0]}` gave no answer: {evidence(r)}")
            elif rd.get("contains"):
                if rd["contains"] not in r.text:
                    cr.fail(f"read-only vault: `alaya {rd['argv'][0]}` did not show it: {evidence(r)}")
            elif r.rc not in (0, 1) or (r.rc == 1 and not r.text.strip()):
                cr.fail(f"read-only vault: `alaya {rd['argv'][0]}` exit {r.rc}: {evidence(r)}")
        for wr in inp["writes"]:
            r = cr.alaya(cr.sub(wr), vault=a)
            if r.rc == 0:
                cr.info.append(f"`alaya {wr[0]}` exit 0 on a read-only vault")
            elif not one_line_message(r):
                cr.fail(f"read-only vault: `alaya {wr[0]}` failed without a one-line answer: {evidence(r)}")
            else:
                cr.info.append(f"{wr[0]}: {short(r.text, 70)}")
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], capture_output=True)
    if vault_hashes(a) != h0:
        cr.fail("notes changed on a read-only vault (?)")
    r = cr.alaya(["new", "--title", cr.sub(inp["after_title"]), "--type", "fact", "--json"], vault=a)
    if r.rc != 0:
        cr.fail(f"after remounting read-write, the next write fails: {evidence(r)}")
    umount(cr, disk)


def case_cr_perm(cr: CR, inp: dict) -> None:
    a = new_vault(cr, cr.dir / "a")
    seed = add_card(cr, a, inp["seed"], save_as="SEED")
    other = add_card(cr, a, inp["other"])
    card = a / seed["path"]
    # (1) an immutable card: alaya link must fail in one line, and work once it is writable
    subprocess.run(["chattr", "+i", str(card)], check=True)
    cr.ctx.immutable.append(card)
    r = cr.alaya(["link", seed["id"], other["id"], "--rel", "DEPENDS_ON"], vault=a)
    if r.rc == 0:
        cr.fail("link on an immutable card reported success")
    elif not one_line_message(r):
        cr.fail(f"link on an unwritable card failed without a one-line answer: {evidence(r)}")
    subprocess.run(["chattr", "-i", str(card)], check=True)
    r = cr.alaya(["link", seed["id"], other["id"], "--rel", "DEPENDS_ON"], vault=a)
    if r.rc != 0:
        cr.fail(f"after the card is writable again, link fails: {evidence(r)}")
    if "DEPENDS_ON" not in card.read_text(encoding="utf-8"):
        cr.fail("the relation is not in the card after the retry")
    # (2) telemetry folder unwritable: a recall still answers
    tel = a / ".alaya" / "telemetry"
    tel.mkdir(exist_ok=True)
    tel_files = [tel] + sorted(tel.iterdir())
    for t in tel_files:
        subprocess.run(["chattr", "+i", str(t)], check=True)
        cr.ctx.immutable.append(t)
    r = cr.alaya(["recall", cr.sub(inp["query"]), "--json"], vault=a)
    if r.rc != 0 or not any(cr.vars["SEED_TITLE"] in t for t in node_titles(r)):
        cr.fail(f"recall with an unwritable telemetry folder: {evidence(r)}")
    for t in tel_files:
        subprocess.run(["chattr", "-i", str(t)], check=True)
    # (3) another user (nobody) on the owner's vault
    nh = cr.dir / "nobody-home"
    nh.mkdir()
    os.chmod(nh, 0o777)
    nc = cr.dir / "nobody-cache"
    nc.mkdir()
    os.chmod(nc, 0o777)
    env = {"ALAYA_CACHE_DIR": str(nc), "HOME": str(nh)}
    r = cr.alaya(["recall", cr.sub(inp["query"]), "--json"], vault=a, env=env, home=str(nh), user=NOBODY)
    if r.rc != 0 and not one_line_message(r):
        cr.fail(f"recall as another user failed without a one-line answer: {evidence(r)}")
    r = cr.alaya(["new", "--title", cr.sub(inp["nobody_title"]), "--type", "fact"], vault=a, env=env,
                 home=str(nh), user=NOBODY)
    if r.rc == 0:
        cr.info.append("new as another user succeeded")
    elif not one_line_message(r):
        cr.fail(f"new as another user failed without a one-line answer: {evidence(r)}")
    r = cr.alaya(["doctor"], vault=a, env=env, home=str(nh), user=NOBODY)
    if r.rc not in (0, 1) or not r.text.strip():
        cr.fail(f"doctor as another user: exit {r.rc}")
    st = cr.git(["status", "--porcelain"], cwd=a, check=False).out.strip()
    r = cr.alaya(["doctor"], vault=a)
    if r.rc != 0:
        cr.fail(f"owner's doctor reports errors afterwards: {short(r.text[-160:], 120)}")
    del st


def case_cr_kill_serve(cr: CR, inp: dict) -> None:
    a = new_vault(cr, cr.dir / "a")
    for c in inp["cards"]:
        add_card(cr, a, c)
    p, port, _ = start_serve(cr, a)
    cr.ctx.stop(p, sig=signal.SIGKILL)
    r = cr.alaya(["recall", cr.sub(inp["query"]), "--json"], vault=a, timeout=40)
    if r.secs > 5:
        cr.fail(f"recall after serve was killed took {r.secs:.1f}s")
    if r.rc != 0 or not any(cr.sub(inp["title"]) in t for t in node_titles(r)):
        cr.fail(f"recall after serve was killed gave no answer: {evidence(r)}")
    d = cr.alaya(["doctor"], vault=a)
    if "serve.json" not in d.text:
        cr.fail("doctor does not name the dead server's serve.json")
    cr.alaya(["doctor", "--fix"], vault=a)
    if (a / ".alaya" / "serve.json").exists():
        cr.fail("doctor --fix left the dead server's serve.json")
    p2, port2, _ = start_serve(cr, a, name="serve2")
    r = cr.alaya(["recall", cr.sub(inp["query"]), "--json"], vault=a, timeout=40)
    if r.rc != 0:
        cr.fail(f"recall through a restarted serve failed: {evidence(r)}")
    cr.ctx.stop(p2)


HANDLERS = {
    "remote": scenario, "import": scenario,
    "dc_forged": case_dc_forged, "dc_port_squat": case_dc_port_squat,
    "dc_other_vault": case_dc_other_vault, "dc_parent_vault": case_dc_parent_vault,
    "hc_slow": case_hc_slow, "hc_raw": case_hc_raw,
    "cr_kill_sync": case_cr_kill_sync, "cr_kill_writer": case_cr_kill_writer,
    "cr_kill_compile": case_cr_kill_compile, "cr_kill_import": case_cr_kill_import,
    "cr_kill_distill": case_cr_kill_distill, "cr_full_disk": case_cr_full_disk,
    "cr_readonly": case_cr_readonly, "cr_perm": case_cr_perm, "cr_kill_serve": case_cr_kill_serve,
}


# --------------------------------------------------------------------------- main

def run_case(ctx: Ctx, case: dict) -> dict:
    t0 = time.monotonic()
    cr = CR(ctx, case)
    inp = case["input"]
    try:
        HANDLERS[inp["kind"]](cr, inp)
        held, reason = cr.verdict()
    except Exception as e:  # the runner itself failed: say so, never as a pass
        held = False
        tail = traceback.format_exc().strip().splitlines()[-3:]
        reason = f"RUNNER ERROR ({type(e).__name__}: {short(str(e), 200)}) at {short(' | '.join(tail), 200)}"
        if cr.problems:
            reason = "; ".join(cr.problems)[:300] + "; " + reason
    finally:
        for f in cr.fakes.values():
            ctx.stop(f.proc, wait=2)
        for s in cr.sockets:
            s.close()
    return {"id": case["id"], "category": case["category"], "lang": case["lang"], "held": held,
            "reason": reason, "secs": round(time.monotonic() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alaya", default="/work/blind/.venv/bin/alaya")
    ap.add_argument("--cases", default=str(HERE / "cases.json"))
    ap.add_argument("--json-out")
    ap.add_argument("--only", help="comma-separated case ids (debugging the runner)")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    ap.add_argument("--jobs", type=int, default=2,
                    help="cases run side by side (default 2); discovery, HTTP and serve cases always run alone")
    ap.add_argument("--fake", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--log", help=argparse.SUPPRESS)
    ap.add_argument("--nonce", default="", help=argparse.SUPPRESS)
    ap.add_argument("--extra", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fake:
        fake_main(args.fake, args.port, args.log, args.nonce, args.extra)
        return
    data = json.loads(Path(args.cases).read_text(encoding="utf-8"))
    cases = data["cases"]
    if args.only:
        want = set(args.only.split(","))
        cases = [c for c in cases if c["id"] in want]
    t0 = time.monotonic()
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    results = []
    by_id: dict = {}
    ctx = None
    version = ""
    try:
        ctx = Ctx(args.alaya, args.keep)
        v = run_proc([args.alaya, "--version"], env=ctx.env(), timeout=30)
        version = v.out.strip() or v.err.strip()
        ctx.shared["http_cards"] = data.get("http_vault_cards", [])

        def on_signal(signum, frame):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, on_signal)
        def report(res):
            print(f"[{'held' if res['held'] else 'FAIL'}] {res['id']} ({res['secs']}s): {short(res['reason'], 200)}",
                  file=sys.stderr, flush=True)
        # timing-sensitive cases (discovery deadlines, HTTP latency, serve) run alone, after the rest
        serial = [c for c in cases if c["input"]["kind"].startswith(("dc_", "hc_")) or c["input"]["kind"] == "cr_kill_serve"]
        pooled = [c for c in cases if c not in serial]
        if args.jobs > 1 and pooled:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(max_workers=args.jobs) as ex:
                for res in ex.map(lambda c: run_case(ctx, c), pooled):
                    by_id[res["id"]] = res
                    report(res)
        else:
            for c in pooled:
                by_id[c["id"]] = res = run_case(ctx, c)
                report(res)
        for c in serial:
            by_id[c["id"]] = res = run_case(ctx, c)
            report(res)
        results = [by_id[c["id"]] for c in cases]
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    finally:
        if ctx is not None:
            if ctx.keep:
                print(f"kept {ctx.base}", file=sys.stderr)
            ctx.cleanup()
    if not results:
        results = [by_id[c["id"]] for c in cases if c["id"] in by_id]
    summary = summarize(results, args.alaya, version, started, time.monotonic() - t0)
    text = json.dumps(summary, ensure_ascii=False, indent=1)
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    sys.exit(0)


def summarize(results, alaya, version, started, secs) -> dict:
    def tally(key):
        out = {}
        for r in results:
            d = out.setdefault(r[key], {"cases": 0, "held": 0, "failed": 0})
            d["cases"] += 1
            d["held" if r["held"] else "failed"] += 1
        return out
    return {
        "set": "sync-blind1", "alaya": alaya, "version": version, "started": started,
        "seconds": round(secs, 1),
        "totals": {"cases": len(results), "held": sum(r["held"] for r in results),
                   "failed": sum(not r["held"] for r in results),
                   "runner_errors": sum(r["reason"].find("RUNNER ERROR") >= 0 for r in results)},
        "by_category": tally("category"), "by_lang": tally("lang"),
        "cases": results,
    }


if __name__ == "__main__":
    main()
