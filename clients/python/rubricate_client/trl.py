"""TRL ``GRPOTrainer`` reward functions backed by ``rubricate serve``.

TRL calls each reward function with the batch's ``prompts`` and ``completions`` plus every
dataset column as a keyword argument (and ``completion_ids``, ``trainer_state``, ...), so a
dataset with a ``rubric`` column (a rubric dict or a JSON string) reaches the function as
``rubric``. The function returns one float per completion, or ``None`` where grading failed.

Versions (what TRL does with the function and with ``None``):

* TRL ≥ 1.6: async reward functions are awaited, and ``None`` rows are left out of the
  reward (masked), not counted as 0. ``make_reward_function`` (async) is the one to use.
* TRL 0.27 – 1.5: async functions are awaited, but ``None`` becomes NaN and then **0** in the
  group mean and std: a failure would train as a real zero. By default (``failed="auto"``)
  the function therefore raises on a failed row with these versions; pass ``failed=X`` to
  use a number instead (it is still a made-up reward: prefer fixing the judge).
* TRL < 0.27: only synchronous functions: use ``make_sync_reward_function``.

``failed`` is ``"auto"`` (``None`` on TRL ≥ 1.6 or when TRL is not importable, ``"raise"``
below 1.6), ``"none"``, ``"raise"``, or a number. An invalid rubric in one row fails only
that row (logged). Configuration errors (token, URL, a request the server rejects, a server
that is not running) raise on the first call.

    from rubricate_client.trl import make_reward_function
    trainer = GRPOTrainer(..., reward_funcs=[make_reward_function("http://127.0.0.1:8000")])
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from rubricate_client.client import DEFAULT_TIMEOUT, AsyncRubricateClient, RubricateClient, plain

logger = logging.getLogger("rubricate_client.trl")

Failed = Union[str, float, int]

#: TRL releases that await async reward functions, and that mask None rewards.
ASYNC_SINCE = (0, 27)
NONE_MASKED_SINCE = (1, 6)


def installed_trl_version() -> Optional[Tuple[int, int]]:
    """(major, minor) of the importable TRL, or None when TRL is not installed."""
    try:
        import trl  # type: ignore[import-not-found]
    except Exception:  # not installed, or broken: nothing to adapt to
        return None
    return _version_tuple(getattr(trl, "__version__", ""))


def _version_tuple(text: str) -> Optional[Tuple[int, int]]:
    match = re.match(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _content_text(content: Any) -> str:
    """Text of a message's content: a string, or a list of parts ({type: text, text})."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content.get("text", "") if isinstance(content.get("text"), str) else ""
    if isinstance(content, (list, tuple)):
        return "".join(_content_text(part) for part in content if not (isinstance(part, dict) and part.get("type") not in (None, "text")))
    return ""


def completion_text(completion: Any) -> str:
    """The graded text of a completion:

    * a string (standard format) as it is;
    * a list of messages ``[{role, content}]`` (conversational format): the assistant turns,
      separated by a blank line, each content a string or a list of text parts;
    * a list of content parts ``[{type: "text", text}]``: their text joined."""
    completion = plain(completion)
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, list):
        if all(isinstance(entry, dict) and "role" in entry for entry in completion):
            turns = [_content_text(message.get("content", "")) for message in completion if message.get("role") == "assistant"]
            return "\n\n".join(turn for turn in turns if turn != "")
        return _content_text(completion)
    return str(completion)


def prompt_value(prompt: Any) -> Any:
    """A prompt string, or a list of {role, content} messages with their content as text."""
    prompt = plain(prompt)
    if isinstance(prompt, list):
        return [{"role": message.get("role", "user"), "content": _content_text(message.get("content", ""))} for message in prompt if isinstance(message, dict)]
    return str(prompt)


def _resolve_failed(failed: Failed) -> Failed:
    if failed != "auto":
        if isinstance(failed, str) and failed not in ("none", "raise"):
            raise ValueError(f'failed must be "auto", "none", "raise" or a number, got {failed!r}')
        return failed
    version = installed_trl_version()
    if version is not None and version < NONE_MASKED_SINCE:
        logger.warning("TRL %d.%d counts a None reward as 0 (masking needs TRL >= 1.6): failed rows will raise. Pass failed=X to use a number instead.", *version)
        return "raise"
    return "none"


