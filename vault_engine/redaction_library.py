"""The redactor's borrowed rules and its budget (vault_engine/redaction.py).

- the regex plugins of detect-secrets (Yelp, maintained), loaded once per process — from this
  machine's cache of their patterns when it has one, since importing the library costs
  0.1–0.3 s (it imports `requests`);
- which stretches of a huge text are worth scanning at all: a 50 MB session of pasted blobs
  costs a few substring searches, not every rule at every offset.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# detect-secrets plugins we do not take: high-entropy strings flag every checksum, keywords
# are our clause rules, a public IP is not a credential, basic auth is our URL rule (it
# flags templates like USER:PASSWORD@HOST)
_SKIPPED_PLUGINS = {"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector",
                    "IPPublicDetector", "BasicAuthDetector"}
_LIBRARY: list[tuple[str, re.Pattern[str]]] | None = None


def library_cache() -> Path | None:
    """Where this machine keeps the plugins' patterns (importing detect-secrets costs 0.1–0.3 s,
    it imports `requests`; a one-shot recall that logs its query should not pay that): keyed by
    the installed package's location and time, so an upgrade reads them afresh."""
    import hashlib
    import importlib.util

    spec = importlib.util.find_spec("detect_secrets")
    if spec is None or not spec.origin:
        return None
    plugins = Path(spec.origin).parent / "plugins"
    try:
        stamp = f"{plugins}:{plugins.stat().st_mtime_ns}:{sorted(_SKIPPED_PLUGINS)}"
    except OSError:
        return None
    env = os.environ.get("ALAYA_CACHE_DIR")
    xdg = os.environ.get("XDG_CACHE_HOME")
    folder = Path(env) if env else Path(xdg) / "alaya" if xdg else Path.home() / ".cache" / "alaya"
    return folder / f"detect-secrets-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}.json"


def library_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """(kind, pattern) of every detect-secrets regex plugin, loaded on first use (from this
    machine's cache of them when it has one)."""
    global _LIBRARY
    if _LIBRARY is not None:
        return _LIBRARY
    import json

    cache = library_cache()
    try:
        if cache is not None and cache.exists():
            rows = json.loads(cache.read_text(encoding="utf-8"))
            _LIBRARY = [(str(k), re.compile(str(p), int(f))) for k, p, f in rows]
            return _LIBRARY
    except (OSError, ValueError, TypeError, re.error):
        pass
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
        if cache is not None:
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps([(k, p.pattern, p.flags) for k, p in out]),
                               encoding="utf-8")
                os.replace(tmp, cache)
            except OSError:  # no cache: the next process imports the library again
                pass
    return _LIBRARY


# A run of this many characters without a space is a blob (a pasted base64 image, a minified
# bundle), not prose: only the stretches around a credential marker are scanned.
_BLOB_RUN = 4096
_BLOB_RE = re.compile(rf"\S{{{_BLOB_RUN},}}")
_MARKERS = ("pass", "pwd", "secret", "key", "token", "auth", "credential", "bearer", "basic",
            "sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "gl",
            "xox", "eyj", "begin", "://", "aiza", "_live_", "_test_", "cookie", "密码", "口令",
            "密钥", "秘钥", "私钥", "令牌", "凭据", "凭证")
_WINDOW = 2048


def segments(text: str) -> list[tuple[int, int]]:
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


