"""What a value looks like: a secret, a placeholder, or an ordinary word, number or id.

The redactor (vault_engine/redaction.py) finds a secret by where it sits — after a credential
word, in an assignment whose name says so, after a password flag, in a URL's user part — and
then asks this module whether the value there is one. Two tests:

- `credential_like(v)`: the value sits right where a credential goes ("password: …",
  `DB_PASS=…`, `-p…`): anything but a placeholder, a reference, a plain word or a small number;
- `looks_secret(v)`: the value only shares a clause with a credential word ("Use X — that's
  the admin login"): it must look random — several character classes, no dictionary shape —
  and not be one of the ordinary ids that fill technical text (a git sha, a sha256, a UUID, a
  version, a port, a date, a path, an identifier).
"""

from __future__ import annotations

import re

# the characters of a bare value: no space, quote, bracket or CJK (Chinese text often runs on
# right after the value without a space), no full-width punctuation
# the characters of a bare value — matched on the folded text (full-width forms are ASCII
# there): printable ASCII but space, quotes, brackets, `,` and `;`. Chinese text often runs
# on right after the value without a space; the CJK characters end it. (An ASCII class
# compiles in microseconds; one that names the CJK ranges costs ~10 ms in every process.)
VALUE_CHARS = r"[!#-&*+\--:=?-Z\\^_a-z|~]"
_PLACEHOLDER = re.compile(
    r"^(?:[<{%*•#]|\.\.\.|x{3,}|redacted|\[redacted|none|null|nil|true|false|yes|no|on|off|"
    r"undefined|example|sample|your|my[-_]?(?:password|token|secret|key)|changeme|placeholder|"
    r"password|passwd|secret|token|string|value|required|optional|empty|hidden|masked|"
    r"<.*>|\*+|-+|_+|\?+)$", re.I)
_PLACEHOLDER_START = re.compile(r"^(?:<|\{\{|\$\{|\$\(|%\(|%[sd]|x{4,}|\*{3,}|your[-_]|"
                                r"\[redacted)", re.I)
# code, not a value: a call, an index, a shell variable ($DB_PASS, ${X}, $(cmd)), an
# attribute path (os.environ…); a `$` inside a word ("My$qlR00t#88") is just a symbol
_CODE = re.compile(r"[()\[\]{}]|^\$|\$[{(]|^(?:os|process|env|self|this|config|settings|"
                   r"secrets|vars|context|request)\.", re.I)
# all capitals and underscores: a template's slot (USER:PASSWORD@HOST) or a variable's name
_SLOT = re.compile(r"^[A-Z]+(?:[_-][A-Z]+)*(?:[_-]?\d{1,2})?$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_HASH = re.compile(r"^(?:[0-9a-f]{7,12}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9A-F]{40}|[0-9A-F]{64})$")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z.]+)?$", re.I)
_NUMERIC = re.compile(r"^[\d.:/,+x-]+[a-z]{0,3}$", re.I)  # ports, dates, IPs, sizes: 10.0.0.5:5432
_EMAIL = re.compile(r"^[\w.+-]+@(?:[a-z0-9-]+\.)+[a-z]{2,}$")  # a domain in lower case
_PATH = re.compile(r"^(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*$")
_WORD_DIGITS = re.compile(r"^(?:[A-Za-z]+[-_.]?\d{1,4}|\d{1,4}[A-Za-z]{1,3})$")  # python3, 128k
# atomic groups: a word, once taken, is never split again (no backtracking blow-up on a long
# run of letters that is no CamelCase after all)
_CAMEL = re.compile(r"^(?>[a-z]{2,}|[A-Z][a-z]+|[A-Z]{2,}(?![a-z]))+$")
_IDENT = re.compile(r"^[a-z][a-z0-9]*(?:[-_.:][a-z0-9]+)*$")  # kebab/snake/dotted lowercase
_FILE_REF = re.compile(r"^[\w./@-]*\.[a-z][a-z0-9]{0,4}(?::\d+(?:[-:]\d+)?)?$")  # src/app.ts:5
_TRAILING = ".,;:!?"


def wordlike(letters: str) -> bool:
    """Letters shaped like words joined in CamelCase (Alertmanager, insteadOf, GitHubActions)
    rather than drawn at random: the CamelCase shape, and vowels as often as words have them."""
    if not _CAMEL.match(letters):
        return False
    vowels = sum(c in "aeiouyAEIOUY" for c in letters)
    return vowels / max(1, len(letters)) >= 0.25


