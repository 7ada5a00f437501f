#!/bin/sh
# A first vault on the bundled defaults: init → new → link → show → doctor.
# Usage: sh examples/quickstart.sh [VAULT_DIR]   (needs `alaya` on PATH)
set -eu
VAULT=${1:-$(mktemp -d)/alaya-quickstart}
export ALAYA_VAULT="$VAULT"
alaya init "$VAULT"
alaya new --title "Gateway restart drops Telegram notices" --type gotcha --tag gateway,telegram \
  --claim "Restarting the gateway drops Telegram notices unless plugins.allow lists telegram." \
  --body "After a restart no notice arrived. See [[Telegram notification mechanism]]."
echo '{"title": "Telegram notification mechanism", "type": "concept", "tags": ["telegram"],
       "content": "Notices go out through the telegram plugin, which must be in plugins.allow.",
       "claims": [{"text": "The telegram plugin sends every gateway notice.", "confidence": 0.8}]}' \
  | alaya new -
alaya link "Gateway restart drops Telegram notices" "Telegram notification mechanism" \
  --rel DEPENDS_ON --weight 0.8 --reason "the restart notice is sent by the telegram plugin"
alaya show "Gateway restart drops Telegram notices"
alaya doctor
git -C "$VAULT" log --oneline
echo "Vault: $VAULT  (open it in Obsidian)"
