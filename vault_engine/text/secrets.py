"""Secrets in text — API keys, tokens, private keys, passwords — found, redacted and masked.

One detector for every door (docs/security.md): ingest, capture and MCP ingest redact before
anything is written (the raw file too), distill never writes one into a card, the compiler
masks what a hand-written note still holds before it reaches a recall snippet, `show`,
`context`, `trace` and the MCP tools mask their output, and lint's `secret-detected` reports
what is left in the vault.

Two sources of rules:
- **detect-secrets** (Yelp, maintained): the patterns of its regex plugins — AWS, Azure,
  Artifactory, basic auth in URLs, Discord, GitHub, GitLab, IBM, JWT, Mailchimp, npm, OpenAI,
  PyPI, SendGrid, Slack, Square, Stripe, Telegram, Twilio … — loaded once, lazily (the
  library imports `requests`: ~0.3 s, paid only by commands that look for secrets);
- **our own**: token forms it lacks or gets wrong (`sk-proj-…`, `github_pat_…`, `glsa_…`,
  whole PEM blocks, credentials in any URL), `KEY=value` assignments, and the phrases people
  type — English ("the db password is …", "token: …") and Chinese ("密码是 …", "初始密码 …",
  "口令：…"). A phrase counts only when its value looks like a credential (a digit or a
  symbol, mixed case, or a long run of digits), so "the password is stored in Vault" and
  "密码是否正确" are left alone.

A false positive costs a reviewer a glance at `[REDACTED:…]`; a false negative leaks a
credential into git, where it stays.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from typing import Any

MARK = "[REDACTED:{kind}]"
# a credential's characters: no space, no quote or bracket closing it, no CJK (Chinese text
# often runs on right after the value without a space)
_V = r"[^\s'\"`“”‘’「」『』（）()\[\]{}<>，。；、！？：,;\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
_VALUE = rf"(?P<v>{_V}{{4,200}})"

OWN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)")),
    ("openai-key", re.compile(
        r"\bsk-(?:proj-|ant-(?:api\d\d-)?|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("grafana-token", re.compile(r"\bgl(?:sa|c)_[A-Za-z0-9_+/=-]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9a-zA-Z]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)")),
    ("basic-auth", re.compile(  # Authorization: Basic base64(user:password)
        r"(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")),
    ("url-credentials", re.compile(
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://[^\s:/@'\"`]*:(?P<v>[^\s/@'\"`]{3,200})@")),
    ("password", re.compile(  # KEY=value, KEY: value, "key": "value"
        r"(?i)(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?key|"
        r"private[_-]?key|auth[_-]?key|token|credentials?)[\w.-]*\\?['\"]?[ \t]*[:=][ \t]*"
        rf"\\?['\"]?{_VALUE}")),
    ("password", re.compile(  # the db password is …, the token was …
        r"(?i)\b(?:password|passwd|passphrase|passcode|api[ -]?key|access key|secret key|"
        r"token|secret|pin)\s+(?:(?:for|of)\s+\S+\s+)?(?:is|was|are|=|:)\s+(?:now\s+)?"
        rf"['\"`“]?{_VALUE}")),
    ("password", re.compile(  # 数据库密码是 …，初始密码 …，口令：…
        r"(?:密码|口令|密钥|秘钥|私钥|令牌|凭据|凭证)"
        r"(?:\s*(?:是|为|:|=|：)\s*|\s*(?:改成了?|改为|设为|设置为|换成了?)\s*|\s+)"
        rf"['\"`“「]?{_VALUE}")),
    ("password", re.compile(  # token 是 …，API key 改成 …
        r"(?i)(?:token|api ?key|secret|password)\s*(?:是|为|改成了?|改为|设为|设置为|换成了?)\s*"
        rf"['\"`“「]?{_VALUE}")),
)
_GROUPED = {"bearer-token", "basic-auth", "url-credentials", "password"}  # only group `v` is the secret
_PLACEHOLDER_RE = re.compile(
    r"^(?:[<{$%*•.#_-]|x{3,}|redacted|\[redacted|none$|null$|true$|false$|example|your)",
    re.I)
# code, not a value: a call or an index, a shell variable ($DB_PASS, ${X}, $(cmd)), an attribute
# path (os.environ…); a `$` inside a word ("My$qlR00t#88") is just a symbol
_CODE_RE = re.compile(r"[()\[\]{}]|^\$|\$[{(]|^(?:os|process|env|self|this|config|settings)\.",
                      re.I)
_TRAIL = ".,;:!?)>]}*\\"
# Every rule above and every detect-secrets plugin needs one of these: a keyword, a known
# prefix, a URL, or a long run of token characters. Text without any is skipped at the cost
# of one search (most of a conversation), which keeps the compiler's masking cheap.
_TRIGGER = re.compile(
    r"(?i)sk-|gh[pousr]_|github_pat|glpat|gl(?:sa|c)_|akia|asia|abia|acca|xox|hooks\.slack|"
    r"aiza|_live_|_test_|eyj|bearer|basic|://|private|pass|pwd|secret|key|token|credential|auth|"
    r"\bpin\b|密码|口令|密钥|秘钥|私钥|令牌|凭据|凭证|[A-Za-z0-9+/=_-]{20}|"
    r"(?=[A-Za-z+/_-]*\d)[A-Za-z0-9+/_-]{10}")

# detect-secrets plugins we do not take: high-entropy strings flag every checksum (a session's
# raw_sha256), keywords are our `password` rules, a public IP is not a credential
_SKIPPED_PLUGINS = {"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector",
                    "IPPublicDetector"}
_LIBRARY: list[tuple[str, re.Pattern[str]]] | None = None


def _library_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """(kind, pattern) of every detect-secrets regex plugin, loaded on first use."""
    global _LIBRARY
    if _LIBRARY is None:
        try:
            from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        except ImportError:  # an install without it still has our own rules
            _LIBRARY = []
            return _LIBRARY
        out: list[tuple[str, re.Pattern[str]]] = []
        mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
        for secret_type, cls in sorted(mapping.items()):
            if cls.__name__ in _SKIPPED_PLUGINS:
                continue
            kind = re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
            for pattern in getattr(cls, "denylist", ()) or ():
                if isinstance(pattern, re.Pattern):
                    out.append((kind, pattern))
        _LIBRARY = out
    return _LIBRARY


@dataclasses.dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int
    end: int


def _credential_like(value: str) -> bool:
    """Is a phrase's value a credential rather than a word ("stored", "required", "是否")?"""
    if len(value) < 4 or _PLACEHOLDER_RE.match(value) or _CODE_RE.search(value):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(not c.isalnum() for c in value)
    if digits and not letters and not symbols:
        return len(value) >= 6  # a PIN or numeric password, not a port or a year
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if not digits and not mixed and all(c.isalnum() or c in "-_." for c in value):
        return False  # a name: release-bot-slack, db_password, my.secret
    return (letters and (digits or symbols)) or (mixed and len(value) >= 8) or \
        (digits and symbols)


