"""`alaya demo`: a vault made from the bundled example sessions, end to end, offline."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from compilers.options import CompileOptions  # noqa: I001
from compilers.pipeline import compile_vault
from vault_engine.errors import WriteRefusedError
from vault_engine.recall.trace import trace
from vault_engine.sessions.distill import distill
from vault_engine.sessions.ingest import ingest, read_inputs
from vault_engine.store.init_vault import init_vault
from vault_engine.store.model import Card
from vault_engine.store.namespaces import Caller
from vault_engine.store.vault import Vault

from .output import echo, ok, style


def example_sessions() -> list[Path]:
    """The example sessions: shipped in the wheel, or in the checkout's examples/."""
    here = Path(__file__).resolve().parent
    for folder in (here / "demo_sessions", here.parent / "examples" / "sessions"):
        files = sorted(folder.glob("*.json"))
        if files:
            return files
    raise click.ClickException("the example sessions are missing; reinstall alaya-vault")


@click.command()
@click.option("--dir", "target", type=click.Path(path_type=Path), default=None,
              help="Where to create the demo vault (default: a new temporary folder).")
@click.pass_obj
def demo(obj: Any, target: Path | None) -> None:
    """Build a demo vault from the bundled example sessions, offline, and tour it.

    init → ingest four agent sessions (a failed deploy and its fix, a config gotcha, a design
    decision, user preferences) → distill with the offline rules → compile with the bundled
    embedder → list the cards → trace one back to its turns → two recalls (free text, and
    structured along CAUSED_BY). Prints where the vault is, to open in Obsidian.

    \b
    Example:
      alaya demo --dir ~/alaya-demo
    """
    root = target or Path(tempfile.mkdtemp(prefix="alaya-demo-")) / "vault"
    made = not root.exists()
    try:
        _tour(root)
    except WriteRefusedError:
        if made:  # a demo the disk refused half-way is not left behind half-made
            shutil.rmtree(root if target else root.parent, ignore_errors=True)
        raise


def _tour(root: Path) -> None:
    echo(style("1. init", bold=True))
    init_vault(root)
    vault = Vault.open(root, caller=Caller.owner())  # the demo's vault is the person's own
    echo(ok(f"vault at {root}"))
    echo(style("2. ingest", bold=True))
    reports, _ = ingest(vault, read_inputs([str(p) for p in example_sessions()]))
    for r in reports:
        echo(ok(f"{r.session}: {r.turns} turns"))
    echo(style("3. distill (offline rules)", bold=True))
    outcomes = distill(vault, distiller="rules")
    for o in outcomes:
        made = o.applied.created if o.applied else []
        echo(ok(f"{o.session}: {len(made)} card(s)"))
    echo(style("4. compile (bundled embedder, offline)", bold=True))
    stats = compile_vault(vault, CompileOptions())
    echo(ok(f"{stats.notes} notes → {stats.units} recall units, {stats.edges} edges, "
            f"{stats.embedded} texts embedded in {stats.ms.get('total', 0) / 1000:.1f} s"))
    echo(style("5. the cards it made", bold=True))
    cards = sorted((n for n in vault.load().notes if isinstance(n, Card)),
                   key=lambda c: (c.type or "", c.title))
    for c in cards:
        echo(f"  [{c.type}] {c.title}  {style(c.id or '', fg='cyan')}")
    gotcha = next((c for c in cards if c.type == "gotcha" and len(c.claims) > 1), cards[0])
    echo(style(f"6. trace \"{gotcha.title}\"", bold=True))
    result = trace(vault, gotcha.id or gotcha.path)
    for s in result.sessions:
        for t in s.turns:
            mark = "  ← evidence" if t.evidence_for else ""
            echo(f"  [{s.id} {t.anchor}] {t.name or t.role}: {t.text.strip()[:110]}{mark}")
    from vault_engine.providers.embedding import get_embedder
    from vault_engine.recall.pipeline import recall
    from vault_engine.recall.query import RecallQuery, RecallSettings

    embedder = get_embedder(vault.config)
    settings = RecallSettings.from_config(vault.config)
    for label, query in (
            ('7. recall "why did the telegram notice not arrive after the restart?"',
             RecallQuery(text="why did the telegram notice not arrive after the restart?",
                         top_k=3)),
            ("8. recall --concepts \"deploy failed\" --rel CAUSED_BY --depth 2",
             RecallQuery(concepts=("deploy failed",), relations=("CAUSED_BY",), depth=2,
                         top_k=3))):
        echo(style(label, bold=True))
        found = recall(vault.state_dir, query, embedder=embedder, settings=settings,
                       caller=vault.caller)
        for i, n in enumerate(found["nodes"], 1):
            how = f" ← {n['matched_rel']} of {n['via']}" if n.get("matched_rel") else ""
            echo(f"  [{i}] {n['title']} (h={n['h_distance']:.2f}) #{n.get('type') or n['kind']}"
                 f"{how}")
    echo("")
    echo(ok(f"Done. Open {root} in Obsidian, or try:"))
    echo(f"  alaya --vault {root} show {gotcha.id}")
    echo(f"  alaya --vault {root} trace {gotcha.id}")
    echo(f"  alaya --vault {root} lint")
    echo(f"  alaya --vault {root} introspect --dry-run")
    echo(f"  git -C {root} log --oneline")
