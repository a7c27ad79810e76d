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
that is not running) raise on the first call. Each call logs, through the ``log_extra`` and
``log_metric`` hooks TRL passes, a completions-table column ``<name>_error`` (the reason a row
was not graded, empty for graded rows) and the metric ``<name>/failed_fraction``.

The functions are ``functools.partial`` objects over module-level functions and plain
settings, so they pickle: TRL's AsyncGRPOTrainer sends them to a spawned process (where the
package must be importable, as everywhere the trainer runs).

    from rubricate_client.trl import make_reward_function
    trainer = GRPOTrainer(..., reward_funcs=[make_reward_function("http://127.0.0.1:8000")])
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from rubricate_client.client import DEFAULT_TIMEOUT, AsyncRubricateClient, RubricateClient, plain, rubric_value

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


class RewardSettings:
    """What a reward function needs, and nothing else: plain values, so the function pickles
    (TRL's AsyncGRPOTrainer runs reward functions in a spawned process; the client, its
    connections and thread pool are built again there, once per process)."""

    def __init__(self, base_url: Optional[str], token: Optional[str], timeout: float, rubric_column: str, failed: Failed, name: str, max_concurrency: int, client_options: Dict[str, Any]):
        # Several replicas may come as a list: a tuple keeps the client cache's key hashable.
        self.base_url = tuple(base_url) if isinstance(base_url, list) else base_url
        self.token = token
        self.timeout = timeout
        self.rubric_column = rubric_column
        self.failed = _resolve_failed(failed)
        self.name = name
        self.max_concurrency = max_concurrency
        self.client_options = dict(client_options)

    def key(self, kind: str) -> Tuple[Any, ...]:
        return (os.getpid(), kind, self.base_url, self.token, self.timeout, self.max_concurrency, tuple(sorted(self.client_options.items())))

    def items(self, prompts: Sequence[Any], completions: Sequence[Any], rubric: Any, kwargs: Dict[str, Any]) -> List[Dict[str, Any]]:
        rubrics = rubric if rubric is not None and self.rubric_column == "rubric" else kwargs.get(self.rubric_column)
        if rubrics is None:
            raise ValueError(f"no '{self.rubric_column}' column reached the reward function: add it to the dataset (or set rubric_column=)")
        rubrics = list(rubrics)
        if not (len(prompts) == len(completions) == len(rubrics)):
            raise ValueError(f"{len(prompts)} prompts, {len(completions)} completions and {len(rubrics)} rubrics: they must match")
        return [{"prompt": prompt_value(prompt), "response": completion_text(completion), "rubric": rubric_value(row_rubric)} for prompt, completion, row_rubric in zip(prompts, completions, rubrics)]

    def rewards(self, results: List[Dict[str, Any]], kwargs: Dict[str, Any]) -> List[Optional[float]]:
        rewards: List[Optional[float]] = []
        errors: List[str] = []
        failures = []
        for index, result in enumerate(results):
            if result.get("reward") is not None and not result.get("fallback"):
                rewards.append(float(result["reward"]))
                errors.append("")
                continue
            error = result.get("error") or {}
            code, message = error.get("code", "NOT_GRADED"), error.get("message", "")
            failures.append((index, code, message))
            errors.append(f"{code}: {message}")
            # None for "none" (TRL masks it) and "raise" (raised below, after logging every row).
            rewards.append(None if isinstance(self.failed, str) else float(self.failed))
        for index, code, message in failures:
            logger.warning("%s: row %d not graded (%s): %s", self.name, index, code, message)
        # TRL's completions table and metrics: the same column and metric every call, on every
        # rank (TRL gathers them across processes in sorted order), so failures show per row.
        log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
        if callable(log_extra):
            log_extra(f"{self.name}_error", errors)
        if callable(log_metric):
            log_metric(f"{self.name}/failed_fraction", len(failures) / len(results) if results else 0.0)
        if failures and self.failed == "raise":
            index, code, message = failures[0]
            raise RuntimeError(f"{self.name}: {len(failures)} of {len(results)} rows not graded, first row {index} ({code}: {message}); with this TRL a None reward would train as 0")
        return rewards


_clients: Dict[Tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def _client(settings: RewardSettings, kind: str) -> Any:
    key = settings.key(kind)
    with _lock:
        client = _clients.get(key)
        if client is None:
            if kind == "async":
                client = AsyncRubricateClient(settings.base_url, settings.token, settings.timeout, max_concurrency=settings.max_concurrency, **settings.client_options)
            else:
                client = RubricateClient(settings.base_url, settings.token, settings.timeout, **settings.client_options)
            _clients[key] = client
        return client


async def rubric_reward(settings: RewardSettings, prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, **kwargs: Any) -> List[Optional[float]]:
    """The async reward function (``make_reward_function`` binds ``settings``)."""
    items = settings.items(prompts, completions, rubric, kwargs)
    return settings.rewards(await _client(settings, "async").score_batch(items, on_invalid="fail_item"), kwargs)


def rubric_reward_sync(settings: RewardSettings, prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, **kwargs: Any) -> List[Optional[float]]:
    """The synchronous reward function (``make_sync_reward_function`` binds ``settings``)."""
    items = settings.items(prompts, completions, rubric, kwargs)
    return settings.rewards(_client(settings, "sync").score_batch(items, on_invalid="fail_item"), kwargs)


def _named(function: Callable[..., Any], settings: RewardSettings) -> Callable[..., Any]:
    bound = functools.partial(function, settings)
    # TRL before 1.x reads __name__; later releases name a partial after its function.
    bound.__name__ = settings.name  # type: ignore[attr-defined]
    bound.__qualname__ = settings.name  # type: ignore[attr-defined]
    return bound


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
    """``async (prompts, completions, rubric, **kwargs) -> list[float | None]`` for TRL ≥ 0.27
    (``None`` masked from TRL 1.6), a picklable ``functools.partial``. ``rubric_column`` names the
    dataset column holding each row's rubric; ``name`` names the logs, the completions-table
    column ``<name>_error`` and the metric ``<name>/failed_fraction``."""
    version = installed_trl_version()
    if version is not None and version < ASYNC_SINCE:
        raise RuntimeError(f"TRL {version[0]}.{version[1]} does not await async reward functions (TRL >= 0.27 does): use make_sync_reward_function")
    return _named(rubric_reward, RewardSettings(base_url, token, timeout, rubric_column, failed, name, max_concurrency, client_options))


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
    """``(prompts, completions, rubric, **kwargs) -> list[float | None]``: the same as
    ``make_reward_function``, synchronous, for every TRL release (required before 0.27)."""
    return _named(rubric_reward_sync, RewardSettings(base_url, token, timeout, rubric_column, failed, name, 0, client_options))
