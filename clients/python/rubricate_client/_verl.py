"""verl reward functions backed by ``rubricate serve`` (the implementation behind
``rubricate_client.verl``; see that module for the configuration of each reward manager)."""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from rubricate_client.client import (
    DEFAULT_CONNECT_RETRY_TIME,
    DEFAULT_MAX_RETRY_TIME,
    DEFAULT_TIMEOUT,
    AsyncRubricateClient,
    RubricateAbort,
    RubricateClient,
    RubricateConfigError,
    RubricateError,
    build_item,
    plain,
    rubric_value,
)

logger = logging.getLogger("rubricate_client.verl")

#: Keys of every dict the functions return, the same each time (verl collects them per sample).
SCORE_KEYS = ("score", "reward_failed", "criteria_met_fraction")

#: verl's default ``reward_model.timeout``: after it, the ``rate_limited`` manager (and ``prime``,
#: with its own 300 s) stops waiting for a reward function and scores the sample 0.0.
VERL_REWARD_TIMEOUT = 300.0

#: Longest one call may take, retries included: 90 % of verl's timeout, inside it.
DEFAULT_TIME_BUDGET = 270.0

_clients: Dict[Tuple[Any, ...], Any] = {}
_lock = threading.Lock()


class VerlScore(dict):
    """The dict verl's managers read (``score`` and the extra keys), which also answers
    ``result[0]`` with the score: verl's ``prime`` manager reads a non-number result as
    ``float(result[0])``, so ``compute_score`` works there under verl's default name too."""

    def __getitem__(self, key: Any) -> Any:
        if key == 0 and not dict.__contains__(self, 0):
            return dict.__getitem__(self, "score")
        return dict.__getitem__(self, key)


def _abort(error: BaseException) -> RubricateAbort:
    """Every failure leaves a verl reward function as ``RubricateAbort``, a ``BaseException``:
    verl's ``prime`` and ``rate_limited`` managers turn any ``Exception`` into a reward of 0.0."""
    if isinstance(error, RubricateAbort):
        return error
    if isinstance(error, RubricateError):
        abort = RubricateAbort(error.code, f"rubricate reward failed, stopping the step instead of training on an invented reward: {error.message}", error.status)
    else:
        abort = RubricateAbort("INPUT_INVALID", f"rubricate reward failed, stopping the step instead of training on an invented reward: {error}")
    abort.__cause__ = error
    return abort


def _budgeted(timeout: float, max_retry_time: float, time_budget: float) -> Tuple[float, float]:
    """(timeout, max_retry_time) whose worst case, the last attempt starting at the end of the
    retry window, stays inside ``time_budget``."""
    timeout = min(timeout, time_budget)
    return timeout, max(0.0, min(max_retry_time, time_budget - timeout))


def _time_budget(time_budget: Optional[float], reward_model_timeout: Optional[float]) -> float:
    """The budget of one call, strictly inside verl's ``reward_model.timeout``: verl does not pass
    its timeout to reward functions, so ``reward_kwargs.reward_model_timeout`` carries it
    (``${reward_model.timeout}``); verl's default 300 s otherwise. Without ``time_budget``, 90 %
    of the timeout; a ``time_budget`` at or above it is refused (verl would cancel the call and
    train 0.0)."""
    limit = VERL_REWARD_TIMEOUT if reward_model_timeout is None else float(reward_model_timeout)
    if not limit > 0:
        raise RubricateConfigError("CONFIG_INVALID", f"reward_model_timeout must be a positive number of seconds, got {reward_model_timeout!r}")
    if time_budget is None:
        return min(DEFAULT_TIME_BUDGET, 0.9 * limit)
    if float(time_budget) >= limit:
        raise RubricateConfigError(
            "CONFIG_INVALID",
            f"time_budget {float(time_budget):g} s is not below verl's reward_model.timeout {limit:g} s: verl would cancel a slow call and train 0.0. Set reward_kwargs.time_budget below it, or leave it out (90 % of the timeout)",
        )
    return float(time_budget)


