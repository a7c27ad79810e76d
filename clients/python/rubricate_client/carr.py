"""CaRR's reward (citation-aware rubric rewards, THUDM's released reward server) from
``rubricate serve``'s ``/carr/evaluate`` and ``/carr/evaluate/group``.

The body and the answer are the released server's: ``{history, label, task_unfinished,
remote_env_info: {search_forbidden_strs: [question, …], rubrics, rubric_reward_ratio}}`` →
``{reward, outcome_reward, rubric_reward, rubric_scores}``. ``history`` is the whole trajectory,
tool calls and their results included, ending with the assistant's answer.

* ``carr_body``: that body from a trajectory, its reference answer, question and rubrics.
* ``evaluate`` / ``evaluate_group``: one trajectory, or one group with C-GRPO's group rewards.
* ``slime_carr_rm``: slime with ``--custom-rm-path rubricate_client.carr.slime_carr_rm
  --reward-key reward``: the whole answer per sample (the CaRR fork's group step reads its
  ``outcome_reward`` and ``rubric_reward``).
* ``slime_carr_group_rm``: slime with ``--group-rm --custom-rm-path
  rubricate_client.carr.slime_carr_group_rm``: the group's C-GRPO rewards computed by the server,
  from slime's own flags (``--rubric-reward-ratio``, ``--normalize-rubric-reward``,
  ``--rubric-only-positive``, ``--rubric-only-negative``).
* ``compute_score``: verl (``custom_reward_function.path=pkg://rubricate_client.carr``), the
  trajectory in ``extra_info``.

A sample's trajectory is read from ``sample.metadata`` (``history``, ``task_unfinished``,
``remote_env_info``, as the fork's ``input_keys`` name them; or ``question`` and ``rubrics``),
else built from ``sample.prompt`` and ``sample.response``. Failures are never a reward: a judge
that failed raises (slime's rollout fails; verl gets ``RubricateAbort``, which its managers do
not turn into 0.0), and so does a trajectory without what CaRR needs.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from rubricate_client._verl import _abort
from rubricate_client.client import RubricateClient, RubricateConfigError, RubricateError, plain

#: C-GRPO's runs mix 30% rubric reward with 70% outcome.
DEFAULT_RATIO = 0.3

_ROUTES = ("/carr/evaluate/group", "/carr/evaluate")
_clients: Dict[Tuple[Optional[str], Optional[str]], RubricateClient] = {}


def _client(base_url: Optional[str], token: Optional[str]) -> RubricateClient:
    """One client (and its kept-alive connections) per address; a URL naming the CaRR route itself
    (the fork's ``remote_url``) is taken as the server's address."""
    url = base_url or os.environ.get("RUBRICATE_URL")
    if url:
        path, mark, query = url.partition("?")
        path = path.rstrip("/")
        route = next((route for route in _ROUTES if path.endswith(route)), "")
        url = path[: len(path) - len(route)] + mark + query
    key = (url, token)
    if key not in _clients:
        _clients[key] = RubricateClient(url, token)
    return _clients[key]


def carr_body(
    history: Sequence[Dict[str, Any]],
    label: str,
    question: str,
    rubrics: Sequence[str],
    *,
    ratio: float = DEFAULT_RATIO,
    task_unfinished: bool = False,
    search_forbidden_strs: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """The released server's body; the question is the first forbidden search string (its convention)."""
    forbidden = [question] + [text for text in (search_forbidden_strs or []) if text != question]
    return {
        "history": plain(list(history)),
        "label": str(label),
        "task_unfinished": bool(task_unfinished),
        "remote_env_info": {"search_forbidden_strs": forbidden, "rubrics": list(rubrics), "rubric_reward_ratio": float(ratio)},
    }


def evaluate(body: Dict[str, Any], *, base_url: Optional[str] = None, token: Optional[str] = None) -> Dict[str, Any]:
    """One trajectory's answer; a judge failure raises ``RubricateError``, never a 0."""
    return _client(base_url, token).carr_evaluate(body)


def evaluate_group(
    bodies: Sequence[Dict[str, Any]],
    *,
    ratio: float = DEFAULT_RATIO,
    normalize: str = "none",
    only: str = "all",
    follow: str = "release",
    base_url: Optional[str] = None,
    token: Optional[str] = None,
) -> Dict[str, Any]:
    """One group: ``{rewards, results}``, C-GRPO's rewards beside each trajectory's answer.
    ``normalize="group-max"`` divides rubric rewards by the group's largest; ``only="correct"``
    keeps the rubric term only on correct answers (``"incorrect"``: only on wrong ones)."""
    group = {"ratio": float(ratio), "normalize": normalize, "only": only, "follow": follow}
    return _client(base_url, token).carr_evaluate_group(bodies, group)


def _metadata(sample: Any) -> Dict[str, Any]:
    metadata = getattr(sample, "metadata", None)
    return metadata if isinstance(metadata, dict) else {}


def _history(sample: Any, metadata: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The trajectory: the sample's own history, else its prompt (messages or text) and response."""
    if isinstance(metadata.get("history"), list):
        return list(metadata["history"])
    prompt = getattr(sample, "prompt", None)
    response = getattr(sample, "response", None)
    if prompt is None or response is None:
        # An empty answer is a trajectory CaRR grades; a sample without one is not a trajectory at all.
        raise RubricateConfigError("CONFIG_INVALID", "a CaRR sample needs metadata.history, or a prompt and a response")
    messages = list(plain(prompt)) if isinstance(prompt, (list, tuple)) else [{"role": "user", "content": str(prompt)}]
    return messages + [{"role": "assistant", "content": str(response)}]


def _reference(label: Any, ratio: float, where: str) -> str:
    """The reference answer the outcome reward is judged against: required unless the reward is the rubric's alone."""
    if label is None and ratio < 1:
        raise RubricateConfigError("CONFIG_INVALID", "CaRR's outcome reward needs the reference answer (%s); without one only rubric_reward_ratio=1 can be scored" % where)
    return "" if label is None else str(label)


def sample_body(sample: Any, ratio: Optional[float] = None) -> Dict[str, Any]:
    """A slime sample as CaRR's body (see the module's notes); ``ratio`` fills a missing
    ``rubric_reward_ratio``."""
    metadata = _metadata(sample)
    environment = metadata.get("remote_env_info")
    if isinstance(environment, str):
        environment = json.loads(environment)
    if not isinstance(environment, dict):
        if "question" not in metadata or "rubrics" not in metadata:
            raise RubricateConfigError("CONFIG_INVALID", "a CaRR sample needs metadata.remote_env_info, or metadata.question and metadata.rubrics")
        environment = {"search_forbidden_strs": [metadata["question"]], "rubrics": list(metadata["rubrics"])}
    environment = dict(plain(environment))
    if "rubric_reward_ratio" not in environment:
        environment["rubric_reward_ratio"] = float(DEFAULT_RATIO if ratio is None else ratio)
    label = _reference(getattr(sample, "label", None), float(environment["rubric_reward_ratio"]), "the sample's label")
    return {"history": plain(_history(sample, metadata)), "label": label, "task_unfinished": bool(metadata.get("task_unfinished", False)), "remote_env_info": environment}


def _slime_settings(args: Any) -> Tuple[Optional[str], Optional[float]]:
    return getattr(args, "rm_url", None), getattr(args, "rubric_reward_ratio", None)


async def slime_carr_rm(args: Any, sample: Any, **_slime_kwargs: Any) -> Dict[str, Any]:
    """One sample's answer (``--reward-key reward`` picks the number). The server's address:
    ``--rm-url`` (the CaRR route itself may be named) or ``RUBRICATE_URL``."""
    url, ratio = _slime_settings(args)
    body = sample_body(sample, ratio)
    return await asyncio.get_running_loop().run_in_executor(None, lambda: evaluate(body, base_url=url))


async def slime_carr_group_rm(args: Any, samples: Sequence[Any], **_slime_kwargs: Any) -> List[float]:
    """One prompt's samples (``--group-rm``): C-GRPO's rewards from slime's flags. A failed
    member raises: slime does not retry a group, and a group with a failed member has no
    rewards (run the server with ``--cache`` so a rerun pays only for what failed)."""
    url, ratio = _slime_settings(args)
    mix = DEFAULT_RATIO if ratio is None else float(ratio)
    only = "correct" if getattr(args, "rubric_only_positive", False) else "incorrect" if getattr(args, "rubric_only_negative", False) else "all"
    normalize = "group-max" if getattr(args, "normalize_rubric_reward", False) else "none"
    bodies = [sample_body(sample, mix) for sample in samples]
    answer = await asyncio.get_running_loop().run_in_executor(None, lambda: evaluate_group(bodies, ratio=mix, normalize=normalize, only=only, base_url=url))
    return [float(reward) for reward in answer["rewards"]]


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None, **reward_kwargs: Any) -> Dict[str, Any]:
    """verl: ``extra_info`` carries ``history`` (the trajectory before the answer), ``question``,
    ``rubrics`` and optionally ``rubric_reward_ratio`` and ``task_unfinished``; ``solution_str`` is
    the answer. Returns ``{score, outcome_reward, rubric_reward}``; a failure raises ``RubricateAbort``."""
    try:
        info = plain(extra_info) if isinstance(extra_info, dict) else {}
        if "question" not in info or "rubrics" not in info:
            raise RubricateConfigError("CONFIG_INVALID", "CaRR's compute_score needs extra_info.question and extra_info.rubrics (and the trajectory in extra_info.history)")
        history = list(info.get("history") or []) + [{"role": "assistant", "content": solution_str}]
        ratio = float(info.get("rubric_reward_ratio", reward_kwargs.get("ratio", DEFAULT_RATIO)))
        body = carr_body(history, _reference(ground_truth, ratio, "ground_truth"), info["question"], info["rubrics"], ratio=ratio, task_unfinished=bool(info.get("task_unfinished", False)))
        answer = evaluate(body, base_url=reward_kwargs.get("base_url"), token=reward_kwargs.get("token"))
    except (RubricateError, ValueError) as error:
        raise _abort(error) from error
    return {"score": float(answer["reward"]), "outcome_reward": float(answer["outcome_reward"]), "rubric_reward": float(answer["rubric_reward"])}
