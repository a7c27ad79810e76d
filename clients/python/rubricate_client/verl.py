"""verl custom reward function backed by ``rubricate serve``.

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)``
once per response and does not pass the prompt, so the dataset must carry it:
``extra_info = {"prompt": ..., "rubric": {...}}`` (or ``"rubric_id"``; ``"reference"`` is
optional). A rubric in ``ground_truth`` (``reward_model.ground_truth``) is used when
``extra_info`` has none.

verl expects a number for every response. The function returns a dict with the same keys
every time (verl collects the extra keys per sample):

* ``score``: the reward, or the fallback (``fallback=`` keyword, default 0.0) when grading
  failed;
* ``reward_failed``: 1.0 when ``score`` is the fallback, else 0.0 -- mask or count these;
* ``criteria_met_fraction``: share of graded criteria that were met (0.0 on failure).

Configure the server with ``reward_kwargs`` (``base_url``, ``token``, ``timeout``,
``fallback``, ``max_retries``) or the ``RUBRICATE_URL`` / ``RUBRICATE_TOKEN`` environment variables.
``compute_score_async`` is the same as a coroutine, for verl's async reward loop.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, Optional, Tuple

from .client import DEFAULT_TIMEOUT, AsyncRubricateClient, RubricateClient, RubricateError, build_item

_clients: Dict[Tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def _client(kind: type, base_url: Optional[str], token: Optional[str], timeout: float, max_retries: int) -> Any:
    key = (kind, base_url, token, timeout, max_retries)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = kind(base_url, token, timeout, max_retries=max_retries)
            _clients[key] = client
        return client


def _as_rubric(value: Any) -> Any:
    """A rubric given as a dict, or as a JSON string holding one; None otherwise."""
    if isinstance(value, dict) and "criteria" in value:
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) and "criteria" in parsed else None
    return None


def _item(solution_str: str, ground_truth: Any, extra_info: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    info = extra_info or {}
    prompt = info.get("prompt")
    if prompt is None:
        raise ValueError("extra_info['prompt'] is missing: verl does not pass the prompt, put it in extra_info")
    rubric = _as_rubric(info.get("rubric")) or _as_rubric(ground_truth)
    rubric_id = info.get("rubric_id")
    if rubric is None and rubric_id is None:
        raise ValueError("no rubric: put it in extra_info['rubric'] (or extra_info['rubric_id'], or ground_truth)")
    return build_item(prompt, solution_str, rubric, rubric_id=None if rubric is not None else str(rubric_id), reference=info.get("reference"))


def _score_dict(result: Optional[Dict[str, Any]], fallback: float) -> Dict[str, float]:
    if result is None or result.get("reward") is None or result.get("fallback"):
        return {"score": float(fallback), "reward_failed": 1.0, "criteria_met_fraction": 0.0}
    graded = [criterion for criterion in result.get("criteria", []) if criterion.get("status") == "ok"]
    met = sum(1 for criterion in graded if criterion.get("met"))
    return {
        "score": float(result["reward"]),
        "reward_failed": 0.0,
        "criteria_met_fraction": met / len(graded) if graded else 0.0,
    }


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Dict[str, Any]] = None,
    *,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    fallback: float = 0.0,
    max_retries: int = 5,
    **_unused: Any,
) -> Dict[str, float]:
    """verl reward function (synchronous). See the module documentation."""
    item = _item(solution_str, ground_truth, extra_info)
    try:
        result = _client(RubricateClient, base_url, token, timeout, max_retries)._request("POST", "/v1/score", item)
    except RubricateError:
        result = None
    return _score_dict(result, fallback)


async def compute_score_async(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[Dict[str, Any]] = None,
    *,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    fallback: float = 0.0,
    max_retries: int = 5,
    **_unused: Any,
) -> Dict[str, float]:
    """verl reward function (coroutine). See the module documentation."""
    item = _item(solution_str, ground_truth, extra_info)
    client: AsyncRubricateClient = _client(AsyncRubricateClient, base_url, token, timeout, max_retries)
    try:
        result = await client._run(client.client._request, "POST", "/v1/score", item)
    except RubricateError:
        result = None
    return _score_dict(result, fallback)
