"""The redactor over structured input and at the write gateway (docs/security.md §2).

- `redact_input`: a session input (JSON, JSONL, a text transcript) with every secret replaced
  in its own format — one `Scanner` across its strings in document order, so a private key
  whose BEGIN is in one turn is masked to its END in the next, and a tool's result is read as
  the answer to the command that asked for a credential;
- `mask`: a JSON-like value with every string redacted;
- `gate`: what the write gateway does with a text about to be written — every secret that is
  new in it is masked; one already in the file on disk (a person's own text) is theirs, and
  stays (lint's `secret-detected` names it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .redaction import MARK, Scanner, SecretHit, find_secrets, name_hits, redact

# values of these keys are what a turn or a tool said; a credential named in one may have its
# value in the next (`kubectl get secret … | base64 -d` → the bare password)
_SPOKEN = {"content", "text", "output", "stdout", "stderr", "result", "value", "body", "input",
           "command", "message", "prompt", "parts", "response"}


def mask(value: Any) -> Any:
    """A JSON-like value with every string redacted, one scanner across its strings."""
    return _mask(value, Scanner())


def _mask(value: Any, scanner: Scanner) -> Any:
    if isinstance(value, str):
        return redact(value, scanner)
    if isinstance(value, dict):
        return {redact(str(k)) if isinstance(k, str) else k: _mask(v, scanner)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(v, scanner) for v in value]
    return value


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(key, string) of every string in a JSON value, in document order."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield "", str(k)
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def _found(strings: Iterator[tuple[str, str]], scanner: Scanner | None = None) -> dict[str, str]:
    """Every secret value in `strings`, with its kind — one scanner across them."""
    scanner = scanner or Scanner()
    found: dict[str, str] = {}
    for key, s in strings:
        spoken = key in _SPOKEN
        if not spoken:  # ids, timestamps, keys: no state in or out, but still scanned
            keep = scanner.pending
            scanner.pending = False
            hits = scanner.hits(s)
            scanner.pending = keep
        else:
            hits = scanner.hits(s)
        if key.lower().endswith(("id", "key", "session", "name", "title", "path", "file")):
            hits = hits + name_hits(s)  # an id or a name: a token pasted into it
        for h in hits:
            found[s[h.start:h.end]] = h.kind
    return found


def _survives(document: str, values: set[str]) -> bool:
    if not values:
        return False
    return any(v in s for _, s in _strings(json.loads(document)) for v in values)


def _replace_values(text: str, found: dict[str, str]) -> str:
    """Every occurrence of each secret value — as written, and as JSON writes it escaped —
    replaced by its mark; longest first, so a value inside another goes with it."""
    for value in sorted(found, key=len, reverse=True):
        mark = MARK.format(kind=found.get(value, "secret"))
        for form in {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]}:
            if form:
                text = text.replace(form, mark)
    return text


_DONE: list[bytes] = []  # the last outputs of redact_input: the gateway need not scan them again


def scrubbed(data: bytes) -> bool:
    """Is `data` an output of `redact_input` (the very object)? The write gateway skips it."""
    return any(d is data for d in _DONE)


def redact_input(data: bytes, scanner: Scanner | None = None) -> bytes:
    """A session input with every secret replaced, in its own format: a JSON file keeps every
    byte but the secrets and still parses to the same turns; if a secret would survive that
    (an escape split it), the document is written out again. `scanner`: the state of the
    input's earlier parts (capture's stdin, one line at a time)."""
    out = _redact_input(data, scanner or Scanner())
    _DONE[:] = [*_DONE[-3:], out]
    return out


def _redact_input(data: bytes, scanner: Scanner) -> bytes:
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
            found = _found(_strings(obj), scanner)
            out = _replace_values(text, found)
            try:
                if not _survives(out, set(found)):
                    return out.encode("utf-8")
            except ValueError:
                pass
            return (json.dumps(mask(obj), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        out_lines = []
        for line in text.splitlines(keepends=True):
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                out_lines.append(redact(line, scanner))  # ingest reports the bad line itself
                continue
            if row is None:
                out_lines.append(line)
                continue
            found = _found(_strings(row), scanner)
            new = _replace_values(line, found)
            try:
                clean = not _survives(new, set(found))
            except ValueError:
                clean = False
            out_lines.append(new if clean else json.dumps(mask(row), ensure_ascii=False)
                             + ("\n" if line.endswith("\n") else ""))
        return "".join(out_lines).encode("utf-8")
    return redact(text, scanner).encode("utf-8")


def new_hits(text: str, before: str | None) -> list[SecretHit]:
    """The secrets of `text` that `before` (the file on disk) does not already hold."""
    hits = find_secrets(text)
    if not before:
        return hits
    return [h for h in hits if text[h.start:h.end] not in before]


def gate(text: str, before: str | None = None) -> str:
    """`text` with every secret new to it masked — what the write gateway writes."""
    hits = new_hits(text, before)
    if not hits:
        return text
    out, pos = [], 0
    for h in hits:
        out.append(text[pos:h.start])
        out.append(MARK.format(kind=h.kind))
        pos = h.end
    out.append(text[pos:])
    return "".join(out)
