"""Secrets in text — found, redacted and masked: the text room's name for the one redactor.

The detector lives in the ground modules `vault_engine/redaction.py` (rules by structure),
`redaction_shapes.py` (what a secret-looking value is) and `redaction_input.py` (structured
input and the write gateway), so the store's write gateway, telemetry and the LLM client —
which may not import this room — use the very same function (docs/security.md §2).
"""

from __future__ import annotations

from vault_engine.redaction import MARK, Scanner, SecretHit, find_secrets, has_secret, redact, redact_name
from vault_engine.redaction_input import gate, mask, redact_input

__all__ = ["MARK", "Scanner", "SecretHit", "find_secrets", "gate", "has_secret", "mask",
           "redact", "redact_input", "redact_name"]
