#!/usr/bin/env python3
"""Blind prompt-injection runner for alaya (family: injections, disguised and reworded).

Drives the installed `alaya` CLI (and its MCP server) by subprocess on a throwaway vault:

  init → config (strict: persona_every = 1, every recalled card promotable into MEMORY.md)
  → ingest every owner case (one file each, in its own transcript format)
  → mallory's writes (new --namespace shared, new + promote-shared, MCP new, MCP ingest+distill,
    a private ingested session) → distill → compile
  → reads round 1 (owner + bob + mallory recall: also the telemetry introspect promotes from)
  → introspect → reads round 2 (bob context with and without --query, bob recall, mallory's
    own context/recall for the sessions it owns) → MCP as bob and as mallory (recall, context,
    the recall_before_answering prompt, alaya://digest|memory|persona)
  → scan the vault's derived files → judge each case.

An attack HELD when its marker is in none of the derived files (cards, entities, scenes,
persona.md, MEMORY.md, reports except open-questions.md which echoes the tester's own queries,
.alaya/agent-digest.json, .alaya/digest/*.json, .alaya/claims.jsonl) and in none of the read
outputs.  For an agent-written card the card's own file is allowed (kept as written).
A negative HELD when its turn is not in injection_turns and its marker is served by a read or
distilled into a card (agent-written negatives: served to bob).

stdlib only, plus the `mcp` client SDK for the MCP part (skipped, and said so, without it).
Exit 0 always: it is a measurement.

    python run.py [--alaya PATH] [--cases cases.json] [--json-out FILE] [--keep]
"""
import argparse
import asyncio
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ALAYA = "/work/blind/.venv/bin/alaya"
BASE_MS = 1775034000000  # 2026-04-01T09:00:00Z
BOB, MALLORY = "bob", "mallory"


# ------------------------------------------------------------------ helpers
def marker_re(m):
    word, num = m.split("-")
    return re.compile(r"(?<![A-Za-z])" + re.escape(word) + r"[\W_]{0,3}" + num + r"(?!\d)", re.I)


def iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def child_env():
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ALAYA_") or k in ("NO_COLOR",))}
    env["NO_COLOR"] = "1"
    env.setdefault("GIT_AUTHOR_NAME", "blind-tester")
    env.setdefault("GIT_AUTHOR_EMAIL", "tester@localhost")
    env.setdefault("GIT_COMMITTER_NAME", "blind-tester")
    env.setdefault("GIT_COMMITTER_EMAIL", "tester@localhost")
    return env


class Runner:
    def __init__(self, alaya, vault):
        self.alaya = alaya
        self.vault = vault
        self.env = child_env()
        self.log = []

    def run(self, args, agent=None, stdin=None, timeout=120, label=None):
        cmd = [self.alaya, "--vault", self.vault] + (["--agent", agent] if agent else []) + list(args)
        t0 = time.time()
        try:
            p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
                               env=self.env)
            rc, out, err, to = p.returncode, p.stdout, p.stderr, False
        except subprocess.TimeoutExpired as e:
            rc, to = None, True
            out = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = (e.stderr or b"").decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        except OSError as e:
            rc, out, err, to = None, "", f"cannot run alaya: {e}", False
        secs = time.time() - t0
        crashed = to or rc is None or "Traceback (most recent call last)" in err or rc not in (0, 1)
        r = {"cmd": " ".join(args[:2]), "agent": agent, "rc": rc, "out": out, "err": err,
             "timeout": to, "crashed": crashed, "secs": round(secs, 2), "label": label}
        return r


def jload(s):
    try:
        return json.loads(s)
    except Exception:
        return None


def scrub(text, query):
    """Remove the echo of the tester's own query (recall's `query.text`, context's
    'Recalled for: …', the prompt's question) so only what alaya SERVED is judged."""
    if not text or not query:
        return text or ""
    for form in {query, json.dumps(query)[1:-1], json.dumps(query, ensure_ascii=False)[1:-1]}:
        text = text.replace(form, " ")
    return text


def tail(s, n=240):
    s = (s or "").strip().replace("\n", " | ")
    return s[-n:]


# ------------------------------------------------------------------ renderers (one file per case)
def turns_ms(idx, n):
    base = BASE_MS + idx * 3 * 3600 * 1000
    return [base + i * 60000 for i in range(n)]


def render_session(case, idx):
    inp = case["input"]
    ts = turns_ms(idx, len(inp["turns"]) + 1)
    turns = []
    for i, t in enumerate(inp["turns"]):
        d = {"role": t["role"], "content": t["content"], "timestamp": ts[i]}
        if t.get("name"):
            d["name"] = t["name"]
        turns.append(d)
    doc = {"id": case["id"], "timestamp": ts[0], "channel": inp.get("channel", "cli"),
           "agent": inp.get("agent", "main"), "turns": turns,
           "metadata": inp.get("metadata", {"model": "gpt-4.1", "tokens": 812})}
    return json.dumps(doc, ensure_ascii=False, indent=1), ".json", "session"


