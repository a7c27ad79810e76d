"""verifiers v1 judge plugin backed by ``rubricate serve``: the plugin id ``rubricate_judge``.

verifiers resolves a judge id to a module (``verifiers.v1.judges.<id>``, else the top-level
module ``<id>``) that exports one ``verifiers.v1.judge.Judge`` subclass through ``__all__``;
its config class is the one the subclass is parameterised with. Plug it into a task config:

    [[taskset.task.judges]]
    id = "rubricate_judge"
    base_url = "http://reward-host:8000"      # default: RUBRICATE_URL
    rubric_field = "rubric"                  # the task field holding the rubric (dict or JSON)

``score(task, trace)`` grades the rollout's reply (``view = "last_reply"``, or the whole
transcript with ``"full_trace"``) against the task's rubric, the prompt being the task's prompt
(or ``question_field``) and ``answer_field`` an optional reference answer. The reward is the
item score. A rollout that cannot be graded raises: verifiers v1 records the error on the
trace and prime-rl drops errored rollouts from the batch, so no failure becomes a reward.

Requires verifiers (v1) where it runs; the package itself stays standard-library only.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, Tuple

from rubricate_client._verl import _as_rubric, _deadline_result
from rubricate_client.client import DEFAULT_TIMEOUT, AsyncRubricateClient, RubricateError, build_item
from verifiers.v1.configs.judge import JudgeConfig
from verifiers.v1.judge import Judge, judge_question, judge_response

_clients: Dict[Tuple[Any, ...], AsyncRubricateClient] = {}
_lock = threading.Lock()


class RubricateJudgeConfig(JudgeConfig):
    id: str = "rubricate_judge"
    base_url: str = ""
    """The server's root URL; empty: ``RUBRICATE_URL`` (default http://127.0.0.1:8000)."""
    token: str = ""
    """Bearer token; empty: ``RUBRICATE_TOKEN``."""
    rubric_field: str = "rubric"
    """Task field holding the rubric: a dict or a JSON string."""
    question_field: str = ""
    """Task field shown as the prompt; empty: the task's prompt."""
    answer_field: str = ""
    """Optional task field holding a reference answer."""
    view: str = "last_reply"
    """``last_reply`` grades the final reply, ``full_trace`` the whole transcript."""
    timeout: float = DEFAULT_TIMEOUT


class RubricateJudge(Judge[float, RubricateJudgeConfig]):
    def _client(self) -> AsyncRubricateClient:
        config = self.config
        key = (os.getpid(), config.base_url, config.token, config.timeout)
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = AsyncRubricateClient(config.base_url or None, config.token or None, config.timeout)
                _clients[key] = client
            return client

    async def score(self, task: Any, trace: Any) -> float:
        config = self.config
        rubric = _as_rubric(getattr(task, config.rubric_field, None))
        if rubric is None:
            raise ValueError(f"rubricate_judge found no rubric in the task field {config.rubric_field!r} (a dict or a JSON string); set rubric_field")
        reference = getattr(task, config.answer_field, None) if config.answer_field else None
        item = build_item(judge_question(task, config.question_field), judge_response(trace, config.view), rubric, reference=None if reference is None else str(reference))
        try:
            result = await self._client().score_item(item)
        except RubricateError as error:
            result = _deadline_result(error)
            if result is None:
                raise
        if result.get("reward") is None:
            failure = result.get("error") or {}
            raise RubricateError(str(failure.get("code", "NOT_GRADED")), f"rollout not graded: {failure.get('message', 'no reason given')}")
        return float(result["reward"])


__all__ = ["RubricateJudge"]