def _basic_credentials(value: str) -> bool:
    """Does `value` decode as HTTP Basic credentials ("user:password")?"""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = decoded.decode("utf-8", "replace")
    return ":" in text and text.isprintable() and len(text.split(":", 1)[1]) >= 1


def _own_hits(text: str) -> Iterator[SecretHit]:
    for kind, pattern in OWN:
        for m in pattern.finditer(text):
            if kind in _GROUPED and m.groupdict().get("v") is not None:
                value = m.group("v").rstrip(_TRAIL)
                if kind in ("password", "url-credentials") and not _credential_like(value):
                    continue
                if kind == "basic-auth" and not _basic_credentials(value):
                    continue
                start = m.start("v")
                yield SecretHit(kind, start, start + len(value))
            else:
                yield SecretHit(kind, m.start(), m.end())


def _library_hits(text: str) -> Iterator[SecretHit]:
    for kind, pattern in _library_patterns():
        for m in pattern.finditer(text):
            start, end = m.span()
            groups = [i for i in range(1, (pattern.groups or 0) + 1) if m.group(i)]
            if groups:  # the secret is the longest group when it is long enough
                best = max(groups, key=lambda i: len(m.group(i)))
                if len(m.group(best)) >= 8:
                    start, end = m.span(best)
            if end > start:
                yield SecretHit(kind, start, end)


# A run of this many characters without a space is a blob (a pasted base64 image, a minified
# bundle, padding), not prose. Inside one, only the stretches around a credential marker are
# scanned, so a 50 MB session costs a few substring searches over its blobs instead of every
# pattern at every offset.
_BLOB_RUN = 4096
_BLOB_RE = re.compile(rf"\S{{{_BLOB_RUN},}}")
_MARKERS = ("pass", "pwd", "secret", "key", "token", "auth", "credential", "bearer", "basic",
            "sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "glpat",
            "xox", "eyj", "begin", "://", "aiza", "_live_", "_test_", "密码", "口令", "密钥",
            "秘钥", "私钥", "令牌", "凭据", "凭证")