def _url_key(base_url: Any) -> Any:
    """Several replicas may come as a list (from a config file): a tuple keeps the client cache's key hashable."""
    return tuple(base_url) if isinstance(base_url, list) else base_url


def _client(kind: type, base_url: Optional[str], token: Optional[str], timeout: float, max_retry_time: float, connect_retry_time: float) -> Any:
    # Per process: a forked worker (verl's prime manager) builds its own client and thread pool.
    base_url = _url_key(base_url)
    key = (os.getpid(), kind, base_url, token, timeout, max_retry_time, connect_retry_time)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = kind(base_url, token, timeout, max_retry_time=max_retry_time, connect_retry_time=connect_retry_time)
            _clients[key] = client
        return client


def _as_rubric(value: Any) -> Any:
    """A rubric given as a dict, or as a JSON string holding one; None otherwise."""
    value = plain(value)
    if isinstance(value, dict) and "criteria" in value:
        return rubric_value(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) and "criteria" in parsed else None
    return None


def _item(solution_str: Any, ground_truth: Any, extra_info: Any) -> Dict[str, Any]:
    info = extra_info if isinstance(extra_info, dict) else {}
    prompt = plain(info.get("prompt"))
    if prompt is None:
        raise ValueError("extra_info['prompt'] is missing: verl does not pass the prompt to reward functions, put it in extra_info when you build the dataset")
    rubric = _as_rubric(info.get("rubric")) or _as_rubric(ground_truth)
    rubric_id = info.get("rubric_id")
    if rubric is None and rubric_id is None:
        raise ValueError("no rubric: put it in extra_info['rubric'] (or extra_info['rubric_id'], or reward_model.ground_truth) as a dict or a JSON string")
    reference = info.get("reference")
    return build_item(
        prompt,
        str(solution_str),
        rubric,
        rubric_id=None if rubric is not None else str(rubric_id),
        reference=None if reference is None else str(reference),
    )


def _score_dict(result: Dict[str, Any], fallback: Optional[float]) -> Dict[str, float]:
    """verl's dict for one answer: real rewards as floats; failures as the flagged fallback, or raised."""
    if result.get("fallback") and result.get("reward") is not None:
        # The server runs with --on-error fallback=X: the user asked for it there.
        logger.warning("rubricate: sample %s not graded (%s): server fallback %s", result.get("id"), (result.get("error") or {}).get("code"), result["reward"])
        return VerlScore(score=float(result["reward"]), reward_failed=1.0, criteria_met_fraction=0.0)
    if result.get("reward") is None:
        error = result.get("error") or {}
        code = str(error.get("code", "NOT_GRADED"))
        if fallback is None:
            raise RubricateAbort(code, f"sample {result.get('id')} was not graded: {error.get('message', 'no reason given')} (set reward_kwargs.fallback=X to train through grading failures with a flagged reward X)")
        logger.warning("rubricate: sample %s not graded (%s): fallback %s", result.get("id"), code, fallback)
        return VerlScore(score=float(fallback), reward_failed=1.0, criteria_met_fraction=0.0)
    graded = [criterion for criterion in result.get("criteria", []) if criterion.get("status") == "ok"]
    met = sum(1 for criterion in graded if criterion.get("met"))
    return VerlScore(score=float(result["reward"]), reward_failed=0.0, criteria_met_fraction=float(met) / len(graded) if graded else 0.0)


