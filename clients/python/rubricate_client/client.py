"""HTTP client for ``rubricate serve`` (standard library only).

``RubricateClient`` is synchronous; ``AsyncRubricateClient`` runs the same calls in a thread
pool so asyncio trainers can await them. Each thread keeps one keep-alive connection to each
server, so a trainer that calls once per sample (verl's naive manager) does not pay a new
connection per call.

What raises, and when:

* **Configuration errors raise at once**, on the first call, with a message saying what to
  fix: 400 (the request is wrong), 401 (token), 403 (a proxy refused), 404 (wrong
  ``base_url``), 413 (body too large), and a server that cannot be reached before it ever
  answered (connection refused, unknown host). These are ``RubricateConfigError``.
* **Temporary refusals are retried**: 429/503 (the server is full, honouring ``Retry-After``)
  for at most ``max_retry_time`` seconds in total per call, and a lost connection to a server
  that answered before for at most ``connect_retry_time`` seconds; then ``RubricateError``.
* **Several replicas** (``base_url`` a list or comma-separated URLs): a replica that cannot be
  reached, drops a request or times out is quarantined and the request goes to another at
  once; only when every replica failed does the call wait, then raise as above, never a reward.
* Per-item grading failures are not errors here: the answer has ``reward: None`` and the
  reason, and the trainer helpers decide (None for TRL, a flagged fallback only when asked).
"""

from __future__ import annotations

import asyncio
import functools
import http.client
import json
import logging
import os
import re
import socket
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

Rubric = Union[Dict[str, Any], str]
Prompt = Union[str, Sequence[Dict[str, Any]]]

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
#: Longer than the server's default 120 s deadline, so the server answers first.
DEFAULT_TIMEOUT = 180.0
#: Longest one call spends retrying 429/503 refusals: the server is up but busy (a step of
#: thousands of per-sample calls against a slow judge), so waiting is the useful thing to do.
DEFAULT_MAX_RETRY_TIME = 600.0
#: Longest one call spends reconnecting to a server that answered before and went away.
DEFAULT_CONNECT_RETRY_TIME = 10.0
#: Longest wait for a replica to accept a connection: one that does not is passed over.
DEFAULT_CONNECT_TIMEOUT = 10.0

#: Statuses that mean the request or the set-up is wrong: retrying cannot help.
_CONFIGURATION_STATUSES = {400, 401, 403, 404, 405, 413, 414, 415, 422}
_RETRYABLE_STATUSES = {429, 503}
#: Paths whose requests may be sent again after a replica took them and went away: scoring gives
#: the same verdicts for the same request (and replicas sharing a store share the judge's replies),
#: so a resent request is answered, never counted, twice.
_RETRY_SAFE_PATHS = {"/healthz", "/v1/score", "/v1/score/batch", "/v1/score/group", "/v1/score/groups", "/v1/scaffold", "/v1/rubric-reward", "/carr/evaluate", "/carr/evaluate/group"}

_log = logging.getLogger("rubricate_client")


