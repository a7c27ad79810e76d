"""TRL GRPOTrainer reward function backed by ``rubricate serve``.

TRL calls each reward function with the batch's ``prompts`` and ``completions`` plus every
dataset column as a keyword argument, so a dataset with a ``rubric`` column (a rubric dict
or a JSON string) reaches the function as ``rubric``. The function returns one float per
completion, or ``None`` where grading failed: TRL leaves ``None`` rewards out instead of
treating them as zeros.

    from rubricate_client.trl import make_reward_function
    trainer = GRPOTrainer(..., reward_funcs=[make_reward_function("http://127.0.0.1:8000")])
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from .client import DEFAULT_TIMEOUT, AsyncRubricateClient, RubricateError


def _completion_text(completion: Any) -> str:
    """A standard completion is a string; a conversational one is a list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, (list, tuple)):
        parts = [message.get("content", "") for message in completion if isinstance(message, dict) and message.get("role", "assistant") == "assistant"]
        return "".join(part if isinstance(part, str) else "" for part in parts)
    return str(completion)


def _prompt_value(prompt: Any) -> Any:
    """A prompt string, or a list of {role, content} messages, passed through."""
    if isinstance(prompt, (list, tuple)):
        return [{"role": message.get("role", "user"), "content": message.get("content", "")} for message in prompt if isinstance(message, dict)]
    return str(prompt)


def make_reward_function(
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    rubric_column: str = "rubric",
    name: str = "rubric_reward",
    max_concurrency: int = 16,
) -> Callable[..., Any]:
    """Returns ``async def reward(prompts, completions, rubric, **kwargs) -> list[float | None]``.

    ``rubric_column`` names the dataset column holding each row's rubric (passed as
    ``rubric`` by TRL when the column is called that). ``name`` becomes the function's
    ``__name__``, which TRL uses in its logs."""
    client = AsyncRubricateClient(base_url, token, timeout, max_concurrency=max_concurrency)

    async def reward(prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, **kwargs: Any) -> List[Optional[float]]:
        rubrics = rubric if rubric is not None and rubric_column == "rubric" else kwargs.get(rubric_column)
        if rubrics is None:
            raise ValueError(f"no '{rubric_column}' column reached the reward function: add it to the dataset")
        items: List[Dict[str, Any]] = [
            {"prompt": _prompt_value(prompt), "response": _completion_text(completion), "rubric": row_rubric}
            for prompt, completion, row_rubric in zip(prompts, completions, rubrics)
        ]
        try:
            results = await client.score_batch(items)
        except RubricateError:
            return [None] * len(items)
        return [result["reward"] if result.get("reward") is not None and not result.get("fallback") else None for result in results]

    reward.__name__ = name
    reward.__qualname__ = name
    return reward
