#!/bin/sh
# End-of-session hook for an agent runtime: store the finished conversation and distil it into
# cards; both refresh the artifacts, so the next session's recall sees them.
#
#   AGENT_TRANSCRIPT  the transcript the agent wrote (JSONL messages, or a Claude Code or
#                     OpenClaw session file)
#   ALAYA_VAULT       the vault (or pass --vault)
#   ALAYA_AGENT       optional: this agent's private namespace
#
# The same as `alaya-hook.sh end "$AGENT_TRANSCRIPT"` (alaya-hook.sh has the other moments:
# start, turn, save). For Claude Code use claude-code/alaya-hook.sh, which reads the hook's
# stdin itself.
set -eu
: "${AGENT_TRANSCRIPT:?set AGENT_TRANSCRIPT to the session transcript (JSONL)}"
# capture is idempotent: a transcript already captured (e.g. by `capture --follow` during the
# session) only gets its new turns; then distil that session (offline rules, or the LLM
# configured in alaya.toml / ALAYA_LLM_*)
exec sh "$(dirname "$0")/alaya-hook.sh" end "$AGENT_TRANSCRIPT"
