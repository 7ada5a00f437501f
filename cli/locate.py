"""Which vault a command works on. Standard library only: the fast recall path
(cli/fast.py) and the full CLI (cli/main.py) both ask it."""

from __future__ import annotations

import os


def find_vault(start: str | None = None) -> str:
    """The vault a command works on when --vault is not given: $ALAYA_VAULT, else the vault
    that holds the working directory (the nearest folder upwards with an alaya.toml, as git
    finds its repository), else ~/.alaya."""
    env = os.environ.get("ALAYA_VAULT")
    if env:
        return os.path.expanduser(env)
    here = os.path.abspath(start or os.getcwd())
    while True:
        if os.path.isfile(os.path.join(here, "alaya.toml")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return os.path.expanduser("~/.alaya")
        here = parent