def _deadline_result(error: RubricateError) -> Optional[Dict[str, Any]]:
    """A single item past the server's deadline answers 504: a grading failure of this sample."""
    if error.code == "DEADLINE_EXCEEDED":
        return {"reward": None, "error": {"code": error.code, "message": error.message}}
    return None


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Dict[str, Any]] = None,
    *,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    fallback: Optional[float] = None,
    max_retry_time: float = DEFAULT_MAX_RETRY_TIME,
    connect_retry_time: float = DEFAULT_CONNECT_RETRY_TIME,
    time_budget: Optional[float] = None,
    reward_model_timeout: Optional[float] = None,
    **_unused: Any,
) -> Dict[str, float]:
    """One sample, synchronously: verl's ``naive``, ``dapo`` and ``prime`` managers (the result
    also reads as ``result[0]``, as prime reads it), or the reward loop."""
    try:
        item = _item(solution_str, ground_truth, extra_info)
        timeout, max_retry_time = _budgeted(timeout, max_retry_time, _time_budget(time_budget, reward_model_timeout))
        client: RubricateClient = _client(RubricateClient, base_url, token, timeout, max_retry_time, connect_retry_time)
        try:
            result = client.score_item(item)
        except RubricateError as error:
            result = _deadline_result(error)
            if result is None:
                raise
        return _score_dict(result, fallback)
    except (RubricateError, ValueError) as error:
        raise _abort(error) from error


async def compute_score_async(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Dict[str, Any]] = None,
    *,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    fallback: Optional[float] = None,
    max_retry_time: float = DEFAULT_MAX_RETRY_TIME,
    connect_retry_time: float = DEFAULT_CONNECT_RETRY_TIME,
    time_budget: Optional[float] = None,
    reward_model_timeout: Optional[float] = None,
    max_concurrency: int = 256,
    **_unused: Any,
) -> Dict[str, float]:
    """One sample, as a coroutine (verl's reward loop, ``rate_limited`` included, awaits it;
    all samples run at once, up to ``max_concurrency`` requests in flight per process). Under
    ``rate_limited``, pass verl's timeout: ``reward_kwargs.reward_model_timeout=${reward_model.timeout}``
    (see ``_time_budget``)."""
    try:
        item = _item(solution_str, ground_truth, extra_info)
        timeout, max_retry_time = _budgeted(timeout, max_retry_time, _time_budget(time_budget, reward_model_timeout))
        base_url = _url_key(base_url)
        key = (os.getpid(), "async", base_url, token, timeout, max_retry_time, connect_retry_time, max_concurrency)
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = AsyncRubricateClient(base_url, token, timeout, max_concurrency=max_concurrency, max_retry_time=max_retry_time, connect_retry_time=connect_retry_time)
                _clients[key] = client
        try:
            result = await client.score_item(item)
        except RubricateError as error:
            result = _deadline_result(error)
            if result is None:
                raise
        return _score_dict(result, fallback)
    except (RubricateError, ValueError) as error:
        raise _abort(error) from error


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Optional[Sequence[Any]] = None,
    *,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    fallback: Optional[float] = None,
    max_retry_time: float = DEFAULT_MAX_RETRY_TIME,
    connect_retry_time: float = DEFAULT_CONNECT_RETRY_TIME,
    **_unused: Any,
) -> List[Dict[str, float]]:
    """The whole batch in one call (verl's ``batch`` manager): one dict per sample, in order.

    An invalid rubric fails the call (naming ``items[i]``) unless ``fallback`` is set; then that
    sample gets the flagged fallback, like a grading failure."""
    try:
        count = len(solution_strs)
        infos = list(extra_infos) if extra_infos is not None else [None] * count
        truths = list(ground_truths) if ground_truths is not None else [None] * count
        if len(infos) != count or len(truths) != count:
            raise ValueError(f"compute_score_batch got {count} solutions, {len(truths)} ground truths and {len(infos)} extra_infos")
        items = [_item(solution, truth, info) for solution, truth, info in zip(solution_strs, truths, infos)]
        client: RubricateClient = _client(RubricateClient, base_url, token, timeout, max_retry_time, connect_retry_time)
        results = client.score_batch(items, on_invalid="reject" if fallback is None else "fail_item")
        return [_score_dict(result, fallback) for result in results]
    except (RubricateError, ValueError) as error:
        raise _abort(error) from error


def compute_score_prime(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Optional[Dict[str, Any]] = None, **options: Any) -> float:
    """One sample as a plain float, for reward managers that read numbers only (``prime``
    reads ``compute_score``'s result as well); failures raise ``RubricateAbort`` the same way."""
    return compute_score(data_source, solution_str, ground_truth, extra_info, **options)["score"]
