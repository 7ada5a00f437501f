"""`alaya mcp`: a Model Context Protocol server (stdio, or streamable HTTP on loopback with
a bearer token: mcp_http.py), built on the engine.

Every tool calls the same library function as its CLI command and returns the same JSON, so
an agent over MCP and a script over `--json` see one memory. What an LLM reads about the tools
— parameter descriptions, enums, annotations — is in mcp_schema.py; how a bad call is
answered in mcp_errors.py; the resources (the digest, MEMORY.md, persona, any note) and the
prompts (recall before answering, save what was learned) in mcp_resources.py.

The server keeps its state resident: the embedder, the recall index and the compile state.
After each of its own writes (new, link, unlink, feedback, ingest, distill) it compiles
incrementally, so its next recall reads what it wrote; a vault never compiled is compiled on
the first read. Docs: docs/agents.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from vault_engine.store.namespaces import Caller
from vault_engine.text import mend

from . import mcp_schema as S

INSTRUCTIONS = """alaya is this agent's long-term memory: a markdown vault in git.
Call `recall` before answering anything that past sessions, decisions, gotchas or preferences
could inform; follow a result's relations with `recall` (from_nodes + relations) or
`traverse`. Use `trace` to see the exact conversation turns behind a card. Write what you
learn with `new` and `link`; tell the memory what helped with `feedback`. Everything you
write is a git commit a person can review, and your next recall already sees it. The prompts
`recall_before_answering` and `save_what_was_learned` walk through both moments; the
resource alaya://digest is the whole memory at a glance."""

T = TypeVar("T")


