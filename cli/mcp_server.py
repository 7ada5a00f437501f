"""`alaya mcp`: a Model Context Protocol server over stdio, built on the engine.

Every tool calls the same library function as its CLI command and returns the same JSON, so
an agent over MCP and a script over `--json` see one memory. The embedder and the recall
index stay loaded between calls (as in `alaya serve`); a new build is picked up by the next
call. Errors come back as tool errors carrying the message and the fix, so the agent can
correct its call. Docs: docs/agents.md.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

INSTRUCTIONS = """alaya is this agent's long-term memory: a markdown vault in git.
Call `recall` before answering anything that past sessions, decisions, gotchas or preferences
could inform; follow a result's relations with `recall` (from_nodes + relations) or
`traverse`. Use `trace` to see the exact conversation turns behind a card. Write what you
learn with `new` and `link`; tell the memory what helped with `feedback`. Everything you
write is a git commit a person can review."""


def build_server(root: Path, *, agent: str | None = None) -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from vault_engine.errors import AlayaError
    from vault_engine.store.vault import Vault

    from .main import __version__

    namespace = agent_namespace(agent)
    if namespace:
        import os

        from vault_engine.config import AGENT_ENV

        os.environ[AGENT_ENV] = namespace  # the vault's config then defaults to it
    vault = Vault.open(root)
    server = MCPServer("alaya", instructions=INSTRUCTIONS, version=__version__)
    state: dict[str, Any] = {}

    def embedder() -> Any:
        if "embedder" not in state:
            from vault_engine.providers.embedding import get_embedder

            try:
                state["embedder"] = get_embedder(vault.config)
            except AlayaError:
                state["embedder"] = None
        return state["embedder"]

    def fail(exc: AlayaError) -> Exception:
        """A tool error the agent sees in full: what went wrong and how to fix the call."""
        return ToolError(f"{exc.message}" + (f" (fix: {exc.fix})" if exc.fix else "")
                         + (f" [{exc.path}]" if exc.path else ""))

    @server.tool()
    def recall(query: str = "", concepts: list[str] | None = None,
               relations: list[str] | None = None, depth: int | None = None,
               from_nodes: list[str] | None = None, top_k: int | None = None,
               kinds: list[str] | None = None, types: list[str] | None = None,
               tags: list[str] | None = None, as_of: str | None = None,
               mode: str = "hybrid") -> dict[str, Any]:
        """Search long-term memory (zero LLM calls unless a [rerank] model is configured).
        Free text in `query`; or structured:
        `concepts` plus `relations` (e.g. ["CAUSED_BY"]) and `depth` to follow typed links;
        `from_nodes` (ids from an earlier result) to keep navigating. Optional filters:
        `kinds` (card, entity, session), `types` (gotcha, decision, …), `tags`, `as_of`
        (YYYY-MM-DD: claims valid then), `mode` (hybrid, bm25, vector). Returns nodes with id,
        title, kind, path, score, h_distance, snippet, the relation that reached them and,
        for sessions, the turn anchors; plus `explorable` relation types to follow next."""
        from vault_engine.recall.pipeline import recall as run
        from vault_engine.recall.query import RecallQuery

        obj: dict[str, Any] = {"query": query, "mode": mode}
        for key, value in (("concepts", concepts), ("relations", relations), ("depth", depth),
                           ("from_nodes", from_nodes), ("top_k", top_k), ("kind", kinds),
                           ("type", types), ("tag", tags), ("as_of", as_of)):
            if value is not None:
                obj[key] = value
        from vault_engine.recall.query import RecallSettings

        try:
            q = RecallQuery.from_json(obj)  # no namespace keys: own + shared only
            if "reranker" not in state:
                from vault_engine.providers.rerank import get_reranker

                state["reranker"] = get_reranker(vault.config)
            return run(vault.state_dir, q, embedder=embedder() if mode != "bm25" else None,
                       settings=RecallSettings.from_config(vault.config), resident=True,
                       reranker=state["reranker"], caller=vault.caller)
        except AlayaError as exc:
            raise fail(exc) from None

    @server.tool()
    def traverse(a: str, b: str | None = None, max_hops: int = 3,
                 relations: list[str] | None = None, depth: int = 1) -> dict[str, Any]:
        """Paths between two notes (ids or titles), best three by the product of edge weights;
        or, without `b`, the neighbourhood of `a` within `depth` steps, along `relations`
        only if given."""
        from vault_engine.recall.traverse import find_paths, neighbourhood

        try:
            if b:
                return find_paths(vault.state_dir, a, b, max_hops=max_hops, caller=vault.caller)
            threshold = float(vault.config.get("recall", "rel_similarity_threshold"))
            return neighbourhood(vault.state_dir, a, rels=tuple(r.upper() for r in relations or ()),
                                 depth=depth, threshold=threshold, caller=vault.caller)
        except AlayaError as exc:
            raise fail(exc) from None

    @server.tool()
    def trace(card: str, context: int = 1) -> dict[str, Any]:
        """From a card (id or title) back to the sessions and the exact turns its claims came
        from, with `context` turns around each."""
        from vault_engine.recall.served import served_trace
        from vault_engine.recall.trace import trace as run

        try:
            return served_trace(run(vault, card, context=max(0, context)), vault.caller)
        except AlayaError as exc:
            raise fail(exc) from None

    @server.tool()
    def get(ref: str) -> dict[str, Any]:
        """One note by id, title, alias or vault path: frontmatter, claims, relations, body."""
        from vault_engine.recall.served import served_note

        try:  # the agent's view (its own + shared), secrets masked, injections withheld
            return served_note(vault.load().find(ref), vault.caller)
        except AlayaError as exc:
            raise fail(exc) from None

    @server.tool()
    def new(title: str, type: str = "concept", content: str = "",
            tags: list[str] | None = None, claims: list[str] | None = None,
            aliases: list[str] | None = None, importance: float | None = None) -> dict[str, Any]:
        """Create a card (one git commit). `type`: concept, pattern, gotcha, decision, fact,
        preference, constraint, skill, template, event, instruction. `claims`: short
        statements this card asserts. Written to this agent's namespace."""
        from vault_engine.store import cards as card_ops

        try:
            spec = card_ops.NewCard.from_json({
                "title": title, "type": type, "content": content, "tags": tags or [],
                "claims": claims or [], "aliases": aliases or [],
                **({"importance": importance} if importance is not None else {})})
            created = card_ops.create_card(vault, spec)
        except AlayaError as exc:
            raise fail(exc) from None
        return {"id": created.id, "title": created.title, "path": created.path,
                "commit": created.commit, "relations": list(created.relations)}

    @server.tool()
    def link(a: str, b: str, rel: str = "RELATES_TO", weight: float | None = None,
             reason: str | None = None) -> dict[str, Any]:
        """Add a typed relation A —rel→ B (e.g. CAUSED_BY, DEPENDS_ON, SIMILAR_TO), one line
        in A's frontmatter and one commit. A and B: ids or titles."""
        from vault_engine.store import cards as card_ops

        try:
            r = card_ops.link(vault, a, b, rel, weight=weight, reason=reason)
        except AlayaError as exc:
            raise fail(exc) from None
        return {"source": r.source.id or r.source.path, "target": r.target.id or r.target.path,
                "rel": r.type, "changed": r.changed, "commit": r.commit,
                "message": r.message}

    @server.tool()
    def feedback(verdict: str, id: str, claim: str | None = None, text: str | None = None,
                 reason: str | None = None) -> dict[str, Any]:
        """Report how a recalled memory worked out: `useful` / `not-useful` (quality score),
        `correct` (rewrite claim `claim` to `text`; dependants marked stale) or `deprecate`
        (archive it, with `reason`)."""
        from vault_engine.care.feedback import feedback as run

        try:
            return asdict(run(vault, verdict, id, claim=claim, text=text, reason=reason))
        except AlayaError as exc:
            raise fail(exc) from None

    @server.tool()
    def ingest(session: dict[str, Any]) -> dict[str, Any]:
        """Store a finished conversation: a session object {"id", "timestamp", "turns":
        [{"role", "content", "name"?, "timestamp"?, "id"?}]}. Idempotent; a grown session
        gets its new turns appended. Distil it afterwards (`alaya distill`)."""
        from vault_engine.sessions.ingest import ingest as run

        if not isinstance(session, dict) or not isinstance(session.get("turns"), list):
            raise ToolError("session must be an object with a `turns` list "
                            '(fix: {"id": "…", "turns": [{"role": "user", "content": "…"}]})')
        sid = str(session.get("id") or "session")
        try:
            reports, sha = run(vault, [(f"{sid}.json", json.dumps(session).encode("utf-8"))])
        except AlayaError as exc:
            raise fail(exc) from None
        return {"sessions": [r.__dict__ for r in reports], "commit": sha}

    @server.tool()
    def status() -> dict[str, Any]:
        """What the memory holds: counts per layer, tier sizes, temperatures, last compile,
        and whether the compiled artifacts are stale."""
        from vault_engine.care.freshness import check_artifacts
        from vault_engine.care.status import status as run

        try:
            data = run(vault.state_dir, caller=vault.caller)
        except AlayaError as exc:
            raise fail(exc) from None
        check = check_artifacts(vault)
        data["stale"] = not check.ok
        data["stale_reason"] = None if check.ok else check.reason
        return data

    @server.tool()
    def context(query: str | None = None, budget: int = 4000) -> dict[str, Any]:
        """What to load at the start of a turn: the user's persona, MEMORY.md (notes and
        promoted memories) and, given the turn's `query`, the top recalls — one line per
        memory with its wikilink, within `budget` characters. Put `text` in your context."""
        from vault_engine.recall.context import build_context

        if not 200 <= budget <= 200_000:
            raise ToolError("budget must be between 200 and 200000 characters")
        try:
            ctx = build_context(vault, budget=budget, query=query or None,
                                embedder=embedder() if query else None)
        except AlayaError as exc:
            raise fail(exc) from None
        return ctx.as_dict()

    @server.tool()
    def schema(what: str = "relations") -> dict[str, Any]:
        """The relation types (`relations`) or node types (`node-types`) the vault uses."""
        from vault_engine.care.status import schema_node_types, schema_relations

        if what not in ("relations", "node-types"):
            raise ToolError("what must be 'relations' or 'node-types'")
        try:
            return schema_node_types(vault.state_dir, vault.caller) if what == "node-types" \
                else schema_relations(vault.state_dir, vault.caller)
        except AlayaError as exc:
            raise fail(exc) from None

    return server


def agent_namespace(agent: str | None) -> str | None:
    """This agent's private namespace: `<agent>` when an agent name is given (flag or
    ALAYA_AGENT), else none (the owner)."""
    import os

    from vault_engine.store.namespaces import Caller

    return Caller.of_agent(agent or os.environ.get("ALAYA_AGENT")).agent
