"""Group-relative rewards, rollout scaffolding and rubric rewards from ``rubricate serve``.

GRPO-family trainers normalise each prompt's rollouts against each other, so these functions
send the rollouts of one prompt together to ``/v1/score/group``: the server grades them in one
listwise call (or a tournament) when it runs with ``--mode listwise`` (``--mode tournament``),
applies the shaping asked for (outcome mixing, the group length penalty, the hard-rule veto,
per-axis rewards) and says whether the group's rewards have zero variance. Shaping is computed
by the server and recorded in its answer (``shaping``, ``raw_rewards``).

* ``score_group``: one group, every option of the route.
* ``make_group_reward_function``: TRL ``GRPOTrainer`` (rows of one prompt grouped; token lengths
  from ``completion_ids``, the step from ``trainer_state``).
* ``compute_score_group_batch``: verl's ``batch`` reward manager.
* ``slime_group_rm``: slime with ``--group-rm --custom-rm-path rubricate_client.groups.slime_group_rm``.
* ``openrlhf_group_rewards``: the body of an OpenRLHF reward function file.
* ``scaffold_prompts``: RuscaRL's rollout prompts (``/v1/scaffold``) for a rollout function.
* ``rubric_reward``: the reward of a rubric generator (``/v1/rubric-reward``).

Failures follow the client's rules: configuration errors raise; a response the server could
not grade is ``None`` (TRL), raised, or a flagged fallback where one is asked for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rubricate_client.client import DEFAULT_TIMEOUT, AsyncRubricateClient, Prompt, RubricateClient, RubricateError, Rubric, plain
from rubricate_client.trl import completion_text, prompt_value

logger = logging.getLogger("rubricate_client.groups")


def _rubric_value(rubric: Any) -> Any:
    return rubric if isinstance(rubric, str) else plain(rubric)


def group_body(
    prompt: Prompt,
    responses: Sequence[str],
    rubric: Optional[Rubric] = None,
    *,
    rubric_id: Optional[str] = None,
    reference: Optional[str] = None,
    shaping: Optional[Dict[str, Any]] = None,
    outcomes: Optional[Sequence[float]] = None,
    lengths: Optional[Sequence[int]] = None,
    step: Optional[int] = None,
    advantages: Optional[str] = None,
    eps: Optional[float] = None,
    id: Optional[str] = None,
) -> Dict[str, Any]:
    """The body of ``POST /v1/score/group``."""
    if rubric is None and rubric_id is None:
        raise ValueError("a group needs a rubric or a rubric_id")
    body: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else plain(prompt), "responses": [str(response) for response in responses]}
    optional = {"rubric": None if rubric is None else _rubric_value(rubric), "rubric_id": rubric_id, "reference": reference, "shaping": plain(shaping), "advantages": advantages, "eps": eps, "id": id, "step": step}
    body.update({key: value for key, value in optional.items() if value is not None})
    if outcomes is not None:
        body["outcomes"] = [float(value) for value in plain(list(outcomes))]
    if lengths is not None:
        body["lengths"] = [int(value) for value in plain(list(lengths))]
    return body


def score_group(client: RubricateClient, prompt: Prompt, responses: Sequence[str], rubric: Optional[Rubric] = None, **options: Any) -> Dict[str, Any]:
    """Grades the responses to one prompt together. Returns the server's answer: ``rewards``
    (shaped when ``shaping`` is given, with ``raw_rewards``), ``zero_variance``, ``shaping``,
    ``advantages`` (with ``advantages="grpo"`` or ``"dr_grpo"``), ``axes``, ``results``."""
    return client._request("POST", "/v1/score/group", group_body(prompt, responses, rubric, **options))


def scaffold_prompts(
    client: RubricateClient,
    prompt: Prompt,
    rubric: Rubric,
    *,
    step: int,
    total_steps: int,
    group_size: int = 1,
    start: Optional[float] = None,
    steepness: Optional[float] = None,
    seed: Optional[int] = None,
) -> List[List[Dict[str, str]]]:
    """RuscaRL's rollout prompts for the ``group_size`` rollouts of ``prompt`` at ``step`` (from 1)
    of ``total_steps``: the rubric as guidance in the system message, a linearly smaller share
    for each later rollout, all of it fading by the sigmoid schedule (``start`` 0.2 and
    ``steepness`` 125 by default, the paper's). Rollout i gets ``prompts[i]``."""
    body: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else plain(prompt), "rubric": _rubric_value(rubric), "step": int(step), "total_steps": int(total_steps), "group_size": int(group_size)}
    schedule = {key: value for key, value in {"start": start, "steepness": steepness}.items() if value is not None}
    if schedule:
        body["schedule"] = schedule
    if seed is not None:
        body["seed"] = int(seed)
    return client._request("POST", "/v1/scaffold", body)["prompts"]


