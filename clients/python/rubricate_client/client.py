"""HTTP client for ``rubricate serve`` (standard library only).

``RubricateClient`` is synchronous (``urllib``); ``AsyncRubricateClient`` runs the same calls
in a thread pool so asyncio trainers can await them. Both retry refusals the server marks as
temporary (429/503, honouring ``Retry-After``) and connection failures, then raise
``RubricateError`` with the server's error code.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

Rubric = Union[Dict[str, Any], str]
Prompt = Union[str, Sequence[Dict[str, Any]]]

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
#: Longer than the server's default 120 s deadline, so the server answers first.
DEFAULT_TIMEOUT = 180.0


class RubricateError(Exception):
    """A request the server refused or could not answer.

    ``code`` is the server's error code (``INPUT_INVALID``, ``OVERLOADED``,
    ``DEADLINE_EXCEEDED``, ...) or ``CONNECTION`` when the server could not be reached.
    """

    def __init__(self, code: str, message: str, status: Optional[int] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


def default_base_url() -> str:
    return os.environ.get("RUBRICATE_URL", DEFAULT_BASE_URL)


def default_token() -> Optional[str]:
    return os.environ.get("RUBRICATE_TOKEN") or None


def build_item(
    prompt: Prompt,
    response: str,
    rubric: Optional[Rubric] = None,
    *,
    rubric_id: Optional[str] = None,
    reference: Optional[str] = None,
    id: Optional[str] = None,
    metadata: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """One native item. Without ``id`` the server derives one from the content."""
    if rubric is None and rubric_id is None:
        raise ValueError("an item needs a rubric or a rubric_id")
    item: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else list(prompt), "response": response}
    if rubric is not None:
        item["rubric"] = rubric
    if rubric_id is not None:
        item["rubric_id"] = rubric_id
    if reference is not None:
        item["reference"] = reference
    if id is not None:
        item["id"] = id
    if metadata is not None:
        item["metadata"] = metadata
    return item


class RubricateClient:
    """Synchronous client. Thread-safe: every call opens its own request."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_retries: int = 5,
        max_retry_wait: float = 60.0,
        batch_size: int = 256,
        max_parallel_batches: int = 8,
    ):
        self.base_url = (base_url or default_base_url()).rstrip("/")
        self.token = token if token is not None else default_token()
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.batch_size = batch_size
        self.max_parallel_batches = max_parallel_batches

    # -- transport ---------------------------------------------------------------------

    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        attempt = 0
        while True:
            attempt += 1
            request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                    return json.loads(answer.read().decode("utf-8"))
            except urllib.error.HTTPError as error:
                payload = error.read().decode("utf-8", errors="replace")
                code, message = _error_fields(payload, error.code)
                if error.code in (429, 503) and attempt <= self.max_retries:
                    time.sleep(self._retry_wait(error.headers.get("Retry-After"), attempt))
                    continue
                raise RubricateError(code, message, error.code) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                if attempt <= self.max_retries:
                    time.sleep(self._retry_wait(None, attempt))
                    continue
                reason = getattr(error, "reason", error)
                raise RubricateError("CONNECTION", f"cannot reach {self.base_url}: {reason}") from None

    def _retry_wait(self, retry_after: Optional[str], attempt: int) -> float:
        if retry_after is not None:
            try:
                return min(self.max_retry_wait, max(0.0, float(retry_after)))
            except ValueError:
                pass
        return min(self.max_retry_wait, 0.5 * 2 ** (attempt - 1))

    # -- API ---------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/healthz")

    def score(self, prompt: Prompt, response: str, rubric: Optional[Rubric] = None, **fields: Any) -> Dict[str, Any]:
        """Grades one response. Returns ``{id, reward, status, criteria, usage, ...}``;
        ``reward`` is None when grading failed (unless the server runs with a fallback,
        then ``fallback`` is True)."""
        return self._request("POST", "/v1/score", build_item(prompt, response, rubric, **fields))

    def score_batch(self, items: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Grades items (see ``build_item``), one result per item in order. Long lists are
        sent as several batches of ``batch_size``, a few at a time."""
        items = list(items)
        if not items:
            return []
        chunks = [items[start : start + self.batch_size] for start in range(0, len(items), self.batch_size)]
        if len(chunks) == 1:
            return self._request("POST", "/v1/score/batch", {"items": chunks[0]})["results"]
        with ThreadPoolExecutor(max_workers=min(self.max_parallel_batches, len(chunks))) as pool:
            answers = list(pool.map(lambda chunk: self._request("POST", "/v1/score/batch", {"items": chunk})["results"], chunks))
        return [result for answer in answers for result in answer]

    def score_group(
        self,
        prompt: Prompt,
        responses: Sequence[str],
        rubric: Optional[Rubric] = None,
        *,
        rubric_id: Optional[str] = None,
        reference: Optional[str] = None,
        advantages: Optional[str] = None,
        eps: Optional[float] = None,
        id: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Grades the responses to one prompt. Returns ``{id, rewards, results, fallbacks}``
        and, with ``advantages="grpo"`` or ``"dr_grpo"``, group-normalised ``advantages``
        (None for failed members)."""
        body: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else list(prompt), "responses": list(responses)}
        if rubric is not None:
            body["rubric"] = rubric
        if rubric_id is not None:
            body["rubric_id"] = rubric_id
        if reference is not None:
            body["reference"] = reference
        if advantages is not None:
            body["advantages"] = advantages
        if eps is not None:
            body["eps"] = eps
        if id is not None:
            body["id"] = id
        return self._request("POST", "/v1/score/group", body)


class AsyncRubricateClient:
    """asyncio client: the synchronous calls run in a thread pool of ``max_concurrency``."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_concurrency: int = 64,
        **options: Any,
    ):
        self.client = RubricateClient(base_url, token, timeout, **options)
        self._executor = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="rubricate")

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(function, *args, **kwargs))

    async def health(self) -> Dict[str, Any]:
        return await self._run(self.client.health)

    async def score(self, prompt: Prompt, response: str, rubric: Optional[Rubric] = None, **fields: Any) -> Dict[str, Any]:
        return await self._run(self.client.score, prompt, response, rubric, **fields)

    async def score_batch(self, items: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return await self._run(self.client.score_batch, list(items))

    async def score_group(self, prompt: Prompt, responses: Sequence[str], rubric: Optional[Rubric] = None, **fields: Any) -> Dict[str, Any]:
        return await self._run(self.client.score_group, prompt, responses, rubric, **fields)

    def close(self) -> None:
        self._executor.shutdown(wait=False)

    async def __aenter__(self) -> "AsyncRubricateClient":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.close()


def _error_fields(payload: str, status: int) -> "tuple[str, str]":
    try:
        body = json.loads(payload)
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            return str(error.get("code", f"HTTP_{status}")), str(error.get("message", payload))
    except ValueError:
        pass
    return f"HTTP_{status}", payload[:500]
