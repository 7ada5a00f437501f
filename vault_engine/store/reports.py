"""Reports per audience: a report line is written only where its readers may read every note
it names (DESIGN principle 13, "taint follows text").

`shared` reports live at `reports/<name>.md` — every agent reads them, so they name shared
notes only. A namespace's own reports live at `reports/@<namespace>/<name>.md` with
`namespace: <namespace>` in their frontmatter, so the namespace policy guards them like any
note of that namespace: its readers (that agent, and the owner) see them, nobody else.
"""

from __future__ import annotations

from .namespaces import SHARED, home_folder


def report_path(name: str, namespace: str | None) -> str:
    return f"{home_folder('reports', namespace)}/{name}.md"


def report_head(name: str, title: str, namespace: str | None, intro: str) -> str:
    """A new report note's text up to its first managed block."""
    ns = namespace or SHARED
    rid = f"report-{name}" if ns == SHARED else f"report-{name}-{ns}"
    fm = f"---\nid: {rid}\ntitle: {title}\ntype: report\n"
    if ns != SHARED:
        fm += f"namespace: {ns}\n"
    return fm + f"---\n# {title}\n\n{intro}\n\n"


__all__ = ["report_head", "report_path"]
