"""The namespace policy: the one place every reader and writer asks which notes a caller may
see and change (docs/security.md).

Three kinds of caller:

- the **owner** — a person, or a tool run without an agent name: trusted, reads and writes
  every namespace (recall still *searches* `shared` and `[vault] default_namespace` unless
  asked for more);
- an **agent** — `ALAYA_AGENT=NAME`, `alaya --agent NAME`, `alaya mcp --agent NAME`, or a
  request to `alaya serve` carrying `X-Alaya-Agent: NAME`: semi-trusted, reads and writes
  `shared` and its own namespaces only (`NAME`, `NAME-main`, `NAME-ephemeral`);
- the **public** audience — what every reader may see, `shared` only: derived notes every
  agent reads (persona.md, scenes, MEMORY.md, reports) and `.alaya/agent-digest.json` are
  built for it.

Namespaces guard agents from each other through alaya's doors (CLI, MCP, serve, digests,
derived notes). They are not a file permission: whoever can read the vault's files reads
everything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from vault_engine.config import AGENT_ENV
from vault_engine.errors import NamespaceError, UsageError
from vault_engine.primitives import record

if TYPE_CHECKING:
    from .model import Note

# A VaultIndex (store/vault.py), typed loosely: vault.py asks this module, not the other way.
VaultIndex = Any

SHARED = "shared"
OWN_SUFFIXES = ("-main", "-ephemeral")
EPHEMERAL = "-ephemeral"
# patterns compiled on first use (re caches them), not at import: recall's path imports this
# module and seldom needs them
_AGENT_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_NS_LINE_RE = r"(?m)^namespace:[ \t]*['\"]?([^'\"#\r\n]+?)['\"]?[ \t]*(?:#.*)?$"


def check_agent_name(name: str) -> str:
    """An agent name usable as a namespace, or a UsageError saying why not. A name that is
    empty or blank is an error, never the owner: an agent whose name went missing (an unset
    variable in a hook, a stray tab) must not be handed everything."""
    if not name.strip():
        raise UsageError(f"the agent name is empty ({name!r})",
                         fix="give the agent's name (--agent ops-bot, ALAYA_AGENT=ops-bot), or "
                             "leave the option and ALAYA_AGENT out to run as the owner")
    if not re.match(_AGENT_RE, name) or ".." in name:
        raise UsageError(f"agent name {name!r} is not usable as a namespace",
                         fix="use letters, digits, '-', '_' and '.' (e.g. ALAYA_AGENT=ops-bot)")
    if name == SHARED:
        raise UsageError("`shared` is the namespace every agent reads, not an agent name",
                         fix="give the agent its own name, e.g. ALAYA_AGENT=ops-bot")
    if name.endswith(OWN_SUFFIXES):
        raise UsageError(f"agent name {name!r} ends like one of an agent's own namespaces "
                         "(-main, -ephemeral)", fix=f"name the agent {name.rsplit('-', 1)[0]!r}")
    return name


def may_name(source: str | None, target: str | None) -> bool:
    """Whether a note of namespace `source` may name a note of namespace `target` — link to
    it, show its title, take text from it: only when every reader of the first may read the
    second (taint follows text, docs/security.md). A shared note names shared notes only; an
    agent's note names shared notes and its own agent's."""
    s, t = source or SHARED, target or SHARED
    if t == SHARED or s == t:
        return True
    return s != SHARED and agent_of(s) == agent_of(t)


def check_may_name(source: Note, target: Note, what: str = "link to") -> None:
    """Refuse to make `source` name `target` (a relation, a link, its title) when a reader
    of `source` may not read `target` — a NamespaceError with the way round it."""
    if may_name(source.namespace, target.namespace):
        return
    raise NamespaceError(
        f"{source.title!r} ({source.namespace or SHARED}) may not {what} {target.title!r} "
        f"({target.namespace}): every reader of the first would see the second, which only "
        f"{target.namespace}'s readers may see",
        fix="link the other way round (from the private note to the shared one), or move "
            "the private note into `shared` first (alaya promote-shared)")


def persona_path(agent: str | None) -> str:
    """The persona a reader loads: `persona.md` (built from `shared`, every agent reads it),
    or an agent's own `@<agent>/persona.md` (built from `shared` and its namespaces, with
    `namespace: <agent>`, so the policy shows it to that agent and the owner only)."""
    return f"@{agent}/persona.md" if agent else "persona.md"


def home_folder(folder: str, namespace: str | None) -> str:
    """Where alaya puts a new note of `namespace` that would go to `folder` (`cards/fact`,
    `entities`, `sessions/2026-12`, `queries`): `folder` itself for `shared`, else the same
    folder with `@<namespace>` after its first segment (`cards/@alice/fact`). A new note's
    path is then made only from its own namespace and name: it can never meet a note of a
    namespace its writer may not read, so no suffix or refusal tells whether one exists
    (docs/security.md). The kind stays the first segment's (store/notes.py)."""
    ns = namespace or SHARED
    if ns == SHARED:
        return folder
    first, _, rest = folder.partition("/")
    return f"{first}/@{ns}" + (f"/{rest}" if rest else "")


