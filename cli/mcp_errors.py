"""Errors an LLM can act on: what was wrong with the call and how to fix it, in the terms of
the MCP tools — tool and argument names, never the CLI's flags or commands.

- `argument_error`: arguments the input schema refuses (a wrong type, a value outside an
  enum, a missing or unknown argument), one line per problem with the argument's own
  description, instead of pydantic's text;
- `tool_error`: an engine error (AlayaError) with its message and fix rewritten: CLI flags
  become argument names, `alaya <verb>` becomes the tool of that name, and the steps only a
  person can take say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# CLI flag → the MCP argument it corresponds to (per tool where they differ)
_FLAGS: dict[str, str] = {
    "--concepts": "concepts", "--from-nodes": "from_nodes", "--rel": "relations",
    "--depth": "depth", "--top-k": "top_k", "--kind": "kinds", "--type": "types",
    "--tag": "tags", "--as-of": "as_of", "--mode": "mode", "--title": "title",
    "--claim": "claim", "--text": "text", "--reason": "reason", "--weight": "weight",
    "--alias": "aliases", "--body": "content", "--session": "session", "--budget": "budget",
    "--query": "query", "--context": "context", "--max-hops": "max_hops",
}
_TOOL_FLAGS: dict[str, dict[str, str]] = {
    "new": {"--type": "type", "--tag": "tags", "--claim": "claims"},
    "link": {"--rel": "rel"}, "unlink": {"--rel": "rel"},
    "traverse": {"--rel": "relations"},
}
# `alaya <verb>` → the tool that does it over MCP
_TOOLS = {"recall": "recall", "traverse": "traverse", "trace": "trace", "show": "get",
          "new": "new", "link": "link", "unlink": "unlink", "feedback": "feedback",
          "ingest": "ingest", "capture": "ingest", "distill": "distill", "context": "context",
          "status": "status", "schema": "schema"}
_SPECIFIC = (
    (re.compile(r"alaya feedback correct (\S+) --claim (\S+) --text \"…\""),
     r'call `feedback` with verdict "correct", id "\1", claim "\2" and the corrected `text`'),
    (re.compile(r"alaya recall \"([^\"]*)\".*"),
     r'call `recall` with `query` (free text, e.g. "\1"), `concepts` or `from_nodes`'),
    (re.compile(r"(?:run )?`alaya (?:compile|watch)[^`]*`(?: (?:again|once))?"
                r"(?: \(or keep `alaya watch` running\))?"),
     "call the tool again (this server compiles the vault first); if that keeps failing, ask "
     "the person to run `alaya doctor`"),
)


def mcp_terms(text: str, tool: str) -> str:
    """`text` with the CLI's words replaced by the MCP tools' and arguments'."""
    for pattern, repl in _SPECIFIC:
        text = pattern.sub(repl, text)
    flags = {**_FLAGS, **_TOOL_FLAGS.get(tool, {})}
    for flag in sorted(flags, key=len, reverse=True):
        text = re.sub(re.escape(flag) + r"(?![\w-])", f"`{flags[flag]}`", text)
    text = text.replace("``", "`")

    def quoted(m: re.Match[str]) -> str:
        name = _TOOLS.get(m.group(1))
        if not name:
            return m.group(0)  # a step only a person takes (`alaya init`, `alaya doctor`)
        args = m.group(2).strip()
        return f"the `{name}` tool" + (f" ({args})" if args else "")

    def bare(m: re.Match[str]) -> str:
        name = _TOOLS.get(m.group(1))
        return f"the `{name}` tool" if name else m.group(0)

    text = re.sub(r"`alaya (\w[\w-]*)((?: [^`]*)?)`", quoted, text)
    return re.sub(r"(?<![`\w])alaya (\w[\w-]*)", bare, text)


def tool_error(tool: str, message: str, fix: str | None, path: str | None) -> str:
    """An engine error as the text of an MCP tool error."""
    text = f"{tool}: {mcp_terms(message, tool)}"
    if fix:
        text += f" — fix: {mcp_terms(fix, tool)}"
    if path:
        text += f" [{path}]"
    return text


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def argument_error(tool: str, errors: Sequence[Mapping[str, Any]],
                   schema: Mapping[str, Any]) -> str:
    """Arguments the input schema refused, one problem a line, each with the fix."""
    props = schema.get("properties", {})
    lines = []
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p != tool]
        name = loc[0] if loc else "?"
        where = name + "".join(f"[{p}]" for p in loc[1:])
        kind, got = err.get("type", ""), err.get("input")
        desc = (props.get(name) or {}).get("description", "")
        if kind == "missing":
            what = f"`{name}` is required"
        elif kind in ("literal_error", "enum"):
            expected = (err.get("ctx") or {}).get("expected", "")
            what = f"`{where}` must be one of {expected}, not {_shown(got)}"
        elif kind.startswith(("int_", "float_")):
            what = f"`{where}` must be a number, not {_shown(got)}"
        elif kind.startswith("bool"):
            what = f"`{where}` must be true or false, not {_shown(got)}"
        elif kind.startswith(("list_", "tuple")):
            what = f"`{where}` must be a list, e.g. [\"…\"], not {_shown(got)}"
        elif kind.startswith(("string_", "str_")):
            what = f"`{where}` must be a string ({err.get('msg', '').lower()}), not {_shown(got)}"
        elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            what = f"`{where}` is out of range ({err.get('msg', '').lower()}): {_shown(got)}"
        else:
            what = f"`{where}`: {err.get('msg', 'invalid')} (got {_shown(got)})"
        lines.append(what + (f" — {desc.rstrip('.')}" if desc else ""))
    return (f"{tool}: invalid arguments — " + "; ".join(lines)
            + f". Fix: call `{tool}` again with the arguments corrected.")


def unknown_arguments(tool: str, given: Sequence[str], schema: Mapping[str, Any]) -> str | None:
    """An error for arguments the tool does not have (a typo the schema would ignore)."""
    known = list(schema.get("properties", {}))
    unknown = [a for a in given if a not in known]
    if not unknown:
        return None
    return (f"{tool}: unknown argument(s) {', '.join(f'`{a}`' for a in unknown)}. "
            f"Its arguments are: {', '.join(known) or '(none)'}. Fix: call `{tool}` again "
            "with those names.")