def build_server(root: Path, *, caller: Caller,
                 auth: dict[str, Any] | None = None) -> Any:
    """The server for the vault at `root`, answering as `caller` (resolved once by the
    command, handed to every tool through the vault); `auth`: the bearer-token settings of
    the HTTP transport (mcp_http.auth_for)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    from compilers.refresh import Refresher
    from vault_engine.errors import AlayaError, NotCompiledError, refused_write
    from vault_engine.store.vault import Vault

    from .main import __version__
    from .mcp_errors import argument_error, tool_error, unknown_arguments
    from .mcp_resources import register_prompts, register_resources

    vault = Vault.open(root, caller=caller)
    refresher = Refresher(vault, resident=True)
    import logging

    for noisy in ("faiss", "faiss.loader"):  # their INFO lines on the client's stderr tell
        logging.getLogger(noisy).setLevel(logging.WARNING)  # an agent nothing
    state: dict[str, Any] = {}

    class AlayaMCP(MCPServer):  # type: ignore[misc]
        """Bad arguments answered in the tools' own terms, not pydantic's."""

        async def call_tool(self, name: str, arguments: dict[str, Any],
                            context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is not None:
                unknown = unknown_arguments(name, list(arguments), tool.parameters)
                if unknown:
                    raise ToolError(unknown)
            arguments = mend.mended(arguments)  # a lone surrogate: U+FFFD, as in every door
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if tool is not None and isinstance(exc.__cause__, ValidationError):
                    raise ToolError(argument_error(name, exc.__cause__.errors(),
                                                   tool.parameters)) from None
                prefix = f"Error executing tool {name}: "
                text = str(exc)
                raise ToolError(text[len(prefix):] if text.startswith(prefix) else text) \
                    from None

    server = AlayaMCP("alaya", instructions=INSTRUCTIONS, version=__version__, **(auth or {}))
    server.refresher = refresher  # type: ignore[attr-defined]  # closed by `alaya mcp`

    def embedder() -> Any:
        if "embedder" not in state:
            from vault_engine.providers.embedding import get_embedder

            try:
                state["embedder"] = get_embedder(vault.config)
            except AlayaError:
                state["embedder"] = None
        return state["embedder"]

    def run(tool: str, call: Callable[[], T], *, reads: bool = False) -> T:
        """An engine call as a tool: errors in MCP terms; a read of a vault never compiled
        compiles it first."""
        try:
            try:
                return call()
            except NotCompiledError:
                if not reads:
                    raise
                refresher(first=True)
                return call()
        except AlayaError as exc:
            raise ToolError(tool_error(tool, exc.message, exc.fix, exc.path)) from None
        except Exception as exc:
            refused = refused_write(exc, op="access")  # no space, read-only, no permission
            if refused is None:
                raise
            raise ToolError(tool_error(tool, refused.message, refused.fix, refused.path)) from None

    def wrote(result: dict[str, Any]) -> dict[str, Any]:
        """After one of this server's writes: compile, so the next recall sees it."""
        return {**result, "refresh": refresher().as_dict()}

    @server.tool(annotations=S.READS, title="Recall memories")
    def recall(query: S.Query = "", concepts: S.Concepts = None, relations: S.Relations = None,
               depth: S.Depth = None, from_nodes: S.FromNodes = None, top_k: S.TopK = None,
               kinds: S.Kinds = None, types: S.Types = None, tags: S.Tags = None,
               as_of: S.AsOf = None, mode: S.RecallMode = "hybrid") -> dict[str, Any]:
        """Search long-term memory (zero LLM calls unless a [rerank] model is configured):
        free text in `query`, or structured —
        `concepts` plus `relations` (e.g. ["CAUSED_BY"]) and `depth` to follow typed links —
        or keep navigating from `from_nodes` (ids of an earlier result). Returns `nodes`
        (id, title, kind, path, score, h_distance — below 0.3 is close to the target —,
        snippet, the relation that reached them; sessions with their turn anchors),
        `explorable` relation types to follow next, and `stale: true` when the vault changed
        since the last compile."""
        from vault_engine.recall.pipeline import recall as run_recall
        from vault_engine.recall.query import RecallQuery, RecallSettings

        obj: dict[str, Any] = {"query": query, "mode": mode}
        for key, value in (("concepts", concepts), ("relations", relations), ("depth", depth),
                           ("from_nodes", from_nodes), ("top_k", top_k), ("kind", kinds),
                           ("type", types), ("tag", tags), ("as_of", as_of)):
            if value is not None:
                obj[key] = value
        if "reranker" not in state:
            from vault_engine.providers.rerank import get_reranker

            state["reranker"] = get_reranker(vault.config)
        return run("recall", lambda: run_recall(
            vault.state_dir, RecallQuery.from_json(obj),  # no namespace keys: own + shared
            embedder=embedder() if mode != "bm25" else None,
            settings=RecallSettings.from_config(vault.config), resident=True,
            reranker=state["reranker"], caller=vault.caller), reads=True)

    @server.tool(annotations=S.READS, title="Paths between notes")
    def traverse(a: S.Ref, b: S.OtherRef = None, max_hops: S.MaxHops = 3,
                 relations: S.Relations = None, depth: S.TraverseDepth = 1) -> dict[str, Any]:
        """The best three paths between notes `a` and `b` (by the product of edge weights);
        or, without `b`, the notes within `depth` steps of `a`, along `relations` only if
        given."""
        from vault_engine.recall.traverse import find_paths, neighbourhood

        def call() -> dict[str, Any]:
            if b:
                return find_paths(vault.state_dir, a, b, max_hops=max_hops,
                                  caller=vault.caller)
            threshold = float(vault.config.get("recall", "rel_similarity_threshold"))
            return neighbourhood(vault.state_dir, a, rels=tuple(
                r.upper() for r in relations or ()), depth=depth, threshold=threshold,
                caller=vault.caller)

        return run("traverse", call, reads=True)

    @server.tool(annotations=S.READS, title="Trace a card to its sources")
    def trace(card: S.Ref, context: S.Context = 1) -> dict[str, Any]:
        """From a card back to the sessions and the exact turns its claims came from, with
        `context` turns around each — what was actually said."""
        from vault_engine.recall.served import served_trace
        from vault_engine.recall.trace import trace as run_trace

        # secrets masked, turns that read as an injection withheld from an agent
        return run("trace", lambda: served_trace(run_trace(vault, card, context=context),
                                                 vault.caller))

    @server.tool(annotations=S.READS, title="Read one note")
    def get(ref: S.Ref) -> dict[str, Any]:
        """One note in full: frontmatter, claims with confidence and evidence, relations,
        body."""
        from vault_engine.recall.served import served_note

        # the caller's view (its own namespaces + shared), secrets masked, injections withheld
        return run("get", lambda: served_note(vault.load().find(ref), vault.caller))

    @server.tool(annotations=S.ADDS, title="Save a new card")
    def new(title: S.Title, type: S.NewType = "concept", content: S.Content = "",
            tags: S.NewTags = None, claims: S.Claims = None, aliases: S.Aliases = None,
            importance: S.Importance = None) -> dict[str, Any]:
        """Save what you learned as a card (one git commit, in this agent's namespace):
        a title that states it, its type, short `claims`, optional details in `content`.
        Recall first to avoid a duplicate; link it to related cards with `link`."""
        from vault_engine.store import cards as card_ops

        from .writes import shared_screen

        def call() -> dict[str, Any]:
            spec = card_ops.NewCard.from_json({
                "title": title, "type": type, "content": content, "tags": tags or [],
                "claims": claims or [], "aliases": aliases or [],
                **({"importance": importance} if importance is not None else {})})
            created = card_ops.create_card(vault, spec, screen=shared_screen(vault))
            return {"id": created.id, "title": created.title, "path": created.path,
                    "commit": created.commit, "relations": list(created.relations)}

        return wrote(run("new", call))

    @server.tool(annotations=S.ADDS_ONCE, title="Relate two notes")
    def link(a: S.Source, b: S.Target, rel: S.Rel = "RELATES_TO", weight: S.Weight = None,
             reason: S.Reason = None) -> dict[str, Any]:
        """Add a typed relation a —rel→ b (one line in a's frontmatter, one commit). Linking
        the same pair again changes nothing."""
        return wrote(run("link", lambda: _link_json(vault, a, b, rel, weight, reason)))

    @server.tool(annotations=S.CHANGES_ONCE, title="Remove a relation")
    def unlink(a: S.Source, b: S.Target, rel: S.UnlinkRel = None) -> dict[str, Any]:
        """Remove the relations a → b from a's frontmatter (only `rel` if given; one
        commit). Wikilinks in a note's text are a person's writing and stay."""
        from vault_engine.store import cards as card_ops

        def call() -> dict[str, Any]:
            r = card_ops.unlink(vault, a, b, rel.upper() if rel else None)
            return {"source": r.source.id or r.source.path,
                    "target": r.target.id or r.target.path, "rel": r.type,
                    "changed": r.changed, "commit": r.commit, "message": r.message}

        return wrote(run("unlink", call))

    @server.tool(annotations=S.CHANGES, title="Say how a memory worked out")
    def feedback(verdict: S.VerdictArg, id: S.FeedbackId, claim: S.ClaimId = None,
                 text: S.ClaimText = None, reason: S.Reason = None) -> dict[str, Any]:
        """Tell the memory how a recalled note worked out: `useful` / `not-useful` (ranks it
        up or down), `correct` (rewrite claim `claim` to `text`; notes that depend on it are
        marked stale) or `deprecate` (archive it, with `reason`)."""
        from vault_engine.care.feedback import feedback as run_feedback

        return wrote(run("feedback", lambda: asdict(run_feedback(
            vault, verdict, id, claim=claim, text=text, reason=reason))))

    @server.tool(annotations=S.ADDS_ONCE, title="Store a conversation")
    def ingest(session: S.Session) -> dict[str, Any]:
        """Store a conversation as a session note (one commit); recall finds its turns at
        once. Idempotent: the same session again changes nothing, a grown one gets its new
        turns appended. Then `distill` turns it into cards."""
        from vault_engine.sessions.ingest import ingest as run_ingest

        if not isinstance(session.get("turns"), list):
            raise ToolError('ingest: `session` needs a `turns` list — fix: {"id": "chat-1", '
                            '"turns": [{"role": "user", "content": "…"}]}')
        sid = str(session.get("id") or "session")
        reports, sha = run("ingest", lambda: run_ingest(
            vault, [(f"{sid}.json", json.dumps(session).encode("utf-8"))], fmt="session"))
        return wrote({"sessions": [r.__dict__ for r in reports], "commit": sha})

    @server.tool(annotations=S.ADDS_ONCE, title="Distil sessions into cards")
    def distill(session: S.SessionRef = None) -> dict[str, Any]:
        """Turn a stored session (or every pending one) into cards with claims, evidence and
        links — offline rules, or the LLM the vault is configured with. Near-duplicates
        update the existing card instead of repeating it. One commit per session."""
        from vault_engine.sessions.distill import distill as run_distill

        outcomes = run("distill", lambda: run_distill(vault, session=session,
                                                     all_sessions=False))
        return wrote({"sessions": [o.to_dict() for o in outcomes]})

    @server.tool(annotations=S.READS, title="Memory for the start of a turn")
    def context(query: S.ContextQuery = None, budget: S.Budget = 4000) -> dict[str, Any]:
        """What to load at the start of a turn: the user's persona, MEMORY.md and, given the
        turn's `query`, the top recalls — one line per memory with its wikilink, within
        `budget` characters. Put `text` in your context."""
        from vault_engine.recall.context import build_context

        return run("context", lambda: build_context(
            vault, budget=budget, query=query or None,
            embedder=embedder() if query else None).as_dict(), reads=True)

    @server.tool(annotations=S.READS, title="What the memory holds")
    def status() -> dict[str, Any]:
        """Counts per layer, tier sizes, temperatures, the last compile, and whether the
        compiled artifacts are stale."""
        from vault_engine.care.freshness import check_artifacts
        from vault_engine.care.status import status as run_status

        def call() -> dict[str, Any]:
            data = run_status(vault.state_dir, caller=vault.caller)
            check = check_artifacts(vault)
            return {**data, "stale": not check.ok,
                    "stale_reason": None if check.ok else check.reason}

        return run("status", call, reads=True)

    @server.tool(annotations=S.READS, title="Relation and node types")
    def schema(what: S.SchemaWhat = "relations") -> dict[str, Any]:
        """The relation types the vault uses (with counts; use them in `recall` and `link`),
        or its note kinds and card types."""
        from vault_engine.care.status import schema_node_types, schema_relations

        return run("schema", lambda: schema_node_types(vault.state_dir, vault.caller)
                   if what == "node-types" else schema_relations(vault.state_dir, vault.caller),
                   reads=True)

    register_resources(server, vault, caller.agent)
    register_prompts(server, vault, embedder)
    return server


def _link_json(vault: Any, a: str, b: str, rel: str, weight: float | None,
               reason: str | None) -> dict[str, Any]:
    from vault_engine.store import cards as card_ops

    from .writes import shared_screen

    r = card_ops.link(vault, a, b, rel.upper(), weight=weight, reason=reason,
                      screen=shared_screen(vault))
    return {"source": r.source.id or r.source.path, "target": r.target.id or r.target.path,
            "rel": r.type, "changed": r.changed, "commit": r.commit, "message": r.message}


def mcp_caller(flag: str | None, outer: Caller) -> Caller:
    """Who the MCP server answers as: `alaya mcp --agent NAME` (or ALAYA_AGENT, which the
    option reads), else the caller of `alaya --agent NAME mcp`, else the owner. A name that is
    given but blank is a usage error (store/namespaces.py)."""
    return Caller.of_agent(flag) if flag is not None else outer
