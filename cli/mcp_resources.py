"""The MCP resources and prompts of `alaya mcp`.

Resources (read, never written through MCP):
- `alaya://digest` — the agent digest (docs/schemas/agent-digest.schema.json): the pages
  this agent may see (`.alaya/digest/<agent>.json`, or `.alaya/agent-digest.json`: shared
  notes only), compiled for lookups that cost no tokens of tool calls;
- `alaya://memory` — MEMORY.md: the person's notes and the promoted long-term memories;
- `alaya://persona` — persona.md: the user's profile;
- `alaya://note/{ref}` — one note's markdown, by id, title or path.

Prompts, for the two moments an agent needs memory:
- `recall_before_answering(question)` — the memories for the question, and how to follow up;
- `save_what_was_learned(summary)` — what to save and how, with what is already known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vault_engine import artifacts as A
from vault_engine.store.vault import Vault

DIGEST_URI = "alaya://digest"
MEMORY_URI = "alaya://memory"
PERSONA_URI = "alaya://persona"
NOTE_URI = "alaya://note/{ref}"


def digest_path(vault: Vault, agent: str | None) -> Any:
    """Where this agent's digest is: its own view (`.alaya/digest/<agent>.json`, written
    while it has notes of its own), else the shared one — never another agent's. The owner
    (no agent name) is served the shared one too: the digest is what agents read."""
    own = vault.state_dir / A.AGENT_DIGESTS / f"{agent}.json" if agent else None
    if own is not None and own.is_file():
        return own
    return vault.state_dir / A.PUBLIC_DIGEST


def register_resources(server: Any, vault: Vault, agent: str | None) -> None:
    from mcp.server.mcpserver.exceptions import ResourceError

    from vault_engine.errors import AlayaError

    @server.resource(DIGEST_URI, name="agent-digest", title="Agent digest",
                     mime_type="application/json",
                     description="Every page this agent may see — id, title, type, aliases, "
                                 "top claims, relations, tier — compiled with each build "
                                 "(schema: docs/schemas/agent-digest.schema.json). Look "
                                 "things up here without a tool call.")
    def digest() -> str:
        path = digest_path(vault, agent)
        try:
            return str(path.read_text(encoding="utf-8"))
        except OSError:
            raise ResourceError("no digest yet: the vault has not been compiled — call the "
                                "`recall` tool once (it compiles the vault), then read "
                                f"{DIGEST_URI} again") from None

    def vault_file(name: str) -> str:
        """MEMORY.md or persona.md: derived notes built for every reader (shared only,
        store/namespaces.public_lines); a secret a person typed into one is masked."""
        from vault_engine.text.secrets import redact

        try:
            return redact((vault.root / name).read_text(encoding="utf-8"))
        except OSError:
            raise ResourceError(f"{name} does not exist in this vault") from None

    @server.resource(MEMORY_URI, name="memory", title="MEMORY.md", mime_type="text/markdown",
                     description="Long-term memory: the person's own notes and the memories "
                                 "promoted by introspection (six-factor score), within a "
                                 "character budget.")
    def memory() -> str:
        return vault_file("MEMORY.md")

    @server.resource(PERSONA_URI, name="persona", title="persona.md", mime_type="text/markdown",
                     description="The user's profile: preferences, habits, how they like to "
                                 "work, distilled from sessions.")
    def persona() -> str:
        from vault_engine.store.namespaces import persona_path

        own = persona_path(vault.caller.agent) if vault.caller.agent else None
        if own and (vault.root / own).exists():  # the agent's own: shared + its namespaces
            return vault_file(own)
        return vault_file("persona.md")

    @server.resource(NOTE_URI, name="note", title="A note", mime_type="text/markdown",
                     description="One note's markdown (frontmatter and body), by id, title, "
                                 "alias or vault path — what `get` returns, as the file reads.")
    def note(ref: str) -> str:
        from vault_engine.recall.served import served_markdown

        try:  # the caller's view: another agent's note is not found
            found = vault.load().find(ref)
            text = vault.abspath(found.path).read_text(encoding="utf-8")
            return served_markdown(found, text, vault.caller)
        except AlayaError as exc:
            raise ResourceError(f"{exc.message}" + (f" — fix: {exc.fix}" if exc.fix else "")) \
                from None


def register_prompts(server: Any, vault: Vault, embedder: Callable[[], Any]) -> None:
    @server.prompt(name="recall_before_answering", title="Recall before answering",
                   description="Load what the memory holds for a question before you answer "
                               "it, and how to look further.")
    def recall_before_answering(question: str) -> str:
        from vault_engine.errors import AlayaError
        from vault_engine.recall.context import build_context

        try:
            text = build_context(vault, budget=4000, query=question, embedder=embedder()).text
        except AlayaError as exc:
            text = f"(the memory could not be read: {exc.message})"
        return (
            "Before you answer, here is what your long-term memory holds for this question "
            "(persona, MEMORY.md, the top recalls; each line ends with its [[link]]):\n\n"
            f"{text.strip() or '(nothing yet)'}\n\n"
            "Use what applies and say where it came from. To look further, call `recall` "
            "with the concepts you need (`concepts`, and `relations` such as CAUSED_BY or "
            "DEPENDS_ON with `depth`), or from a node you found (`from_nodes` with its id); "
            "an `h_distance_avg` above 0.3 means keep exploring. Call `trace` to read the "
            "turns a card came from. If the memory has nothing, say so rather than guess.\n\n"
            f"The question: {question}")

    @server.prompt(name="save_what_was_learned", title="Save what was learned",
                   description="At the end of a task or session: save the durable knowledge "
                               "it produced, without duplicates, and rate the memories used.")
    def save_what_was_learned(summary: str = "") -> str:
        known = ""
        if summary.strip():
            from vault_engine.errors import AlayaError
            from vault_engine.recall.pipeline import recall
            from vault_engine.recall.query import RecallQuery, RecallSettings

            try:
                found = recall(vault.state_dir, RecallQuery(text=summary, kinds=("card",),
                                                            top_k=8),
                               embedder=embedder(), telemetry=False, resident=True,
                               settings=RecallSettings.from_config(vault.config),
                               caller=vault.caller)
                known = "\n".join(f"- {n['title']} ({n['id']}, {n.get('type') or n['kind']})"
                                  for n in found["nodes"])
            except AlayaError:
                known = ""
        return (
            "Save what this session taught that will still be true next time — a fix and "
            "its cause, a decision and why, a gotcha, the user's preference or standing "
            "instruction. For each one:\n"
            "1. call `new` with a `title` that states it in one line, the `type` that fits "
            "(gotcha, decision, fact, preference, instruction, pattern, concept, constraint, "
            "skill, event), one to three short `claims`, and details in `content`;\n"
            "2. call `link` to relate it to what it depends on or was caused by "
            "(`rel`: CAUSED_BY, DEPENDS_ON, SIMILAR_TO, CONTRADICTS …);\n"
            "3. call `feedback` on the memories you used: `useful`, `not-useful`, or "
            "`correct` with the corrected claim.\n"
            "Do not save secrets, one-off chatter, or what is already known"
            + (":\n" + known if known else ".") + "\n\n"
            + (f"What happened: {summary}" if summary.strip() else
               "Summarise what happened first, then save."))