class RubricateError(Exception):
    """A request the server refused or could not answer.

    ``code`` is the server's error code (``INPUT_INVALID``, ``OVERLOADED``,
    ``DEADLINE_EXCEEDED``, ...), ``CONNECTION`` when the server could not be reached, or
    ``TIMEOUT`` when it did not answer within ``timeout``.
    """

    def __init__(self, code: str, message: str, status: Optional[int] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


class RubricateConfigError(RubricateError):
    """The set-up is wrong (token, URL, request shape, server not running): fix it and restart."""


class RubricateAbort(BaseException):
    """A rubricate failure raised where the trainer would turn an ``Exception`` into a reward.

    verl's ``prime`` and ``rate_limited`` managers and verifiers' legacy ``Rubric`` catch every
    ``Exception`` from a reward function and score the sample 0.0. A ``BaseException`` passes
    through them (and through thread and process pools and asyncio), so the step stops with
    this message instead of training on an invented zero. ``code`` and ``status`` are those of
    the failure (``UNAUTHORIZED``, ``JUDGE_CONNECTION``, ``DEADLINE_EXCEEDED``, ...); the
    original exception, if any, is ``__cause__``."""

    def __init__(self, code: str, message: str, status: Optional[int] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status

    def __reduce__(self) -> Any:
        # Crosses process pools (verl's prime manager) with its fields.
        return (type(self), (self.code, self.message, self.status))


def default_base_url() -> str:
    return os.environ.get("RUBRICATE_URL", DEFAULT_BASE_URL)


def default_token() -> Optional[str]:
    return os.environ.get("RUBRICATE_TOKEN") or None


def plain(value: Any) -> Any:
    """JSON-ready copy of a value from a dataset: numpy arrays and scalars (as parquet rows hold
    them) become lists and Python numbers, tuples become lists."""
    if isinstance(value, dict):
        return {str(key): plain(entry) for key, entry in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(entry) for entry in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "tolist"):  # numpy arrays and scalars, without importing numpy
        return plain(value.tolist())
    if hasattr(value, "item"):
        return value.item()
    return value


def rubric_value(rubric: Rubric) -> Rubric:
    """A rubric ready to send: a JSON string as it is; a dict as plain JSON without the ``None``
    of keys a dataset column filled in (Arrow gives every row of a dict column every key, absent
    ones null), at any depth but inside ``metadata``."""
    if isinstance(rubric, str):
        return rubric

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: entry if key == "metadata" else strip(entry) for key, entry in value.items() if entry is not None}
        if isinstance(value, list):
            return [strip(entry) for entry in value]
        return value

    return strip(plain(rubric))


def build_item(
    prompt: Prompt,
    response: Union[str, Sequence[Dict[str, Any]]],
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
    # A response is text, or an agent trajectory (a list of messages), which step-scoped criteria grade step by step.
    item: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else plain(prompt), "response": response if isinstance(response, str) else plain(response)}
    if rubric is not None:
        item["rubric"] = rubric_value(rubric)
    if rubric_id is not None:
        item["rubric_id"] = rubric_id
    if reference is not None:
        item["reference"] = reference
    if id is not None:
        item["id"] = id
    if metadata is not None:
        item["metadata"] = plain(metadata)
    return item


class _Connections(threading.local):
    """One keep-alive connection per thread (and per process: a forked child opens its own)."""

    connection: Optional[http.client.HTTPConnection] = None
    pid: int = 0


class _NotSent(Exception):
    """The connection could not be opened: nothing reached the replica, so any request may go elsewhere."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def redact_url(url: str) -> str:
    """``url`` without its secrets: the user-info and the value of ``token`` (or any ``*key*``,
    ``*secret*``, ``sig*`` parameter) become ``[REDACTED]``."""
    parsed = urllib.parse.urlsplit(url)
    netloc = parsed.netloc
    if "@" in netloc:
        netloc = "[REDACTED]@" + netloc.rsplit("@", 1)[1]
    pairs = urllib.parse.parse_qsl(parsed.query, keep_blank_values=True)
    secret = re.compile(r"token|key|secret|password|sig", re.IGNORECASE)
    query = "&".join(f"{name}={'[REDACTED]' if secret.search(name) else value}" for name, value in pairs)
    return urllib.parse.urlunsplit((parsed.scheme, netloc, parsed.path, query, parsed.fragment))


def replica_urls(base_url: Union[None, str, Sequence[str]]) -> List[str]:
    """The replicas' base URLs: a list, or one string of comma-separated URLs (``RUBRICATE_URL``
    when ``base_url`` is None)."""
    given = base_url or default_base_url()
    parts = [given] if isinstance(given, str) else [str(entry) for entry in given]
    urls = [url.strip().rstrip("/") for part in parts for url in part.split(",") if url.strip()]
    if not urls:
        raise RubricateConfigError("CONFIG_INVALID", "base_url names no server: give http(s)://host[:port], several separated by commas, or a list")
    return urls


class _Replica:
    """One ``rubricate serve`` replica: its address and token, its connections, its load and health."""

    def __init__(self, url: str, token: Optional[str]):
        try:
            self.url = redact_url(url)
            parsed = urllib.parse.urlsplit(url)
            port = parsed.port
        except ValueError:
            parsed, port = urllib.parse.urlsplit(""), None
            self.url = "[unparsable URL]"
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise RubricateConfigError("CONFIG_INVALID", f"base_url must be http(s)://host[:port][/prefix], got {self.url!r}")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = port
        self.prefix = parsed.path.rstrip("/")
        query_token = urllib.parse.parse_qs(parsed.query).get("token", [None])[0]
        self.token = token if token is not None else (default_token() or query_token)
        self.local = _Connections()
        self.in_flight = 0
        #: Failures since its last success; each quarantine lasts twice the one before.
        self.failures = 0
        self.down_until = 0.0


class RubricateClient:
    """Synchronous client. Thread-safe: each thread uses its own connection to each replica.

    ``base_url`` may name several ``rubricate serve`` replicas sharing one store (a list, or URLs
    separated by commas, also in ``RUBRICATE_URL``). Each request goes whole (a batch chunk, a
    group) to the replica with the fewest requests in flight. A replica that refuses the
    connection, cannot be reached within ``connect_timeout``, drops a request or does not answer
    within ``timeout`` is quarantined (0.5 s, doubling with each failure in a row up to
    ``max_retry_wait``; one answer makes it healthy again) and the request goes to another
    replica at once. Scoring requests are idempotent (the same request gives the same verdicts,
    and replicas sharing a store share the judge's replies), so resending one counts nothing
    twice; a request to another path is resent only if it never left. ``token`` is one token
    for every replica or a list, one per URL; a URL's own ``?token=`` serves when neither
    ``token`` nor ``RUBRICATE_TOKEN`` is given."""

    def __init__(
        self,
        base_url: Union[None, str, Sequence[str]] = None,
        token: Union[None, str, Sequence[Optional[str]]] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_retries: int = 100,
        max_retry_time: float = DEFAULT_MAX_RETRY_TIME,
        connect_retry_time: float = DEFAULT_CONNECT_RETRY_TIME,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_retry_wait: float = 30.0,
        batch_size: int = 256,
        max_parallel_batches: int = 8,
    ):
        urls = replica_urls(base_url)
        tokens: Sequence[Optional[str]] = [token] * len(urls) if token is None or isinstance(token, str) else list(token)
        if len(tokens) != len(urls):
            raise RubricateConfigError("CONFIG_INVALID", f"token lists {len(tokens)} tokens for {len(urls)} base URLs: give one token for all, or one per URL in the same order")
        self.replicas = [_Replica(url, replica_token) for url, replica_token in zip(urls, tokens)]
        self.base_url = ",".join(replica.url for replica in self.replicas)
        self.token = self.replicas[0].token
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_time = max_retry_time
        self.connect_retry_time = connect_retry_time
        self.connect_timeout = connect_timeout
        self.max_retry_wait = max_retry_wait
        self.batch_size = batch_size
        self.max_parallel_batches = max_parallel_batches
        self._lock = threading.Lock()
        self._turn = 0
        #: True once a replica answered anything: later connection failures are outages, not set-up errors.
        self.reached = False
        # Replaceable in tests (no real waiting, counted sleeps).
        self._sleep: Callable[[float], None] = time.sleep
        self._clock: Callable[[], float] = time.monotonic

    def __repr__(self) -> str:
        return f"RubricateClient({self.base_url!r})"

    @property
    def _local(self) -> _Connections:
        """The first replica's connections (the only one's, with one URL)."""
        return self.replicas[0].local

    # -- replicas ----------------------------------------------------------------------

    def _pick(self, avoid: Sequence[_Replica]) -> _Replica:
        """The healthy replica with the fewest requests in flight (ties in turn), preferring those
        not in ``avoid``; when all are quarantined, the first to come back. Counts it in flight."""
        with self._lock:
            now = self._clock()
            self._turn += 1
            order = self.replicas[self._turn % len(self.replicas) :] + self.replicas[: self._turn % len(self.replicas)]
            healthy = [replica for replica in order if replica.down_until <= now]
            fresh = [replica for replica in healthy if replica not in avoid]
            if fresh or healthy:
                chosen = min(fresh or healthy, key=lambda replica: replica.in_flight)
            else:
                chosen = min(order, key=lambda replica: replica.down_until)
            chosen.in_flight += 1
            return chosen

    def _quarantine(self, replica: _Replica, reason: str) -> None:
        with self._lock:
            now = self._clock()
            if replica.down_until > now:
                return  # already out: a request sent before the quarantine failed too
            replica.failures += 1
            pause = min(self.max_retry_wait, 0.5 * 2 ** (replica.failures - 1))
            replica.down_until = now + pause
            healthy = sum(1 for other in self.replicas if other.down_until <= now)
        if len(self.replicas) > 1:
            _log.warning("rubricate replica %s quarantined for %.1f s (%s); %d of %d replicas healthy", replica.url, pause, reason, healthy, len(self.replicas))

    def _healthy_again(self, replica: _Replica) -> None:
        if replica.failures == 0 and replica.down_until == 0.0:
            return
        with self._lock:
            replica.failures = 0
            replica.down_until = 0.0

    # -- transport ---------------------------------------------------------------------

    def _connection(self, replica: _Replica) -> Tuple[http.client.HTTPConnection, bool]:
        """The thread's connection to ``replica`` and whether it was used before (and may have gone stale)."""
        local = replica.local
        if local.connection is not None and local.pid == os.getpid():
            return local.connection, True
        factory = http.client.HTTPSConnection if replica.scheme == "https" else http.client.HTTPConnection
        connection = factory(replica.host, replica.port, timeout=min(self.connect_timeout, self.timeout))
        try:
            connection.connect()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            raise _NotSent(error) from None
        assert connection.sock is not None
        connection.sock.settimeout(self.timeout)
        local.connection = connection
        local.pid = os.getpid()
        return connection, False

    def _drop_connection(self, replica: _Replica) -> None:
        local = replica.local
        connection = local.connection
        local.connection = None
        if connection is not None and local.pid == os.getpid():
            connection.close()

    def _exchange(self, replica: _Replica, method: str, path: str, data: Optional[bytes], headers: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        connection, reused = self._connection(replica)
        try:
            connection.request(method, replica.prefix + path, body=data, headers=headers)
            answer = connection.getresponse()
            payload = answer.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest, http.client.BadStatusLine) as error:
            self._drop_connection(replica)
            if not reused:
                raise
            # The server closed an idle keep-alive connection: one fresh attempt, not a retry.
            connection, _ = self._connection(replica)
            try:
                connection.request(method, replica.prefix + path, body=data, headers=headers)
                answer = connection.getresponse()
                payload = answer.read()
            except BaseException:
                self._drop_connection(replica)
                raise error from None
        except BaseException:
            self._drop_connection(replica)
            raise
        if answer.getheader("connection", "").lower() == "close":
            self._drop_connection(replica)
        return answer.status, {key.lower(): value for key, value in answer.getheaders()}, payload

    def _send_once(self, replica: _Replica, method: str, path: str, data: Optional[bytes]) -> Tuple[int, Dict[str, str], bytes]:
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if replica.token:
            headers["authorization"] = f"Bearer {replica.token}"
        try:
            return self._exchange(replica, method, path, data, headers)
        finally:
            with self._lock:
                replica.in_flight -= 1

    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        call = _Call(self._clock(), path)
        while True:
            call.attempt += 1
            replica = self._pick(list(call.outages) + call.refused)
            try:
                status, answer_headers, payload = self._send_once(replica, method, path, data)
            except _NotSent as failure:
                self._after_outage(call, replica, _connection_reason(failure.error), sent=False)
                continue
            except (socket.timeout, TimeoutError):
                self._after_outage(call, replica, f"no answer within {self.timeout:g} s (timeout=)", sent=True, timed_out=True)
                continue
            except (OSError, http.client.HTTPException) as error:
                self._after_outage(call, replica, _connection_reason(error), sent=True)
                continue
            self.reached = True
            if 200 <= status < 300:
                self._healthy_again(replica)
                try:
                    return json.loads(payload.decode("utf-8"))
                except ValueError:
                    raise RubricateError("BAD_ANSWER", f"{replica.url}{path} answered {status} with a body that is not JSON: is base_url the rubricate server?", status) from None
            self._after_refusal(call, replica, status, answer_headers, payload)

    def _after_refusal(self, call: "_Call", replica: _Replica, status: int, answer_headers: Dict[str, str], payload: bytes) -> None:
        """Returns when the request should be sent again (after any wait); raises otherwise."""
        code, message, from_rubricate = _error_fields(payload, status)
        if status in _RETRYABLE_STATUSES:
            if answer_headers.get("connection", "").lower() == "close":
                self._quarantine(replica, f"{code}: {message}")  # draining: it is going away
            call.refused.append(replica)
            if call.attempt <= self.max_retries and self._other_replica(call):
                return  # another replica has room: no wait
            call.refused = []
            wait = self._retry_wait(answer_headers.get("retry-after"), call.attempt)
            if call.attempt <= self.max_retries and self._clock() - call.started + wait <= self.max_retry_time:
                self._sleep(wait)
                return
            raise RubricateError(code, f"{message} (still refused after {call.attempt} attempts in {self._clock() - call.started:.0f} s; max_retry_time={self.max_retry_time:g})", status)
        if status in _CONFIGURATION_STATUSES:
            raise RubricateConfigError(code, _configuration_message(status, code, message, replica.url, call.path, from_rubricate), status)
        if not from_rubricate and status in (502, 504) and call.path in _RETRY_SAFE_PATHS:
            # A proxy in front of the server could not reach it: an outage, retried like a lost connection.
            self._after_outage(call, replica, f"HTTP {status} from a proxy: {message}", sent=True, status=status, code=code)
            return
        raise RubricateError(code, message, status)

    def _other_replica(self, call: "_Call") -> bool:
        """Whether a healthy replica has not failed or refused this call."""
        now = self._clock()
        return any(replica.down_until <= now and replica not in call.outages and replica not in call.refused for replica in self.replicas)

    def _after_outage(self, call: "_Call", replica: _Replica, reason: str, *, sent: bool, timed_out: bool = False, status: Optional[int] = None, code: str = "CONNECTION") -> None:
        """A replica could not be reached or did not answer: quarantines it, then returns when the
        request should go again (to another replica at once, or after the first comes back);
        raises when it may not be resent or the time is up."""
        self._quarantine(replica, reason)
        call.outages[replica] = reason
        call.failures[replica] = reason
        if timed_out:
            code = "TIMEOUT"
        if sent and call.path not in _RETRY_SAFE_PATHS:
            raise RubricateError(code, f"{replica.url}{call.path}: {reason}; not resent (the request may have taken effect)", status)
        if not self.reached and not timed_out and len(call.outages) == len(self.replicas):
            raise RubricateConfigError(
                "CONNECTION",
                f"cannot reach the rubricate server at {_listing(call.outages)}: is `rubricate serve` running there, and is base_url (or RUBRICATE_URL) right?",
            )
        if call.attempt > self.max_retries:
            raise RubricateError(code, f"gave up after {call.attempt} attempts: {_listing(call.failures)}", status)
        if timed_out and (len(self.replicas) == 1 or self._clock() - call.started > self.max_retry_time):
            raise RubricateError("TIMEOUT", f"no answer from {replica.url}{call.path} within {self.timeout:g} s (timeout=)" + _also(call, replica), status)
        if self._other_replica(call):
            return  # fail over at once
        wait = max(0.0, min(other.down_until for other in self.replicas) - self._clock())
        if self._clock() - call.started + wait <= self.connect_retry_time:
            self._sleep(wait)
            call.outages.clear()
            return
        if len(self.replicas) == 1:
            raise RubricateError(code, f"lost the rubricate server at {replica.url} ({reason}) and could not reconnect within {self.connect_retry_time:g} s", status)
        raise RubricateError(code, f"every rubricate replica is down ({_listing(call.failures)}); none came back within {self.connect_retry_time:g} s (connect_retry_time=)", status)

    def _retry_wait(self, retry_after: Optional[str], attempt: int) -> float:
        if retry_after is not None:
            try:
                return min(self.max_retry_wait, max(0.0, float(retry_after)))
            except ValueError:
                pass
        return min(self.max_retry_wait, 0.5 * 2 ** (attempt - 1))

    def close(self) -> None:
        """Closes this thread's connections (others close when their threads end)."""
        for replica in self.replicas:
            self._drop_connection(replica)

    # -- API ---------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/healthz")

    def score(self, prompt: Prompt, response: Union[str, Sequence[Dict[str, Any]]], rubric: Optional[Rubric] = None, **fields: Any) -> Dict[str, Any]:
        """Grades one response. Returns ``{id, reward, status, criteria, usage, ...}``;
        ``reward`` is None when grading failed (unless the server runs with a fallback,
        then ``fallback`` is True). A trajectory response (a list of messages) graded by
        step-scoped criteria also gets ``step_rewards`` (None at a step not graded) and each
        such criterion's per-step verdicts in ``criteria[i]["process"]``."""
        return self.score_item(build_item(prompt, response, rubric, **fields))

    def score_item(self, item: Dict[str, Any]) -> Dict[str, Any]:
        """Grades one native item (see ``build_item``)."""
        return self._request("POST", "/v1/score", item)

    def score_batch(self, items: Iterable[Dict[str, Any]], *, on_invalid: str = "reject") -> List[Dict[str, Any]]:
        """Grades items (see ``build_item``), one result per item in order. Long lists are
        sent as several batches of ``batch_size``, a few at a time. With
        ``on_invalid="fail_item"`` an invalid item is a result of its own (reward None,
        ``INPUT_INVALID``) instead of failing the whole call."""
        items = list(items)
        if not items:
            return []
        extra = {} if on_invalid == "reject" else {"on_invalid": on_invalid}
        chunks = [items[start : start + self.batch_size] for start in range(0, len(items), self.batch_size)]

        def send(chunk: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
            return self._request("POST", "/v1/score/batch", {"items": chunk, **extra})["results"]

        if len(chunks) == 1:
            return send(chunks[0])
        with ThreadPoolExecutor(max_workers=min(self.max_parallel_batches, len(chunks))) as pool:
            answers = list(pool.map(send, chunks))
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
        (None for failed members). A response may be a trajectory (a list of messages): with
        step-scoped criteria the answer then carries ``step_rewards``, one list per response."""
        body: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else plain(prompt), "responses": [response if isinstance(response, str) else plain(response) for response in responses]}
        if rubric is not None:
            body["rubric"] = rubric_value(rubric)
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

    def score_groups(
        self,
        groups: Sequence[Dict[str, Any]],
        *,
        advantages: Optional[str] = None,
        eps: Optional[float] = None,
        step: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Grades several groups in one request (``POST /v1/score/groups``), each a dict
        ``{prompt, responses, rubric | rubric_id, reference?, id?}``. Returns ``{groups, fallbacks}``,
        each group with ``rewards``, ``reward_components`` (name → one value per response, None
        where not scored) and, with ``advantages="gdpo"`` (components normalised per group,
        weighted, whitened over the batch), ``"grpo"`` or ``"dr_grpo"``, its ``advantages``."""
        sent: List[Dict[str, Any]] = []
        for group in groups:
            entry: Dict[str, Any] = {key: value for key, value in group.items() if value is not None}
            prompt = entry.get("prompt")
            if prompt is not None and not isinstance(prompt, str):
                entry["prompt"] = plain(prompt)
            if "responses" in entry:
                entry["responses"] = list(entry["responses"])
            if "rubric" in entry:
                entry["rubric"] = rubric_value(entry["rubric"])
            sent.append(entry)
        body: Dict[str, Any] = {"groups": sent}
        if advantages is not None:
            body["advantages"] = advantages
        if eps is not None:
            body["eps"] = eps
        if step is not None:
            body["step"] = step
        return self._request("POST", "/v1/score/groups", body)

    def carr_evaluate(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """CaRR's reward for one trajectory (``POST /carr/evaluate``): the released server's body
        ``{history, label, task_unfinished, remote_env_info}`` and answer ``{reward, outcome_reward,
        rubric_reward, rubric_scores}`` (``rubricate_client.carr`` builds the body)."""
        return self._request("POST", "/carr/evaluate", plain(body))

    def carr_evaluate_group(self, bodies: Sequence[Dict[str, Any]], group: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """C-GRPO's group rewards (``POST /carr/evaluate/group``): ``{rewards, results}``, ``group``
        being ``{ratio, normalize, only, follow}`` (each optional)."""
        return self._request("POST", "/carr/evaluate/group", {"requests": [plain(body) for body in bodies], "group": plain(group or {})})


class AsyncRubricateClient:
    """asyncio client: the synchronous calls run in a thread pool of ``max_concurrency``
    threads, each with its own keep-alive connection."""

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

    async def score(self, prompt: Prompt, response: Union[str, Sequence[Dict[str, Any]]], rubric: Optional[Rubric] = None, **fields: Any) -> Dict[str, Any]:
        return await self._run(self.client.score, prompt, response, rubric, **fields)

    async def score_item(self, item: Dict[str, Any]) -> Dict[str, Any]:
        return await self._run(self.client.score_item, item)

    async def score_batch(self, items: Iterable[Dict[str, Any]], *, on_invalid: str = "reject") -> List[Dict[str, Any]]:
        return await self._run(self.client.score_batch, list(items), on_invalid=on_invalid)

    async def score_group(self, prompt: Prompt, responses: Sequence[str], rubric: Optional[Rubric] = None, **fields: Any) -> Dict[str, Any]:
        return await self._run(self.client.score_group, prompt, responses, rubric, **fields)

    async def score_groups(self, groups: Sequence[Dict[str, Any]], **fields: Any) -> Dict[str, Any]:
        return await self._run(self.client.score_groups, list(groups), **fields)

    def close(self) -> None:
        self._executor.shutdown(wait=False)

    async def __aenter__(self) -> "AsyncRubricateClient":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.close()


class _Call:
    """One call's progress: when it started, its attempts, the replicas that failed or refused it."""

    def __init__(self, started: float, path: str):
        self.started = started
        self.path = path
        self.attempt = 0
        #: The replicas that failed it since its last wait for one to come back.
        self.outages: Dict[_Replica, str] = {}
        #: Every failure, for the message.
        self.failures: Dict[_Replica, str] = {}
        self.refused: List[_Replica] = []


def _listing(outages: Dict[_Replica, str]) -> str:
    return "; ".join(f"{replica.url}: {reason}" for replica, reason in outages.items())


def _also(call: _Call, replica: _Replica) -> str:
    others = {other: reason for other, reason in call.failures.items() if other is not replica}
    return f"; before that {_listing(others)}" if others else ""


def _connection_reason(error: BaseException) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"unknown host: {error}"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "no connection within connect_timeout"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _error_fields(payload: bytes, status: int) -> Tuple[str, str, bool]:
    """(code, message, came from rubricate) of an error answer."""
    text = payload.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and "code" in error:
            return str(error["code"]), str(error.get("message", text)), True
    except ValueError:
        pass
    return f"HTTP_{status}", text[:300] or http.client.responses.get(status, "error"), False


def _configuration_message(status: int, code: str, message: str, base_url: str, path: str, from_rubricate: bool) -> str:
    if status == 401:
        return f"the server refused the token ({message}): pass token= (reward_kwargs.token for verl) or set RUBRICATE_TOKEN to the server's --token"
    if status == 403:
        return f"forbidden by {base_url}{path} ({message}): a proxy or gateway in front of the server refused the request"
    if status == 404 and not from_rubricate:
        return f"{base_url}{path} does not exist ({message}): base_url should be the server's root, e.g. http://host:8000 (no /v1)"
    if status == 404:
        return f"{message}: base_url should be the server's root, e.g. http://host:8000 (no /v1)"
    if status == 413:
        return f"{message}: send fewer items per call (batch_size) or raise the server's --max-body-bytes"
    return f"the server refused the request ({message})"