_WINDOW = 2048


def _segments(text: str) -> list[tuple[int, int]]:
    """The spans of `text` worth scanning: all of it but the parts of its blobs far from any
    credential marker."""
    if len(text) < _BLOB_RUN or not _BLOB_RE.search(text):
        return [(0, len(text))]
    spans: list[tuple[int, int]] = []
    pos = 0
    for blob in _BLOB_RE.finditer(text):
        start, end = blob.span()
        spans.append((pos, start))
        lowered = text[start:end].lower()
        for marker in _MARKERS:
            at = lowered.find(marker)
            while at >= 0:
                spans.append((start + max(0, at - _WINDOW),
                              start + min(end - start, at + len(marker) + _WINDOW)))
                at = lowered.find(marker, at + len(marker) + _WINDOW)
        pos = end
    spans.append((pos, len(text)))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(s for s in spans if s[1] > s[0]):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret in `text`, as non-overlapping spans (our rules win an overlap: they know
    where a value ends)."""
    if not text or not _TRIGGER.search(text):
        return []
    hits: list[SecretHit] = []
    for lo, hi in _segments(text):
        part = text if (lo, hi) == (0, len(text)) else text[lo:hi]
        for hit in (*_own_hits(part), *_library_hits(part)):
            hit = SecretHit(hit.kind, hit.start + lo, hit.end + lo)
            if any(h.start < hit.end and hit.start < h.end for h in hits):
                continue
            hits.append(hit)
    return sorted(hits, key=lambda h: h.start)


def redact(text: str) -> str:
    out, pos = [], 0
    for hit in find_secrets(text):
        out.append(text[pos:hit.start])
        out.append(MARK.format(kind=hit.kind))
        pos = hit.end
    out.append(text[pos:])
    return "".join(out)


def has_secret(text: str) -> bool:
    return bool(find_secrets(text))


def mask(value: Any) -> Any:
    """A JSON-like value with every string redacted (what `show`, `trace`, `context` and the
    MCP tools print)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: mask(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask(v) for v in value]
    return value


# -- session inputs -------------------------------------------------------------------------

def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _values(strings: Iterator[str]) -> set[str]:
    return set(_found(strings))


def _found(strings: Iterator[str]) -> dict[str, str]:
    """Every secret value in `strings`, with its kind — one scan of each string."""
    return {s[h.start:h.end]: h.kind for s in strings for h in find_secrets(s)}


def _survives(document: str, values: set[str]) -> bool:
    """Does any of `values` still occur in a string of the JSON `document`?"""
    if not values:
        return False
    return any(v in s for s in _strings(json.loads(document)) for v in values)


def _replace_values(text: str, values: set[str], kinds: dict[str, str]) -> str:
    """Every occurrence of each secret value — as written, and as JSON writes it escaped —
    replaced by its mark; longest first, so a value inside another goes with it."""
    for value in sorted(values, key=len, reverse=True):
        mark = MARK.format(kind=kinds.get(value, "secret"))
        for form in {value, json.dumps(value, ensure_ascii=False)[1:-1],
                     json.dumps(value)[1:-1]}:
            if form:
                text = text.replace(form, mark)
    return text



def redact_input(data: bytes) -> bytes:
    """A session input (JSON, JSONL or a text transcript) with every secret replaced, in its
    own format: the raw file kept beside the note is redacted too, and still parses to the
    same turns. For JSON, each secret is found in the decoded strings and replaced where it
    sits in the bytes (escaped or not), so the rest of the file stays byte for byte; if a
    secret would survive that (an escape split it), the document is written out again."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data  # not text: ingest refuses it with its own error
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):  # a JSON document (an export is an array) or JSONL
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if obj is not None:
            found = _found(_strings(obj))
            out = _replace_values(text, set(found), found)
            try:
                if not _survives(out, set(found)):
                    return out.encode("utf-8")
            except ValueError:
                pass
            return (json.dumps(mask(obj), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        lines = text.splitlines(keepends=True)
        out_lines = []
        for line in lines:
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                out_lines.append(redact(line))  # ingest reports the bad line itself
                continue
            if row is None:
                out_lines.append(line)
                continue
            found = _found(_strings(row))
            new = _replace_values(line, set(found), found)
            try:
                clean = not _survives(new, set(found))
            except ValueError:
                clean = False
            out_lines.append(new if clean else json.dumps(mask(row), ensure_ascii=False)
                             + ("\n" if line.endswith("\n") else ""))
        return "".join(out_lines).encode("utf-8")
    return redact(text).encode("utf-8")
