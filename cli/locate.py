"""Which vault a command works on. Standard library only: the fast recall path
(cli/fast.py) and the full CLI (cli/main.py) both ask it."""

from __future__ import annotations

import os

_WARNED: set[str] = set()  # a skipped vault is named once per process


def _owned(folder: str) -> bool:
    """Whether `folder` and its alaya.toml belong to the user running alaya (root: to root):
    a vault found by walking up is trusted only then, as git trusts a repository only in a
    folder its user owns (safe.directory)."""
    if not hasattr(os, "getuid"):
        return True
    try:
        uid = os.getuid()
        return all(os.lstat(p).st_uid == uid for p in (folder, os.path.join(folder, "alaya.toml")))
    except OSError:
        return False


def find_vault(start: str | None = None) -> str:
    """The vault a command works on when --vault is not given: $ALAYA_VAULT, else the vault
    that holds the working directory (the nearest folder upwards with an alaya.toml, as git
    finds its repository, that the user owns — one planted by someone else in a shared
    folder is skipped, with a line saying so), else ~/.alaya."""
    env = os.environ.get("ALAYA_VAULT")
    if env:
        return os.path.expanduser(env)
    here = os.path.abspath(start or os.getcwd())
    while True:
        if os.path.isfile(os.path.join(here, "alaya.toml")):
            if _owned(here):
                return here
            if here not in _WARNED:
                import sys

                _WARNED.add(here)
                sys.stderr.write(f"alaya: not using the vault at {here}: it is not yours (another "
                                 f"user owns it); pass --vault {here} to use it anyway\n")
        parent = os.path.dirname(here)
        if parent == here:
            return os.path.expanduser("~/.alaya")
        here = parent
