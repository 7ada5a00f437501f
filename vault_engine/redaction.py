"""Secrets in text — found by structure, in English and Chinese, and masked wholly.

The one redactor (docs/security.md §2). Every text alaya writes to disk, commits, logs or
sends to a provider passes it: the write gateway (store/vault.py `write_text`,
store/transaction.py's raw files and commit messages), telemetry, the LLM client, file names
and session ids. It finds a secret by where it sits, not by a list of phrasings:

- **known token forms** (prefix and shape: `sk-…`, `ghp_…`, `glpat-…`, AWS, Slack, JWT …, and
  the regex plugins of detect-secrets);
- **PEM private keys** from BEGIN to END, across the turns of one session (a `Scanner` carries
  an open block from one text to the next);
- **assignments whose name says credential** — `SMTP_PWD=…`, `"client_secret": "…"`,
  `spring.datasource.password: …`, `X-Api-Key: …` — the name's last word PASS, PASSWORD, PWD,
  TOKEN, SECRET, KEY …;
- **command lines**: `--password=…`, `--token …`, `-p<pw>`, `-p pw`, `-a pw`, `-u user:pw`,
  `-u user,pw`, `AUTH pw`; **HTTP headers**: Authorization, Cookie;
- **URLs**: `user:password@` (the password may hold `@`), credential query parameters,
  webhook paths;
- **a credential word and a secret-looking value in the same clause**, in either order
  ("the root password is now …", "Use … — that's the admin login", "口令我刚换成 …",
  "… 这个就是生产库的 root 密码"), any punctuation width (full-width forms are folded for
  matching only); a value alone on a line right after such a clause; a table's column whose
  header is a credential word; the password field of a `.pgpass` line.

A mask is `[REDACTED:kind]` and keeps nothing of the value — no prefix, no suffix, no
trailing punctuation that was typed as part of it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from .redaction_library import library_patterns as _library_patterns
from .redaction_library import segments as _segments
from .redaction_shapes import VALUE_CHARS, core, credential_like, looks_secret, placeholder
from .redaction_trigger import fold
from .redaction_trigger import triggered as _triggered

MARK = "[REDACTED:{kind}]"
_V = VALUE_CHARS

@dataclasses.dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int
    end: int


# -- known token forms ----------------------------------------------------------------------
TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("openai-key", re.compile(
        r"\bsk-(?:proj-|ant-(?:api\d\d-)?|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab-token", re.compile(
        r"\bgl(?:pat|cbt|dt|rt|ptt|ft|imt|oas|soat|ffct|agent)-[A-Za-z0-9_-]{16,}")),
    ("grafana-token", re.compile(r"\bgl(?:sa|c)_[A-Za-z0-9_+/=-]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9a-zA-Z]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
)
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=]|\\[nr]|[ \t\r\n]|(?:Proc-Type|DEK-Info):[^\n\\]*)*")
_B64_LINE = re.compile(r"^[ \t>]*(?:[A-Za-z0-9+/]{16,}={0,2})[ \t]*$", re.M)

# -- credential words and names -------------------------------------------------------------
_WORD_EN = (r"pass(?:word|wd|phrase|code)?s?|pwd|token|secret|credentials?|"
            r"api[ _-]?key|access[ _-]?key(?:[ _-]?id)?|secret[ _-]?(?:key|id)|"
            r"private[ _-]?key|app[ _-]?key|client[ _-]?secret|cookie|log[ -]?in|auth|pin|key")
_WORD_ZH = r"密码|口令|密钥|秘钥|私钥|令牌|凭据|凭证|暗码|授权码|访问密钥"
CRED_WORD = re.compile(rf"(?i:(?:{_WORD_EN})(?![a-z])|{_WORD_ZH})")
_NAME_LAST = {"pass", "password", "passwd", "pwd", "passphrase", "passcode", "token", "secret",
              "key", "apikey", "credential", "credentials", "cookie", "sig", "signature",
              "auth", "pin"}
_NAME_ENDS = ("password", "passwd", "pass", "pwd", "token", "secret", "apikey", "accesskey",
              "secretkey")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name.strip("\"'`$"))
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def credential_name(name: str) -> bool:
    """Does a name say credential? Its last word PASS, PASSWORD, PWD, TOKEN, SECRET, KEY …
    (`SMTP_PWD`, `clientSecret`, `X-Api-Key`, `requirepass`), or KEY/SECRET/ACCESS + ID."""
    words = _words(name)
    if not words:
        return False
    last = words[-1]
    if last in _NAME_LAST or last.endswith(_NAME_ENDS):
        return True
    return last == "id" and len(words) > 1 and words[-2] in ("key", "secret", "access")


# -- structure ------------------------------------------------------------------------------
_QUOTES = {"'": "'", '"': '"', "`": "`", "“": "”", "‘": "’", "「": "」", "『": "』"}
_BARE = re.compile(rf"{_V}+")
_WIKILINK = re.compile(r"\[\[[^\[\]\n]{1,300}\]\]")


def value_span(text: str, pos: int, *, stop: str = "") -> tuple[int, int] | None:
    """The value that starts at `pos` (after spaces): a quoted string's inside, or a run of
    value characters with the punctuation typed at its end (masked with it)."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos >= n:
        return None
    close = _QUOTES.get(text[pos])
    if close is not None:
        end = text.find(close, pos + 1)
        if end < 0 or "\n" in text[pos + 1:end]:  # unclosed: the bare run after the quote
            run = _BARE.match(text, pos + 1)
            end = run.end() if run else pos + 1
        return (pos + 1, end) if end > pos + 1 else None
    m = _BARE.match(text, pos)
    if not m:
        return None
    end = m.end()
    if stop:
        cut = min((i for i in (text.find(s, pos, end) for s in stop) if i >= 0), default=end)
        end = cut
    return (pos, end) if end > pos else None


