"""Group-relative rewards, rollout scaffolding and rubric rewards from ``rubricate serve``.

GRPO-family trainers normalise each prompt's rollouts against each other, so these functions
send the rollouts of one prompt together to ``/v1/score/group``: the server grades them in one
listwise call (or a tournament) when it runs with ``--mode listwise`` (``--mode tournament``),
applies the shaping asked for (outcome mixing, the group length penalty, the hard-rule veto,
per-axis rewards) and says whether the group's rewards have zero variance. Shaping is computed
by the server and recorded in its answer (``shaping``, ``raw_rewards``).

Groups are gathered by key, never by adjacency: trainers reorder rows (verl's
``balance_batch``) and hand over parts of a batch (OpenRLHF's micro-batches, TRL's processes),
so every entry point gathers a call's rows by the trainer's group id where it gives one, else
by prompt and rubric, and puts the rewards back in the caller's order (``score_rows``). A group
with fewer rows than the declared group size raises (``GROUP_INCOMPLETE``) instead of being
shaped over part of its members. Responses lose their trailing end-of-turn and padding tokens
as the server's adapters strip them (``rubricate_client.text``).

* ``score_group``: one group, every option of the route.
* ``score_rows``: rows in any order, grouped by key: the call every trainer function makes.
* ``make_group_reward_function``: TRL ``GRPOTrainer`` (token lengths from ``completion_ids``,
  the step from ``trainer_state``).
* ``compute_score_group_batch``: verl's ``batch`` reward manager.
* ``slime_group_rm``: slime with ``--group-rm --custom-rm-path rubricate_client.groups.slime_group_rm``.
* ``openrlhf_group_rewards``: the body of an OpenRLHF reward function file.
* ``scaffold_prompts``: RuscaRL's rollout prompts (``/v1/scaffold``) for a rollout function.
* ``rubric_reward``: the reward of a rubric generator (``/v1/rubric-reward``).

Failures follow the client's rules: configuration errors raise; a response the server could
not grade is ``None`` (TRL ≥ 1.6), raised (TRL before 1.6, verl, slime, OpenRLHF), or a flagged
fallback where one is asked for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from concurrent.futures import ThreadPoolExecutor

from rubricate_client._verl import _abort
from rubricate_client.client import DEFAULT_TIMEOUT, AsyncRubricateClient, Prompt, RubricateClient, RubricateConfigError, RubricateError, Rubric, plain, rubric_value
from rubricate_client.text import END_OF_TURN_TOKENS, end_tokens, prompt_messages, special_tokens, split_query, strip_end_of_turn
from rubricate_client.trl import ASYNC_SINCE, Failed, RewardSettings, completion_text, installed_trl_version, prompt_value

logger = logging.getLogger("rubricate_client.groups")


def _rubric_value(rubric: Any) -> Any:
    return rubric_value(rubric)


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


def row_key(prompt: Any, rubric: Any) -> str:
    """The group key of a row without a group id: its prompt and rubric."""
    return json.dumps([plain(prompt), plain(rubric)], sort_keys=True, ensure_ascii=False, default=str)


def _declared_group_size(group_size: Any, config: Any = None, field: str = "") -> Optional[int]:
    """``group_size`` if given, else ``config.<field>`` (the trainer's own setting) where readable."""
    size = group_size if group_size is not None else (getattr(config, field, None) if config is not None and field else None)
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(plain(size), int) or plain(size) < 1:
        raise RubricateConfigError("CONFIG_INVALID", f"group_size must be a whole number of rollouts per prompt (1 or more), got {size!r}")
    return int(plain(size))


def _rows_text(rows: Sequence[int]) -> str:
    shown = ", ".join(str(index) for index in rows[:8])
    return shown + (f", … ({len(rows)} rows)" if len(rows) > 8 else "")


def gather_groups(keys: Sequence[Any], group_size: Optional[int] = None, *, split_repeats: bool = True, keyed_by: str = "prompt and rubric", fix: str = "") -> List[List[int]]:
    """The row indices of each group: rows with the same key gathered over the whole call (in the
    order keys first appear; within a group, the caller's order), wherever the trainer put them.

    With ``group_size``, a key with fewer rows, or a number of rows that is not a multiple of it,
    raises ``GROUP_INCOMPLETE`` (``fix`` says what to change): grading part of a group would shape
    and normalise it over the wrong members. A key with k × ``group_size`` rows (a prompt drawn
    k times in one step) is k groups in order of appearance when ``split_repeats``; without it
    (a trainer that reorders rows: verl) it raises, since the order no longer says which is which."""
    rows_of: Dict[Any, List[int]] = {}
    for index, key in enumerate(keys):
        rows_of.setdefault(key, []).append(index)
    groups: List[List[int]] = []
    for rows in rows_of.values():
        if group_size is None or len(rows) == group_size:
            groups.append(rows)
        elif split_repeats and len(rows) % group_size == 0:
            groups.extend(rows[start : start + group_size] for start in range(0, len(rows), group_size))
        else:
            what = "fewer rows than" if len(rows) < group_size else "more rows than" if not split_repeats else "a number of rows that is not a multiple of"
            raise RubricateConfigError(
                "GROUP_INCOMPLETE",
                f"{len(rows)} rows share one {keyed_by} (rows {_rows_text(rows)}), {what} the group size {group_size}: refusing to shape and normalise a group over the wrong members. {fix}".rstrip(),
            )
    return groups


def _parallel(function: Callable[[Any], Any], jobs: Sequence[Any], max_parallel: int) -> List[Any]:
    if len(jobs) <= 1 or max_parallel <= 1:
        return [function(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(max_parallel, len(jobs)), thread_name_prefix="rubricate-group") as pool:
        return list(pool.map(function, jobs))


def score_rows(
    client: RubricateClient,
    prompts: Sequence[Any],
    responses: Sequence[Any],
    rubrics: Sequence[Any],
    *,
    group_size: Optional[int] = None,
    group_ids: Optional[Sequence[Any]] = None,
    shaping: Optional[Dict[str, Any]] = None,
    lengths: Optional[Sequence[int]] = None,
    step: Optional[int] = None,
    tokens: Sequence[str] = END_OF_TURN_TOKENS,
    split_repeats: bool = True,
    fix: str = "",
    max_parallel: int = 8,
) -> List[Dict[str, Any]]:
    """Group rewards for rows in any order, the call every trainer entry point makes: rows
    gathered into groups by ``group_ids`` (the trainer's own group id, e.g. verl's ``uid``) or
    else by prompt and rubric, over the whole call (``gather_groups``); each response without
    its trailing end-of-turn and padding ``tokens`` (``text.strip_end_of_turn``, as the server's
    adapters strip them); one ``/v1/score/group`` request per group, ``max_parallel`` at a time.

    Returns one dict per row, in the caller's order: ``reward`` (the shaped reward; None when the
    server could not grade the row, or answered with its ``--on-error`` fallback), ``error`` (the
    reason, for those), ``zero_variance`` (of its group) and ``group`` (its group's number)."""
    count = len(responses)
    sizes = {"prompts": len(prompts), "rubrics": len(rubrics)}
    sizes.update({name: len(values) for name, values in (("lengths", lengths), ("group ids", group_ids)) if values is not None})
    if any(size != count for size in sizes.values()):
        raise ValueError(f"{count} responses but " + ", ".join(f"{size} {name}" for name, size in sizes.items()) + ": they must match")
    texts = [strip_end_of_turn(str(response), tokens) for response in responses]
    keys = [row_key(prompt, rubric) for prompt, rubric in zip(prompts, rubrics)]
    if group_ids is not None:
        ids = [json.dumps(plain(group_id), sort_keys=True, default=str) for group_id in group_ids]
        groups = gather_groups(ids, group_size, split_repeats=False, keyed_by="group id", fix=fix)
        for rows in groups:
            if len({keys[index] for index in rows}) > 1:
                raise ValueError(f"rows {_rows_text(rows)} share a group id but not their prompt and rubric: the group ids do not name the rollouts of one prompt")
    else:
        groups = gather_groups(keys, group_size, split_repeats=split_repeats, fix=fix)

    def send(rows: List[int]) -> Dict[str, Any]:
        first = rows[0]
        body = group_body(prompts[first], [texts[index] for index in rows], rubrics[first], shaping=shaping, lengths=None if lengths is None else [lengths[index] for index in rows], step=step)
        return client._request("POST", "/v1/score/group", body)

    answers = _parallel(send, groups, max_parallel)
    out: List[Dict[str, Any]] = [{} for _ in range(count)]
    for number, (rows, answer) in enumerate(zip(groups, answers)):
        flat = bool(answer.get("zero_variance"))
        for index, reward, result in zip(rows, answer["rewards"], answer["results"]):
            failed = bool(result.get("fallback")) or reward is None
            out[index] = {"reward": None if failed else float(reward), "error": (result.get("error") or {"code": "NOT_GRADED"}) if failed else None, "zero_variance": flat, "group": number}
    return out


def _first_failure(rows: Sequence[Dict[str, Any]]) -> Optional[str]:
    failed = [(index, row["error"]) for index, row in enumerate(rows) if row["reward"] is None]
    if not failed:
        return None
    index, error = failed[0]
    return f"{len(failed)} of {len(rows)} rows not graded, first row {index} ({error.get('code', 'NOT_GRADED')}: {error.get('message', 'no reason given')})"


#: What to change when TRL hands a process part of a group.
TRL_GROUP_FIX = (
    "TRL calls the reward function on each process's own rows and only requires the global batch to divide by num_generations, "
    "so a prompt's rollouts can be split between processes: make per_device_train_batch_size × steps_per_generation a multiple of num_generations "
    "(and pass group_size= or args= with the real num_generations)."
)


def _check_trl_processes(args: Any, group_size: Optional[int]) -> None:
    """Refuses at start-up a TRL configuration that splits groups between processes."""
    if args is None or group_size is None:
        return
    try:
        world = int(getattr(args, "world_size", 1) or 1)
    except Exception:  # TrainingArguments.world_size needs the distributed state: unknown here
        world = 1
    per_device = getattr(args, "per_device_train_batch_size", None)
    steps = getattr(args, "steps_per_generation", None) or 1
    if world > 1 and isinstance(per_device, int) and (per_device * int(steps)) % group_size:
        raise RubricateConfigError("GROUP_INCOMPLETE", f"each of the {world} processes gets {per_device * int(steps)} rows, not a multiple of num_generations {group_size}: a prompt's group would be graded in parts. {TRL_GROUP_FIX}")


def make_group_reward_function(
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    group_size: Optional[int] = None,
    args: Any = None,
    shaping: Optional[Dict[str, Any]] = None,
    rubric_column: str = "rubric",
    name: str = "rubric_group_reward",
    timeout: float = DEFAULT_TIMEOUT,
    max_concurrency: int = 16,
    failed: Failed = "auto",
    tokenizer: Any = None,
    **client_options: Any,
) -> Callable[..., Any]:
    """``async def reward(prompts, completions, rubric, completion_ids=None, trainer_state=None, **kwargs)``
    for TRL's ``GRPOTrainer`` (≥ 0.27): each prompt's ``group_size`` rows (``args.num_generations``
    when ``args``, the ``GRPOConfig``, is given; one of the two is required) gathered wherever they
    are in the call and graded as one group with ``shaping``; token lengths from
    ``completion_ids`` feed the length penalty, ``trainer_state.global_step`` the server's audit
    trend; end-of-turn tokens (and ``tokenizer``'s special tokens) stripped.

    A process holding part of a group raises (at start-up when ``args`` shows it, else on the
    call): TRL does not hand the function the rest. A row the server could not grade follows
    ``failed`` as in ``trl.make_reward_function``: ``None`` from TRL 1.6 (masked), raised before
    (TRL would sum ``None`` as 0), or the number given (logged, and in the ``<name>_error`` column)."""
    version = installed_trl_version()
    if version is not None and version < ASYNC_SINCE:
        raise RuntimeError(f"TRL {version[0]}.{version[1]} does not await async reward functions (TRL >= 0.27 does): group rewards need TRL >= 0.27")
    size = _declared_group_size(group_size, args, "num_generations")
    if size is None:
        raise RubricateConfigError("CONFIG_INVALID", "make_group_reward_function needs the group size: pass group_size=<num_generations> or args=<your GRPOConfig>, so a process that holds part of a group is refused instead of graded")
    _check_trl_processes(args, size)
    settings = RewardSettings(base_url, token, timeout, rubric_column, failed, name, max_concurrency, client_options)
    tokens = end_tokens(special_tokens(tokenizer))
    client = AsyncRubricateClient(base_url, token, timeout, max_concurrency=max_concurrency, **client_options)

    async def reward(prompts: Sequence[Any], completions: Sequence[Any], rubric: Optional[Sequence[Any]] = None, completion_ids: Optional[Sequence[Sequence[int]]] = None, trainer_state: Any = None, **kwargs: Any) -> List[Optional[float]]:
        rubrics = rubric if rubric is not None and rubric_column == "rubric" else kwargs.get(rubric_column)
        if rubrics is None:
            raise ValueError(f"no '{rubric_column}' column reached the reward function: add it to the dataset (or set rubric_column=)")
        lengths = [len(ids) for ids in completion_ids] if completion_ids is not None else None
        step = getattr(trainer_state, "global_step", None)
        texts = [completion_text(completion) for completion in completions]
        rows = await client._run(score_rows, client.client, [prompt_value(prompt) for prompt in prompts], texts, list(rubrics), group_size=size, shaping=shaping, lengths=lengths, step=step, tokens=tokens, fix=TRL_GROUP_FIX, max_parallel=max_concurrency)
        for group in sorted({row["group"] for row in rows if row["zero_variance"]}):
            logger.info("%s: group %d has equal rewards: no learning signal", name, group)
        return settings.rewards([{"reward": row["reward"], "error": row["error"]} for row in rows], kwargs)

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


def _verl_uids(infos: Sequence[Any]) -> Optional[List[Any]]:
    """verl's group ids where the rows carry them (``extra_info['uid']``): on every row or none."""
    found = [info.get("uid") if isinstance(info, dict) else None for info in infos]
    if all(uid is None for uid in found):
        return None
    if any(uid is None for uid in found):
        raise ValueError("extra_info['uid'] is on some rows only: give every row its group id, or none (then rows are grouped by prompt and rubric)")
    return found


VERL_GROUP_FIX = (
    "verl's batch manager hands the whole step (reordered by trainer.balance_batch): check reward_kwargs.group_size against actor_rollout_ref.rollout.n, "
    "and when one prompt is drawn more than once per step give each row its rollout group id as extra_info['uid']."
)


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
    group_size: Optional[int] = None,
    uids: Optional[Sequence[Any]] = None,
    max_parallel: int = 8,
    **_unused: Any,
) -> List[Dict[str, float]]:
    """verl's ``batch`` reward manager with group rewards: the samples of each prompt gathered
    over the whole batch (verl's ``balance_batch`` reorders rows by workload before the reward,
    so they are not adjacent), by ``uids`` or ``extra_info['uid']`` when given, else by prompt
    and rubric, and graded as a group (with ``shaping``); ``group_size``
    (``reward_kwargs.group_size``, verl's ``rollout.n``) makes an incomplete group raise. One dict
    per sample, in verl's order, the same keys each time: ``score``, ``reward_failed``,
    ``zero_variance``. Every failure raises ``RubricateAbort`` (verl's managers turn an
    ``Exception`` into 0.0); a sample the server could not grade too, unless ``fallback`` is set
    (then the flagged fallback)."""
    try:
        count = len(solution_strs)
        infos = list(extra_infos) if extra_infos is not None else [None] * count
        keyed = [_verl_group(info, truth) for info, truth in zip(infos, ground_truths)]
        ids = list(uids) if uids is not None else _verl_uids(infos)
        size = _declared_group_size(group_size)
        client = RubricateClient(base_url, token, timeout)
        rows = score_rows(client, [prompt for prompt, _ in keyed], solution_strs, [rubric for _, rubric in keyed], group_size=size, group_ids=ids, shaping=shaping, split_repeats=False, fix=VERL_GROUP_FIX, max_parallel=max_parallel)
        problem = _first_failure(rows)
        if problem is not None and fallback is None:
            raise RubricateError("NOT_GRADED", f"{problem} (set reward_kwargs.fallback=X to train through grading failures with a flagged reward X)")
        return [
            {"score": float(fallback if row["reward"] is None else row["reward"]), "reward_failed": 1.0 if row["reward"] is None else 0.0, "zero_variance": 1.0 if row["zero_variance"] else 0.0}  # type: ignore[arg-type]
            for row in rows
        ]
    except (RubricateError, ValueError) as error:
        raise _abort(error) from error


def _label_parts(label: Any) -> Tuple[Any, Any]:
    """(rubric, prompt or None) of a slime or OpenRLHF label: a rubric, ``{"rubric": …, "prompt": …}``, or either as JSON."""
    value = json.loads(label) if isinstance(label, str) else plain(label)
    if isinstance(value, dict) and "rubric" in value:
        return value["rubric"], value.get("prompt")
    return value, None


def _templated_prompt(prompt: Any) -> Any:
    """A trainer's prompt as the server's adapters read it: templated text parsed into messages."""
    return prompt_messages(prompt) if isinstance(prompt, str) else prompt_value(prompt)


SLIME_GROUP_FIX = "slime's --group-rm passes the samples of one prompt together, --n-samples-per-prompt of them: a custom generate or filter function must not drop or add samples before the reward."


async def slime_group_rm(args: Any, samples: Sequence[Any], **_slime_kwargs: Any) -> List[float]:
    """slime with ``--group-rm --custom-rm-path rubricate_client.groups.slime_group_rm``: the
    samples gathered by prompt and rubric (``args.n_samples_per_prompt`` each) and graded as
    groups, end-of-turn tokens stripped from the responses (a custom generate function may leave
    them). The server's address comes from ``args.rm_url`` (as ``--rm-url``) or ``RUBRICATE_URL``;
    shaping from ``RUBRICATE_SHAPING`` (JSON). A sample the server could not grade raises:
    slime does not retry a group, so the rollout fails (run the server with ``--cache`` so a
    rerun pays only for what failed)."""
    base_url = getattr(args, "rm_url", None) or os.environ.get("RUBRICATE_URL")
    shaping = json.loads(os.environ["RUBRICATE_SHAPING"]) if os.environ.get("RUBRICATE_SHAPING") else None
    size = _declared_group_size(None, args, "n_samples_per_prompt")
    client = RubricateClient(base_url)
    parts = [_label_parts(sample.label) for sample in samples]
    prompts = [prompt if prompt is not None else _templated_prompt(sample.prompt) for sample, (_, prompt) in zip(samples, parts)]
    rubrics = [rubric for rubric, _ in parts]
    rows = await asyncio.get_running_loop().run_in_executor(None, lambda: score_rows(client, prompts, [sample.response for sample in samples], rubrics, group_size=size, shaping=shaping, fix=SLIME_GROUP_FIX))
    problem = _first_failure(rows)
    if problem is not None:
        raise RubricateError("NOT_GRADED", f"{problem}: slime does not retry a group, so this rollout fails (fix the judge; serve --cache makes a rerun grade only what failed)")
    return [float(row["reward"]) for row in rows]


OPENRLHF_GROUP_FIX = (
    "OpenRLHF up to 0.9 calls the reward file once per --micro_rollout_batch_size chunk: make it a multiple of --n_samples_per_prompt "
    "(with --use_dynamic_batch off); from 0.9.1 the file gets one sample per call, where group rewards cannot work: use the per-sample /get_reward."
)


def openrlhf_group_rewards(
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[Any],
    *,
    group_size: Optional[int] = None,
    base_url: Optional[str] = None,
    token: Optional[str] = None,
    shaping: Optional[Dict[str, Any]] = None,
    tokenizer: Any = None,
    max_parallel: int = 8,
) -> Dict[str, Any]:
    """What an OpenRLHF reward function file returns, as lists (wrap them in ``torch.tensor``):
    ``rewards``, ``scores`` (clipped to [0, 1]) and ``extra_logs`` (``reward_failed``,
    ``zero_variance``). Each query (templated prompt + response, decoded with its end-of-turn
    token) is split as the server's ``/get_reward`` splits it; rows are gathered by prompt and
    label over the call and graded as groups of ``group_size`` (``--n_samples_per_prompt``, or
    ``RUBRICATE_GROUP_SIZE``; required, since OpenRLHF calls the file per micro-batch and a
    micro-batch holding part of a group must be refused). A sample the server could not grade
    raises (OpenRLHF cannot mask a reward)."""
    size = _declared_group_size(group_size if group_size is not None else os.environ.get("RUBRICATE_GROUP_SIZE") and int(os.environ["RUBRICATE_GROUP_SIZE"]))
    if size is None:
        raise RubricateConfigError("CONFIG_INVALID", f"openrlhf_group_rewards needs group_size=<--n_samples_per_prompt> (or RUBRICATE_GROUP_SIZE): {OPENRLHF_GROUP_FIX}")
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(f"{len(queries)} queries, {len(prompts)} prompts and {len(labels)} labels: they must match")
    tokens = end_tokens(special_tokens(tokenizer))
    split = [split_query(str(query), str(prompt), tokens) for query, prompt in zip(queries, prompts)]
    parts = [_label_parts(label) for label in labels]
    messages = [given if given is not None else prompt_messages(prompt_text) for (prompt_text, _), (_, given) in zip(split, parts)]
    client = RubricateClient(base_url, token)
    rows = score_rows(client, messages, [response for _, response in split], [rubric for rubric, _ in parts], group_size=size, shaping=shaping, tokens=tokens, fix=OPENRLHF_GROUP_FIX, max_parallel=max_parallel)
    problem = _first_failure(rows)
    if problem is not None:
        raise RubricateError("NOT_GRADED", f"{problem}: OpenRLHF cannot leave a reward out, so the step stops here")
    rewards = [float(row["reward"]) for row in rows]
    return {"rewards": rewards, "scores": [min(1.0, max(0.0, value)) for value in rewards], "extra_logs": {"reward_failed": [0.0] * len(rewards), "zero_variance": [1.0 if row["zero_variance"] else 0.0 for row in rows]}}
