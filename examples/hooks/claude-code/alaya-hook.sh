#!/bin/sh
# alaya for Claude Code: one hook script for every event (settings.json beside it wires it).
#
#   SessionStart      prints what Claude should start with: persona, MEMORY.md (`alaya
#                     context`); Claude Code adds a SessionStart hook's stdout to the context
#   UserPromptSubmit  prints the memories recalled for the prompt (auto-recall before a turn);
#                     its stdout is added to the context too
#   PreCompact, Stop  captures the transcript into its session note, in the background: the
#                     next recall finds the turns (`alaya capture` refreshes the artifacts)
#   SessionEnd        captures it, then distils the session into cards, in the background
#
# Reads the event JSON Claude Code passes on stdin (session_id, transcript_path,
# hook_event_name, prompt …). Never blocks or fails a session: it always exits 0 and writes
# its errors to $ALAYA_HOOK_LOG.
#
#   ALAYA_VAULT            the vault (else alaya's usual lookup)
#   ALAYA_AGENT            optional: this agent's namespace
#   ALAYA                  the alaya executable (default: alaya on PATH)
#   ALAYA_PYTHON           a Python 3 to read the event JSON (default: python3)
#   ALAYA_CONTEXT_BUDGET   characters for SessionStart (default 3000)
#   ALAYA_RECALL_TOP_K     memories per prompt (default 5; 0 turns prompt recall off)
#   ALAYA_HOOK_LOG         log file (default: $TMPDIR/alaya-hook.log)
#   ALAYA_HOOK_FOREGROUND  set: capture and distil before returning (tests, slow disks)
set -u
ALAYA="${ALAYA:-alaya}"
PY="${ALAYA_PYTHON:-python3}"
LOG="${ALAYA_HOOK_LOG:-${TMPDIR:-/tmp}/alaya-hook.log}"

# `alaya-hook.sh --end TRANSCRIPT`: the SessionEnd work, run detached by the hook itself
if [ "${1:-}" = "--end" ]; then
  sid=$("$ALAYA" capture "$2" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["session"])') &&
    "$ALAYA" distill --session "$sid"
  exit 0
fi

input=$(cat)
field() {
  printf '%s' "$input" | "$PY" -c 'import json, sys
try:
    value = json.load(sys.stdin).get(sys.argv[1])
except Exception:
    value = None
print("" if value is None else value)' "$1" 2>>"$LOG"
}
later() {  # run "$@" detached (or now, with ALAYA_HOOK_FOREGROUND), output to the log
  if [ -n "${ALAYA_HOOK_FOREGROUND:-}" ]; then
    "$@" >>"$LOG" 2>&1
  else
    nohup "$@" >>"$LOG" 2>&1 </dev/null &
  fi
}

event=$(field hook_event_name)
transcript=$(field transcript_path)
case "$event" in
  SessionStart)
    "$ALAYA" context --budget "${ALAYA_CONTEXT_BUDGET:-3000}" 2>>"$LOG" ;;
  UserPromptSubmit)
    prompt=$(field prompt)
    if [ -n "$prompt" ] && [ "${ALAYA_RECALL_TOP_K:-5}" != 0 ]; then
      "$ALAYA" recall "$prompt" --format prompt --top-k "${ALAYA_RECALL_TOP_K:-5}" 2>>"$LOG"
    fi ;;
  PreCompact|Stop)
    [ -f "$transcript" ] && later "$ALAYA" capture "$transcript" ;;
  SessionEnd)
    [ -f "$transcript" ] && later sh "$0" --end "$transcript" ;;
  *)
    echo "alaya-hook: ignoring event '${event:-?}'" >>"$LOG" ;;
esac
exit 0
