#!/bin/sh
# End-of-session hook for an agent runtime: store the finished conversation, distil it into
# cards, and recompile so the next session's recall sees it.
#
#   AGENT_TRANSCRIPT  the JSONL transcript the agent wrote (one message per line)
#   ALAYA_VAULT       the vault (or pass --vault)
#   ALAYA_AGENT       optional: this agent's private namespace
#
# Wire it to your runtime's "session end" event, e.g. in a Claude Code hooks config:
#   {"hooks": {"SessionEnd": [{"hooks": [{"type": "command",
#       "command": "AGENT_TRANSCRIPT=$TRANSCRIPT_PATH sh examples/hooks/end-of-session.sh"}]}]}}
set -eu
: "${AGENT_TRANSCRIPT:?set AGENT_TRANSCRIPT to the session transcript (JSONL)}"
session="$(basename "$AGENT_TRANSCRIPT" .jsonl)"

# 1. capture: idempotent — a transcript already captured (e.g. by `capture --follow` during
#    the session) only gets its new turns; a crash earlier lost nothing
alaya capture "$AGENT_TRANSCRIPT" --session "$session"
# 2. distil the new session into cards with claims and evidence (offline rules, or the LLM
#    configured in alaya.toml / ALAYA_LLM_*)
alaya distill --session "$session"
# 3. refresh the artifacts so recall finds it (incremental: about a second at 10k cards)
alaya compile
