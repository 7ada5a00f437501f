"""`alaya recall`: free text, structured (--concepts/--rel/--depth/--from-nodes) or JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from vault_engine.errors import UsageError
from vault_engine.recall.present import caution
from vault_engine.recall.query import KINDS, MODES
from vault_engine.text import mend

from .output import echo, emit_json, json_option, pass_json, style


@click.command()
@click.argument("text", required=False, default="")
@click.option("--concepts", default="", help="Comma-separated concepts (structured mode).")
@click.option("--rel", "rels", multiple=True,
              help="Follow only this relation type and close ones (repeat or comma-separate).")
@click.option("--depth", type=click.IntRange(0, 5), default=None,
              help="Graph expansion depth (default [recall] depth).")
@click.option("--from-nodes", default="", help="Comma-separated node ids to continue from.")
@click.option("--top-k", type=click.IntRange(1, 200), default=None, help="How many results.")
@click.option("--namespace", "namespaces", multiple=True,
              help="Also search this namespace (own + shared are always searched).")
@click.option("--all-namespaces", is_flag=True, help="Search every namespace.")
@click.option("--type", "types", multiple=True, help="Only cards of this type.")
@click.option("--tag", "tags", multiple=True, help="Only notes with this tag.")
@click.option("--kind", "kinds", multiple=True,
              type=click.Choice(KINDS),
              help="Only this kind of node.")
@click.option("--as-of", default=None, help="Only claims valid at this date (YYYY-MM-DD).")
@click.option("--mode", type=click.Choice(MODES), default="hybrid",
              show_default=True, help="Retrieval: fused, lexical only or vectors only.")
@click.option("--json-in", is_flag=True,
              help="Read the query as a JSON object on stdin (also done, without this flag, "
                   "when no query is given and stdin is not a terminal).")
@click.option("--save", is_flag=True,
              help="Write the query and its hits as a note in queries/ and commit it.")
@click.option("--fresh", is_flag=True,
              help="Compile incrementally first, so notes edited since the last compile count.")
@click.option("--pending", is_flag=True,
              help="Include knowledge still waiting for review (branch alaya/proposals).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "prompt"]), default=None,
              help="Output: text (default on a terminal), json, or prompt (for an agent's context).")
@json_option
@click.pass_obj
@pass_json
def recall(obj: Any, text: str, concepts: str, rels: tuple[str, ...], depth: int | None,
           from_nodes: str, top_k: int | None, namespaces: tuple[str, ...],
           all_namespaces: bool, types: tuple[str, ...], tags: tuple[str, ...],
           kinds: tuple[str, ...], as_of: str | None, mode: str, json_in: bool, save: bool,
           fresh: bool, pending: bool, fmt: str | None, as_json: bool) -> None:
    """Recall memories: hybrid vector + BM25 search, graph expansion, zero LLM calls.

    \b
    Examples (the three modes, and continuing a navigation):
      alaya recall "gateway restart"                                   # free text
      alaya recall --concepts "gateway restart,telegram" --rel CAUSED_BY --depth 2
      echo '{"concepts": ["gateway restart"], "relations": ["CAUSED_BY"], "depth": 2}' \\
          | alaya recall --json                         # JSON on stdin (or: alaya recall -)
      alaya recall --from-nodes card-7f3a2c1d --rel DEPENDS_ON        # keep navigating

    Searches your namespace and `shared`. Writes a telemetry event under .alaya/ and never
    changes a note. Output: docs/schemas/recall.schema.json (--json).
    """
    from vault_engine.providers.embedding import get_embedder
    from vault_engine.recall.pipeline import recall as run_recall
    from vault_engine.recall.present import prompt_block
    from vault_engine.recall.query import RecallQuery, RecallSettings, parse_as_of

    vault = obj.vault()
    if pending:
        from compilers.pipeline import compile_vault
        from vault_engine.collab.review import proposal_vault, share_embedding_cache

        proposals = proposal_vault(vault)
        share_embedding_cache(vault, proposals)
        compile_vault(proposals)  # incremental: only what the proposals changed
        vault = proposals
    elif fresh:
        from compilers.pipeline import compile_vault

        compile_vault(vault)
    split = [r.strip().upper() for x in rels for r in x.split(",") if r.strip()]
    piped = _piped(force=json_in or text == "-") if json_in or text == "-" or not (
        text or concepts or from_nodes) else None
    if piped is not None:
        # the JSON query of an agent (seed 000 §4.4); options on the command line win
        try:
            obj = mend.loads(piped)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"stdin is not valid JSON: {getattr(exc, 'msg', exc)}",
                             fix='pipe e.g. {"concepts": ["…"], "relations": ["CAUSED_BY"]}'
                             ) from None
        if isinstance(obj, dict):
            obj = {**obj, **_given(click.get_current_context(), split)}
        query = RecallQuery.from_json(obj)
    else:
        query = RecallQuery(
            text=text, concepts=tuple(c.strip() for c in concepts.split(",") if c.strip()),
            relations=tuple(split), depth=depth,
            from_nodes=tuple(n.strip() for n in from_nodes.split(",") if n.strip()),
            top_k=top_k, namespaces=namespaces, all_namespaces=all_namespaces, types=types,
            tags=tags, kinds=kinds, as_of=parse_as_of(as_of) if as_of else None, mode=mode)
    embedder = None
    if query.mode != "bm25":
        try:
            embedder = get_embedder(vault.config)
        except Exception as exc:  # a misconfigured embedder degrades to BM25, never fails
            echo(style(f"! embedder unavailable: {exc}", fg="yellow"), err=True)
    reranker = None
    if vault.config.get("rerank", "provider") != "none":  # optional, off by default
        from vault_engine.providers.rerank import get_reranker

        reranker = get_reranker(vault.config)
    result = run_recall(vault.state_dir, query, embedder=embedder,
                        settings=RecallSettings.from_config(vault.config), reranker=reranker,
                        caller=vault.caller)
    if save:
        from vault_engine.recall.queries import recall_lines, save_query

        title = query.query_text or ",".join(query.from_nodes)
        from .writes import after_write

        path, sha = save_query(vault, kind="recall", title=title[:80], query=result["query"],
                               lines=recall_lines(result, vault.load()))
        result["saved"] = {"path": path, "commit": sha,
                           "refresh": after_write(vault, quiet=fmt == "json" or as_json)}
    fmt = "json" if as_json else (fmt or "text")
    # the answer is made of compiled artifacts, masked at compile; only the caller's own
    # query is printed back, and it passes the redactor here
    from vault_engine.redaction_trigger import triggered

    if triggered(json.dumps(result["query"], ensure_ascii=False)):
        from vault_engine.redaction_input import mask

        result["query"] = mask(result["query"])
    if fmt == "json":
        emit_json(result, checked=True)
    elif fmt == "prompt":
        click.echo(prompt_block(result))
    else:
        _render(result)


def _piped(force: bool) -> bytes | None:
    """The query piped to stdin: always read for `-` / --json-in; otherwise only when stdin
    is not a terminal and something arrives (empty input: there is no query)."""
    from .fast import PIPED, read_piped

    data = PIPED.pop() if PIPED else (sys.stdin.buffer.read() if force else read_piped())
    if not force and (data is None or not data.strip()):
        return None
    return data or b""


# command-line option → key of the JSON query it overrides
_KEYS = {"concepts": "concepts", "depth": "depth", "from_nodes": "from_nodes", "top_k": "top_k",
         "namespaces": "namespace", "all_namespaces": "all_namespaces", "types": "type",
         "tags": "tag", "kinds": "kind", "as_of": "as_of", "mode": "mode"}


def _given(ctx: click.Context, relations: list[str]) -> dict[str, Any]:
    """The query options typed on the command line, as JSON query keys."""
    from click.core import ParameterSource

    out: dict[str, Any] = {}
    for name, key in _KEYS.items():
        if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            value = ctx.params[name]
            out[key] = list(value) if isinstance(value, tuple) else value
    if ctx.get_parameter_source("rels") == ParameterSource.COMMANDLINE:
        out["relations"] = relations
    return out


def _render(result: dict[str, Any]) -> None:
    q = result["query"]
    desc = (f'"{q["text"]}"' if q["text"] else "") + (
        f" concepts={q['concepts']}" if q["concepts"] else "") + (
        f" relations={q['relations']}" if q["relations"] else "") + (
        f" depth={q['depth']}" if q["relations"] or q["from_nodes"] else "") + (
        f" from={q['from_nodes']}" if q["from_nodes"] else "")
    echo(f"🔍 Recalling: {desc.strip()}\n", checked=True)
    for w in result["warnings"]:
        echo(style(f"! {w}", fg="yellow"), err=True, checked=True)
    for i, n in enumerate(result["nodes"], 1):
        tag = f"#{n['type']}" if n.get("type") else f"#{n['kind']}"
        flag = caution(n)
        echo(f"[{i}] {style(n['title'], bold=True)} (h={n['h_distance']:.2f}) {tag}"
             + (style(flag, fg="yellow") if flag else ""), checked=True)
        if n.get("matched_rel"):
            echo(f"    matched: {n['matched_rel']} (rel_sim={n['rel_similarity']}) "
                 f"via {n['via']}", checked=True)
        if n["kind"] == "session" and n.get("turns"):
            for t in n["turns"][:2]:
                echo(f"    [^{t['anchor']}] {t['text'][:160]}", checked=True)
        elif n.get("snippet"):
            echo(f"    {n['snippet'][:200]}", checked=True)
        echo(f"    {style(n['id'], fg='cyan')}  {n['path']}", checked=True)
    if not result["nodes"]:
        echo("No memories matched.", checked=True)
    if result["explorable"]:
        echo("\nExplorable paths:", checked=True)
        for e in result["explorable"][:6]:
            echo(f"  - {e['rel']} ({e['count']} node{'s' if e['count'] != 1 else ''}, "
                 f"rel_sim={e['rel_sim_to_query']})", checked=True)
    avg = result["h_distance_avg"]
    if avg is not None:
        verdict = "🎯 close to target" if avg < 0.3 else "keep exploring"
        echo(f"\nAverage h_distance: {avg:.2f} ({verdict})  ·  {result['latency_ms']:.0f} ms",
             checked=True)
