"""Chat completions through any OpenAI-compatible `/v1/chat/completions` endpoint.

Settings: `[llm]` in alaya.toml, overridden by ALAYA_LLM_BASE_URL, ALAYA_LLM_MODEL,
ALAYA_LLM_API_KEY (the key only ever from the environment). A daily call budget
(`[llm] daily_call_budget`, seed 003 §3.1) is counted in `.alaya/state/llm-budget.json`;
past it, callers fall back to the offline distiller.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_engine.config import Config
from vault_engine.errors import AlayaError
from vault_engine.primitives import now

from .http import post_json


class LLMError(AlayaError):
    """The chat endpoint failed or answered something unusable."""


@dataclass(frozen=True)
class LLMSettings:
    provider: str
    base_url: str
    model: str
    api_key: str | None
    timeout_s: float
    max_retries: int
    daily_call_budget: int
    max_response_bytes: int = 16 * 1024 * 1024
    max_retry_after_s: float = 60.0


def llm_settings(config: Config, env: Mapping[str, str] | None = None) -> LLMSettings:
    env = os.environ if env is None else env
    sec = config.section("llm")
    base_url = env.get("ALAYA_LLM_BASE_URL") or sec["base_url"]
    provider = str(sec["provider"]).lower()
    if env.get("ALAYA_LLM_BASE_URL"):
        provider = "openai"  # pointing at an endpoint is asking for it
    return LLMSettings(provider=provider, base_url=base_url,
                       model=env.get("ALAYA_LLM_MODEL") or sec["model"] or "default",
                       api_key=env.get("ALAYA_LLM_API_KEY") or None,
                       timeout_s=float(sec["timeout_s"]), max_retries=int(sec["max_retries"]),
                       daily_call_budget=int(sec["daily_call_budget"]),
                       max_response_bytes=int(sec["max_response_bytes"]),
                       max_retry_after_s=float(sec["max_retry_after_s"]))


class Budget:
    """Calls per UTC day, persisted under `.alaya/state/` (never in git)."""

    def __init__(self, state_dir: Path, limit: int) -> None:
        self.path = state_dir / "state" / "llm-budget.json"
        self.limit = limit

    def _load(self) -> dict[str, int]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(k): int(v) for k, v in data.items()}
        except (OSError, ValueError, AttributeError):
            return {}

    def today(self) -> str:
        return now().date().isoformat()

    def used(self) -> int:
        return self._load().get(self.today(), 0)

    def available(self) -> bool:
        return self.used() < self.limit

    def spend(self) -> None:
        data = {self.today(): self.used() + 1}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data), encoding="utf-8")


class ChatClient:
    def __init__(self, settings: LLMSettings, *, backoff_s: float = 1.0) -> None:
        if not settings.base_url:
            raise LLMError("no LLM endpoint configured",
                           fix="set ALAYA_LLM_BASE_URL (e.g. http://127.0.0.1:8000/v1)")
        base = settings.base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.settings = settings
        self.backoff_s = backoff_s
        self.id = f"llm:{settings.model}"

    def complete(self, messages: Sequence[Mapping[str, str]], *, temperature: float = 0.0,
                 json_mode: bool = True) -> str:
        import httpx

        # post_json masks every secret in the prompt, whoever built it (providers/http.py)
        payload: dict[str, Any] = {"model": self.settings.model, "messages": list(messages),
                                   "temperature": temperature}
        if json_mode:
            payload["response_format"] = {"type": "json_object"}
        with httpx.Client() as client:
            body = post_json(client, self.url, payload, api_key=self.settings.api_key,
                             timeout_s=self.settings.timeout_s,
                             max_retries=self.settings.max_retries, backoff_s=self.backoff_s,
                             max_bytes=self.settings.max_response_bytes,
                             max_retry_after_s=self.settings.max_retry_after_s,
                             error=LLMError,
                             fix="check ALAYA_LLM_BASE_URL / ALAYA_LLM_MODEL / "
                                 "ALAYA_LLM_API_KEY and that the server is up")
        try:
            return str(body["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"{self.url} answered without choices[0].message.content",
                           fix="point ALAYA_LLM_BASE_URL at an OpenAI-compatible chat API"
                           ) from None
