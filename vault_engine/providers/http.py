"""One POST with retries, shared by the embedding and chat providers.

- **A deadline, not a per-read timeout.** `timeout_s` bounds the whole call: every attempt,
  every wait between attempts, and reading the answer. The exchange runs on a helper thread
  and the caller stops waiting at the deadline, so a server that drips one byte every few
  seconds (which never trips a read timeout) cannot hold a distill forever.
- **Retries** with exponential backoff on timeouts, connection errors, 408/409/429 and 5xx; a
  4xx that retrying cannot fix fails at once. A `Retry-After` header (seconds or an HTTP
  date) is honoured, capped at `max_retry_after_s`; one that points past the deadline fails
  now with that reason instead of sleeping.
- **A size cap.** An answer larger than `max_bytes` (default 16 MB) — announced by
  Content-Length or found while reading — fails with a clear error; it is never read whole.

The error names the endpoint and what to check.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from vault_engine.errors import AlayaError

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
MAX_RETRY_AFTER_S = 60.0


class _TooLarge(Exception):
    pass


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a `Retry-After` header asks to wait (None when absent or unreadable)."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # here, not at the top: a one-shot recall imports this module, and
    # email (with socket, random, calendar) costs it ~15 ms it never needs

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _exchange(client: Any, url: str, payload: dict[str, Any], headers: dict[str, str],
              timeout: float, max_bytes: int) -> tuple[int, Mapping[str, str], bytes]:
    import httpx

    with client.stream("POST", url, json=payload, headers=headers,
                       timeout=httpx.Timeout(timeout)) as resp:
        announced = resp.headers.get("content-length")
        if announced and announced.isdigit() and int(announced) > max_bytes:
            raise _TooLarge(int(announced))
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():  # decoded: a compressed bomb counts as it expands
            size += len(chunk)
            if size > max_bytes:
                raise _TooLarge(size)
            chunks.append(chunk)
        return resp.status_code, resp.headers, b"".join(chunks)


def _within(deadline: float, work: Any) -> Any:
    """Run `work()` on a helper thread; give up waiting at `deadline` (TimeoutError)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name="alaya-http").start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["value"]


def post_json(client: Any, url: str, payload: dict[str, Any], *, api_key: str | None,
              timeout_s: float, max_retries: int, backoff_s: float,
              error: type[AlayaError], fix: str, max_bytes: int = MAX_RESPONSE_BYTES,
              max_retry_after_s: float = MAX_RETRY_AFTER_S) -> Any:
    """POST `payload`, return the decoded JSON body, or raise `error` naming the cause.

    The one door to every provider (LLM, embeddings, reranker): what it sends passes the
    redactor first, so an endpoint never receives a secret, whoever built the payload
    (docs/security.md §2)."""
    import httpx

    from vault_engine.redaction_input import mask

    payload = mask(payload)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout_s
    last = ""
    for attempt in range(max_retries + 1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            last = f"no complete answer within timeout_s = {timeout_s:g}s"
            break
        wait = backoff_s * (2 ** attempt)
        try:
            status, resp_headers, body = _within(deadline, lambda r=remaining: _exchange(
                client, url, payload, headers, r, max_bytes))
        except TimeoutError:
            last = (f"timed out: no complete answer within timeout_s = {timeout_s:g}s (a "
                    "deadline for the whole call, however slowly the server sends)")
            break
        except _TooLarge as exc:
            raise error(f"{url} answered more than {max_bytes:,} bytes ({exc.args[0]:,} "
                        "seen): refused without reading the rest",
                        fix="check that the endpoint is the API you meant, or raise "
                            "max_response_bytes in alaya.toml") from None
        except httpx.TimeoutException:
            last = f"timed out after {timeout_s:g}s"
        except httpx.TransportError as exc:
            last = f"cannot connect: {exc}"
        else:
            if status == 200:
                try:
                    return json.loads(body)
                except ValueError:
                    raise error(f"{url} returned a malformed body (not JSON): "
                                f"{body[:120]!r}", fix=fix) from None
            last = f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}"
            if status not in (408, 409, 429) and status < 500:
                break  # a client error will not get better by retrying
            asked = retry_after(resp_headers)
            if asked is not None:
                if asked > max_retry_after_s:
                    last += f" (asked to retry after {asked:g}s, more than {max_retry_after_s:g}s)"
                    break
                wait = asked
        if attempt < max_retries:
            if time.monotonic() + wait >= deadline:
                last += f"; the next try ({wait:g}s away) would be past timeout_s = {timeout_s:g}s"
                break
            time.sleep(wait)
    raise error(f"{url} failed: {last}", fix=fix)
