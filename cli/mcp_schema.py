"""What an LLM reads about alaya's MCP tools: every parameter's type and description (closed
sets as enums) and every tool's annotations. The tools themselves are in mcp_server.py.

A parameter is an `Annotated` type whose `Field(description=…)` the SDK puts into the tool's
input schema; a `Literal` becomes a JSON-schema `enum`, so a client can offer the choices and a
wrong value is refused before the tool runs (mcp_errors.py words the refusal).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from vault_engine.store.model import CARD_TYPES, CORE_RELATIONS

# -- closed sets (kept equal to the engine's own by tests/test_mcp.py) ---------------------
Mode = Literal["hybrid", "bm25", "vector"]
Kind = Literal["card", "entity", "session", "note", "scene", "query"]
Verdict = Literal["useful", "not-useful", "correct", "deprecate"]
CardType = Literal["concept", "pattern", "gotcha", "decision", "fact", "preference",
                   "constraint", "skill", "template", "event", "instruction", "note"]
SchemaPart = Literal["relations", "node-types"]

_RELS = ", ".join(CORE_RELATIONS)

# -- recall ---------------------------------------------------------------------------
Query = Annotated[str, Field(
    description="Free text to search for, in any language, e.g. \"why did the gateway restart "
                "drop Telegram notices\" or \"网关重启后通知丢失\". May be empty when `concepts` "
                "or `from_nodes` is given.")]
Concepts = Annotated[list[str] | None, Field(
    description="Structured mode: the key concepts you extracted from the question, as short "
                "phrases, e.g. [\"gateway restart\", \"telegram notice\"]. Searched together "
                "with `query`.")]
Relations = Annotated[list[str] | None, Field(
    description=f"Relation types to follow from the hits, UPPER_SNAKE (core: {_RELS}; the "
                "`schema` tool lists the vault's own). Close custom types are followed too. "
                "Omit to expand along every relation.")]
Depth = Annotated[int | None, Field(
    ge=0, le=5, description="How many relation steps to expand from the hits (0-5; default "
                            "1, or at least 1 with `from_nodes`).")]
FromNodes = Annotated[list[str] | None, Field(
    description="Keep navigating: node ids from an earlier result's `nodes[].id` to expand "
                "from (with `relations` and `depth`), e.g. [\"card-7f3a2c1d\"].")]
TopK = Annotated[int | None, Field(ge=1, le=200, description="How many nodes to return "
                                                              "(1-200; default 10).")]
Kinds = Annotated[list[Kind] | None, Field(
    description="Only nodes of these kinds: card (knowledge), entity (people, systems), "
                "session (conversation turns), note, scene, query.")]
Types = Annotated[list[CardType] | None, Field(
    description="Only cards of these types, e.g. [\"gotcha\", \"decision\"].")]
Tags = Annotated[list[str] | None, Field(description="Only notes with one of these tags.")]
AsOf = Annotated[str | None, Field(
    description="Time travel: only claims valid on this date, YYYY-MM-DD or ISO 8601, e.g. "
                "\"2026-03-31\".")]
RecallMode = Annotated[Mode, Field(
    description="Retrieval: hybrid (vectors + BM25, the default), bm25 (words only, for exact "
                "identifiers and error strings) or vector (meaning only).")]

# -- notes ----------------------------------------------------------------------------
Ref = Annotated[str, Field(
    description="A note's id (e.g. \"card-7f3a2c1d\"), title, alias or vault path, as "
                "returned by `recall` in `nodes[].id` or `nodes[].title`.")]
OtherRef = Annotated[str | None, Field(
    description="The second note (id, title, alias or path): with it, `traverse` finds the "
                "paths from `a` to `b`; without it, the neighbourhood of `a`.")]
MaxHops = Annotated[int, Field(ge=1, le=6, description="Longest path to look for (1-6).")]
TraverseDepth = Annotated[int, Field(ge=1, le=5, description="Neighbourhood radius, in "
                                                              "relation steps (1-5).")]
Context = Annotated[int, Field(ge=0, le=20, description="Turns shown before and after each "
                                                         "evidence turn (0-20).")]
Title = Annotated[str, Field(
    min_length=1, max_length=200,
    description="The card's title, one line that states the knowledge, e.g. \"Gateway "
                "restart drops Telegram notices unless plugins.allow lists telegram\". Also "
                "its file name.")]
NewType = Annotated[CardType, Field(
    description="What kind of knowledge: concept, pattern, gotcha (a trap and its fix), "
                "decision, fact, preference (the user's), constraint, skill, template, event, "
                "instruction (a standing order), note.")]
Content = Annotated[str, Field(description="Markdown body: details, steps, context. May "
                                            "contain [[wikilinks]] to other notes.")]
NewTags = Annotated[list[str] | None, Field(description="Tags, e.g. [\"gateway\", "
                                                         "\"telegram\"].")]
Claims = Annotated[list[str] | None, Field(
    description="Short statements this card asserts, one sentence each; each becomes a claim "
                "with a confidence that feedback and later sessions adjust.")]
Aliases = Annotated[list[str] | None, Field(description="Other names the card answers to.")]
Importance = Annotated[float | None, Field(ge=0, le=1, description="0.0-1.0; how much it "
                                                                    "matters (default 0.5).")]
Rel = Annotated[str, Field(
    pattern=r"^[A-Za-z][A-Za-z0-9_]*$",
    description=f"Relation type, UPPER_SNAKE: A —rel→ B. Core: {_RELS}; any other name is "
                "allowed (e.g. LED_TO). SIMILAR_TO, CONTRADICTS and CO_OCCURS are symmetric.")]
Source = Annotated[str, Field(description="A: the note the relation starts from (id, title, "
                                          "alias or path).")]
Target = Annotated[str, Field(description="B: the note it points to (id, title, alias or "
                                          "path). It must exist.")]
Weight = Annotated[float | None, Field(ge=0, le=1, description="Strength 0.0-1.0 (default "
                                                                "1.0).")]
Reason = Annotated[str | None, Field(description="Why, in a few words; kept with the change.")]
UnlinkRel = Annotated[str | None, Field(
    description="Only this relation type; omit to remove every relation A → B.")]
VerdictArg = Annotated[Verdict, Field(
    description="useful / not-useful: how a recalled memory worked out (ranks it up or down); "
                "correct: rewrite claim `claim` to `text`; deprecate: archive the card with "
                "`reason`.")]
FeedbackId = Annotated[str, Field(description="The note the verdict is about (id or title).")]
ClaimId = Annotated[str | None, Field(
    description="correct: which claim, e.g. \"c1\" (needed when the card has several).")]
ClaimText = Annotated[str | None, Field(description="correct: the corrected statement.")]
Session = Annotated[dict[str, object], Field(
    description="The conversation: {\"id\": \"chat-0412\", \"timestamp\"?: ms or ISO, "
                "\"channel\"?, \"agent\"?, \"turns\": [{\"role\": \"user\"|\"assistant\", "
                "\"content\": \"…\", \"name\"?, \"timestamp\"?, \"id\"?}]}.")]
SessionRef = Annotated[str | None, Field(
    description="The session to distil (id or title); omit to distil every pending session.")]
Budget = Annotated[int, Field(ge=200, le=200_000, description="Characters you can spare for "
                                                               "memory this turn (200-200000).")]
ContextQuery = Annotated[str | None, Field(
    description="The turn's question: adds the memories recalled for it. Omit for persona "
                "and MEMORY.md only.")]
SchemaWhat = Annotated[SchemaPart, Field(
    description="relations: the relation types in use and how often; node-types: note kinds "
                "and card types.")]

# -- annotations ----------------------------------------------------------------------
READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                        open_world_hint=False)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                       open_world_hint=False)
ADDS_ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                          open_world_hint=False)
CHANGES_ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=True,
                               idempotent_hint=True, open_world_hint=False)

assert set(CardType.__args__) == set(CARD_TYPES)  # type: ignore[attr-defined]
