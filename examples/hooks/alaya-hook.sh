#!/bin/sh
# A generic alaya hook for any agent runtime that can run a command when a session starts,
# before a turn and after one (seed 004: auto-recall before a turn, capture after it).
#
#   alaya-hook.sh start                      prints persona + MEMORY.md, for the system prompt
#   alaya-hook.sh turn "the user's message"  prints the memories recalled for it, one a line
#   alaya-hook.sh save TRANSCRIPT            captures the transcript into its session note
#   alaya-hook.sh end TRANSCRIPT             captures it, then distils the session into cards
#
# TRANSCRIPT: JSONL messages ({"role", "content", …} a line), or a Claude Code or OpenClaw
# transcript file. Every write refreshes the artifacts, so the next `turn` already recalls it.
# `start` and `turn` never fail a turn: with no memory yet they print nothing (exit 0).
#
#   ALAYA_VAULT  the vault     ALAYA_AGENT  this agent's namespace     ALAYA  the executable
#   ALAYA_CONTEXT_BUDGET (3000 characters), ALAYA_RECALL_TOP_K (5)
set -u
ALAYA="${ALAYA:-alaya}"
what="${1:-}"
case "$what" in
  start)
    "$ALAYA" context --budget "${ALAYA_CONTEXT_BUDGET:-3000}" || true ;;
  turn)
    [ -n "${2:-}" ] || { echo "usage: $0 turn MESSAGE" >&2; exit 2; }
    "$ALAYA" recall "$2" --format prompt --top-k "${ALAYA_RECALL_TOP_K:-5}" || true ;;
  save)
    [ -f "${2:-}" ] || { echo "usage: $0 save TRANSCRIPT (a file)" >&2; exit 2; }
    exec "$ALAYA" capture "$2" ;;
  end)
    [ -f "${2:-}" ] || { echo "usage: $0 end TRANSCRIPT (a file)" >&2; exit 2; }
    out=$("$ALAYA" capture "$2" --json) || exit $?
    sid=$(printf '%s' "$out" | "${ALAYA_PYTHON:-python3}" -c \
      'import json, sys; print(json.load(sys.stdin)["session"])') || exit 1
    exec "$ALAYA" distill --session "$sid" ;;
  *)
    echo "usage: $0 start | turn MESSAGE | save TRANSCRIPT | end TRANSCRIPT" >&2
    exit 2 ;;
esac
