#!/usr/bin/env python3
"""secrets-blind1 runner: drives the installed `alaya` CLI end to end over cases.json.

Stdlib only (MCP is spoken by hand: JSON-RPC lines over the server's stdio). Builds one
throwaway vault under a temp dir, writes every case the way its user or agent would (ingest,
capture, new, link, feedback, MCP tools, recall/context queries, serve), runs the normal
pipeline (distill, compile) and the reads an agent runs afterwards (recall --json, show,
context, trace; MCP get/trace/recall), then looks for every fragment of every secret in:

  * the vault's working files (everything but .git, .alaya/ included, read as bytes),
  * `git log -p --all` of the vault,
  * every read's output, the MCP server's stderr and `alaya serve`'s output.

An attack case is held when no fragment (any 6-character window of the value; a window made
only of hex digits and dashes is widened to 12 so random ids cannot match it by chance; and
8-character windows compared case-folded, so a lowercased copy in an index counts too) is found
anywhere. A write or read that crashes (traceback, signal, timeout) makes the case not held.
A negative case is held when its session note keeps every listed fragment and holds no
[REDACTED marker.

    python3 run.py [--alaya PATH] [--json-out FILE] [--keep] [--workers N]

Prints a JSON summary; exits 0 whatever it measured.
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ALAYA = "/work/blind/.venv/bin/alaya"
T_WRITE, T_DISTILL, T_READ, T_MCP = 180, 300, 120, 180
MAX_REFS = 3        # cards (and notes) read back per case: show --json and trace --json
LOWENT = set("0123456789abcdefABCDEF-")


# ------------------------------------------------------------------------------ processes
class Runner:
    def __init__(self, alaya: str, vault: Path):
        self.alaya = alaya
        self.vault = vault
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_")}
        env["NO_COLOR"] = "1"
        env["PYTHONUNBUFFERED"] = "1"
        self.env = env

    def run(self, args, *, agent=None, stdin=None, timeout=T_READ):
        cmd = [self.alaya, "--vault", str(self.vault)] + (["--agent", agent] if agent else []) + list(args)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
                               env=self.env, cwd=str(self.vault.parent))
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return {"cmd": list(args), "rc": rc, "out": out, "err": err,
                "ms": round((time.monotonic() - t0) * 1000)}


def crashed(res) -> str | None:
    """A crash: timeout, killed by a signal, an exit code outside 0/1/2, or a traceback."""
    if res["rc"] == "timeout":
        return "timeout"
    if isinstance(res["rc"], int) and (res["rc"] < 0 or res["rc"] > 2):
        return f"exit {res['rc']}"
    if "Traceback (most recent call last)" in res["err"] or "Traceback (most recent call last)" in res["out"]:
        tail = [ln for ln in res["err"].strip().splitlines() if ln.strip()][-1:] or ["traceback"]
        return "traceback: " + tail[0][:160]
    return None


def short(res) -> str:
    txt = (res["err"].strip() or res["out"].strip()).replace("\n", " ")
    return f"{' '.join(map(str, res['cmd'][:2]))} rc={res['rc']}: {txt[:200]}"


def jparse(text):
    try:
        return json.loads(text)
    except Exception:
        return None


# ------------------------------------------------------------------------------ MCP stdio client
class Mcp:
    def __init__(self, runner: Runner, agent: str | None, stderr_path: Path):
        cmd = [runner.alaya, "--vault", str(runner.vault), "mcp"] + (["--agent", agent] if agent else [])
        self.err_f = open(stderr_path, "w", encoding="utf-8")
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err_f,
                                  text=True, encoding="utf-8", env=runner.env, bufsize=1)
        self.q: queue.Queue = queue.Queue()
        self.n = 0
        threading.Thread(target=self._read, daemon=True).start()
        init = self.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                           "clientInfo": {"name": "secrets-blind1", "version": "1"}})
        if init.get("error") or "result" not in init:
            raise RuntimeError(f"MCP initialize failed: {str(init)[:300]}")
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.p.stdout:
            line = line.strip()
            if line:
                self.q.put(line)
        self.q.put(None)

    def _send(self, obj):
        self.p.stdin.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.p.stdin.flush()

    def request(self, method, params, timeout=T_MCP):
        self.n += 1
        rid = self.n
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"error": {"message": "timeout"}, "_timeout": True}
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                return {"error": {"message": "server exited"}, "_dead": True}
            msg = jparse(line)
            if isinstance(msg, dict) and msg.get("id") == rid:
                return msg

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self):
        try:
            self.p.stdin.close()
        except Exception:
            pass
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=10)
        self.err_f.close()


def mcp_text(resp) -> str:
    return json.dumps(resp, ensure_ascii=False)


def mcp_failed(resp) -> str | None:
    if resp.get("_timeout"):
        return "crash: MCP call timed out"
    if resp.get("_dead"):
        return "crash: MCP server exited"
    if "error" in resp:
        return "refused: " + str(resp["error"].get("message"))[:160]
    res = resp.get("result") or {}
    if res.get("isError"):
        txt = " ".join(c.get("text", "") for c in res.get("content", []) if isinstance(c, dict))
        if "Traceback" in txt:
            return "crash: " + txt[:160]
        return "refused: " + txt[:160]
    return None


# ------------------------------------------------------------------------------ fragments
def windows(secret: str) -> tuple[list[str], list[str]]:
    """6-char windows (case-sensitive) and 8-char windows (case-folded); hex/dash-only windows
    are widened to 12 so ids and hashes elsewhere cannot match them by chance."""
    exact, folded = set(), set()
    for width, bucket in ((6, exact), (8, folded)):
        for i in range(len(secret) - width + 1):
            w = secret[i:i + width]
            if set(w) <= LOWENT:
                if i + 12 <= len(secret):
                    w = secret[i:i + 12]
                else:
                    continue
            bucket.add(w)
    return sorted(exact), sorted(w.lower() for w in folded)


RUN = re.compile(r"[!-~]{6,}")   # runs of printable ASCII: every secret here is one


class Scanner:
    """Finds which labelled texts hold which windows. Each text is cut into runs of printable
    ASCII (C speed); the distinct runs of all texts are gathered with the labels they occur in;
    each distinct run's 6-grams are intersected with the windows' 6-char prefixes, and only
    candidate windows are confirmed with a substring test."""

    def __init__(self, parts):
        self.where = defaultdict(list)     # run -> labels (first 60)
        for label, text in parts:
            for run in set(RUN.findall(text)):
                labs = self.where[run]
                if len(labs) < 60:
                    labs.append(label)

    def scan(self, windows_by_key):
        """windows_by_key: {key: (exact_windows, folded_windows)} -> {key: {label: window}}"""
        pe, pf = defaultdict(list), defaultdict(list)
        for key, (exact, folded) in windows_by_key.items():
            for w in exact:
                pe[w[:6]].append((w, key))
            for w in folded:
                pf[w[:6]].append((w, key))
        pe_set, pf_set = set(pe), set(pf)
        hits = defaultdict(dict)
        for run, labels in self.where.items():
            for k in range(0, len(run), 200000):
                piece = run[k:k + 200012]
                low = piece.lower()
                for g in {piece[i:i + 6] for i in range(len(piece) - 5)} & pe_set:
                    for w, key in pe[g]:
                        if w in piece:
                            for lab in labels:
                                hits[key].setdefault(lab, w)
                for g in {low[i:i + 6] for i in range(len(low) - 5)} & pf_set:
                    for w, key in pf[g]:
                        if w in low:
                            for lab in labels:
                                hits[key].setdefault(lab, w + " (case-folded)")
        return hits


def first_turn_snippet(c) -> str:
    """~24 characters of the case's first captured message, for finding its note."""
    inp = c["input"]
    text = inp.get("stdin") or inp.get("file_text") or ""
    try:
        first = json.loads(text.splitlines()[0]).get("content", "")
    except Exception:  # noqa: BLE001
        return ""
    return first[:24] if len(first) >= 24 else ""