def rubric_reward(
    client: RubricateClient,
    prompt: Prompt,
    rubric: Rubric,
    *,
    pairs: Optional[Sequence[Tuple[str, str]]] = None,
    responses: Optional[Sequence[Tuple[str, float]]] = None,
    reward: Optional[str] = None,
    reference: Optional[str] = None,
) -> Dict[str, Any]:
    """The reward of a candidate rubric: ``pairs`` of (chosen, rejected) responses it should
    order, or ``responses`` with expert scores it should rank alike. The answer's ``reward`` is
    the share of pairs reproduced (or Spearman's ρ; ``reward="kendall"`` for τ-b), None when
    nothing could be graded."""
    body: Dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) else plain(prompt), "rubric": _rubric_value(rubric)}
    if pairs is not None:
        body["pairs"] = [{"chosen": str(chosen), "rejected": str(rejected)} for chosen, rejected in pairs]
    if responses is not None:
        body["responses"] = [{"response": str(response), "score": float(score)} for response, score in responses]
    if reward is not None:
        body["reward"] = reward
    if reference is not None:
        body["reference"] = reference
    return client._request("POST", "/v1/rubric-reward", body)


def consecutive_groups(keys: Sequence[Any]) -> List[Tuple[int, int]]:
    """(start, end) of each run of equal consecutive keys: the rollouts of one prompt, as trainers
    lay them out (TRL, verl and OpenRLHF repeat each prompt ``n`` times in a row)."""
    groups: List[Tuple[int, int]] = []
    start = 0
    for index in range(1, len(keys) + 1):
        if index == len(keys) or keys[index] != keys[start]:
            groups.append((start, index))
            start = index
    return groups


def _key(prompt: Any, rubric: Any) -> str:
    return json.dumps([plain(prompt), plain(rubric)], sort_keys=True, ensure_ascii=False, default=str)


def _real_rewards(answer: Dict[str, Any]) -> List[Optional[float]]:
    """The group's rewards with failures (and server fallbacks) as None."""
    return [None if result.get("fallback") or reward is None else float(reward) for reward, result in zip(answer["rewards"], answer["results"])]


def make_group_reward_function(
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    shaping: Optional[Dict[str, Any]] = None,
    rubric_column: str = "rubric",
    name: str = "rubric_group_reward",
    timeout: float = DEFAULT_TIMEOUT,
    max_concurrency: int = 16,
    **client_options: Any,
) -> Callable[..., Any]:
    """``async def reward(prompts, completions, rubric, completion_ids=None, trainer_state=None, **kwargs)``
    for TRL's ``GRPOTrainer`` (≥ 0.27): the rows of each prompt (consecutive, as TRL's sampler
    gives them) graded as one group with ``shaping``; token lengths from ``completion_ids`` feed
    the length penalty, ``trainer_state.global_step`` the server's audit trend. A row the server
    could not grade is ``None`` (masked by TRL ≥ 1.6)."""
    client = AsyncRubricateClient(base_url, token, timeout, max_concurrency=max_concurrency, **client_options)

    async def reward(prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, completion_ids: Optional[Sequence[Sequence[int]]] = None, trainer_state: Any = None, **kwargs: Any) -> List[Optional[float]]:
        rubrics = list(rubric if rubric is not None and rubric_column == "rubric" else kwargs.get(rubric_column) or [])
        if len(rubrics) != len(prompts) or len(completions) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts, {len(completions)} completions and {len(rubrics)} '{rubric_column}' values: they must match")
        step = getattr(trainer_state, "global_step", None)
        texts = [completion_text(completion) for completion in completions]

        async def one(start: int, end: int) -> List[Optional[float]]:
            lengths = [len(ids) for ids in completion_ids[start:end]] if completion_ids is not None else None
            body = group_body(prompt_value(prompts[start]), texts[start:end], rubrics[start], shaping=shaping, lengths=lengths, step=step)
            answer = await client._run(client.client._request, "POST", "/v1/score/group", body)
            if answer.get("zero_variance"):
                logger.info("%s: rows %d-%d have equal rewards: no learning signal in this group", name, start, end - 1)
            return _real_rewards(answer)

        groups = consecutive_groups([_key(prompt, row) for prompt, row in zip(prompts, rubrics)])
        rewards = await asyncio.gather(*(one(start, end) for start, end in groups))
        return [value for group in rewards for value in group]

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


def _verl_group(extra_info: Any, ground_truth: Any) -> Tuple[Any, Any]:
    info = extra_info if isinstance(extra_info, dict) else {}
    prompt = plain(info.get("prompt"))
    if prompt is None:
        raise ValueError("extra_info['prompt'] is missing: verl does not pass the prompt to reward functions, put it in extra_info when you build the dataset")
    rubric = plain(info.get("rubric")) if info.get("rubric") is not None else plain(ground_truth)
    if rubric is None:
        raise ValueError("no rubric: put it in extra_info['rubric'] (or reward_model.ground_truth)")
    return prompt, rubric