_ASSIGN = re.compile(  # a name starts where a word does: each run is tried once, not at each offset
    r"(?<![\w.$-])(?P<name>[A-Za-z_$][\w.$-]*)[\"'`]?[ \t]*(?::=|=>|=|:)(?![/=])[ \t]*")
_FLAG = re.compile(r"(?<![\w-])--(?P<name>[A-Za-z][\w-]*)(?:=|[ \t]+)")
_SHORT_ATTACHED = re.compile(r"(?<![\w-])-p(?=[^\s-])")
_SHORT_SPACED = re.compile(r"(?<![\w-])-[pa][ \t]+(?=[^\s-])")
_USER_PASS = re.compile(r"(?<![\w-])(?:-u|--user)[ \t=]+(?P<q>['\"]?)[^\s:,'\"]+[:,]")
_AUTH_CMD = re.compile(r"(?:^|[>$#\s])(?:AUTH|auth)[ \t]+(?:[\w.-]+[ \t]+)?(?=\S+[ \t]*$)", re.M)
_HEADER_AUTH = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*:[ \t]*(?:(?:bearer|basic|token|digest|"
    r"negotiate|ntlm|apikey|api-key|key|sso-key|hmac[\w-]*)[ \t]+)?")
_HEADER_COOKIE = re.compile(r"(?i)\b(?:set-)?cookie[\"']?[ \t]*:[ \t]*")
_BEARER = re.compile(r"(?i)\bbearer[ \t]+(?=[A-Za-z0-9._~+/-]{12,})")
_URL_USER = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://(?P<u>[^\s/'\"<>`]*)@")
_URL_PARAM = re.compile(r"[?&;](?P<name>[\w.-]+)=")
_HOOK = re.compile(r"(?i)/(?:hooks?|webhooks?|incoming-webhooks?)/(?P<v>[A-Za-z0-9_/.-]{8,})")
_PGPASS = re.compile(r"^[ \t]*[^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:(?P<v>\S+)[ \t]*$", re.M)
_CLAUSE_END = re.compile(r"[.!?](?=\s)|[。！？;；\n]")
_CONNECT_WORDS = {"is", "was", "are", "were", "now", "be", "been", "set", "to", "changed",
                  "became", "new", "the", "it", "its", "still", "just", "of", "for", "my", "our",
                  "reset", "rotated", "updated", "one", "here", "this", "that", "as", "will"}
_ZH_TIE = "是为成到填用:"


def _direct(gap: str) -> bool:
    """Does the text between a credential word and a value tie them ("password is now",
    "密码是", "口令我刚换成", "token是", "API Key 我填的是")?"""
    if len(gap) > 40:
        return False
    bare = gap.strip(" \t:=>\"'`“”‘’「」『』-")
    if not bare:
        return True
    words = re.findall(r"[A-Za-z]+|[\u4e00-\u9fff]+|\S", bare)
    latin = [w for w in words if w.isascii() and w.isalpha()]
    if all(w.lower() in _CONNECT_WORDS for w in latin) and \
            not any(not w.isalnum() and w not in ":=" for w in words):
        cjk = "".join(w for w in words if not w.isascii())
        return not cjk or (len(cjk) <= 10 and cjk[-1] in _ZH_TIE)
    return False


class Scanner:
    """The redactor's state across the texts of one session: a PEM block whose BEGIN was in
    an earlier turn, a credential clause whose value comes in the next string."""

    def __init__(self) -> None:
        self.pem_open = False
        self.pending = False

    def hits(self, text: str) -> list[SecretHit]:
        if not text:
            return []
        if not self.pem_open and not self.pending and not _triggered(text):
            return []
        found: list[SecretHit] = []
        for lo, hi in _segments(text):
            part = text if (lo, hi) == (0, len(text)) else text[lo:hi]
            found.extend(SecretHit(h.kind, h.start + lo, h.end + lo) for h in self._scan(part))
        return _merge(found)

    def _scan(self, text: str) -> Iterator[SecretHit]:
        norm = fold(text)
        yield from self._pem(norm)
        for kind, pattern in TOKENS:
            for m in pattern.finditer(norm):
                yield SecretHit(kind, m.start(), m.end())
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
        yield from _structure(norm)
        yield from self._clauses(norm)

    def _pem(self, text: str) -> Iterator[SecretHit]:
        pos = 0
        if self.pem_open:  # the block began in an earlier text: its body lines, to END
            end = _PEM_END.search(text)
            limit = end.end() if end else len(text)
            for m in _B64_LINE.finditer(text, 0, end.start() if end else len(text)):
                yield SecretHit("private-key", m.start(), m.end())
            if end:
                yield SecretHit("private-key", end.start(), end.end())
                self.pem_open = False
            pos = limit
        for begin in _PEM_BEGIN.finditer(text, pos):
            body = _PEM_BODY.match(text, begin.end())
            after = body.end() if body else begin.end()
            end = _PEM_END.match(text, after)
            if end:
                yield SecretHit("private-key", begin.start(), end.end())
                continue
            rest_end = _PEM_END.search(text, after)
            yield SecretHit("private-key", begin.start(), after)
            if rest_end:  # prose between: mask the key's lines, not the prose
                for m in _B64_LINE.finditer(text, after, rest_end.start()):
                    yield SecretHit("private-key", m.start(), m.end())
                yield SecretHit("private-key", rest_end.start(), rest_end.end())
            else:
                self.pem_open = True

    def _clauses(self, text: str) -> Iterator[SecretHit]:
        """A credential word and a secret-looking value in one clause, either order; a value
        alone on one of the next lines when the clause that names it has none."""
        words = list(CRED_WORD.finditer(text))
        pending = self.pending
        self.pending = False
        if pending:
            first = text.strip()
            if first and not any(c.isspace() for c in first) and looks_secret(first):
                start = text.index(first)
                yield SecretHit("password", start, start + len(first))
                return
        if not words:
            return
        links = [m.span() for m in _WIKILINK.finditer(text)] if "[[" in text else []
        done: set[tuple[int, int]] = set()
        for w in words:
            lo, hi = _clause(text, w.start(), w.end())
            if (lo, hi) in done:
                continue
            done.add((lo, hi))
            got = False
            for t in _BARE.finditer(text, lo, hi):
                if links and any(a <= t.start() < b for a, b in links):
                    continue  # a note named by a wikilink, `[[id|title]]`: never a value
                span = _token_value(text, t.start(), t.end())
                if span is None:
                    continue
                a, b = span
                value = text[a:b]
                direct = a >= w.end() and _direct(text[w.end():t.start()])
                if (direct and credential_like(value)) or looks_secret(value):
                    got = True
                    yield SecretHit("password", a, b)
            if not got:
                line_end = text.find("\n", w.end())
                if line_end < 0:
                    self.pending = True  # the value may come in the next string
                else:
                    yield from _next_lines(text, line_end)


def _token_value(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The secret part of a bare token: a `name=value` / `user:value` token's value, the
    token without brackets, quotes or a separator around it; None for a name (a credential
    word, `DB_PASS=`, `--password`) or a URL (its own rules)."""
    token = text[start:end]
    if "://" in token or token.endswith(("=", ":")):
        return None
    m = re.match(r"^-{0,2}[A-Za-z_][\w.-]*[:=/](?=.)", token)
    if m and not credential_like(token[:m.end() - 1]):  # `root/…`, `user:…`, `KEY=…`
        start += m.end()
        token = token[m.end():]
    lead = len(token) - len(token.lstrip(":=,;.\"'*_~"))
    start += lead
    token = token[lead:]
    while token and token[-1] in ")]}>\"'*~":
        token = token[:-1]
        end -= 1
    if not token or CRED_WORD.fullmatch(token) or \
            (credential_name(token.lstrip("-")) and not looks_secret(token)):
        return None  # a name: DB_PASSWORD, --token, apiKey
    return start, end


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    lo = start
    while lo > 0:
        prev = text[lo - 1]
        if prev in "。！？;；\n" or (prev in ".!?" and lo < len(text) and text[lo].isspace()):
            break
        lo -= 1
    m = _CLAUSE_END.search(text, end)
    hi = m.start() if m else len(text)
    if m and text[m.start()] in ".!?":  # a value ending in `!` or `.` before a space
        hi = m.start() + 1
    return lo, hi


def _next_lines(text: str, line_end: int) -> Iterator[SecretHit]:
    """A value alone on one of the next three lines (blank lines between are skipped)."""
    pos, seen = line_end + 1, 0
    while pos < len(text) and seen < 3:
        nl = text.find("\n", pos)
        stop = len(text) if nl < 0 else nl
        line = text[pos:stop].strip()
        if line:
            seen += 1
            at = text.index(line, pos)
            span = _token_value(text, at, at + len(line))
            if span and not any(c.isspace() for c in line) and span[0] == at and \
                    looks_secret(text[span[0]:span[1]]):
                yield SecretHit("password", *span)
                return
        pos = stop + 1


def _structure(text: str) -> Iterator[SecretHit]:
    """Assignments, command-line flags, headers, URLs, `.pgpass` lines and tables."""
    for m in _ASSIGN.finditer(text):
        prev = text[m.start() - 1] if m.start() else ""
        if prev in "{$" or not credential_name(m.group("name")):
            continue  # ${TOKEN:?…} is a shell expansion, not an assignment
        span = value_span(text, m.end(), stop="&" if prev in "?&" else "")
        if span and credential_like(text[span[0]:span[1]]) and \
                not text[span[0]:span[1]].startswith("-"):
            yield SecretHit("password", *span)
    for m in _FLAG.finditer(text):
        if credential_name(m.group("name")) and not m.group("name").endswith(("-stdin", "-file")):
            span = value_span(text, m.end())
            if span and _flag_value(text[span[0]:span[1]]):
                yield SecretHit("password", *span)
    for pattern in (_SHORT_ATTACHED, _SHORT_SPACED, _AUTH_CMD):
        for m in pattern.finditer(text):
            span = value_span(text, m.end())
            if span and _flag_value(text[span[0]:span[1]]):
                yield SecretHit("password", *span)
    for m in _USER_PASS.finditer(text):
        span = value_span(text, m.end())
        if span and credential_like(text[span[0]:span[1]]):
            yield SecretHit("password", *span)
    for pattern, kind in ((_HEADER_AUTH, "authorization"), (_BEARER, "bearer-token")):
        for m in pattern.finditer(text):
            span = value_span(text, m.end())
            if span and not placeholder(text[span[0]:span[1]]) and span[1] - span[0] >= 6:
                yield SecretHit(kind, *span)
    for m in _HEADER_COOKIE.finditer(text):
        stop = len(text)
        for ch in "\n\"'`":
            at = text.find(ch, m.end())
            if 0 <= at < stop:
                stop = at
        value = text[m.end():stop].rstrip()
        if re.search(r"=[^;\s]{6,}", value):
            yield SecretHit("cookie", m.end(), m.end() + len(value))
    yield from _urls(text)
    for m in _PGPASS.finditer(text):
        if m.group("v") != "*":
            yield SecretHit("password", m.start("v"), m.end("v"))
    if "|" in text:
        yield from _tables(text)


def _flag_value(value: str) -> bool:
    v = core(value)
    return credential_like(v) and not re.match(r"^\d+(?::\d+)*(?:/\w+)?$", v) and \
        not v.startswith(("/", "~", ".", "-"))


def _urls(text: str) -> Iterator[SecretHit]:
    for m in _URL_USER.finditer(text):
        user = m.group("u")
        at = m.start("u")
        if ":" in user:
            pw_at = user.index(":") + 1
            pw = user[pw_at:]
            if pw and not placeholder(pw) and (credential_like(pw) or len(pw) >= 6):
                yield SecretHit("url-credentials", at + pw_at, m.end("u"))
        elif not any(c in user for c in "?#&=") and looks_secret(user):
            yield SecretHit("url-credentials", at, m.end("u"))
    if "://" not in text and "?" not in text:
        return
    for m in _URL_PARAM.finditer(text):
        if credential_name(m.group("name")):
            span = value_span(text, m.end(), stop="&#")
            if span and not placeholder(text[span[0]:span[1]]) and span[1] - span[0] >= 6:
                yield SecretHit("url-credentials", *span)
    for m in _HOOK.finditer(text):
        if any(c.isdigit() for c in m.group("v")):
            yield SecretHit("webhook", m.start("v"), m.end("v"))


def _tables(text: str) -> Iterator[SecretHit]:
    """The cells of a markdown table's column whose header is a credential word."""
    cols: list[int] = []
    for line_m in re.finditer(r"^[ \t]*\|.*\|[ \t]*$", text, re.M):
        line = line_m.group(0)
        cells = [(c.start(1), c.group(1)) for c in re.finditer(r"\|([^|]*)(?=\|)", line)]
        if re.fullmatch(r"[\s|:-]+", line):
            continue
        heads = [i for i, (_, c) in enumerate(cells)  # a bare "key" column names settings
                 if any(m.group(0).lower() != "key" for m in CRED_WORD.finditer(c))]
        if heads and not any(credential_like(c.strip()) for _, c in cells):
            cols = heads
            continue
        for i in cols:
            if i < len(cells):
                off, cell = cells[i]
                value = cell.strip()
                if value and credential_like(value):
                    at = line_m.start() + off + cell.index(value)
                    yield SecretHit("password", at, at + len(value))
    return


def _merge(hits: list[SecretHit]) -> list[SecretHit]:
    """Overlapping spans become one: a mask covers every character any rule found."""
    out: list[SecretHit] = []
    for h in sorted(hits, key=lambda h: (h.start, -h.end)):
        if h.end <= h.start:
            continue
        if out and h.start < out[-1].end:
            last = out[-1]
            out[-1] = SecretHit(last.kind, last.start, max(last.end, h.end))
        else:
            out.append(h)
    return out


def find_secrets(text: str, scanner: Scanner | None = None) -> list[SecretHit]:
    """Every secret in `text`, as non-overlapping spans; `scanner` carries state from the
    texts before it (the turns of one session)."""
    return (scanner or Scanner()).hits(text)


def redact(text: str, scanner: Scanner | None = None) -> str:
    out, pos = [], 0
    for hit in find_secrets(text, scanner):
        out.append(text[pos:hit.start])
        out.append(MARK.format(kind=hit.kind))
        pos = hit.end
    out.append(text[pos:])
    return "".join(out)


def has_secret(text: str) -> bool:
    return bool(find_secrets(text))


_NAME_PART = re.compile(r"[^\s/\\:._-]{16,}")


def name_hits(name: str) -> list[SecretHit]:
    """The secrets of a file name or an id: what `find_secrets` finds, and any long random
    segment — a token pasted into a name (`run-$TOKEN.txt`, a session key with a bot token)."""
    hits = find_secrets(name)
    hits += [SecretHit("token", m.start(), m.end()) for m in _NAME_PART.finditer(name)
             if looks_secret(m.group(0))]
    return _merge(hits)


def redact_name(name: str) -> str:
    out, pos = [], 0
    for hit in name_hits(name):
        out.append(name[pos:hit.start])
        out.append(MARK.format(kind=hit.kind))
        pos = hit.end
    out.append(name[pos:])
    return "".join(out)
