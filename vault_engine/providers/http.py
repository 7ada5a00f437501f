"""One POST with retries, shared by the embedding and chat providers.

Retries with exponential backoff on timeouts, connection errors, 408/409/429 and 5xx; a
4xx that retrying cannot fix fails at once. The error names the endpoint and what to check.
"""

from __future__ import annotations

import time
from typing import Any

from vault_engine.errors import AlayaError


def post_json(client: Any, url: str, payload: dict[str, Any], *, api_key: str | None,
              timeout_s: float, max_retries: int, backoff_s: float,
              error: type[AlayaError], fix: str) -> Any:
    """POST `payload`, return the decoded JSON body, or raise `error` naming the cause."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    last = ""
    for attempt in range(max_retries + 1):
        try:
            resp = client.post(url, json=payload, headers=headers, timeout=timeout_s)
        except httpx.TimeoutException:
            last = f"timed out after {timeout_s:g}s"
        except httpx.TransportError as exc:
            last = f"cannot connect: {exc}"
        else:
            if resp.status_code == 200:
                try:
                    return resp.json()
                except ValueError:
                    raise error(f"{url} returned a malformed body (not JSON): "
                                f"{resp.text[:120]!r}", fix=fix) from None
            last = f"HTTP {resp.status_code}: {resp.text[:200]}"
            if resp.status_code not in (408, 409, 429) and resp.status_code < 500:
                break  # a client error will not get better by retrying
        if attempt < max_retries:
            time.sleep(backoff_s * (2 ** attempt))
    raise error(f"{url} failed: {last}", fix=fix)
