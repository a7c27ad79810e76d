"""A verifiers reward function backed by ``rubricate serve``, for the legacy ``vf.Rubric``
(``verifiers.legacy``, the ``Rubric(funcs=[...])`` API). The verifiers v1 judge plugin is the
top-level module ``rubricate_judge``.

    import verifiers as vf
    from rubricate_client.verifiers import make_rubric_reward
    rubric = vf.Rubric(funcs=[make_rubric_reward("http://reward-host:8000")])

The legacy ``Rubric`` calls each reward function with the names its signature asks for (all of
them when it takes ``**kwargs``): ``prompt``, ``completion`` (messages or text), ``answer``,
``info``, ``state``, ``task`` and the dataset row's other columns. The rubric is read from
``info[rubric_field]``, else the row column ``rubric_field`` (a dict or a JSON string; the
reference answer, optional, from ``info["reference"]`` or ``answer``).

The legacy ``Rubric`` turns every ``Exception`` from a reward function into a reward of 0.0
(logged as an error). So every failure here (configuration, a sample the server could not
grade, the time budget) raises ``RubricateAbort``, a ``BaseException``, which stops the run
with the cause instead of training on zeros. A number stands in for a failure only when the
server runs with ``--on-error fallback=X`` (flagged there, and logged here).

The function is a ``functools.partial`` over a module-level coroutine and plain settings, so it
pickles into other processes (install the package there too).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from rubricate_client._verl import DEFAULT_TIME_BUDGET, _abort, _as_rubric, _budgeted, _deadline_result
from rubricate_client.client import DEFAULT_CONNECT_RETRY_TIME, DEFAULT_MAX_RETRY_TIME, DEFAULT_TIMEOUT, AsyncRubricateClient, RubricateAbort, RubricateError, build_item, plain
from rubricate_client.trl import completion_text, prompt_value

logger = logging.getLogger("rubricate_client.verifiers")

_clients: Dict[Tuple[Any, ...], AsyncRubricateClient] = {}
_lock = threading.Lock()


class RewardSettings:
    """Plain settings of a reward function (picklable)."""

    def __init__(self, base_url: Optional[str], token: Optional[str], timeout: float, rubric_field: str, time_budget: float, max_concurrency: int):
        self.base_url = base_url
        self.token = token
        self.timeout = timeout
        self.rubric_field = rubric_field
        self.time_budget = time_budget
        self.max_concurrency = max_concurrency

    def client(self) -> AsyncRubricateClient:
        timeout, max_retry_time = _budgeted(self.timeout, DEFAULT_MAX_RETRY_TIME, self.time_budget)
        key = (os.getpid(), self.base_url, self.token, timeout, max_retry_time, self.max_concurrency)
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = AsyncRubricateClient(self.base_url, self.token, timeout, max_concurrency=self.max_concurrency, max_retry_time=max_retry_time, connect_retry_time=DEFAULT_CONNECT_RETRY_TIME)
                _clients[key] = client
            return client


async def rubric_reward(settings: RewardSettings, prompt: Any = None, completion: Any = None, answer: Any = "", info: Optional[Dict[str, Any]] = None, **row: Any) -> float:
    """One rollout's reward: its item score under the rubric of the row."""
    try:
        info = plain(info) if isinstance(info, dict) else {}
        rubric = _as_rubric(info.get(settings.rubric_field)) or _as_rubric(row.get(settings.rubric_field))
        if rubric is None:
            raise ValueError(f"no rubric: put it in the dataset as info['{settings.rubric_field}'] or a '{settings.rubric_field}' column (a dict or a JSON string)")
        if prompt is None:
            raise ValueError("no prompt reached the reward function")
        reference = info.get("reference", answer)
        item = build_item(prompt_value(prompt), completion_text(completion), rubric, reference=str(reference) if reference not in (None, "") else None)
        try:
            result = await settings.client().score_item(item)
        except RubricateError as error:
            result = _deadline_result(error)
            if result is None:
                raise
    except (RubricateError, ValueError) as error:
        raise _abort(error) from error
    if result.get("reward") is None:
        failure = result.get("error") or {}
        raise RubricateAbort(str(failure.get("code", "NOT_GRADED")), f"rollout not graded, stopping instead of a 0.0 in verifiers' Rubric: {failure.get('message', 'no reason given')}")
    if result.get("fallback"):
        logger.warning("rubricate: rollout %s not graded (%s): server fallback %s", result.get("id"), (result.get("error") or {}).get("code"), result["reward"])
    return float(result["reward"])


def make_rubric_reward(
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    rubric_field: str = "rubric",
    time_budget: float = DEFAULT_TIME_BUDGET,
    max_concurrency: int = 64,
    name: str = "rubric_reward",
) -> Callable[..., Any]:
    """``async (prompt, completion, answer, info, **row) -> float`` for ``vf.Rubric(funcs=[...])``;
    ``name`` is the reward's name in verifiers' metrics."""
    bound = functools.partial(rubric_reward, RewardSettings(base_url, token, timeout, rubric_field, time_budget, max_concurrency))
    bound.__name__ = name  # type: ignore[attr-defined]
    return bound
