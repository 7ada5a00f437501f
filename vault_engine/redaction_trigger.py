"""The redactor's first step: does a text hold anything a rule could match at all?

Kept apart from vault_engine/redaction.py so that a one-shot recall, which logs its query
(telemetry.py), pays for the rules only when the query holds a keyword, a known token
prefix, a URL, a flag or a long run of token characters: a few substring searches.
"""

from __future__ import annotations

import re

# full-width ASCII and the ideographic space folded one character for one (offsets stay)
_FOLD = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def fold(text: str) -> str:
    return text.translate(_FOLD)


# Every rule needs one of these: a keyword, a known prefix, a URL, a flag, or a long run of
# token characters with a digit. Text without any is skipped at the cost of a few substring
# searches of its lower-cased copy (most of a conversation): a regular expression with this
# many alternatives costs ~70 µs a turn, the substring searches a tenth of it.
_KEYS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "glpat-", "glcbt-",
         "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "gloas-", "glsoat-", "glffct-",
         "glagent-", "glsa_", "glc_", "akia", "asia", "abia", "acca", "xox", "aiza", "_live_",
         "_test_", "eyj", "bearer", "://", "-----begin", "auth", "cookie", "pass", "pwd",
         "token", "secret", "credential", "key", "private", "login", "log in", "log-in",
         "密码", "口令", "密钥", "秘钥", "私钥", "令牌", "凭据", "凭证", "暗码", "授权码")
_FLAG_OR_PIN = re.compile(r"(?:^|[\s'\"`])-[pau]|\bpin\b")
_RUN = re.compile(r"[A-Za-z0-9+/=_-]{10,}")
_DIGIT = re.compile(r"\d")
_PGPASS_LINE = re.compile(r"(?m)^[^:\s]+:(?:\d+|\*):[^:\s]+:[^:\s]+:\S")


def triggered(text: str) -> bool:
    low = fold(text).lower()
    if any(k in low for k in _KEYS):
        return True
    if ("-" in text or "pin" in low) and _FLAG_OR_PIN.search(low):
        return True
    if any(len(m.group(0)) >= 20 or _DIGIT.search(m.group(0)) for m in _RUN.finditer(text)):
        return True
    return ":" in text and bool(_PGPASS_LINE.search(text))


