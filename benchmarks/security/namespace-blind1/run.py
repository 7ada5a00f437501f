#!/usr/bin/env python3
"""namespace-blind1: can agent bob reach agent alice's private material through any door?

Standalone runner (Python 3.11, stdlib + the `mcp` client SDK for the MCP cases). It builds two
throwaway vaults — V, where alice planted private material everywhere, and V0, its twin where
alice never existed — drives the installed `alaya` by subprocess (CLI, `alaya mcp` over stdio,
`alaya serve` over HTTP), runs every case of cases.json and prints a JSON summary.

    python run.py [--alaya PATH] [--json-out FILE] [--keep]

Exit status is always 0: this is a measurement.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import glob
import hashlib
import html
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ALAYA = "/work/blind/.venv/bin/alaya"
CLI_TIMEOUT = 240
PERSON = ["-c", "user.name=Pat Owner", "-c", "user.email=pat@example.com"]

ALAYA = DEFAULT_ALAYA
WARN: list[str] = []


# ------------------------------------------------------------------ processes
class Res:
    def __init__(self, rc=None, out="", err="", crashed=None, extra=""):
        self.rc, self.out, self.err, self.crashed, self.extra = rc, out, err, crashed, extra

    @property
    def text(self):
        return "\n".join(x for x in (self.out, self.err, self.extra) if x)

    def json(self):
        try:
            return json.loads(self.out)
        except Exception:
            m = re.search(r"\{.*\}", self.out, re.S)
            if m:
                try:
                    return json.loads(m.group(0))
                except Exception:
                    return None
        return None


def base_env(extra=None, agent_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_")}
    env["NO_COLOR"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    if agent_env is not None:
        env["ALAYA_AGENT"] = agent_env
    if extra:
        env.update(extra)
    return env


def crash_of(rc, out, err):
    if rc is None:
        return "timeout"
    if rc < 0 or rc > 2:
        return f"exit code {rc}"
    if "Traceback (most recent call last)" in (err or "") or "Traceback (most recent call last)" in (out or ""):
        return "Python traceback"
    return None


def alaya(vault, args, agent=None, agent_env=None, env=None, stdin=None, timeout=CLI_TIMEOUT):
    cmd = [ALAYA, "--vault", vault]
    if agent is not None:
        cmd += ["--agent", agent]
    cmd += list(args)
    try:
        p = subprocess.run(cmd, input=stdin if stdin is not None else "", capture_output=True, text=True,
                           timeout=timeout, env=base_env(env, agent_env), errors="replace")
        return Res(p.returncode, p.stdout, p.stderr, crash_of(p.returncode, p.stdout, p.stderr))
    except subprocess.TimeoutExpired as e:
        return Res(None, (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or ""),
                   "", f"timeout after {timeout}s")


def git(vault, *args, check=False):
    p = subprocess.run(["git", "-C", vault, *args], capture_output=True, text=True, errors="replace", timeout=120)
    if check and p.returncode != 0:
        WARN.append(f"git {' '.join(args)} failed: {p.stderr.strip()[:300]}")
    return p.stdout


# ------------------------------------------------------------------ placeholders
PH = re.compile(r"\{([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)?)\}")


def fmt(obj, ctx):
    if isinstance(obj, str):
        return PH.sub(lambda m: str(ctx[m.group(1)]) if m.group(1) in ctx else m.group(0), obj)
    if isinstance(obj, list):
        return [fmt(x, ctx) for x in obj]
    if isinstance(obj, dict):
        return {fmt(k, ctx): fmt(v, ctx) for k, v in obj.items()}
    return obj


# ------------------------------------------------------------------ vault files
def frontmatter_ns(path):
    try:
        with open(path, "rb") as f:
            head = f.read(8192).decode("utf-8", "replace")
    except OSError:
        return None
    head = head.lstrip("\ufeff")
    if not head.startswith("---"):
        return "shared"
    end = re.search(r"\n---\s*(\n|$)", head[3:])
    fm = head[3:3 + end.start()] if end else head
    m = re.search(r"^namespace:\s*['\"]?([^'\"\s#]+)", fm, re.M)
    return m.group(1) if m else "shared"


def walk(vault):
    for root, dirs, files in os.walk(vault):
        rel = os.path.relpath(root, vault)
        dirs[:] = [d for d in dirs if not (rel == "." and d in (".git", ".alaya"))]
        for f in files:
            yield os.path.normpath(os.path.join(rel, f)) if rel != "." else f


def namespace_of(vault, rel):
    full = os.path.join(vault, rel)
    if rel.endswith(".md"):
        return frontmatter_ns(full)
    if rel.startswith("sessions" + os.sep) or rel.startswith("sessions/"):
        stem = rel
        for ext in (".jsonl", ".json", ".txt", ".md.raw", ".raw"):
            if stem.endswith(ext):
                stem = stem[: -len(ext)]
                break
        sib = os.path.join(vault, stem + ".md")
        if os.path.exists(sib):
            return frontmatter_ns(sib)
    return "shared"


def is_alice_ns(ns):
    return ns in ("alice", "alice-main", "alice-ephemeral")


def alice_snapshot(vault):
    snap = {}
    for rel in walk(vault):
        if is_alice_ns(namespace_of(vault, rel)):
            try:
                with open(os.path.join(vault, rel), "rb") as f:
                    snap[rel] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                pass
    return snap


def snap_diff(a, b):
    ch = [p for p in a if p in b and a[p] != b[p]]
    gone = [p for p in a if p not in b]
    new = [p for p in b if p not in a]
    out = []
    if ch:
        out.append("changed: " + ", ".join(ch[:4]))
    if gone:
        out.append("moved/removed: " + ", ".join(gone[:4]))
    if new:
        out.append("new alice-namespace files: " + ", ".join(new[:4]))
    return "; ".join(out)


def read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"<unreadable {path}: {e}>"


def scan_path_text(path):
    parts = []
    if os.path.isdir(path):
        for root, _, files in os.walk(path):
            for f in files:
                p = os.path.join(root, f)
                parts.append(f"== FILE {os.path.relpath(p, path)}\n{read_text(p)}")
    elif os.path.exists(path):
        parts.append(f"== FILE {os.path.basename(path)}\n{read_text(path)}")
    else:
        parts.append(f"<missing {path}>")
    return "\n".join(parts)


# ------------------------------------------------------------------ markers
def unescape_json(text):
    t = re.sub(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})",
               lambda m: (chr(0x10000 + ((int(m.group(1), 16) - 0xD800) << 10) + (int(m.group(2), 16) - 0xDC00))), text)
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), t)


def variants(text):
    vs = [text]
    t = unescape_json(text)
    for v in (t, urllib.parse.unquote(text), html.unescape(text), html.unescape(t)):
        if v not in vs:
            vs.append(v)
    return vs


def ref_parts(ref):
    parts = [ref]
    s = ref.strip("[]")
    for piece in re.split(r"[/#]", s):
        piece = piece.strip("^[] ")
        if len(piece) >= 3 and piece not in parts:
            parts.append(piece)
            if piece.lower().endswith(".md") and len(piece) > 6:
                parts.append(piece[:-3])
    if s != ref and s not in parts:
        parts.append(s)
    return parts


def find_markers(text, markers, echo=()):
    hits = {}
    echo = sorted({e for e in echo if e}, key=len, reverse=True)
    for v in variants(text):
        for e in echo:
            v = re.sub(re.escape(e), " ", v, flags=re.I)
        low = v.lower()
        for name, m in markers.items():
            if name in hits:
                continue
            i = low.find(m.lower())
            if i >= 0:
                snip = v[max(0, i - 70): i + len(m) + 70].replace("\n", " ")
                hits[name] = (m, snip)
    return hits


def leak_reason(hits):
    names = ", ".join(f"{n}={m!r}" for n, (m, _) in list(hits.items())[:6])
    first = next(iter(hits.values()))[1]
    return f"leak: {names}; evidence: …{first}…"


# ------------------------------------------------------------------ normalisation
def norm(text, refs=(), vaults=()):
    t = unescape_json(text)
    for v in vaults:
        if v:
            t = t.replace(v, "<VAULT>")
    expanded = []
    for ref in refs:
        expanded.append(ref_parts(ref))
    pairs = []
    for i, parts in enumerate(expanded):
        for j, p in enumerate(parts):
            pairs.append((p, f"<REF{i}.{j}>"))
    for p, tag in sorted(pairs, key=lambda x: len(x[0]), reverse=True):
        t = re.sub(re.escape(p), tag, t, flags=re.I)
        enc = json.dumps(p)[1:-1]
        if enc != p:
            t = t.replace(enc, tag)
    t = re.sub(r"\b\d{8}T\d{6}-[0-9a-f]{6}\b", "<BUILD>", t)
    t = re.sub(r"\b(card|ent|query|scene|trav)-[0-9a-z]{6,12}\b", "<ID>", t)
    t = re.sub(r"\b[0-9a-f]{7,40}\b", "<HEX>", t)
    t = re.sub(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?", "<TS>", t)
    t = re.sub(r"\d{4}-\d{2}-\d{2}", "<DATE>", t)
    t = re.sub(r"\b\d+\.\d+\b", "<NUM>", t)
    t = re.sub(r"/tmp/[^\s\"']+", "<TMP>", t)
    t = re.sub(r"[ \t]+", " ", t)
    return t.strip()


def first_diff(a, b, width=160):
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return f"probe: …{a[max(0, i - 40): i + width]!r} | control: …{b[max(0, i - 40): i + width]!r}"


VOLATILE = {"refresh", "ms", "latency_ms", "timings_ms", "commit", "build", "compiled_at", "review_commit", "merge_commit"}


def strip_volatile(o):
    if isinstance(o, dict):
        return {k: strip_volatile(v) for k, v in o.items() if k not in VOLATILE}
    if isinstance(o, list):
        return [strip_volatile(x) for x in o]
    return o


def find_key(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = find_key(v, key)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find_key(v, key)
            if r is not None:
                return r
    return None


def all_titles(o, acc=None):
    acc = [] if acc is None else acc
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "title" and isinstance(v, str):
                acc.append(v)
            else:
                all_titles(v, acc)
    elif isinstance(o, list):
        for v in o:
            all_titles(v, acc)
    return acc


# ------------------------------------------------------------------ twin extractors
def ex_status(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    g, s, v = j.get("graph") or {}, j.get("sessions") or {}, j.get("vectors") or {}
    return {"rc": rc, "sessions": s.get("count"), "turns": s.get("turns"), "nodes": g.get("nodes"),
            "by_kind": g.get("by_kind"), "card_types": g.get("card_types"), "links": g.get("links"),
            "claims": g.get("claims"), "units": v.get("units"), "context_vectors": v.get("context_vectors"),
            "tiers_total": sum((v.get("tiers") or {}).values()),
            "temperature_total": sum(b.get("count", 0) for b in (j.get("temperature") or []) if isinstance(b, dict))}


def ex_schema_rel(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    rows = (j.get("core") or []) + (j.get("custom") or [])
    uses = {r.get("type"): r.get("uses") for r in rows if r.get("type") != "CO_OCCURS"}
    co = sum(r.get("uses") or 0 for r in rows if r.get("type") == "CO_OCCURS")
    return {"uses": uses, "custom": sorted(r.get("type") for r in (j.get("custom") or [])),
            "total_minus_cooccurs": (j.get("total_edges") or 0) - co}


def ex_cooccurs(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    rows = (j.get("core") or []) + (j.get("custom") or [])
    return {"CO_OCCURS_uses": sum(r.get("uses") or 0 for r in rows if r.get("type") == "CO_OCCURS")}


def ex_doctor(j, rc=None, vaults=()):
    if not isinstance(j, dict):
        return {"unparsable": True}
    return {"rc": rc, "ok": j.get("ok"), "checks": [(c.get("name"), c.get("ok"), norm(c.get("message") or "", vaults=vaults),
                                                    len(c.get("items") or [])) for c in j.get("checks") or []]}


def ex_compile(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    return {k: j.get(k) for k in ("notes", "parsed", "units", "edges", "claims", "context_vectors")} | {
        "malformed": len(j.get("malformed") or [])}


def ex_lint(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    return {"rc": rc, "summary": j.get("summary")}


def ex_eval_tel(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    cur = j.get("current") or {}
    prev = j.get("previous") or {}
    return {"recalls": cur.get("recalls"), "empty_recalls": cur.get("empty_recalls"), "useful_rate": cur.get("useful_rate"),
            "previous_recalls": prev.get("recalls"), "missed_queries": len(j.get("top_missed_queries") or [])}


def ex_recall(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    exp = j.get("explorable") or []
    return {"titles": sorted(n.get("title") or "" for n in j.get("nodes") or []),
            "explorable": sorted(norm(json.dumps(strip_volatile(e), sort_keys=True, ensure_ascii=False)) for e in exp)}


def ex_titles(j, rc=None):
    if j is None:
        return {"unparsable": True}
    return {"rc": rc, "titles": sorted(all_titles(j))}


def ex_context(j, rc=None):
    if not isinstance(j, dict):
        return {"unparsable": True}
    secs = j.get("sections") or {}
    return {"sections": {k: (len(v) if isinstance(v, (list, str)) else v) for k, v in secs.items()}, "omitted": j.get("omitted")}


def ex_json_whole(j, rc=None, vaults=()):
    if j is None:
        return {"unparsable": True}
    return {"rc": rc, "json": norm(json.dumps(strip_volatile(j), sort_keys=True, ensure_ascii=False), vaults=vaults)}


EXTRACT = {"status": ex_status, "schema_rel": ex_schema_rel, "schema_cooccurs": ex_cooccurs, "doctor": ex_doctor,
           "compile": ex_compile, "lint_summary": ex_lint, "eval_tel": ex_eval_tel, "recall": ex_recall,
           "titles": ex_titles, "context": ex_context, "json_whole": ex_json_whole}


def extract(name, res, vaults):
    fn = EXTRACT[name]
    j = res.json()
    if fn in (ex_doctor, ex_json_whole):
        return fn(j, res.rc, vaults=vaults)
    return fn(j, res.rc)


def dict_diff(a, b):
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return f"V={a!r} twin={b!r}"
    diffs = []
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            diffs.append(f"{k}: V={json.dumps(a.get(k), ensure_ascii=False)[:160]} twin={json.dumps(b.get(k), ensure_ascii=False)[:160]}")
    return "; ".join(diffs)[:700]


# ------------------------------------------------------------------ the runner
class Runner:
    def __init__(self, fixture, cases, work):
        self.fx, self.cases, self.work = fixture, cases, work
        self.V = os.path.join(work, "V", "vault")
        self.V0 = os.path.join(work, "V0", "vault")
        self.ctx = {}
        self.ctx0 = {}
        self.results = {}
        self.markers = {}
        self.mal_markers = dict(fixture["markers"]["malformed"])
        self.baseline = {}

    # ---------------- setup
    def new_card(self, vault, ctx, key, args, agent=None):
        r = alaya(vault, ["new", *args, "--json"], agent=agent)
        j = r.json()
        if r.rc != 0 or not isinstance(j, dict) or "id" not in j:
            WARN.append(f"setup new {key} ({agent or 'owner'}) failed rc={r.rc}: {r.text[:300]}")
            return
        self.put(ctx, key, j["id"], j.get("title") or "", j.get("path") or "")

    def put(self, ctx, key, id, title, path):
        ctx[f"{key}.id"] = id
        ctx[f"{key}.title"] = title
        ctx[f"{key}.path"] = path
        ctx[f"{key}.file"] = os.path.basename(path)
        ctx[f"{key}.path_q"] = urllib.parse.quote(path, safe="")
        ctx[f"{key}.id_upper"] = id.upper()
        ctx[f"{key}.id_prefix"] = id[:9]

    def ingest(self, vault, sess, agent=None):
        p = os.path.join(self.work, f"in-{os.path.basename(os.path.dirname(vault))}-{sess['id']}.json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(sess, f, ensure_ascii=False)
        r = alaya(vault, ["ingest", p, "--json"], agent=agent)
        if r.rc != 0:
            WARN.append(f"setup ingest {sess['id']} failed rc={r.rc}: {r.text[:300]}")

    def setup(self, vault, ctx, with_alice):
        os.makedirs(os.path.dirname(vault), exist_ok=True)
        r = alaya(vault, ["init", vault])
        if r.rc != 0:
            raise RuntimeError(f"alaya init failed: {r.text[:500]}")
        ctx["V"] = vault
        ctx["NOW_PLUS_2D"] = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
        ctx["ZH_ALIAS_Q"] = urllib.parse.quote("青鸾迁移", safe="")
        ctx["ZH_CTRL_Q"] = urllib.parse.quote("白鹭迁移", safe="")
        sh = self.fx["shared"]
        for key, args in sh["cards"].items():
            self.new_card(vault, ctx, key, args)
        for sess in sh["sessions"]:
            self.ingest(vault, sess)
        r = alaya(vault, ["distill", "--json"])
        if r.rc != 0:
            WARN.append(f"setup owner distill rc={r.rc}: {r.text[:300]}")
        self.new_card(vault, ctx, "B1", sh["bob_card"], agent="bob")
        if with_alice:
            self.setup_alice(vault, ctx)
        r = alaya(vault, ["new", "-", "--json"], stdin=json.dumps(sh["S8_json"]))
        j = r.json()
        if r.rc == 0 and isinstance(j, dict) and "id" in j:
            self.put(ctx, "S8", j["id"], j.get("title", ""), j.get("path", ""))
        else:
            WARN.append(f"setup S8 failed rc={r.rc}: {r.text[:300]}")
        r = alaya(vault, ["compile", "--json"])
        if r.rc not in (0,):
            WARN.append(f"setup compile rc={r.rc}: {r.text[:200]}")

    def plant(self, vault, rel, text):
        p = os.path.join(vault, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)

    def person_commit(self, vault, msg, paths=None):
        git(vault, "add", "-A", *(["--"] + paths if paths else []), check=True)
        p = subprocess.run(["git", "-C", vault, *PERSON, "commit", "-q", "-m", msg], capture_output=True, text=True)
        if p.returncode != 0 and "nothing to commit" not in p.stdout + p.stderr:
            WARN.append(f"person commit '{msg}' failed: {p.stderr.strip()[:300]}")

    def setup_alice(self, vault, ctx):
        self.plant(vault, "cards/fact/halcyon-ledger.md",
                   "---\nid: card-ha1c0de1\ntitle: Ledger reconciliation quirks\ntype: fact\nnamespace: alice\ntags: [finance]\n"
                   "claims:\n  - id: c1\n    text: The halcyon-ledger reconciliation job runs at 03:00 and skips weekends.\n    confidence: 0.8\n---\n"
                   "Reconciliation notes for halcyon-ledger. See [[Halcyon appendix that does not exist]].\n\n"
                   "The ledger admin password: Halc9!on-Ledger#7\n")
        self.plant(vault, "entities/Ysolde Varga.md",
                   "---\nid: ent-ysolde01\ntitle: Ysolde Varga\ntype: person\nnamespace: alice\naliases: [Dr. Varga]\n"
                   "lane: Kestrel-Orchid procurement\nclaims:\n  - {id: c1, text: Ysolde Varga approves every Kestrel-Orchid purchase above 5k., confidence: 0.9}\n---\n"
                   "Procurement lead for the Kestrel-Orchid programme.\n")
        self.plant(vault, "inbox/Tamarind-Vale offsite ideas.md",
                   "---\ntitle: Tamarind-Vale offsite ideas\nnamespace: alice\n---\nTamarind-Vale lodge fits 14 people; book before June.\n")
        # A5/A6 share a title with a shared card; `alaya new` refuses that for alice (ConflictError), so a person writes them
        self.plant(vault, "cards/gotcha/Quarterly access review.md",
                   "---\nid: card-a5acce55\ntitle: Quarterly access review\ntype: gotcha\nnamespace: alice\n"
                   "claims:\n  - id: c1\n    text: Umberfield contractors keep production access after the review by mistake.\n    confidence: 0.8\n---\n"
                   "Umberfield contractors are the ones to re-check after every review.\n")
        self.plant(vault, "cards/fact/Retry budget for the invoice exporter (card-c0ba1706).md",
                   "---\nid: card-c0ba1706\ntitle: Retry budget for the invoice exporter\ntype: fact\nnamespace: alice\n"
                   "claims:\n  - id: c1\n    text: The invoice exporter retries failed uploads three times with a 10 second backoff.\n    confidence: 0.8\n---\n"
                   "The invoice exporter retries failed uploads three times with a 10 second backoff, then writes the batch to the dead-letter folder. Cobaltwren batches depend on it.\n")
        self.put(ctx, "A5", "card-a5acce55", "Quarterly access review", "cards/gotcha/Quarterly access review.md")
        self.put(ctx, "A6", "card-c0ba1706", "Retry budget for the invoice exporter", "cards/fact/Retry budget for the invoice exporter (card-c0ba1706).md")
        self.person_commit(vault, "my notes for alice")
        alaya(vault, ["compile", "--json"])
        al = self.fx["alice"]
        for key, args in al["cards"].items():
            k = key.replace("_propose", "")
            self.new_card(vault, ctx, k, args, agent="alice")
        for sess in al["sessions"]:
            self.ingest(vault, sess, agent="alice")
        r = alaya(vault, ["distill", "--json"], agent="alice")
        j = r.json() or {}
        if r.rc != 0:
            WARN.append(f"setup alice distill rc={r.rc}: {r.text[:300]}")
        for s in j.get("sessions") or []:
            for cp in s.get("cards") or []:
                if "AD.id" not in ctx:
                    m = re.search(r"^id:\s*(\S+)", read_text(os.path.join(vault, cp)), re.M)
                    if m:
                        self.put(ctx, "AD", m.group(1), "", cp)
        if "AD.id" not in ctx:
            WARN.append("alice's distill produced no card; trace-distilled-alice-card uses A2 instead")
            if "A2.id" in ctx:
                self.put(ctx, "AD", ctx["A2.id"], ctx["A2.title"], ctx["A2.path"])
        for ln in al["links"]:
            r = alaya(vault, ["link", *fmt(ln, ctx), "--json"], agent="alice")
            if r.rc != 0:
                WARN.append(f"setup alice link {fmt(ln, ctx)[:2]} rc={r.rc}: {r.text[:200]}")
        for q in al["recalls"]:
            r = alaya(vault, ["recall", *q, "--json"], agent="alice")
            if "--save" in q:
                j = r.json() or {}
                sp = (j.get("saved") or {}).get("path")
                if sp:
                    ctx["AQ.path"] = sp
        r = alaya(vault, ["traverse", ctx.get("A1.id", "x"), "--depth", "1", "--save", "--json"], agent="alice")
        for fb in al["feedback"]:
            r = alaya(vault, ["feedback", *fmt(fb, ctx), "--json"], agent="alice")
            if r.rc != 0:
                WARN.append(f"setup alice feedback {fb[0]} rc={r.rc}: {r.text[:200]}")
        if "AQ.path" not in ctx:
            for rel in walk(vault):
                if rel.startswith("queries") and is_alice_ns(namespace_of(vault, rel)):
                    ctx["AQ.path"] = rel
                    break
        if "AQ.path" not in ctx:
            WARN.append("no saved query of alice found")
            ctx["AQ.path"] = "queries/none.md"

    def collect_markers(self):
        m = dict(self.fx["markers"]["core"])
        n = 0
        for rel in walk(self.V):
            if not rel.endswith(".md"):
                continue
            if is_alice_ns(namespace_of(self.V, rel)):
                mm = re.search(r"^id:\s*['\"]?([A-Za-z0-9_.-]+)", read_text(os.path.join(self.V, rel))[:4000], re.M)
                if mm and not rel.startswith("sessions") and mm.group(1) != "card-wrenf1e1":
                    m[f"alice_id:{rel}"] = mm.group(1)
                    n += 1
        if self.ctx.get("A11.id"):
            m["alice_id:proposal"] = self.ctx["A11.id"]
        self.markers = m
        return n

    # ---------------- running one action
    def run_action(self, act, ctx, vault, out_dir):
        act = fmt(act, ctx)
        if "seq" in act:
            parts = [self.run_action(a, ctx, vault, out_dir) for a in act["seq"]]
            r = Res(parts[-1].rc, "\n".join(p.out for p in parts), "\n".join(p.err for p in parts),
                    next((p.crashed for p in parts if p.crashed), None), "\n".join(p.extra for p in parts if p.extra))
            r.parts = parts
            return r
        if "cli" in act:
            for p, obj in (act.get("write_json") or {}).items():
                with open(p, "w", encoding="utf-8") as f:
                    json.dump(obj, f, ensure_ascii=False)
            for p, txt in (act.get("write_text") or {}).items():
                with open(p, "w", encoding="utf-8") as f:
                    f.write(txt)
            stdin = act.get("stdin")
            if act.get("stdin_json") is not None:
                stdin = json.dumps(act["stdin_json"], ensure_ascii=False)
            r = alaya(vault, act["cli"], agent=act.get("agent"), agent_env=act.get("agent_env"), env=act.get("env"), stdin=stdin)
            extra = []
            if act.get("read_saved"):
                j = r.json() or {}
                sp = (j.get("saved") or {}).get("path") if isinstance(j.get("saved"), dict) else None
                if not sp:
                    m = re.search(r"queries/[^\"\n]+?\.md", r.out)
                    sp = m.group(0) if m else None
                extra.append(f"== SAVED {sp}\n" + (read_text(os.path.join(vault, sp)) if sp else "<no saved note found>"))
            for rel in act.get("read_files") or []:
                extra.append(f"== FILE {rel}\n" + read_text(os.path.join(vault, rel)))
            for p in act.get("scan_paths") or []:
                extra.append(scan_path_text(p))
            r.extra = "\n".join(extra)
            return r
        if "read" in act:
            parts = []
            for g in act["read"]:
                for p in sorted(glob.glob(os.path.join(vault, g), recursive=True)):
                    if os.path.isdir(p):
                        continue
                    rel = os.path.relpath(p, vault)
                    if act.get("shared_only") and namespace_of(vault, rel) != "shared":
                        continue
                    parts.append(f"== FILE {rel}\n{read_text(p)}")
            return Res(0, "\n".join(parts) or "<no file>", "")
        if act.get("names"):
            names = [rel for rel in walk(vault) if rel.endswith(".md") and namespace_of(vault, rel) == "shared"]
            return Res(0, "\n".join(sorted(names)), "")
        if "git" in act:
            return self.git_scan(act["git"], vault)
        raise ValueError(f"unknown action {act}")

    def git_scan(self, what, vault):
        tracked = [p for p in git(vault, "-c", "core.quotepath=false", "ls-files").splitlines() if p]
        shared = [p for p in tracked if namespace_of(vault, p) == "shared" and os.path.exists(os.path.join(vault, p))]
        if what == "diffs":
            parts = []
            for p in shared:
                out = git(vault, "-c", "core.quotepath=false", "log", "-p", "--follow", "--format=%x00COMMIT %h", "--", p)
                parts.append(f"== HISTORY {p}\n{out}")
            return Res(0, "\n".join(parts), "")
        out = git(vault, "log", "--format=%x00COMMIT %h%n%B", "--", *shared)
        return Res(0, out, "")

    # ---------------- checks
    def mset(self, case):
        return self.mal_markers if case.get("markers") == "malformed" else self.markers

    def echo_of(self, case, ctx):
        e = list(fmt(case.get("echo") or [], ctx))
        chk = case.get("check") or {}
        for r in fmt(chk.get("probe_refs") or [], ctx):
            e += ref_parts(r)
        return e

    def no_leak(self, case, res, ctx, prefix=""):
        if res.crashed:
            return False, f"{prefix}crash ({res.crashed}): {res.text[-300:]}"
        hits = find_markers(res.text, self.mset(case), self.echo_of(case, ctx))
        if hits:
            return False, prefix + leak_reason(hits)
        return True, f"{prefix}no marker in {len(res.text)} chars (rc={res.rc})"

    def evaluate(self, case, res, ctx, vault, control=None, snap_before=None):
        chk = case.get("check") or {"type": "no_leak"}
        t = chk["type"]
        held, reason = self.no_leak(case, res, ctx)
        extra_fail = []
        if t == "same_as_missing" and control is not None:
            if control.crashed and held:
                extra_fail.append(f"control crashed ({control.crashed})")
            pr = norm(res.text, fmt(chk["probe_refs"], ctx), vaults=[vault])
            cr = norm(control.text, fmt(chk["control_refs"], ctx), vaults=[vault])
            if res.rc != control.rc:
                extra_fail.append(f"exit code {res.rc} vs {control.rc} for a missing ref")
            if pr != cr:
                extra_fail.append("differs from a missing ref: " + first_diff(pr, cr))
        elif t == "collision" and control is not None:
            j, jc = res.json(), control.json()
            path = (j or {}).get("path") if isinstance(j, dict) else None
            exp = fmt(chk["expect_path"], ctx)
            if res.rc not in (0, None) or not isinstance(j, dict) or not isinstance(jc, dict):
                extra_fail.append(f"probe rc={res.rc} (control rc={control.rc}): {res.text[:240]}")
            elif path != exp:
                extra_fail.append(f"file name alaya picked: {path!r} (expected {exp!r}; control got {(jc or {}).get('path')!r})")
            pr = norm(res.text, fmt(chk["probe_refs"], ctx), vaults=[vault])
            cr = norm(control.text, fmt(chk["control_refs"], ctx), vaults=[vault])
            if pr != cr and not extra_fail:
                extra_fail.append("differs from the control title: " + first_diff(pr, cr))
        elif t == "resolves_to":
            j = res.json()
            if not isinstance(j, dict) and res.out:
                try:
                    j = json.loads(res.out.split("\n", 1)[-1])
                except Exception:
                    j = None
            got = (j or {}).get("id") if isinstance(j, dict) else None
            if got != fmt(chk["id"], ctx):
                extra_fail.append(f"resolved to {got!r}, not the shared {fmt(chk['id'], ctx)!r} (rc={res.rc}): {norm(res.text)[:240]}")
        elif t == "eval_zero":
            # only the questions whose every expected id is alice's count (held_if); a question of those
            # missing from failed_cases scored recall@5 >= 0.6, i.e. found her card
            j = res.json()
            ds = next(iter((case["input"].get("write_json") or {}).values()), {})
            alice_ids = {v for k, v in self.markers.items() if k.startswith("alice_id:")}
            qs = [fmt(q, ctx) for q in ds.get("qa_pairs", [])]
            only = [q for q in qs if (q.get("expected_cards") or q.get("expected_path"))
                    and all(x in alice_ids for x in (q.get("expected_cards") or q.get("expected_path")))]
            failed = {fc.get("query"): fc.get("recall_at_5") for fc in (find_key(j, "failed_cases") or [])} if j is not None else {}
            if j is None:
                extra_fail.append(f"no eval answer (rc={res.rc}): {res.text[:200]}")
            for q in only:
                v = failed.get(q["query"], "not in failed_cases (recall@5 >= 0.6)")
                if v != 0:
                    extra_fail.append(f"recall@5 = {v} for {q['query']!r}, which only alice's cards answer (a hit says they exist)")
        elif t == "lint_link_oracle":
            parts = getattr(res, "parts", [])
            try:
                px = parts[0].json()["path"]
                py = parts[1].json()["path"]
                lj = parts[2].json()
                fx = sorted((f["code"], f["severity"], norm(f.get("message", ""), ["Q3"])) for f in lj["findings"] if f.get("path") == px)
                fy = sorted((f["code"], f["severity"], norm(f.get("message", ""), ["Q4"])) for f in lj["findings"] if f.get("path") == py)
                if fx != fy:
                    extra_fail.append(f"lint sees bob's link to alice's title differently: {fx} vs control {fy}"[:600])
            except Exception as e:
                extra_fail.append(f"could not read the lint answer ({e}): {res.text[:200]}")
        elif t == "note_active":
            j = res.json() or {}
            if res.rc != 0 or j.get("id") != ctx.get("S6.id") or str(j.get("path", "")).startswith("archive"):
                extra_fail.append(f"shared card not readable in place: rc={res.rc} id={j.get('id')!r} path={j.get('path')!r} {norm(res.text)[:200]}")
        elif t == "claim_supported":
            j = res.json() or {}
            cl = [c for c in (j.get("claims") or []) if c.get("id") == chk.get("claim")]
            if res.rc != 0 or not cl or cl[0].get("status") != "supported":
                extra_fail.append(f"shared claim now {cl[0].get('status') if cl else None!r} (rc={res.rc}): {json.dumps(cl, ensure_ascii=False)[:300]}")
            rels = json.dumps(j.get("relations") or [], ensure_ascii=False)
            if "CONTRADICTS" in rels:
                extra_fail.append(f"shared card gained a CONTRADICTS relation: {rels[:200]}")
        elif t == "review_survives":
            r2 = alaya(vault, ["review", "list", "--json"])
            if ctx.get("A11.id", "\0") not in r2.out:
                extra_fail.append(f"alice's proposal {ctx.get('A11.id')} is no longer pending after bob's reject --all (owner's review list: {r2.out[:200]!r})")
        elif t == "same_as_cli":
            r2 = self.run_action(chk["cli"], ctx, vault, None)
            a = extract(chk["extract"], res, [vault])
            b = extract(chk["extract"], r2, [vault])
            a.pop("rc", None)
            b.pop("rc", None)
            if a != b:
                extra_fail.append("MCP counts differ from bob's CLI at the same moment: " + dict_diff(a, b))
        if case.get("unchanged") and snap_before is not None:
            d = snap_diff(snap_before, alice_snapshot(vault))
            if d:
                extra_fail.append("alice's files touched: " + d)
        if extra_fail:
            return False, ("; ".join(extra_fail) + ("" if held else " | " + reason))[:900]
        return held, reason[:900]

    # ---------------- phases
    def cases_of(self, phase):
        return [c for c in self.cases if c.get("phase") == phase]

    def record(self, case, held, reason):
        self.results[case["id"]] = {"id": case["id"], "category": case["category"], "lang": case["lang"],
                                    "door": case["door"], "held": bool(held), "reason": reason}

    def run_simple(self, case, ctx=None, vault=None):
        ctx = ctx or self.ctx
        vault = vault or self.V
        out_dir = os.path.join(self.work, "out", case["id"])
        os.makedirs(out_dir, exist_ok=True)
        ctx = dict(ctx, OUT=out_dir)
        snap = alice_snapshot(vault) if case.get("unchanged") else None
        try:
            res = self.run_action(case["input"], ctx, vault, out_dir)
            control = None
            chk = case.get("check") or {}
            if chk.get("control") is not None:
                control = self.run_action(chk["control"], ctx, vault, out_dir)
            held, reason = self.evaluate(case, res, ctx, vault, control, snap)
        except Exception as e:
            held, reason = False, f"runner error: {type(e).__name__}: {e} {traceback.format_exc()[-400:]}"
        self.record(case, held, reason)

    def phase_count(self):
        for case in self.cases_of("count"):
            try:
                out_dir = os.path.join(self.work, "out", case["id"])
                os.makedirs(out_dir, exist_ok=True)
                snap = alice_snapshot(self.V) if case.get("unchanged") else None
                rv = self.run_action(case["input"], dict(self.ctx, OUT=out_dir), self.V, out_dir)
                r0 = self.run_action(case["input"], dict(self.ctx0, OUT=out_dir), self.V0, out_dir)
                held, reason = self.no_leak(case, rv, self.ctx)
                a = extract(case["check"]["extract"], rv, [self.V])
                b = extract(case["check"]["extract"], r0, [self.V0])
                fails = []
                if r0.crashed:
                    fails.append(f"twin run crashed ({r0.crashed})")
                if a != b:
                    fails.append("differs from the twin without alice: " + dict_diff(a, b))
                if snap is not None:
                    d = snap_diff(snap, alice_snapshot(self.V))
                    if d:
                        fails.append("alice's files touched: " + d)
                if fails:
                    held, reason = False, ("; ".join(fails) + ("" if held else " | " + reason))[:900]
                elif held:
                    reason = f"same as the twin ({json.dumps(a, ensure_ascii=False)[:200]}); " + reason
            except Exception as e:
                held, reason = False, f"runner error: {type(e).__name__}: {e} {traceback.format_exc()[-300:]}"
            self.record(case, held, reason)

    def phase_stale(self):
        cases = self.cases_of("stale")
        base = {}
        for c in cases:
            if c["check"]["what"] != "fresh":
                base[c["id"]] = self.run_action(c["input"], self.ctx, self.V, None)
        edits = [self.ctx.get("A8.path"), self.ctx.get("A1.path")]
        for rel in edits:
            if rel:
                with open(os.path.join(self.V, rel), "a", encoding="utf-8") as f:
                    f.write("\nHand edit by the owner: Marrowglen cap raised, Kestrel-Orchid window rechecked.\n")
        alice_paths = set(alice_snapshot(self.V))
        for c in cases:
            try:
                res = self.run_action(c["input"], self.ctx, self.V, None)
                held, reason = self.no_leak(c, res, self.ctx)
                fails = []
                what = c["check"]["what"]
                j = res.json() or {}
                if what in ("recall", "fresh"):
                    named = [p for p in (j.get("changed_notes") or []) if p in alice_paths or find_markers(str(p), self.markers)]
                    if named:
                        fails.append(f"changed_notes names alice's files: {named[:3]}")
                if what == "recall":
                    b = base[c["id"]].json() or {}
                    if j.get("stale") != b.get("stale"):
                        fails.append(f"stale went {b.get('stale')!r} → {j.get('stale')!r} after only alice's notes were edited")
                if what == "status":
                    b = base[c["id"]]
                    if res.rc != b.rc or find_key(j, "stale") != find_key(b.json() or {}, "stale"):
                        fails.append(f"status exit {b.rc}→{res.rc}, stale {find_key(b.json() or {}, 'stale')!r}→{find_key(j, 'stale')!r} after only alice's notes were edited")
                if what == "compile_check":
                    b = base[c["id"]]
                    if res.rc != b.rc or norm(res.text) != norm(b.text):
                        fails.append(f"compile --check exit {b.rc}→{res.rc} after only alice's notes were edited: {norm(res.text)[:200]}")
                if fails:
                    held, reason = False, ("; ".join(fails) + ("" if held else " | " + reason))[:900]
            except Exception as e:
                held, reason = False, f"runner error: {e}"
            self.record(c, held, reason)
        self.person_commit(self.V, "hand edits of alice's notes")
        alaya(self.V, ["compile", "--json"])

    def plant_malformed(self):
        self.plant(self.V, "cards/fact/Wrenfield contract.md",
                   "---\nid: card-wrenf1e1\ntitle: Wrenfield contract\nnamespace: alice\n"
                   "claims: [{text: \"Wrenfield renews in May\", confidence: 0.7\n---\nWrenfield renewal terms, six pages.\n")
        self.person_commit(self.V, "alice's contract note, edited by hand")
        alaya(self.V, ["compile", "--json"])

    def owner_maintenance(self):
        r = alaya(self.V, ["introspect", "--json"], env={"ALAYA_NOW": self.ctx["NOW_PLUS_2D"]})
        if r.rc != 0:
            WARN.append(f"owner introspect rc={r.rc}: {r.text[-300:]}")
        r = alaya(self.V, ["lint", "--write-report", "--commit"])
        if r.crashed:
            WARN.append(f"owner lint --write-report crashed: {r.text[-200:]}")

    # ---------------- MCP
    async def mcp_group(self, server, cases):
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        errpath = os.path.join(self.work, f"mcp-{abs(hash(server))}.err")
        errlog = open(errpath, "w+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(command=ALAYA, args=["--vault", self.V, "mcp", "--agent", server], env=base_env())
        done = set()

        async def op(session, spec, ctx):
            spec = fmt(spec, ctx)
            pos = os.path.getsize(errpath)
            text, err = "", False
            try:
                if "list" in spec:
                    if spec["list"] == "tools":
                        r = await session.list_tools()
                    elif spec["list"] == "resources":
                        r = await session.list_resources()
                        r2 = await session.list_resource_templates()
                        text = json.dumps(r2.model_dump(mode="json"), ensure_ascii=False)
                    else:
                        r = await session.list_prompts()
                    text = json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" + text
                elif "resource" in spec:
                    r = await asyncio.wait_for(session.read_resource(spec["resource"]), 180)
                    text = "\n".join(getattr(c, "text", "") or "" for c in r.contents)
                elif "tool" in spec:
                    r = await asyncio.wait_for(session.call_tool(spec["tool"], spec.get("args") or {}), 180)
                    err = bool(getattr(r, "is_error", False) or getattr(r, "isError", False))
                    text = "\n".join(getattr(c, "text", "") or "" for c in r.content)
                elif "prompt" in spec:
                    r = await asyncio.wait_for(session.get_prompt(spec["prompt"], spec.get("args") or {}), 180)
                    text = "\n".join(getattr(m.content, "text", "") or "" for m in r.messages)
            except Exception as e:
                err, text = True, f"ERROR {type(e).__name__}: {e}"
            errlog.flush()
            with open(errpath, encoding="utf-8", errors="replace") as f:
                f.seek(pos)
                delta = f.read()
            crashed = "server traceback" if "Traceback (most recent call last)" in delta else None
            res = Res(1 if err else 0, text, "", crashed)
            return res

        try:
            async with stdio_client(params, errlog=errlog) as (rd, wr):
                async with ClientSession(rd, wr) as session:
                    await asyncio.wait_for(session.initialize(), 120)
                    for case in cases:
                        ctx = dict(self.ctx)
                        snap = alice_snapshot(self.V) if case.get("unchanged") else None
                        try:
                            res = await op(session, case["input"]["mcp"], ctx)
                            control = None
                            chk = case.get("check") or {}
                            if chk.get("control") is not None:
                                control = await op(session, chk["control"]["mcp"], ctx)
                            held, reason = self.evaluate(case, res, ctx, self.V, control, snap)
                        except Exception as e:
                            held, reason = False, f"runner error: {type(e).__name__}: {e}"
                        self.record(case, held, reason)
                        done.add(case["id"])
        except BaseException as e:  # the server did not start or died
            errlog.flush()
            tail = read_text(errpath)[-600:]
            for case in cases:
                if case["id"] in done:
                    continue
                crashed = "Traceback (most recent call last)" in tail
                res = Res(2, f"MCP server for agent {server!r} not usable: {type(e).__name__}: {e}", tail,
                          "server traceback" if crashed else None)
                if server == "bob":
                    self.record(case, False, f"crash: bob's MCP server failed: {type(e).__name__}: {e} {tail[-300:]}")
                else:
                    held, reason = self.no_leak(case, res, self.ctx, prefix="server refused/unusable — ")
                    self.record(case, held, reason)
        finally:
            errlog.close()

    def phase_mcp(self):
        groups = {}
        for c in self.cases_of("mcp"):
            groups.setdefault(c["input"]["server"], []).append(c)
        for server, cs in groups.items():
            try:
                asyncio.run(asyncio.wait_for(self.mcp_group(server, cs), 400))
            except BaseException as e:
                for c in cs:
                    if c["id"] not in self.results:
                        self.record(c, False, f"runner/MCP error: {type(e).__name__}: {e}")

    # ---------------- serve
    def start_serve(self, pinned):
        sj = os.path.join(self.V, ".alaya", "serve.json")
        if os.path.exists(sj):
            os.remove(sj)
        args = [ALAYA, "--vault", self.V, "serve", "--no-watch", "--no-introspect"] + (["--agent", "bob"] if pinned else [])
        logf = open(os.path.join(self.work, f"serve-{'pinned' if pinned else 'open'}.log"), "w")
        proc = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, env=base_env(), start_new_session=True)
        for _ in range(240):
            time.sleep(0.25)
            if os.path.exists(sj):
                try:
                    info = json.load(open(sj))
                    if info.get("url"):
                        return proc, info["url"]
                except Exception:
                    pass
            if proc.poll() is not None:
                break
        return proc, None

    def stop_serve(self, proc):
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def http_call(self, url, spec):
        u = urllib.parse.urlparse(url)
        try:
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
            body = None if spec.get("json") is None else json.dumps(spec["json"], ensure_ascii=False).encode()
            conn.putrequest(spec.get("method", "POST"), spec.get("path", "/recall"))
            for k, v in spec.get("headers") or []:
                conn.putheader(k, v)
            if body is not None:
                conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            r = conn.getresponse()
            data = r.read().decode("utf-8", "replace")
            conn.close()
            return Res(0 if r.status < 400 else 1, f"HTTP {r.status}\n{data}", "", "HTTP 5xx" if r.status >= 500 else None)
        except Exception as e:
            return Res(None, "", f"connection error: {type(e).__name__}: {e}", f"connection error: {e}")

    def phase_serve(self, pinned):
        phase = "serve_pinned" if pinned else "serve_unpinned"
        cases = self.cases_of(phase)
        proc, url = self.start_serve(pinned)
        try:
            for c in cases:
                if url is None:
                    self.record(c, False, "crash: alaya serve did not start: " + read_text(os.path.join(self.work, f"serve-{'pinned' if pinned else 'open'}.log"))[-300:])
                    continue
                inp = c["input"]
                try:
                    if "http" in inp:
                        res = self.http_call(url, fmt(inp["http"], self.ctx))
                        control = None
                        if (c.get("check") or {}).get("control") is not None:
                            control = self.http_call(url, fmt(c["check"]["control"]["http"], self.ctx))
                        held, reason = self.evaluate(c, res, self.ctx, self.V, control, None)
                        self.record(c, held, reason)
                    else:
                        self.run_simple(c)
                except Exception as e:
                    self.record(c, False, f"runner error: {e}")
        finally:
            self.stop_serve(proc)

    # ---------------- sync
    def phase_sync(self):
        if git(self.V, "status", "--porcelain").strip():
            self.person_commit(self.V, "leftovers before sync")
            WARN.append("the vault had uncommitted changes before sync; committed them as a person")
        branch = git(self.V, "rev-parse", "--abbrev-ref", "HEAD").strip() or "main"
        R = os.path.join(self.work, "remote.git")
        V2 = os.path.join(self.work, "machine2")
        subprocess.run(["git", "clone", "-q", "--bare", self.V, R], capture_output=True)
        git(self.V, "remote", "add", "origin", R, check=True)
        git(self.V, "fetch", "-q", "origin", check=True)
        git(self.V, "branch", "-u", f"origin/{branch}", branch, check=True)
        subprocess.run(["git", "clone", "-q", R, V2], capture_output=True)

        def retitle(vault, rel, suffix):
            p = os.path.join(vault, rel)
            t = read_text(p)
            t2 = re.sub(r"^title: (.*)$", lambda m: f"title: {m.group(1).strip(chr(39)).strip(chr(34))} {suffix}", t, count=1, flags=re.M)
            with open(p, "w", encoding="utf-8") as f:
                f.write(t2)

        for rel, suf in ((self.ctx.get("A1.path"), "(Thistlewick rev B)"), (self.ctx.get("S7.path"), "(machine 2)")):
            if rel:
                retitle(V2, rel, suf)
        self.person_commit(V2, "edits on machine 2")
        subprocess.run(["git", "-C", V2, "push", "-q", "origin", branch], capture_output=True)
        for rel, suf in ((self.ctx.get("A1.path"), "(rev A)"), (self.ctx.get("S7.path"), "(machine 1)")):
            if rel:
                retitle(self.V, rel, suf)
        self.person_commit(self.V, "edits on machine 1")
        for c in self.cases_of("sync"):
            self.run_simple(c)
        for c in self.cases_of("sync_after"):
            self.run_simple(c)

    # ---------------- all
    def run(self):
        t0 = time.time()
        timings = {}
        self.setup(self.V, self.ctx, True)
        timings["setup_V"] = round(time.time() - t0, 1)
        t = time.time()
        self.setup(self.V0, self.ctx0, False)
        timings["setup_V0"] = round(time.time() - t, 1)
        n_ids = self.collect_markers()
        self.ctx.setdefault("A11.id", "card-nonexist")
        steps = [("count", self.phase_count), ("stale", self.phase_stale), ("plant_malformed", self.plant_malformed),
                 ("introspect", lambda: [self.run_simple(c) for c in self.cases_of("introspect")]),
                 ("owner_maintenance", self.owner_maintenance),
                 ("main_read", lambda: [self.run_simple(c) for c in self.cases_of("main_read")]),
                 ("mcp", self.phase_mcp), ("serve_unpinned", lambda: self.phase_serve(False)),
                 ("serve_pinned", lambda: self.phase_serve(True)),
                 ("main_write", lambda: [self.run_simple(c) for c in self.cases_of("main_write")]),
                 ("late", lambda: [self.run_simple(c) for c in self.cases_of("late")]),
                 ("files", lambda: [self.run_simple(c) for c in self.cases_of("files")]),
                 ("git", lambda: [self.run_simple(c) for c in self.cases_of("git")]),
                 ("sync", self.phase_sync)]
        for name, fn in steps:
            t = time.time()
            try:
                fn()
            except Exception as e:
                WARN.append(f"phase {name} aborted: {type(e).__name__}: {e} {traceback.format_exc()[-500:]}")
            timings[name] = round(time.time() - t, 1)
        for c in self.cases:
            if c["id"] not in self.results:
                self.record(c, False, "not run (its phase aborted; see setup_warnings)")
        timings["total"] = round(time.time() - t0, 1)
        return timings, n_ids


def summarise(cases, results, timings, n_ids, version):
    rows = [results[c["id"]] for c in cases]

    def tally(key):
        d = {}
        for r in rows:
            e = d.setdefault(r[key], {"cases": 0, "held": 0, "failed": 0})
            e["cases"] += 1
            e["held" if r["held"] else "failed"] += 1
        return dict(sorted(d.items()))

    held = sum(r["held"] for r in rows)
    return {
        "set": "namespace-blind1",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "alaya": ALAYA, "alaya_version": version,
        "totals": {"cases": len(rows), "held": held, "failed": len(rows) - held,
                   "crashed": sum(1 for r in rows if r["reason"].startswith("crash") or "crash (" in r["reason"]),
                   "doors": len({r["door"] for r in rows})},
        "by_category": tally("category"), "by_lang": tally("lang"),
        "alice_note_ids_used_as_markers": n_ids,
        "timings_s": timings, "setup_warnings": WARN,
        "cases": [{"id": r["id"], "held": r["held"], "reason": r["reason"]} for r in rows],
    }


def main():
    global ALAYA
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alaya", default=DEFAULT_ALAYA)
    ap.add_argument("--json-out")
    ap.add_argument("--keep", action="store_true", help="keep the temporary vaults (path printed on stderr)")
    a = ap.parse_args()
    ALAYA = a.alaya
    work = tempfile.mkdtemp(prefix="alaya-nsblind-")
    summary = None
    try:
        fixture = json.load(open(os.path.join(HERE, "fixture.json"), encoding="utf-8"))
        cases = json.load(open(os.path.join(HERE, "cases.json"), encoding="utf-8"))["cases"]
        try:
            version = subprocess.run([ALAYA, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
        except Exception as e:
            version = f"unknown ({e})"
        r = Runner(fixture, cases, work)
        try:
            timings, n_ids = r.run()
        except Exception as e:
            WARN.append(f"fatal: {type(e).__name__}: {e} {traceback.format_exc()[-800:]}")
            for c in cases:
                if c["id"] not in r.results:
                    r.record(c, False, f"not run: fatal runner/setup error: {e}")
            timings, n_ids = {}, 0
        summary = summarise(cases, r.results, timings, n_ids, version)
    except Exception as e:
        summary = {"set": "namespace-blind1", "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
    finally:
        if a.keep:
            print(f"vaults kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(summary, ensure_ascii=False, indent=1)
    print(text)
    if a.json_out:
        with open(a.json_out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        traceback.print_exc()
    sys.exit(0)