def core(value: str) -> str:
    """The value without the sentence punctuation that may follow it (judged without it)."""
    return value.rstrip(_TRAILING) or value


def ordinary(v: str) -> bool:
    """A shape no credential has: not ASCII (words of a sentence), an e-mail address, a URL,
    a source file reference."""
    return not v.isascii() or not v.isprintable() or bool(
        _EMAIL.match(v) or "://" in v or _FILE_REF.match(v))


def placeholder(v: str) -> bool:
    return bool(_PLACEHOLDER.match(v) or _PLACEHOLDER_START.match(v) or _CODE.search(v)
                or _SLOT.match(v))


def _classes(v: str) -> tuple[bool, bool, bool, bool]:
    lower = upper = digit = symbol = False
    for c in v:
        if c.isdigit():
            digit = True
        elif c.isalpha():
            if c.isupper():
                upper = True
            else:
                lower = True
        else:
            symbol = True
    return lower, upper, digit, symbol


def credential_like(value: str) -> bool:
    """A value in a credential's place: not a placeholder, a plain word or a small number
    ("the password is stored in Vault", "密码是否正确", "PASSWORD_MIN_LENGTH=12")."""
    v = core(value)
    if len(v) < 4 or placeholder(v) or ordinary(v):
        return False
    lower, upper, digit, symbol = _classes(v)
    letters = lower or upper
    if digit and not letters and not symbol:
        return len(v) >= 6  # a PIN or numeric password, not a port or a year
    if digit and symbol and not letters:
        return len(v) >= 6 and not _NUMERIC.match(v)
    mixed = lower and upper
    if mixed and not digit and not symbol and wordlike(v):
        return False  # a word or a name: Alertmanager, insteadOf
    if not digit and not mixed and all(c.isalnum() or c in "-_." for c in v):
        return False  # a name: release-bot-slack, db_password, my.secret
    if letters and not symbol and not mixed and _WORD_DIGITS.match(v):
        return len(v) >= 8  # hunter22 is a password, py3 is not
    return (letters and (digit or symbol)) or (mixed and len(v) >= 8)


def looks_secret(value: str) -> bool:
    """Does a value look random enough to be a credential on its own (no `is`/`:` ties it to
    the credential word)? Ordinary ids, numbers, paths, versions and words do not."""
    v = core(value)
    n = len(v)
    if n < 6 or n > 512 or placeholder(v) or ordinary(v):
        return False
    if _UUID.match(v) or _HASH.match(v) or _VERSION.match(v) or _NUMERIC.match(v):
        return False
    if all(re.fullmatch(r"[A-Z]?[a-z]+|[0-9a-f]{1,12}", p) for p in re.split(r"[-_.:/@]", v) if p):
        return False  # an id or a path made of words and a short hex: card-7f3a2c1d,
        # build-20261204, @alice/gotcha/Gotcha
    lower, upper, digit, symbol = _classes(v)
    odd_count = sum(1 for c in v if not c.isalnum() and c not in "-_./:@")  # ! # % & + = ~
    odd = odd_count > 0
    if _PATH.match(v) and not (upper and lower and digit):
        return False
    if lower and upper:
        letters = re.sub(r"[^A-Za-z]", "", v)
        if not digit and not symbol:
            return n >= 8 and not wordlike(v)
        if wordlike(letters) and not odd and sum(c.isdigit() for c in v) <= 4 and \
                re.fullmatch(r"[A-Za-z]+[-_.]?\d*(?:[-_.][A-Za-z]+)*", v):
            return False  # GitHub-Actions, Python3, MacBookPro16
        return n >= 8 or (digit and symbol)
    if digit and (lower or upper):  # one case of letters, and digits
        if _WORD_DIGITS.match(v) or (not odd and _IDENT.match(v.lower()) and not
                                     any(_random_part(p) for p in re.split(r"[-_./:]", v))):
            return False
        return n >= 8
    if (lower or upper) and symbol:  # one case, symbols, no digits: kebab words, #channels
        return odd_count >= 2 and n >= 10
    if digit and symbol:
        return odd and n >= 8
    return False


def _random_part(part: str) -> bool:
    """A segment of an identifier that is no word: letters and digits interleaved."""
    if len(part) < 8:
        return False
    switches = sum(1 for a, b in zip(part, part[1:], strict=False) if a.isdigit() != b.isdigit())
    return switches >= 3
