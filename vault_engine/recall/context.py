"""`alaya context`: what an agent loads at the start of a turn, within a character budget.

Three sections, in the seed 004 memory format (one line per memory, a `[kind]` label, the
wikilink kept as a reference the agent can follow with `recall --from-nodes` or `trace`):

1. **persona** — the user's preferences and instructions (persona.md: the distilled block
   and the person's own corrections below it);
2. **memory** — MEMORY.md: the person's own notes and the promoted entries;
3. **recall** — the top recalls for the turn's query, when one is given.

No line that reads as a prompt injection is served, whatever its origin — a card someone
wrote, a line a person typed into persona.md or MEMORY.md, a recalled snippet: it is left out
and counted (`omitted["withheld"]`), checked each time the context is built.

Budget: persona and memory may each use up to a third of it (less if they are shorter); recall
gets the rest. Lines are never cut in half: a line that does not fit is left out and counted.
Comments, frontmatter and headings are not memories and are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vault_engine.primitives import fit_lines
from vault_engine.store import blocks
from vault_engine.store.namespaces import persona_path
from vault_engine.store.vault import Vault
from vault_engine.text.injection import is_injection
from vault_engine.text.secrets import has_secret, redact

_LABEL_RE = re.compile(r"^- \[[\w-]+\] ")  # "- [persona] …": the line as it was written is judged
_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_ENTRY_RE = re.compile(r"^\[\[(?P<link>[^\]]+)\]\]\s*\((?P<type>[\w-]+)\)\s*—\s*(?P<text>.+)$")


@dataclass
class Context:
    text: str
    sections: dict[str, list[str]] = field(default_factory=dict)
    omitted: dict[str, int] = field(default_factory=dict)
    budget: int = 0
    query: str | None = None
    recall: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "chars": len(self.text), "budget": self.budget,
                "query": self.query, "sections": self.sections, "omitted": self.omitted}


def _lines(text: str, label: str) -> list[str]:
    """Memory lines from a note's text: list items and sentences, without markup noise."""
    out = []
    for raw in _COMMENT_RE.sub("", text).splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "---", "*Regenerated", "*Written")):
            continue
        if line.startswith(("- ", "* ")):
            line = line[2:]
        line = re.sub(r"^\[\d{4}-\d{2}-\d{2}\]\s*", "", line)  # persona's date stamp
        m = _ENTRY_RE.match(line)  # "[[Title]] (type) — text": the text, then the reference
        if m:
            out.append(f"- [{m.group('type')}] {m.group('text')} ([[{m.group('link')}]])")
            continue
        out.append(f"- [{label}] {line}")
    return [_clean(x) for x in out]


def _clean(line: str) -> str:
    """A secret a hand-written note still holds never reaches a prompt."""
    return redact(line) if has_secret(line) else line


def _withhold(lines: list[str], withheld: list[int]) -> list[str]:
    """`lines` without those that read as a prompt injection (counted in `withheld`)."""
    kept = [x for x in lines if not is_injection(_LABEL_RE.sub("", x))]
    withheld[0] += len(lines) - len(kept)
    return kept


def _body(vault: Vault, rel: str) -> str:
    path = vault.root / rel
    if not path.exists():
        return ""
    from vault_engine.store.frontmatter import NoteText

    return NoteText.parse(path.read_text(encoding="utf-8", errors="replace"), rel).body


def _persona(vault: Vault) -> list[str]:
    """The user as this reader may know them: an agent's own persona (`@<agent>/persona.md`,
    built from `shared` and its namespaces) when it has one, else `persona.md` (shared
    only); with the corrections a person wrote outside each block."""
    own = persona_path(vault.caller.agent) if vault.caller.agent else None
    own_text = _body(vault, own) if own else ""
    shared_text = _body(vault, "persona.md")
    block_from, rel = (own_text, own) if own_text else (shared_text, "persona.md")
    lines = _lines(blocks.read_block(block_from, "persona", rel) or "", "persona")
    for text in (shared_text, own_text):
        if text:
            lines += _lines(blocks.outside_blocks(text).split("\n", 1)[-1], "persona")
    return [p for p in dict.fromkeys(lines) if "knows about its user" not in p
            and "alaya never rewrites this part" not in p]


def build_context(vault: Vault, *, budget: int = 4000, query: str | None = None,
                  embedder: Any = None, top_k: int = 8) -> Context:
    persona = _persona(vault)
    memory_text = _body(vault, "MEMORY.md")
    promoted = _lines(blocks.read_block(memory_text, "memory", "MEMORY.md") or "", "memory")
    own = [x for x in _lines(blocks.outside_blocks(memory_text), "memory")
           if "Long-term memory an agent loads" not in x]
    memory = own + promoted
    withheld = [0]
    persona, memory = _withhold(persona, withheld), _withhold(memory, withheld)
    sections: dict[str, list[str]] = {}
    omitted: dict[str, int] = {}
    third = budget // 3
    sections["persona"], used_p, omitted["persona"] = fit_lines(persona, third)
    sections["memory"], used_m, omitted["memory"] = fit_lines(memory, third)
    result = None
    if query:
        from .pipeline import recall
        from .present import prompt_block
        from .query import RecallQuery, RecallSettings

        result = recall(vault.state_dir, RecallQuery(text=query, top_k=top_k),
                        embedder=embedder, settings=RecallSettings.from_config(vault.config),
                        caller=vault.caller)
        shown = {x for x in sections["memory"]}
        lines = _withhold([_clean(x) for x in prompt_block(result, max_chars=10**9).splitlines()
                           if x not in shown], withheld)
        room = budget - used_p - used_m - 40
        sections["recall"], _, omitted["recall"] = fit_lines(lines, max(0, room))
    parts = []
    titles = {"persona": "## About the user", "memory": "## Long-term memory",
              "recall": f"## Recalled for: {query}"}
    for name, lines in sections.items():
        if lines:
            parts.append(titles[name] + "\n" + "\n".join(lines))
    text = "\n\n".join(parts)
    if withheld[0]:
        omitted["withheld"] = withheld[0]
    while len(text) > budget and any(sections.values()):  # headings pushed it over: trim
        name = max(sections, key=lambda k: len(sections[k]))
        sections[name].pop()
        omitted[name] = omitted.get(name, 0) + 1
        text = "\n\n".join(titles[k] + "\n" + "\n".join(v) for k, v in sections.items() if v)
    return Context(text=text, sections=sections, omitted={k: v for k, v in omitted.items() if v},
                   budget=budget, query=query, recall=result)
