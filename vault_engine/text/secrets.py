"""Secrets in text: API keys, tokens, private keys, passwords — found and redacted.

Used by `ingest --redact` (before anything is written) and by lint's secret-detected rule.
Patterns are specific on purpose (known key prefixes, PEM blocks, `password=` assignments):
a false positive costs a reviewer a glance, a false negative leaks a credential.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]+?"
                               r"-----END (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b")),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*")),
    ("password", re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|token)\s*[:=]\s*['\"]?[^\s'\"]{6,}")),
)


@dataclasses.dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int
    end: int


def find_secrets(text: str) -> list[SecretHit]:
    hits: list[SecretHit] = []
    for kind, pattern in PATTERNS:
        for m in pattern.finditer(text):
            if not any(h.start <= m.start() < h.end for h in hits):
                hits.append(SecretHit(kind, m.start(), m.end()))
    return sorted(hits, key=lambda h: h.start)


def redact(text: str) -> str:
    out, pos = [], 0
    for hit in find_secrets(text):
        out.append(text[pos:hit.start])
        out.append(f"[REDACTED:{hit.kind}]")
        pos = hit.end
    out.append(text[pos:])
    return "".join(out)


def redact_session(session: Any) -> Any:
    """A copy of an ingest.SessionIn with every turn and the raw bytes redacted."""
    turns = tuple(dataclasses.replace(t, content=redact(t.content)) for t in session.turns)
    raw = redact(session.raw.decode("utf-8", errors="replace")).encode("utf-8")
    return dataclasses.replace(session, turns=turns, raw=raw)