def compute_score_group_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Optional[Sequence[Any]] = None,
    *,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    shaping: Optional[Dict[str, Any]] = None,
    fallback: Optional[float] = None,
    **_unused: Any,
) -> List[Dict[str, float]]:
    """verl's ``batch`` reward manager with group rewards: the consecutive samples of one prompt
    graded as a group (with ``shaping``). One dict per sample, the same keys each time:
    ``score``, ``reward_failed``, ``zero_variance``. A sample the server could not grade raises,
    unless ``fallback`` is set (then the flagged fallback)."""
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    keyed = [_verl_group(info, truth) for info, truth in zip(infos, ground_truths)]
    client = RubricateClient(base_url, token, timeout)
    scores: List[Dict[str, float]] = []
    for start, end in consecutive_groups([_key(prompt, rubric) for prompt, rubric in keyed]):
        prompt, rubric = keyed[start]
        answer = score_group(client, prompt, [str(text) for text in solution_strs[start:end]], rubric, shaping=shaping)
        flat = 1.0 if answer.get("zero_variance") else 0.0
        for reward in _real_rewards(answer):
            if reward is None and fallback is None:
                raise RubricateError("NOT_GRADED", f"a sample of the group at rows {start}-{end - 1} was not graded (set fallback=X to train through grading failures with a flagged reward X)")
            scores.append({"score": float(fallback if reward is None else reward), "reward_failed": 1.0 if reward is None else 0.0, "zero_variance": flat})
    return scores


async def slime_group_rm(args: Any, samples: Sequence[Any], **_slime_kwargs: Any) -> List[float]:
    """slime with ``--group-rm --custom-rm-path rubricate_client.groups.slime_group_rm``: the
    samples of one prompt graded as one group. The server's address comes from ``args.rm_url``
    (as ``--rm-url``) or ``RUBRICATE_URL``; shaping from ``RUBRICATE_SHAPING`` (JSON). A sample
    the server could not grade raises, which makes slime retry the group (slime's convention)."""
    base_url = getattr(args, "rm_url", None) or os.environ.get("RUBRICATE_URL")
    shaping = json.loads(os.environ["RUBRICATE_SHAPING"]) if os.environ.get("RUBRICATE_SHAPING") else None
    client = RubricateClient(base_url)
    first = samples[0]
    label = first.label if not isinstance(first.label, str) else json.loads(first.label)
    rubric = label.get("rubric", label) if isinstance(label, dict) else label
    answer = await asyncio.get_running_loop().run_in_executor(None, lambda: score_group(client, prompt_value(first.prompt), [sample.response for sample in samples], rubric, shaping=shaping))
    rewards = _real_rewards(answer)
    if any(reward is None for reward in rewards):
        raise RubricateError("NOT_GRADED", "a sample of the group was not graded; slime retries the group")
    return [float(reward) for reward in rewards]  # type: ignore[arg-type]


def openrlhf_group_rewards(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], *, base_url: Optional[str] = None, token: Optional[str] = None, shaping: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """What an OpenRLHF reward function file returns, as lists (wrap them in ``torch.tensor``):
    ``rewards``, ``scores`` (clipped to [0, 1]) and ``extra_logs`` (``reward_failed``,
    ``zero_variance``), the consecutive samples of one prompt graded as a group. Each query is
    the templated prompt followed by the response; the label holds the rubric. A sample the
    server could not grade raises (OpenRLHF cannot mask a reward)."""
    client = RubricateClient(base_url, token)
    rewards: List[float] = []
    flat: List[float] = []
    for start, end in consecutive_groups([_key(prompt, label) for prompt, label in zip(prompts, labels)]):
        prompt = prompts[start]
        responses = [query[len(prompt) :] if query.startswith(prompt) else query for query in queries[start:end]]
        label = labels[start]
        rubric = json.loads(label) if isinstance(label, str) else plain(label)
        answer = score_group(client, prompt, responses, rubric.get("rubric", rubric) if isinstance(rubric, dict) else rubric, shaping=shaping)
        values = _real_rewards(answer)
        if any(value is None for value in values):
            raise RubricateError("NOT_GRADED", f"a sample of the group at rows {start}-{end - 1} was not graded")
        rewards.extend(float(value) for value in values)  # type: ignore[arg-type]
        flat.extend([1.0 if answer.get("zero_variance") else 0.0] * (end - start))
    return {"rewards": rewards, "scores": [min(1.0, max(0.0, value)) for value in rewards], "extra_logs": {"reward_failed": [0.0] * len(rewards), "zero_variance": flat}}