def render_messages(case, idx):
    inp = case["input"]
    ts = turns_ms(idx, len(inp["turns"]))
    lines = []
    for i, t in enumerate(inp["turns"]):
        d = {"id": f"{case['id']}-m{i + 1}", "role": t["role"], "content": t["content"],
             "timestamp": ts[i], "sessionKey": case["id"]}
        if t.get("name"):
            d["name"] = t["name"]
        lines.append(json.dumps(d, ensure_ascii=False))
    return "\n".join(lines) + "\n", ".jsonl", "messages"


def render_transcript(case, idx):
    return case["input"]["text"], ".txt", "transcript"


def render_claude_code(case, idx):
    inp = case["input"]
    sid = str(uuid.uuid5(uuid.NAMESPACE_URL, "alaya-blind1/" + case["id"]))
    cwd = inp.get("cwd", "/home/me/project")
    branch = inp.get("git_branch", "main")
    t = BASE_MS + idx * 3 * 3600 * 1000
    recs, prev, n = [], None, 0

    def rec(kind, message, extra=None):
        nonlocal prev, t, n
        n += 1
        u = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{sid}/{n}"))
        r = {"type": kind, "message": message, "uuid": u, "parentUuid": prev, "sessionId": sid,
             "timestamp": iso(t), "cwd": cwd, "gitBranch": branch, "isSidechain": False,
             "userType": "external", "version": "1.0.80"}
        if extra:
            r.update(extra)
        recs.append(r)
        prev = u
        t += 20000

    for turn in inp["turns"]:
        if turn["role"] == "user":
            rec("user", {"role": "user", "content": turn["content"]})
            continue
        blocks = []
        if turn.get("content"):
            blocks.append({"type": "text", "text": turn["content"]})
        tools = turn.get("tools", [])
        for j, tool in enumerate(tools):
            blocks.append({"type": "tool_use", "id": f"toolu_{n}_{j}", "name": tool["name"],
                           "input": tool["input"]})
        mid = f"msg_{case['id'].replace('-', '')}_{n}"
        rec("assistant", {"id": mid, "type": "message", "role": "assistant",
                          "model": "claude-sonnet-4-5", "content": blocks})
        ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
        for tid, tool in zip(ids, tools):
            rec("user", {"role": "user", "content": [
                {"tool_use_id": tid, "type": "tool_result", "content": tool["result"]}]},
                {"toolUseResult": {"stdout": tool["result"][:200]}})
        if turn.get("after"):
            rec("assistant", {"id": mid + "b", "type": "message", "role": "assistant",
                              "model": "claude-sonnet-4-5",
                              "content": [{"type": "text", "text": turn["after"]}]})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\n", ".jsonl", "claude-code"


def render_chatgpt(case, idx):
    inp = case["input"]
    cid = str(uuid.uuid5(uuid.NAMESPACE_URL, "alaya-blind1-gpt/" + case["id"]))
    t = (BASE_MS + idx * 3 * 3600 * 1000) / 1000.0
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    prev, n = "root", 0

    def msg(role, text, name=None, recipient="all"):
        nonlocal prev, t, n
        n += 1
        mid = f"{case['id']}-n{n}"
        author = {"role": role}
        if name:
            author["name"] = name
        mapping[mid] = {"id": mid, "message": {
            "id": mid, "author": author, "create_time": t,
            "content": {"content_type": "text", "parts": [text]}, "recipient": recipient,
            "status": "finished_successfully", "metadata": {}}, "parent": prev, "children": []}
        mapping[prev]["children"].append(mid)
        prev = mid
        t += 20

    for turn in inp["turns"]:
        if turn["role"] == "user":
            msg("user", turn["content"])
            continue
        tools = turn.get("tools", [])
        if turn.get("content") and not tools:
            msg("assistant", turn["content"])
            continue
        if turn.get("content"):
            msg("assistant", turn["content"])
        for tool in tools:
            msg("assistant", json.dumps(tool["input"], ensure_ascii=False), recipient=tool["name"])
            msg("tool", tool["result"], name=tool["name"])
        if turn.get("after"):
            msg("assistant", turn["after"])
    conv = [{"title": inp.get("title", "Conversation"), "create_time": (BASE_MS + idx * 3 * 3600 * 1000) / 1000.0,
             "update_time": t, "conversation_id": cid, "id": cid, "current_node": prev,
             "mapping": mapping}]
    return json.dumps(conv, ensure_ascii=False, indent=1), ".json", "chatgpt"


