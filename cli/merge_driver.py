"""git runs this as the `alaya` merge driver: `python -m cli.merge_driver %O %A %B %P`.

Registered by `alaya init` and `alaya sync` (vault_engine/collab/sync.py); the merge itself is
vault_engine/store/merge.py. Exit 0: %A holds the merge; 1: git reports a conflict."""

from __future__ import annotations

import sys


def main() -> None:
    from vault_engine.store.merge import run_driver

    args = sys.argv[1:]
    if len(args) < 3:
        sys.stderr.write("usage: python -m cli.merge_driver BASE OURS THEIRS [PATH]\n")
        sys.exit(2)
    sys.exit(run_driver(args[0], args[1], args[2], args[3] if len(args) > 3 else ""))


if __name__ == "__main__":
    main()