def read_tree(root: Path, skip_git=True) -> dict[str, str]:
    files = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        if skip_git and ".git" in dirnames:
            dirnames.remove(".git")
        for fn in filenames:
            p = Path(dirpath) / fn
            if p.is_symlink() or not p.is_file():
                continue
            try:
                files[str(p.relative_to(root))] = p.read_bytes().decode("latin-1")
            except OSError:
                continue
    return files


def utf8(s: str) -> str:
    """latin-1 decoded bytes back to text where they were UTF-8 (for Chinese fragments)."""
    try:
        return s.encode("latin-1").decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return s


# ------------------------------------------------------------------------------ the run
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alaya", default=DEFAULT_ALAYA)
    ap.add_argument("--cases", default=str(HERE / "cases.json"))
    ap.add_argument("--json-out")
    ap.add_argument("--keep", action="store_true", help="keep the temp vault and print where it is")
    ap.add_argument("--workers", type=int, default=2, help="parallel read commands (default 2)")
    a = ap.parse_args()
    try:
        sys.stdout.reconfigure(encoding="utf-8")
    except Exception:  # noqa: BLE001
        pass
    t_start = time.monotonic()
    cases = json.loads(Path(a.cases).read_text(encoding="utf-8"))["cases"]
    tmp = Path(tempfile.mkdtemp(prefix="alaya-secrets-blind1-"))
    vault = tmp / "vault"
    inputs, logs = tmp / "in", tmp / "logs"
    inputs.mkdir()
    logs.mkdir()
    R = Runner(a.alaya, vault)
    st = {c["id"]: {"crash": [], "notes": [], "sessions": [], "paths": [], "refs": list(c["input"].get("refs", []))}
          for c in cases}
    reads = []      # (case id or "*", label, text): the served/logged surfaces
    echoes = []     # (case id, label, text): a secret-bearing query's own answer to its caller
    summary_error = None
    summary_notes: list[str] = []
    derived_names: dict[str, str] = {}
    baseline: dict = {}
    version = R.run(["--version"])["out"].strip()
    phases = {}

    def mark(name):
        phases[name] = round(time.monotonic() - t_start, 1)

    try:
        res = R.run(["init", str(vault)], timeout=T_WRITE)
        if res["rc"] != 0:
            raise RuntimeError("alaya init failed: " + short(res))
        baseline = read_tree(vault)

        # ---------------------------------------------------------------- 1. writes (CLI)
        def note_write(cid, res, what):
            c = crashed(res)
            if c:
                st[cid]["crash"].append(f"{what} crashed ({c})")
            elif res["rc"] != 0:
                st[cid]["notes"].append("refused: " + short(res))

        for c in cases:
            cid, inp, agent = c["id"], c["input"], c.get("agent")
            via = inp["via"]
            if via == "ingest":
                d = inputs / cid
                d.mkdir()
                f = d / inp["file_name"]
                f.write_text(inp["file_text"], encoding="utf-8")
                args = ["ingest", str(f), "--json"] + (["--format", inp["format"]] if inp.get("format") else [])
                res = R.run(args, agent=agent, timeout=T_WRITE)
                note_write(cid, res, "ingest")
                j = jparse(res["out"]) or {}
                for s in j.get("sessions", []):
                    st[cid]["sessions"].append(s.get("session"))
                    if s.get("path"):
                        st[cid]["paths"].append(s["path"])
                if not j.get("sessions") and not st[cid]["crash"]:
                    st[cid]["notes"].append("ingest stored no session: " + short(res))
            elif via == "ingest-stdin":
                res = R.run(["ingest", "-", "--json"], agent=agent, stdin=inp["stdin"], timeout=T_WRITE)
                note_write(cid, res, "ingest -")
                for s in (jparse(res["out"]) or {}).get("sessions", []):
                    st[cid]["sessions"].append(s.get("session"))
                    if s.get("path"):
                        st[cid]["paths"].append(s["path"])
            elif via in ("capture-file", "capture-stdin"):
                if via == "capture-file":
                    d = inputs / cid
                    d.mkdir()
                    f = d / inp["file_name"]
                    f.write_text(inp["file_text"], encoding="utf-8")
                    res = R.run(["capture", str(f), "--json"], agent=agent, timeout=T_WRITE)
                else:
                    res = R.run(["capture", "-", "--session", inp["session"], "--json"], agent=agent,
                                stdin=inp["stdin"], timeout=T_WRITE)
                note_write(cid, res, "capture")
                j = jparse(res["out"]) or {}
                if j.get("session"):
                    st[cid]["sessions"].append(j["session"])
            elif via == "cli":
                for step in inp["steps"]:
                    opts = step[-1] if step and isinstance(step[-1], dict) else {}
                    args = [x for x in step if not isinstance(x, dict)]
                    res = R.run(args, agent=agent, stdin=opts.get("stdin"), timeout=T_WRITE)
                    note_write(cid, res, args[0])
                    if opts.get("echo"):
                        echoes.append((cid, "echo:" + args[0], res["out"] + res["err"]))
                    if args[0] == "recall" and "--save" in args:
                        j = jparse(res["out"])
                        if not j:
                            m = re.search(r"(queries/\S+\.md)", res["out"])
                            if m:
                                st[cid]["refs"].append(m.group(1))

        mark("writes")
        # ---------------------------------------------------------------- 2. MCP writes
        mcp_cases = [c for c in cases if c["input"]["via"] == "mcp"]
        by_agent = defaultdict(list)
        for c in mcp_cases:
            by_agent[c.get("agent")].append(c)
        for agent, group in by_agent.items():
            errp = logs / f"mcp-{agent or 'owner'}.stderr"
            try:
                m = Mcp(R, agent, errp)
            except Exception as e:  # noqa: BLE001
                for c in group:
                    st[c["id"]]["crash"].append(f"MCP server did not start: {e}")
                continue
            try:
                for c in group:
                    cid = c["id"]
                    for call in c["input"]["calls"]:
                        resp = m.call(call["tool"], call["arguments"])
                        why = mcp_failed(resp)
                        if why and why.startswith("crash"):
                            st[cid]["crash"].append(f"MCP {call['tool']}: {why}")
                        elif why:
                            st[cid]["notes"].append(f"MCP {call['tool']} {why}")
                        if call.get("echo"):
                            echoes.append((cid, "echo:mcp-" + call["tool"], mcp_text(resp)))
                        if call["tool"] == "ingest":
                            st[cid]["sessions"].append(call["arguments"]["session"]["id"])
                # MCP reads, after every MCP write
                for c in group:
                    cid = c["id"]
                    for ref in c["input"].get("refs", []):
                        for tool, argsd in (("get", {"ref": ref}), ("trace", {"card": ref})):
                            resp = m.call(tool, argsd)
                            why = mcp_failed(resp)
                            if why and why.startswith("crash"):
                                st[cid]["crash"].append(f"MCP {tool}: {why}")
                            reads.append((cid, f"mcp-{tool}", mcp_text(resp)))
                    for tool, argsd in (("recall", {"query": c["query"], "top_k": 10}),
                                        ("context", {"query": c["query"], "budget": 4000})):
                        resp = m.call(tool, argsd)
                        why = mcp_failed(resp)
                        if why and why.startswith("crash"):
                            st[cid]["crash"].append(f"MCP {tool}: {why}")
                        reads.append((cid, f"mcp-{tool}", mcp_text(resp)))
            finally:
                m.close()
            reads.append(("*", f"log:mcp-{agent or 'owner'}-stderr", errp.read_text(encoding="utf-8", errors="replace")))

        mark("mcp")
        # the stored session ids: a command may print the id it was given while the note got a
        # cleaned one (capture of a secret-bearing --session); a read is never handed an id that
        # has no note, so it cannot echo the runner's own argument back
        notes_by_stem = {p.stem: p for p in (vault / "sessions").rglob("*.md")}
        for c in cases:
            s_ = st[c["id"]]
            fixed = []
            for sid in s_["sessions"]:
                if sid in notes_by_stem:
                    fixed.append(sid)
                    continue
                snippet = first_turn_snippet(c)
                hit = [stem for stem, p in notes_by_stem.items()
                       if snippet and snippet in p.read_text(encoding="utf-8", errors="replace")]
                if len(hit) == 1:
                    fixed.append(hit[0])
                    s_["notes"].append("session stored under another id than the command printed")
                else:
                    s_["notes"].append("a printed session id has no note")
            s_["sessions"] = list(dict.fromkeys(fixed))
        # names the runner and alaya derive from each case's non-secret input (session ids, their
        # note and raw file paths, input file names): another case's secret window found only in
        # such a name is chance, not a leak (e.g. "...mirror.jsonl" vs a password "Mirror.j...")
        for c in cases:
            names = [c["input"].get("file_name", "")]
            for sid in st[c["id"]]["sessions"]:
                names.append(sid)
                if sid in notes_by_stem:
                    for f in notes_by_stem[sid].parent.glob(notes_by_stem[sid].stem + ".*"):
                        names.append(str(f.relative_to(vault)))
            derived_names[c["id"]] = "\x00".join(names).lower()

        # ---------------------------------------------------------------- 3. distill, compile
        # one `distill` per caller (as a hook or cron job runs it), over every pending session;
        # if it crashes, each of that caller's sessions again on its own to tell whose it was
        owner_of = {}
        for c in cases:
            if c["input"]["via"] != "mcp":
                for sid in st[c["id"]]["sessions"]:
                    owner_of[sid] = c["id"]
        callers = sorted({c.get("agent") or "" for c in cases if c["input"]["via"] != "mcp"
                          and st[c["id"]]["sessions"]}, key=lambda x: (x == "", x))   # agents, then the owner

        def take(j):
            for s_ in (j or {}).get("sessions", []):
                cid = owner_of.get(s_.get("session"))
                if not cid:
                    continue
                if s_.get("status") == "failed":
                    st[cid]["crash"].append("distill failed: " + str(s_.get("reason"))[:160])
                for p in s_.get("cards", []) or []:
                    if p not in st[cid]["refs"]:
                        st[cid]["refs"].append(p)

        for caller in callers:
            res = R.run(["distill", "--json"], agent=caller or None, timeout=T_DISTILL)
            if not crashed(res):
                take(jparse(res["out"]))
                continue
            summary_notes.append(f"distill as {caller or 'owner'} crashed ({crashed(res)}); per session")
            for c in cases:
                if (c.get("agent") or "") != caller or c["input"]["via"] == "mcp":
                    continue
                for sid in st[c["id"]]["sessions"]:
                    r1 = R.run(["distill", "--session", sid, "--json"], agent=caller or None, timeout=T_DISTILL)
                    cr = crashed(r1)
                    if cr:
                        st[c["id"]]["crash"].append(f"distill crashed ({cr})")
                    else:
                        take(jparse(r1["out"]))
        res = R.run(["compile", "--json"], timeout=T_DISTILL)
        if crashed(res):
            summary_error = "compile crashed: " + short(res)

        mark("distill+compile")
        # session note paths (capture and MCP do not print them) and cards citing a session
        sess_files = {}
        for p in (vault / "sessions").rglob("*.md"):
            sess_files[p.stem] = str(p.relative_to(vault))
        card_texts = {str(p.relative_to(vault)): p.read_text(encoding="utf-8", errors="replace")
                      for p in (vault / "cards").rglob("*.md")}
        for c in cases:
            s = st[c["id"]]
            for sid in s["sessions"]:
                if sid in sess_files and sess_files[sid] not in s["paths"]:
                    s["paths"].append(sess_files[sid])
                for path, txt in card_texts.items():
                    if f"[[{sid}" in txt and path not in s["refs"]:
                        s["refs"].append(path)

        # ---------------------------------------------------------------- 4. serve
        serve_cases = [c for c in cases if c["input"]["via"] == "serve"]
        if serve_cases:
            out_p, err_p = logs / "serve.stdout", logs / "serve.stderr"
            with open(out_p, "w") as fo, open(err_p, "w") as fe:
                sp = subprocess.Popen([a.alaya, "--vault", str(vault), "serve", "--port", "0", "--no-introspect"],
                                      stdout=fo, stderr=fe, env=R.env, start_new_session=True)
                try:
                    info, deadline = None, time.monotonic() + 90
                    while time.monotonic() < deadline and sp.poll() is None:
                        sj = vault / ".alaya" / "serve.json"
                        if sj.exists():
                            info = jparse(sj.read_text())
                            if info and info.get("url"):
                                break
                        time.sleep(0.3)
                    if not info or not info.get("url"):
                        for c in serve_cases:
                            st[c["id"]]["crash"].append("alaya serve did not come up")
                    else:
                        base = info["url"].rstrip("/")
                        for c in serve_cases:
                            cid = c["id"]
                            reqs = c["input"]["requests"] + [
                                {"path": "/recall", "headers": {"X-Alaya-Agent": c.get("agent") or ""},
                                 "body": {"query": c["query"], "top_k": 10}}]
                            for rq in reqs:
                                hdr = {"Content-Type": "application/json"}
                                hdr.update({k: v for k, v in rq.get("headers", {}).items() if v})
                                if info.get("token"):
                                    hdr["Authorization"] = "Bearer " + info["token"]
                                body = json.dumps(rq["body"], ensure_ascii=False).encode()
                                req = urllib.request.Request(base + rq["path"], data=body, headers=hdr, method="POST")
                                try:
                                    with urllib.request.urlopen(req, timeout=60) as r:
                                        txt = r.read().decode("utf-8", "replace")
                                except urllib.error.HTTPError as e:
                                    txt = e.read().decode("utf-8", "replace")
                                    if e.code >= 500:
                                        st[cid]["crash"].append(f"serve answered {e.code}")
                                    else:
                                        st[cid]["notes"].append(f"serve answered {e.code}: {txt[:120]}")
                                except Exception as e:  # noqa: BLE001
                                    txt = ""
                                    st[cid]["crash"].append(f"serve request failed: {e}")
                                (echoes if rq.get("echo") else reads).append(
                                    (cid, "echo:serve" if rq.get("echo") else "serve-recall", txt))
                finally:
                    if sp.poll() is None:
                        os.kill(sp.pid, signal.SIGTERM)
                        try:
                            sp.wait(timeout=20)
                        except subprocess.TimeoutExpired:
                            os.kill(sp.pid, signal.SIGKILL)
                            sp.wait(timeout=10)
            reads.append(("*", "log:serve-stdout", out_p.read_text(errors="replace")))
            reads.append(("*", "log:serve-stderr", err_p.read_text(errors="replace")))

        mark("serve")
        # ---------------------------------------------------------------- 5. reads per case
        def case_reads(c):
            cid, agent, q = c["id"], c.get("agent"), c["query"]
            s = st[cid]
            if c["category"] == "negative":
                return []        # a negative is judged on its session note alone
            todo = [(["recall", q, "--json", "--top-k", "10"] + ([] if agent else ["--all-namespaces"]), agent),
                    (["context", "--query", q, "--budget", "6000", "--json"], agent)]
            for sid in s["sessions"]:
                todo.append((["show", sid, "--json"], agent))
            for ref in s["refs"][:MAX_REFS]:
                todo += [(["show", ref, "--json"], agent), (["trace", ref, "--json"], agent)]
            out = []
            for args, ag in todo:
                res = R.run(args, agent=ag, timeout=T_READ)
                cr = crashed(res)
                if cr:
                    s["crash"].append(f"{args[0]} crashed ({cr})")
                out.append((cid, f"read:{args[0]}", res["out"] + "\n" + res["err"]))
            return out

        with ThreadPoolExecutor(max_workers=max(1, a.workers)) as ex:
            for out in ex.map(case_reads, cases):
                reads.extend(out)
        for args in (["eval", "--from-telemetry", "--json"], ["status", "--json"]):
            res = R.run(args, timeout=T_READ)
            reads.append(("*", f"read:{args[0]}", res["out"] + "\n" + res["err"]))

        mark("reads")
        # ---------------------------------------------------------------- 6. surfaces
        files = read_tree(vault)
        git = subprocess.run(["git", "-C", str(vault), "log", "-p", "--all", "--text"],
                                       capture_output=True, timeout=T_READ, env=R.env)
        git_text = git.stdout.decode("latin-1")
    except Exception as e:  # noqa: BLE001 — the runner reports, never dies without a summary
        import traceback
        summary_error = f"runner aborted: {e!r} {traceback.format_exc()[-600:]}"
        files = read_tree(vault) if vault.exists() else {}
        git_text = ""

    parts = []
    for path, txt in sorted(files.items()):
        parts.append((("alaya-dir:" if path.startswith(".alaya") else "file:") + path, txt))
    parts.append(("git-log", git_text))
    for cid, label, txt in reads:
        parts.append((f"{label}[{cid}]", txt.encode("utf-8", "replace").decode("latin-1")))
    echo_parts = [(f"{label}[{cid}]", txt.encode("utf-8", "replace").decode("latin-1"))
                  for cid, label, txt in echoes]

    # exclusions: windows that occur in text that is not a secret (the case inputs with every
    # secret cut out, the fresh vault), or in another case's secret (shared prefixes)
    all_secrets = sorted({s for c in cases for s in c.get("secrets", [])}, key=len, reverse=True)
    clean = []
    for c in cases:
        t = json.dumps(c["input"], ensure_ascii=False) + "\n" + c["query"]
        for s in all_secrets:
            t = t.replace(s, "\x00")
        clean.append(t)
    clean.extend(baseline.values())
    clean_lower = "\x00".join(clean).lower()

    win, weak_by = {}, defaultdict(list)
    for c in cases:
        if c["category"] == "negative":
            continue
        other_lower = "\x00".join(x for o in cases if o["id"] != c["id"] for x in o.get("secrets", [])).lower()
        other_lower += "\x00" + "\x00".join(v for k, v in derived_names.items() if k != c["id"])
        for i, secret in enumerate(c["secrets"]):
            exact, folded = windows(secret)
            exact = [w for w in exact if w.lower() not in clean_lower and w.lower() not in other_lower]
            folded = [w for w in folded if w not in clean_lower and w not in other_lower]
            if not exact and not folded:
                weak_by[c["id"]].append(i + 1)
            else:
                win[(c["id"], i)] = (exact, folded)
    mark("surfaces")
    leak_hits = Scanner(parts).scan(win)
    echo_hits_all = Scanner(echo_parts).scan(win)

    mark("scan")
    results = []
    for c in cases:
        cid = c["id"]
        s = st[cid]
        rec = {"id": cid, "lang": c["lang"], "category": c["category"]}
        if c["category"] == "negative":
            problems = []
            if not s["paths"]:
                problems.append("no session note was written")
            for p in s["paths"]:
                raw = (vault / p).read_text(encoding="utf-8", errors="replace") if (vault / p).exists() else ""
                plain = raw.replace("\\", "")
                for k in c["keep"]:
                    if k not in raw and k not in plain:
                        problems.append(f"fragment {k!r} not kept in {p}")
                for mm in re.finditer(r"\[REDACTED[^\]]*\]", raw):
                    line = raw[max(0, raw.rfind("\n", 0, mm.start()) + 1): raw.find("\n", mm.end())]
                    problems.append(f"masked in {p}: {line.strip()[:140]}")
                    break
            if s["crash"]:
                problems.insert(0, "crash: " + "; ".join(s["crash"][:2]))
            rec["held"] = not problems
            rec["reason"] = "; ".join(problems) if problems else "kept intact: " + ", ".join(repr(k) for k in c["keep"])
            results.append(rec)
            continue
        leaks, echo_hits, weak = [], [], weak_by.get(cid, [])
        for i, secret in enumerate(c["secrets"]):
            where = leak_hits.get((cid, i), {})
            if where:
                labs = sorted(where)
                sample = where[labs[0]]
                kinds = sorted({lb.split(":")[0].split("[")[0] for lb in labs})
                leaks.append(f"secret#{i + 1} fragment {sample!r} in {len(labs)} place(s) "
                             f"[{', '.join(kinds)}], e.g. {', '.join(utf8(x) for x in labs[:3])}")
            if echo_hits_all.get((cid, i)):
                echo_hits.append(f"secret#{i + 1}")
        problems = []
        if s["crash"]:
            problems.append("crash: " + "; ".join(s["crash"][:2]))
        problems += leaks
        if weak:
            problems.append(f"runner: secret(s) {weak} have no checkable fragment")
        rec["held"] = not problems
        if problems:
            rec["reason"] = " | ".join(problems)
        else:
            bits = ["no fragment found in files, .alaya/, git log -p --all, reads and logs"]
            if s["notes"]:
                bits.append("; ".join(s["notes"][:2]))
            if echo_hits:
                bits.append("the query's own answer echoed it back to its caller (not counted)")
            rec["reason"] = "; ".join(bits)
        if s["notes"] and problems:
            rec["reason"] += " | note: " + "; ".join(s["notes"][:2])
        results.append(rec)

    def tally(rows):
        d = {"total": len(rows), "held": sum(r["held"] for r in rows)}
        d["failed"] = d["total"] - d["held"]
        return d

    attacks = [r for r in results if r["category"] != "negative"]
    negs = [r for r in results if r["category"] == "negative"]
    by_cat = {cat: tally([r for r in attacks if r["category"] == cat])
              for cat in sorted({r["category"] for r in attacks})}
    summary = {
        "family": "secrets-blind1",
        "alaya": a.alaya,
        "alaya_version": version,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_s": round(time.monotonic() - t_start, 1),
        "error": summary_error,
        "phase_end_s": phases,
        "runner_notes": summary_notes,
        "totals": {"attacks": tally(attacks), "negatives": tally(negs)},
        "attacks_by_category": by_cat,
        "attacks_by_lang": {lg: tally([r for r in attacks if r["lang"] == lg]) for lg in ("en", "zh")},
        "negatives_by_lang": {lg: tally([r for r in negs if r["lang"] == lg]) for lg in ("en", "zh")},
        "cases": results,
    }
    if a.keep:
        summary["vault"] = str(vault)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    text = json.dumps(summary, ensure_ascii=False, indent=1)
    print(text)
    if a.json_out:
        Path(a.json_out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"family": "secrets-blind1", "error": f"runner failed: {e!r}"}))
    sys.exit(0)