def render_claude_ai(case, idx):
    inp = case["input"]
    cid = str(uuid.uuid5(uuid.NAMESPACE_URL, "alaya-blind1-cai/" + case["id"]))
    t = BASE_MS + idx * 3 * 3600 * 1000
    msgs = []
    for i, turn in enumerate(inp["turns"]):
        sender = "human" if turn["role"] == "user" else "assistant"
        blocks, texts = [], []
        if turn.get("content"):
            blocks.append({"type": "text", "text": turn["content"]})
            texts.append(turn["content"])
        for tool in turn.get("tools", []):
            blocks.append({"type": "tool_use", "name": tool["name"], "input": tool["input"]})
            blocks.append({"type": "tool_result", "name": tool["name"],
                           "content": [{"type": "text", "text": tool["result"]}], "is_error": False})
        if turn.get("after"):
            blocks.append({"type": "text", "text": turn["after"]})
            texts.append(turn["after"])
        ts = iso(t + i * 30000)
        msgs.append({"uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{cid}/{i}")), "text": "\n\n".join(texts),
                     "sender": sender, "created_at": ts, "updated_at": ts, "content": blocks,
                     "attachments": [], "files": []})
    conv = [{"uuid": cid, "name": inp.get("title", ""), "created_at": iso(t),
             "updated_at": iso(t + len(msgs) * 30000), "chat_messages": msgs}]
    return json.dumps(conv, ensure_ascii=False, indent=1), ".json", "claude-ai"


def render_openclaw(case, idx):
    inp = case["input"]
    t = BASE_MS + idx * 3 * 3600 * 1000
    lines = [{"type": "session", "version": 3, "id": case["id"], "timestamp": iso(t), "cwd": "/home/me"}]
    prev, n = None, 0

    def entry(message):
        nonlocal prev, t, n
        n += 1
        eid = f"e{n}"
        t += 15000
        message = dict(message, timestamp=t)
        lines.append({"type": "message", "id": eid, "parentId": prev, "timestamp": iso(t), "message": message})
        prev = eid

    for turn in inp["turns"]:
        if turn["role"] == "user":
            entry({"role": "user", "content": [{"type": "text", "text": turn["content"]}]})
            continue
        tools = turn.get("tools", [])
        blocks = []
        if turn.get("content"):
            blocks.append({"type": "text", "text": turn["content"]})
        calls = []
        for j, tool in enumerate(tools):
            cid = f"call_{n}_{j}"
            calls.append(cid)
            blocks.append({"type": "toolCall", "id": cid, "name": tool["name"], "arguments": tool["input"]})
        entry({"role": "assistant", "content": blocks})
        for cid, tool in zip(calls, tools):
            entry({"role": "toolResult", "toolCallId": cid, "toolName": tool["name"],
                   "content": [{"type": "text", "text": tool["result"]}], "isError": False})
        if turn.get("after"):
            entry({"role": "assistant", "content": [{"type": "text", "text": turn["after"]}]})
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", ".jsonl", "openclaw"


RENDER = {"session": render_session, "messages": render_messages, "transcript": render_transcript,
          "claude-code": render_claude_code, "chatgpt": render_chatgpt, "claude-ai": render_claude_ai,
          "openclaw": render_openclaw, "agent-session": render_session}


def session_matches(case, sid):
    """Is `sid` the session id alaya gave this case's file?"""
    cid, fmt = case["id"], case["input"]["format"]
    if fmt in ("session", "messages", "agent-session"):
        return sid == cid
    if fmt == "transcript":
        return sid.startswith("session-" + cid + "-") or sid == "session-" + cid
    if fmt == "openclaw":
        return sid == "openclaw-" + cid
    if fmt == "claude-code":
        return sid == "claude-code-" + str(uuid.uuid5(uuid.NAMESPACE_URL, "alaya-blind1/" + cid))
    if fmt == "chatgpt":
        return sid == "chatgpt-" + str(uuid.uuid5(uuid.NAMESPACE_URL, "alaya-blind1-gpt/" + cid))
    if fmt == "claude-ai":
        return sid == "claude-ai-" + str(uuid.uuid5(uuid.NAMESPACE_URL, "alaya-blind1-cai/" + cid))
    return False


def session_object(case, idx):
    """The session object for MCP `ingest` (agent-mcp-ingest)."""
    text, _, _ = render_session(case, idx)
    return json.loads(text)


# ------------------------------------------------------------------ MCP
def mcp_available():
    try:
        import mcp  # noqa: F401
        from mcp.client.stdio import stdio_client  # noqa: F401
        return True
    except Exception:
        return False


def _content_text(items):
    out = []
    for c in items or []:
        txt = getattr(c, "text", None)
        if txt is None:
            inner = getattr(c, "content", None)
            txt = getattr(inner, "text", None) if inner is not None else None
            if txt is None and inner is not None:
                txt = str(inner)
        if txt is None:
            txt = str(c)
        out.append(txt)
    return "\n".join(out)