def agent_of(namespace: str) -> str | None:
    """The agent a namespace belongs to (`bob-ephemeral` → `bob`), None for `shared`."""
    if namespace == SHARED:
        return None
    for suffix in OWN_SUFFIXES:
        if namespace.endswith(suffix) and len(namespace) > len(suffix):
            return namespace[:-len(suffix)]
    return namespace


def is_ephemeral(namespace: str) -> bool:
    return namespace.endswith(EPHEMERAL) and namespace != EPHEMERAL


@record(frozen=True)
class Caller:
    """Who is asking. `kind` is owner | agent | public; `agent` names an agent."""

    kind: str = "owner"
    agent: str | None = None

    # -- who ------------------------------------------------------------------------------
    @classmethod
    def owner(cls) -> Caller:
        return cls("owner")

    @classmethod
    def public(cls) -> Caller:
        return cls("public")

    @classmethod
    def of_agent(cls, name: str | None) -> Caller:
        """An agent by name; None is the owner. A name that is given but empty or blank is a
        UsageError (check_agent_name)."""
        if name is None:
            return cls.owner()
        return cls("agent", check_agent_name(name))

    @classmethod
    def resolve(cls, flag: str | None, env: Mapping[str, str]) -> Caller:
        """The caller of an entry point (CLI, MCP, the fast path, hooks): the `--agent` flag
        when given, else `ALAYA_AGENT` when set, else the owner. Only entry points call it:
        the engine is handed its caller and never reads the environment."""
        return cls.of_agent(flag if flag is not None else env.get(AGENT_ENV))

    @property
    def is_owner(self) -> bool:
        return self.kind == "owner"

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    @property
    def label(self) -> str:
        return f"agent {self.agent}" if self.agent else ("the owner" if self.is_owner
                                                         else "every reader")

    @property
    def own(self) -> tuple[str, ...]:
        """This agent's own namespaces (none for the owner and the public)."""
        if self.agent is None:
            return ()
        return (self.agent,) + tuple(self.agent + s for s in OWN_SUFFIXES)

    # -- the rule -------------------------------------------------------------------------
    def may_read(self, namespace: str | None) -> bool:
        ns = namespace or SHARED
        return self.is_owner or ns == SHARED or ns in self.own

    def may_write(self, namespace: str | None) -> bool:
        # the same boundary both ways; the public audience never writes
        return self.kind != "public" and self.may_read(namespace)

    def sees(self, note: Note) -> bool:
        return self.may_read(note.namespace)

    def home(self, default_namespace: str) -> str:
        """Where this caller's new cards go: the agent's namespace, else the vault default."""
        return self.agent if self.agent else default_namespace

    def session_home(self, config: Any) -> str:
        """The namespace of a session this caller ingests or captures (`[vault]
        sessions_namespace`: `agent`, the default, keeps an agent's conversations its own)."""
        mode = config.get("vault", "sessions_namespace")
        if mode not in ("agent", "shared"):
            from vault_engine.errors import ConfigError

            raise ConfigError(f"[vault] sessions_namespace = {mode!r} is neither \"agent\" "
                              "nor \"shared\"", path="alaya.toml",
                              fix='set sessions_namespace = "agent" (the default) or "shared"')
        if self.agent:
            return self.agent if mode == "agent" else SHARED
        return str(config.get("vault", "default_namespace"))

    # -- views ----------------------------------------------------------------------------
    def view(self, index: VaultIndex) -> VaultIndex:
        """The part of a vault this caller may see: notes of readable namespaces, and the
        parse problems of files whose namespace is readable (an unparseable note's
        namespace is read from its `namespace:` line)."""
        if self.is_owner:
            return index
        import dataclasses

        notes = [n for n in index.notes if self.sees(n)]
        hidden = [n for n in index.notes if not self.sees(n)]
        issues = [i for i in index.issues if self.may_read(i.namespace)]
        return dataclasses.replace(index, notes=notes, issues=issues,
                                   attachments=list(index.attachments),
                                   hidden=hidden + list(index.hidden), _resolver=None)

    def check_write(self, note: Note, ref: str | None = None) -> None:
        if not self.may_write(note.namespace):
            raise refused(self, ref)

    def check_namespace(self, namespace: str, what: str = "write to") -> None:
        if not self.may_write(namespace):
            raise NamespaceError(
                f"{self.label} may not {what} namespace {namespace!r}",
                fix=f"use `shared` or one of {', '.join(self.own) or 'its own'}")

    def readable(self) -> set[str] | None:
        """The namespaces this caller may read (None: every one)."""
        return None if self.is_owner else {SHARED, *self.own}

    def recall_scope(self, requested: Iterable[str], all_namespaces: bool,
                     default_namespace: str) -> set[str] | None:
        """The namespaces a recall searches (None: every one). An agent searches `shared` and
        its own; naming another agent's namespace is refused, `--all-namespaces` means every
        namespace it may read."""
        asked = [n for n in requested if n]
        for ns in asked:
            if not self.may_read(ns):
                raise NamespaceError(f"{self.label} may not read namespace {ns!r}",
                                     fix="search `shared` and your own namespaces "
                                         f"({', '.join(self.own)})")
        if self.is_owner:
            return None if all_namespaces else {SHARED, default_namespace, *asked}
        return {SHARED, *self.own, *asked}