class _RewardCore:
    def __init__(self, rubric_column: str, failed: Failed, name: str):
        self.rubric_column = rubric_column
        self.failed = _resolve_failed(failed)
        self.name = name

    def items(self, prompts: Sequence[Any], completions: Sequence[Any], rubric: Any, kwargs: Dict[str, Any]) -> List[Dict[str, Any]]:
        rubrics = rubric if rubric is not None and self.rubric_column == "rubric" else kwargs.get(self.rubric_column)
        if rubrics is None:
            raise ValueError(f"no '{self.rubric_column}' column reached the reward function: add it to the dataset (or set rubric_column=)")
        rubrics = list(rubrics)
        if not (len(prompts) == len(completions) == len(rubrics)):
            raise ValueError(f"{len(prompts)} prompts, {len(completions)} completions and {len(rubrics)} rubrics: they must match")
        return [
            {"prompt": prompt_value(prompt), "response": completion_text(completion), "rubric": row_rubric if isinstance(row_rubric, str) else plain(row_rubric)}
            for prompt, completion, row_rubric in zip(prompts, completions, rubrics)
        ]

    def rewards(self, results: List[Dict[str, Any]]) -> List[Optional[float]]:
        rewards: List[Optional[float]] = []
        failures = []
        for index, result in enumerate(results):
            if result.get("reward") is not None and not result.get("fallback"):
                rewards.append(float(result["reward"]))
                continue
            error = result.get("error") or {}
            failures.append((index, error.get("code", "NOT_GRADED"), error.get("message", "")))
            # None for "none" (TRL masks it) and "raise" (raised below, after logging every row).
            rewards.append(None if isinstance(self.failed, str) else float(self.failed))
        for index, code, message in failures:
            logger.warning("%s: row %d not graded (%s): %s", self.name, index, code, message)
        if failures and self.failed == "raise":
            index, code, message = failures[0]
            raise RuntimeError(f"{self.name}: {len(failures)} of {len(results)} rows not graded, first row {index} ({code}: {message}); with this TRL a None reward would train as 0")
        return rewards


def make_reward_function(
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    rubric_column: str = "rubric",
    name: str = "rubric_reward",
    max_concurrency: int = 16,
    failed: Failed = "auto",
    **client_options: Any,
) -> Callable[..., Any]:
    """``async def reward(prompts, completions, rubric, **kwargs) -> list[float | None]`` for
    TRL ≥ 0.27 (``None`` masked from TRL 1.6). ``rubric_column`` names the dataset column
    holding each row's rubric; ``name`` becomes ``__name__``, which TRL uses in its logs."""
    version = installed_trl_version()
    if version is not None and version < ASYNC_SINCE:
        raise RuntimeError(f"TRL {version[0]}.{version[1]} does not await async reward functions (TRL >= 0.27 does): use make_sync_reward_function")
    core = _RewardCore(rubric_column, failed, name)
    client = AsyncRubricateClient(base_url, token, timeout, max_concurrency=max_concurrency, **client_options)

    async def reward(prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, **kwargs: Any) -> List[Optional[float]]:
        items = core.items(prompts, completions, rubric, kwargs)
        return core.rewards(await client.score_batch(items, on_invalid="fail_item"))

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


def make_sync_reward_function(
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    rubric_column: str = "rubric",
    name: str = "rubric_reward",
    failed: Failed = "auto",
    **client_options: Any,
) -> Callable[..., Any]:
    """``def reward(prompts, completions, rubric, **kwargs) -> list[float | None]``: the same
    as ``make_reward_function``, synchronous, for every TRL release (required before 0.27)."""
    core = _RewardCore(rubric_column, failed, name)
    client = RubricateClient(base_url, token, timeout, **client_options)

    def reward(prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, **kwargs: Any) -> List[Optional[float]]:
        items = core.items(prompts, completions, rubric, kwargs)
        return core.rewards(client.score_batch(items, on_invalid="fail_item"))

    reward.__name__ = name
    reward.__qualname__ = name
    return reward