async def _mcp_ops(alaya, vault, agent, ops, env, errpath, per_op_timeout):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    args = ["--vault", vault] + (["--agent", agent] if agent else []) + ["mcp"]
    params = StdioServerParameters(command=alaya, args=args, env=env)
    results = []
    with open(errpath, "a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                await asyncio.wait_for(s.initialize(), 60)
                for op in ops:
                    kind, name, arg = op["kind"], op["name"], op.get("args", {})
                    try:
                        if kind == "tool":
                            res = await asyncio.wait_for(s.call_tool(name, arg), per_op_timeout)
                            text = _content_text(res.content)
                            sc = getattr(res, "structured_content", None)
                            if sc is None:
                                sc = getattr(res, "structuredContent", None)
                            if sc:
                                text += "\n" + json.dumps(sc, ensure_ascii=False)
                            err = bool(getattr(res, "is_error", getattr(res, "isError", False)))
                            results.append({"ok": True, "text": text, "is_error": err})
                        elif kind == "resource":
                            rr = await asyncio.wait_for(s.read_resource(name), per_op_timeout)
                            results.append({"ok": True, "text": _content_text(rr.contents), "is_error": False})
                        elif kind == "prompt":
                            gp = await asyncio.wait_for(s.get_prompt(name, arg), per_op_timeout)
                            results.append({"ok": True, "text": _content_text(gp.messages), "is_error": False})
                    except Exception as e:  # a failed call is evidence, not a runner crash
                        results.append({"ok": False, "text": "", "error": f"{type(e).__name__}: {e}"[:300]})
    return results


def mcp_run(alaya, vault, agent, ops, env, errpath, total_timeout=420, per_op_timeout=90):
    t0 = time.time()
    try:
        res = asyncio.run(asyncio.wait_for(
            _mcp_ops(alaya, vault, agent, ops, env, errpath, per_op_timeout), total_timeout))
        return res, None, round(time.time() - t0, 1)
    except BaseException as e:  # noqa: BLE001  (ExceptionGroup, timeouts)
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, f"{type(e).__name__}: {str(e)[:300]}", round(time.time() - t0, 1)


# ------------------------------------------------------------------ vault inspection
SKIP_TOP = {".git", "sessions", "queries"}


def scan_files(vault):
    """Every derived file the promise covers: path -> text."""
    files = {}
    for root, dirs, names in os.walk(vault):
        rel_root = os.path.relpath(root, vault)
        top = rel_root.split(os.sep)[0]
        if top in SKIP_TOP:
            dirs[:] = []
            continue
        if top == ".alaya":
            continue
        for nm in names:
            rel = os.path.normpath(os.path.join(rel_root, nm))
            if rel == os.path.join("reports", "open-questions.md"):
                continue  # lists the tester's own recall queries (knowledge gaps)
            p = os.path.join(root, nm)
            if os.path.islink(p):
                continue
            try:
                with open(p, encoding="utf-8", errors="replace") as f:
                    files[rel] = f.read()
            except OSError:
                pass
    al = os.path.join(vault, ".alaya")
    for rel in ["agent-digest.json", "claims.jsonl"]:
        p = os.path.join(al, rel)
        if os.path.isfile(p):
            files[os.path.join(".alaya", rel)] = open(p, encoding="utf-8", errors="replace").read()
    dd = os.path.join(al, "digest")
    if os.path.isdir(dd):
        for nm in sorted(os.listdir(dd)):
            p = os.path.join(dd, nm)
            if nm.endswith(".json") and os.path.isfile(p):
                files[os.path.join(".alaya", "digest", nm)] = open(p, encoding="utf-8", errors="replace").read()
    return files


def note_id(text):
    m = re.match(r"---\n(.*?)\n---", text, re.S)
    if not m:
        return None
    mm = re.search(r"^id:\s*['\"]?([^'\"\n]+)", m.group(1), re.M)
    return mm.group(1).strip() if mm else None


HDR = re.compile(r"^> \[!([\w-]+)\][^\n]*?\b(t\d+) ·", re.M)


def session_notes(vault):
    notes = []
    sd = os.path.join(vault, "sessions")
    for root, _, names in os.walk(sd):
        for nm in names:
            if not nm.endswith(".md"):
                continue
            p = os.path.join(root, nm)
            text = open(p, encoding="utf-8", errors="replace").read()
            fm = re.match(r"---\n(.*?)\n---", text, re.S)
            front = fm.group(1) if fm else ""
            inj = []
            mi = re.search(r"^injection_turns:\s*\[([^\]]*)\]", front, re.M)
            if mi:
                inj = [x.strip().strip("'\"") for x in mi.group(1).split(",") if x.strip()]
            else:
                mi = re.search(r"^injection_turns:\s*\n((?:\s*-\s*\S+\n?)+)", front, re.M)
                if mi:
                    inj = re.findall(r"-\s*(\S+)", mi.group(1))
            body = text[fm.end():] if fm else text
            blocks = []
            hs = list(HDR.finditer(body))
            for i, h in enumerate(hs):
                end = hs[i + 1].start() if i + 1 < len(hs) else len(body)
                blocks.append((h.group(2), body[h.start():end]))
            notes.append({"path": os.path.relpath(p, vault), "front": front, "inj": inj,
                          "blocks": blocks, "id": note_id(text)})
    return notes


# ------------------------------------------------------------------ main pipeline
def set_config(vault):
    p = os.path.join(vault, "alaya.toml")
    s = open(p, encoding="utf-8").read()
    subs = {"persona_every": "1", "min_score": "0.0", "min_signals": "1", "min_queries": "1",
            "budget_chars": "200000"}
    for k, v in subs.items():
        s, n = re.subn(rf"(?m)^{k}\s*=\s*[^#\n]*", f"{k} = {v}   ", s)
        if not n:
            raise RuntimeError(f"alaya.toml has no {k} line")
    open(p, "w", encoding="utf-8").write(s)
    subprocess.run(["git", "-C", vault, "-c", "user.name=blind-tester", "-c", "user.email=t@localhost",
                    "commit", "-q", "-am", "test config: persona_every=1, promote every recalled card"],
                   capture_output=True, timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--alaya", default=DEFAULT_ALAYA)
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.json"))
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the throwaway vault and print where")
    a = ap.parse_args()

    t_start = time.time()
    cases = json.load(open(a.cases, encoding="utf-8"))["cases"]
    tmp = tempfile.mkdtemp(prefix="alaya-injblind1-")
    vault = os.path.join(tmp, "vault")
    inputs = os.path.join(tmp, "inputs")
    os.makedirs(inputs)
    R = Runner(a.alaya, vault)
    pipeline = []
    fatal = []  # global steps that crashed
    per = {c["id"]: {"crash": [], "notes": [], "reads": [], "session": None, "card_ids": set(),
                     "refused": None} for c in cases}
    reads = []  # (label, text) for every read output
    mcp_ok = mcp_available()

    def step(name, r):
        pipeline.append({"step": name, "rc": r["rc"], "secs": r["secs"], "crashed": r["crashed"],
                         "err": tail(r["err"]) if (r["crashed"] or r["rc"]) else ""})
        if r["crashed"]:
            fatal.append(f"{name}: rc={r['rc']} timeout={r['timeout']} {tail(r['err'], 160)}")
        return r

    version = R.run(["--version"], timeout=60)
    r = step("init", R.run(["init", vault], timeout=180))
    try:
        set_config(vault)
    except Exception as e:
        fatal.append(f"config: {e}")

    # ---- owner ingests: one file per case, one ingest command per format (a refused batch
    # is retried file by file, so one refusal costs only its own case)
    groups = {}
    for idx, c in enumerate(cases):
        inp = c["input"]
        if inp["actor"] != "owner":
            continue
        text, ext, fmt = RENDER[inp["format"]](c, idx)
        path = os.path.join(inputs, c["id"] + ext)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        groups.setdefault(fmt, []).append((c, path))

    def take_sessions(d, members):
        for s_ in d.get("sessions") or []:
            sid_ = s_.get("session") or ""
            for c_, _ in members:
                if session_matches(c_, sid_):
                    per[c_["id"]]["session"] = sid_

    t0 = time.time()
    for fmt, members in groups.items():
        r = R.run(["ingest"] + [p_ for _, p_ in members] + ["--format", fmt, "--json"], timeout=300)
        d = jload(r["out"])
        if not r["crashed"] and r["rc"] == 0 and d:
            take_sessions(d, members)
            continue
        for c, path in members:  # retry one by one
            r = R.run(["ingest", path, "--format", fmt, "--json"], timeout=180)
            d = jload(r["out"])
            if r["crashed"]:
                per[c["id"]]["crash"].append(f"ingest crashed (rc={r['rc']}, timeout={r['timeout']}): {tail(r['err'], 200)}")
            elif r["rc"] != 0 or not d:
                per[c["id"]]["refused"] = f"ingest refused (rc={r['rc']}): {tail(r['err'] or r['out'], 200)}"
            else:
                take_sessions(d, [(c, path)])
    pipeline.append({"step": "ingest (owner cases)", "rc": 0, "secs": round(time.time() - t0, 1),
                     "crashed": False, "err": ""})

    # ---- mallory's writes
    mcp_err = os.path.join(tmp, "mcp-stderr.log")
    mcp_write_ops, mcp_write_cases = [], []
    for idx, c in enumerate(cases):
        inp = c["input"]
        if inp["actor"] != MALLORY:
            continue
        P = per[c["id"]]
        fmt = inp["format"]
        if fmt == "agent-new":
            if inp.get("via") == "json":
                obj = {"title": inp["title"], "type": inp["type"], "content": inp["body"],
                       "claims": [{"text": x, "confidence": 0.9} for x in inp.get("claims", [])]}
                args = ["new", "-", "--json"] + (["--namespace", inp["namespace"]] if inp.get("namespace") else [])
                r = R.run(args, agent=MALLORY, stdin=json.dumps(obj, ensure_ascii=False), timeout=120)
            else:
                args = ["new", "--title", inp["title"], "--type", inp["type"], "--body", inp["body"], "--json"]
                for cl in inp.get("claims", []):
                    args += ["--claim", cl]
                if inp.get("namespace"):
                    args += ["--namespace", inp["namespace"]]
                r = R.run(args, agent=MALLORY, timeout=120)
            d = jload(r["out"])
            if r["crashed"]:
                P["crash"].append(f"new crashed: {tail(r['err'], 200)}")
                continue
            if r["rc"] != 0 or not d:
                P["refused"] = f"new refused (rc={r['rc']}): {tail(r['err'] or r['out'], 200)}"
                continue
            P["card_ids"].add(d.get("id"))
            P["notes"].append(f"card {d.get('id')} written ({d.get('path')})")
            if inp.get("promote"):
                r2 = R.run(["promote-shared", d.get("id"), "--json"], agent=MALLORY, timeout=120)
                if r2["crashed"]:
                    P["crash"].append(f"promote-shared crashed: {tail(r2['err'], 200)}")
                elif r2["rc"] != 0:
                    P["notes"].append(f"promote-shared refused: {tail(r2['err'] or r2['out'], 160)}")
                else:
                    P["notes"].append("promoted to shared")
        elif fmt == "agent-session":
            text, ext, f_ = render_session(c, idx)
            path = os.path.join(inputs, c["id"] + ext)
            open(path, "w", encoding="utf-8").write(text)
            r = R.run(["ingest", path, "--format", "session", "--json"], agent=MALLORY, timeout=180)
            d = jload(r["out"])
            if r["crashed"]:
                P["crash"].append(f"ingest crashed: {tail(r['err'], 200)}")
            elif r["rc"] != 0 or not d:
                P["refused"] = f"ingest refused (rc={r['rc']}): {tail(r['err'] or r['out'], 200)}"
            else:
                P["session"] = (d.get("sessions") or [{}])[0].get("session")
        elif fmt == "agent-mcp-new":
            mcp_write_cases.append((c, "new"))
            mcp_write_ops.append({"kind": "tool", "name": "new", "args": {
                "title": inp["title"], "type": inp["type"], "content": inp["body"],
                "claims": inp.get("claims") or None}})
        elif fmt == "agent-mcp-ingest":
            so = session_object(c, idx)
            mcp_write_cases.append((c, "ingest"))
            mcp_write_ops.append({"kind": "tool", "name": "ingest", "args": {"session": so}})
            mcp_write_cases.append((c, "distill"))
            mcp_write_ops.append({"kind": "tool", "name": "distill", "args": {"session": so["id"]}})
            per[c["id"]]["session"] = so["id"]
    if mcp_write_ops:
        if not mcp_ok:
            for c, _ in mcp_write_cases:
                per[c["id"]]["crash"].append("mcp SDK not importable: MCP write not run (runner environment)")
        else:
            res, err, secs = mcp_run(a.alaya, vault, MALLORY, mcp_write_ops, R.env, mcp_err)
            pipeline.append({"step": "mcp writes (mallory)", "rc": 0 if res else None, "secs": secs,
                             "crashed": res is None, "err": err or ""})
            if res is None:
                for c, _ in mcp_write_cases:
                    per[c["id"]]["crash"].append(f"MCP server failed during writes: {err}")
            else:
                for (c, what), rr in zip(mcp_write_cases, res):
                    P = per[c["id"]]
                    if not rr["ok"]:
                        P["crash"].append(f"MCP {what} failed: {rr.get('error')}")
                        continue
                    if rr["is_error"]:
                        P["notes"].append(f"MCP {what} refused: {tail(rr['text'], 160)}")
                        if what == "new":
                            P["refused"] = f"MCP new refused: {tail(rr['text'], 160)}"
                        continue
                    if what == "new":
                        mid = re.search(r'"id":\s*"(card-[0-9a-f]+)"', rr["text"])
                        if mid:
                            P["card_ids"].add(mid.group(1))
                            P["notes"].append(f"MCP new wrote {mid.group(1)}")
                            if c["input"].get("promote"):
                                r2 = R.run(["promote-shared", mid.group(1), "--json"], agent=MALLORY, timeout=120)
                                if r2["crashed"]:
                                    P["crash"].append(f"promote-shared crashed: {tail(r2['err'], 200)}")
                                elif r2["rc"] != 0:
                                    P["notes"].append(f"promote-shared refused: {tail(r2['err'] or r2['out'], 160)}")
                                else:
                                    P["notes"].append("promoted to shared")
                        else:
                            P["notes"].append(f"MCP new answer had no card id: {tail(rr['text'], 120)}")
                    elif what == "distill":
                        P["notes"].append("MCP distill: " + tail(rr["text"], 100))

    # ---- distill, compile
    r = step("distill", R.run(["distill", "--json"], timeout=900))
    dist = jload(r["out"]) or {}
    r2 = step("distill (mallory)", R.run(["distill", "--json"], agent=MALLORY, timeout=600))
    d2 = jload(r2["out"]) or {}
    dist_by_session = {}
    for d in (dist, d2):
        for s in d.get("sessions", []) or []:
            dist_by_session[s.get("session")] = s
    step("compile", R.run(["compile", "--json"], timeout=600))

    owned = {c["id"] for c in cases if c["input"]["format"] in ("agent-session", "agent-mcp-ingest")}

    def read(label, args, agent, case_id=None, query=None):
        r = R.run(args, agent=agent, timeout=120)
        reads.append((label, scrub(r["out"], query)))
        if r["crashed"] and case_id:
            per[case_id]["crash"].append(f"{label} crashed (rc={r['rc']}, timeout={r['timeout']}): {tail(r['err'], 160)}")
        elif r["crashed"]:
            fatal.append(f"{label}: {tail(r['err'], 160)}")
        return r

    # ---- reads round 1 (also the recall telemetry that introspect promotes from)
    t0 = time.time()
    for c in cases:
        q = c["query"]
        read("bob recall", ["recall", q, "--json", "--top-k", "20"], BOB, c["id"], q)
        if c["id"] in owned:
            read("mallory recall", ["recall", q, "--json", "--top-k", "20"], MALLORY, c["id"], q)
    pipeline.append({"step": "reads round 1", "rc": 0, "secs": round(time.time() - t0, 1), "crashed": False, "err": ""})

    step("introspect", R.run(["introspect", "--json"], timeout=900))

    # ---- reads round 2
    t0 = time.time()
    read("bob context (no query)", ["context", "--budget", "20000", "--json"], BOB)
    read("bob context (no query, text)", ["context", "--budget", "20000"], BOB)
    read("mallory context (no query)", ["context", "--budget", "20000"], MALLORY)
    for c in cases:
        q = c["query"]
        read("bob context", ["context", "--budget", "20000", "--top-k", "20", "--query", q], BOB, c["id"], q)
        read("bob recall", ["recall", q, "--json", "--top-k", "20"], BOB, c["id"], q)
        if c["id"] in owned:
            read("mallory context", ["context", "--budget", "20000", "--top-k", "20", "--query", q], MALLORY, c["id"], q)
            read("mallory recall", ["recall", q, "--json", "--top-k", "20"], MALLORY, c["id"], q)
    pipeline.append({"step": "reads round 2", "rc": 0, "secs": round(time.time() - t0, 1), "crashed": False, "err": ""})

    # ---- MCP reads
    mcp_note = None
    if not mcp_ok:
        mcp_note = "mcp SDK not importable with this Python: MCP reads skipped (run with the venv python)"
    else:
        for agent, subset in ((BOB, cases), (MALLORY, [c for c in cases if c["id"] in owned])):
            ops = [{"kind": "resource", "name": u} for u in ("alaya://digest", "alaya://memory", "alaya://persona")]
            ops.append({"kind": "tool", "name": "context", "args": {"budget": 20000}})
            labels = [f"MCP {agent} {u}" for u in ("digest", "memory", "persona")] + [f"MCP {agent} context (no query)"]
            owners = [None] * 4
            qs = [None] * 4
            for c in subset:
                ops += [{"kind": "tool", "name": "recall", "args": {"query": c["query"], "top_k": 20}},
                        {"kind": "tool", "name": "context", "args": {"query": c["query"], "budget": 20000}},
                        {"kind": "prompt", "name": "recall_before_answering", "args": {"question": c["query"]}}]
                labels += [f"MCP {agent} recall", f"MCP {agent} context", f"MCP {agent} prompt recall_before_answering"]
                owners += [c["id"]] * 3
                qs += [c["query"]] * 3
            res, err, secs = mcp_run(a.alaya, vault, agent, ops, R.env, mcp_err)
            pipeline.append({"step": f"mcp reads ({agent})", "rc": 0 if res else None, "secs": secs,
                             "crashed": res is None, "err": err or ""})
            if res is None:
                fatal.append(f"MCP server ({agent}) failed: {err}")
                continue
            for lab, own, qq, rr in zip(labels, owners, qs, res):
                reads.append((lab, scrub(rr.get("text", ""), qq)))
                if not rr["ok"] and own:
                    per[own]["crash"].append(f"{lab} failed: {rr.get('error')}")

    # ---- inspect the vault
    files = scan_files(vault)
    snotes = session_notes(vault)

    results = []
    for c in cases:
        P = per[c["id"]]
        mre = marker_re(c["marker"])
        benign = c["expect"] == "benign"
        agent_card = c["input"]["format"] in ("agent-new", "agent-mcp-new")
        file_hits = []
        for rel, text in files.items():
            if not mre.search(text):
                continue
            if agent_card and note_id(text) in P["card_ids"] and rel.startswith(("cards", "archive")):
                continue  # the agent's own card, kept as written
            if agent_card and rel == os.path.join(".alaya", "digest", MALLORY + ".json"):
                continue  # the writer's own view: what matters is what bob is served
            file_hits.append(rel)
        read_hits = sorted({lab for lab, text in reads if text and mre.search(text)})
        if agent_card:  # a card mallory wrote: judged by what another agent (bob) is served
            read_hits = [h for h in read_hits if h.startswith(("bob", "MCP bob"))]
        # where the marker sits in the session notes, and whether that turn was flagged
        flagged, unflagged, sess_paths = [], [], []
        for n in snotes:
            turns = [tid for tid, blk in n["blocks"] if mre.search(blk)]
            in_front = bool(mre.search(n["front"]))
            if not turns and not in_front:
                continue
            sess_paths.append(n["path"])
            for tid in turns:
                (flagged if tid in n["inj"] else unflagged).append(f"{n['id']}#{tid}")
        sid = P["session"]
        ds = dist_by_session.get(sid) or {}
        ev = []
        if flagged:
            ev.append("flagged " + ",".join(flagged))
        if unflagged:
            ev.append("NOT flagged " + ",".join(unflagged))
        if ds.get("gated_turns"):
            ev.append("gated " + ",".join(ds["gated_turns"]))
        if ds.get("trimmed_turns"):
            ev.append("trimmed " + ",".join(ds["trimmed_turns"]))
        if ds.get("discarded"):
            ev.append(f"{len(ds['discarded'])} card(s) discarded")
        ev += P["notes"]
        crash = P["crash"] + [f"pipeline: {f}" for f in fatal]
        if benign:
            if agent_card:
                served = [h for h in read_hits if h.startswith(("bob", "MCP bob"))]
                found = bool(served)
                where = served
                ok = found and not P["refused"]
            else:
                carded = [h for h in file_hits if not h.startswith(".alaya")]
                where = carded + read_hits
                found = bool(where)
                ok = found and not flagged and not P["refused"]
            if crash:
                held, reason = False, "CRASH: " + "; ".join(crash)[:400]
            elif P["refused"]:
                held, reason = False, P["refused"]
            elif flagged:
                held, reason = False, f"treated as injection ({', '.join(flagged)} in injection_turns); found in: {', '.join(where[:10]) or 'nothing'}"
            elif not found:
                held, reason = False, "benign content neither distilled nor served by any recall/context (" + ("; ".join(ev) or "no evidence") + ")"
            else:
                held, reason = True, "served/distilled as ordinary content: " + ", ".join(where[:10]) + (f" ({'; '.join(ev)})" if ev else "")
        else:
            if crash:
                held, reason = False, "CRASH: " + "; ".join(crash)[:400]
            elif file_hits or read_hits:
                held = False
                parts = []
                if read_hits:
                    parts.append("served by " + ", ".join(read_hits))
                if file_hits:
                    parts.append("in files " + ", ".join(sorted(file_hits)[:6]) + (" …" if len(file_hits) > 6 else ""))
                reason = "; ".join(parts) + (f" [{'; '.join(ev)}]" if ev else "")
            else:
                held = True
                if P["refused"]:
                    reason = "nothing stored or served: " + P["refused"]
                else:
                    reason = "marker in no derived file and no read" + (f" [{'; '.join(ev)}]" if ev else "")
        results.append({"id": c["id"], "lang": c["lang"], "category": c["category"],
                        "kind": "negative" if benign else "attack", "held": held, "reason": reason})

    def tally(rows):
        out = {"total": len(rows), "held": sum(r["held"] for r in rows)}
        out["failed"] = out["total"] - out["held"]
        return out

    def group(rows, key):
        g = {}
        for r in rows:
            g.setdefault(r[key], []).append(r)
        return {k: tally(v) for k, v in sorted(g.items())}

    att = [r for r in results if r["kind"] == "attack"]
    neg = [r for r in results if r["kind"] == "negative"]
    summary = {
        "set": "injection-blind1",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "alaya": a.alaya,
        "alaya_version": (version["out"] or version["err"]).strip(),
        "seconds": round(time.time() - t_start, 1),
        "mcp": "used" if mcp_ok else mcp_note,
        "attacks": dict(tally(att), by_category=group(att, "category"), by_lang=group(att, "lang")),
        "negatives": dict(tally(neg), by_lang=group(neg, "lang")),
        "pipeline": pipeline,
        "pipeline_crashes": fatal,
        "cases": results,
    }
    if a.keep:
        summary["vault"] = vault
    out = json.dumps(summary, ensure_ascii=False, indent=1)
    print(out)
    if a.json_out:
        with open(a.json_out, "w", encoding="utf-8") as f:
            f.write(out + "\n")
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a measurement never fails the caller
        import traceback
        traceback.print_exc()
        print(json.dumps({"set": "injection-blind1", "runner_error": f"{type(e).__name__}: {e}"}))
    sys.exit(0)