def refused(caller: Caller, ref: str | None = None) -> NamespaceError:
    """The error a writer gets for another agent's private note: it names neither the note's
    path nor its namespace (both would tell the caller about someone else's memory) — only
    the reference the caller gave."""
    what = repr(ref) if ref else "this note"
    return NamespaceError(
        f"{what} belongs to another agent's private namespace: {caller.label} may change "
        "only shared notes and its own", fix="ask its owner, or change a shared note or one "
        f"of your own ({', '.join(caller.own) or 'shared'})")


def find_writable(index: VaultIndex, ref: str, caller: Caller) -> Note:
    """A note the caller is about to change, found in what the caller may see (`index` is
    its view). Another agent's note is not found — the very error a note that exists
    nowhere gets, so no writer can tell the two apart (docs/security.md)."""
    note = index.find(ref)
    caller.check_write(note, ref)
    return note


def namespace_in_head(text: str) -> str | None:
    """The `namespace:` line of a note's frontmatter, read without YAML (for a file that does
    not parse); None when there is none."""
    if not text.startswith(("---", "\ufeff---")):
        return None
    end = text.find("\n---", 3)
    m = re.search(_NS_LINE_RE, text[:end if end > 0 else len(text)])
    return m.group(1).strip() if m else None


def namespace_of_text(text: str, path: str | None = None) -> str | None:
    """A note's namespace as the parser reads it (`shared` when it has none); None when the
    frontmatter does not parse and carries no readable `namespace:` line. The write gateway
    asks it of the bytes on disk and of the bytes about to be written."""
    from vault_engine.errors import NoteParseError

    from .frontmatter import NoteText

    try:
        data = NoteText.parse(text, path=path).frontmatter.data
    except NoteParseError:
        return namespace_in_head(text)
    return str(data.get("namespace") or SHARED)


_LINK_RE = r"!?\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]"


def private_words(index: VaultIndex) -> set[str]:
    """What names a private note and no shared one: titles, aliases, file names, paths and
    relation types of notes outside `shared` (casefolded, four characters or more) — a report
    line that carries one speaks of a private note even without linking it."""
    def names(note: Note) -> set[str]:
        out = {note.title, note.stem, note.path, note.path.removesuffix(".md"),
               *(str(a) for a in getattr(note, "aliases", ()) or ())}
        out |= {r.type for r in getattr(note, "relations", ()) or ()}
        return {w.casefold() for w in out if w and len(w) >= 4}

    every = [*index.notes, *index.hidden]
    public: set[str] = set()
    for n in every:
        if (n.namespace or SHARED) == SHARED:
            public |= names(n)
    private: set[str] = set()
    for n in every:
        if (n.namespace or SHARED) != SHARED:
            private |= names(n)
    return private - public


def public_lines(lines: Iterable[str], index: VaultIndex) -> tuple[list[str], int]:
    """The lines of a report every agent reads (reports/, MEMORY.md …): a line that links a
    note outside `shared`, or names one (`private_words`), is left out. `index` must hold
    every note (Vault.load_all), so anyone's private notes are recognised. Returns (kept
    lines, lines left out)."""
    by_id = {n.id.casefold(): n for n in (*index.notes, *index.hidden) if n.id}
    secret = private_words(index)
    kept, dropped = [], 0
    for line in lines:
        low = line.casefold()
        private = any(w in low for w in secret)
        for m in re.finditer(_LINK_RE, line):
            target = m.group(1).strip()
            note = by_id.get(target.casefold()) or index.resolver.resolve(target).note
            if note is not None and (note.namespace or SHARED) != SHARED:
                private = True
                break
        if private:
            dropped += 1
        else:
            kept.append(line)
    return kept, dropped
