"""The installed `alaya` command, run as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The console script installed next to this interpreter (pip install -e . / pip install .).
ALAYA = shutil.which("alaya", path=str(Path(sys.executable).parent)) or shutil.which("alaya")


def alaya(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    assert ALAYA, "the `alaya` console script is not installed: run `pip install -e '.[dev]'`"
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([ALAYA, *args], capture_output=True, text=True, input=input,
                          env=env, timeout=120)


def test_installed_command_init_new_link_show(tmp_path: Path) -> None:
    vault = str(tmp_path / "v")
    assert alaya("init", vault).returncode == 0
    assert alaya("--vault", vault, "new", "--title", "A", "--type", "fact").returncode == 0
    card = json.dumps({"title": "B", "type": "decision"})
    assert alaya("--vault", vault, "new", "-", input=card).returncode == 0
    linked = alaya("--vault", vault, "link", "A", "B", "--rel", "DEPENDS_ON", "--json")
    assert linked.returncode == 0 and json.loads(linked.stdout)["changed"] is True
    shown = json.loads(alaya("--vault", vault, "show", "A", "--json").stdout)
    assert shown["relations"][0] == {"type": "DEPENDS_ON", "target": "B", "weight": 1.0,
                                     "reason": None, "origin": "frontmatter", "line": 10}
    assert alaya("--vault", vault, "show", "missing").returncode == 1
    assert alaya("--vault", vault, "bogus").returncode == 2
    assert alaya("--version").stdout.startswith("alaya, version")
