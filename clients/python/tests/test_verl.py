"""verl, as its code calls a custom reward function (facts from verl at b178a3c and v0.5.0):

* loading: ``custom_reward_function.path`` is a file loaded with
  ``importlib.util.spec_from_file_location("custom_module_<hash>", path)`` +
  ``exec_module`` (a top-level module, no package; v0.5.0 names it ``custom_module``), or
  ``pkg://a.b`` imported with ``importlib.import_module``; the function is then wrapped in
  ``functools.partial(_call_with_kwargs, fn, reward_kwargs)`` (reward_kwargs win), or its
  async twin when ``inspect.iscoroutinefunction(fn)``;
* naive / dapo managers: one call per sample in sequence, keywords ``data_source``,
  ``solution_str``, ``ground_truth``, ``extra_info`` (dapo and the reward loop add
  ``rollout_reward_scores`` / ``num_turns`` to extra_info); a dict result gives
  ``result["score"]`` and every key appended to per-key lists;
* batch manager: one call with ``data_sources`` (a numpy object array), ``solution_strs``,
  ``ground_truths``, ``extra_infos``; dicts read the same way;
* prime manager: runs ``fn(data_source, solution, ground_truth, extra_info)`` in a
  ``ProcessPoolExecutor`` under asyncio, turns any ``Exception`` or ``None`` into 0.0, reads
  numbers with ``float(result)`` and anything else with ``float(result[0])``, and its caller
  turns any ``Exception`` into 0.0 for the whole batch;
* reward loop: ``await fn(...)`` per sample, all samples gathered at once;
* ``RayPPOTrainer.fit`` with ``trainer.balance_batch: True`` (the default) reorders the step's
  rows before the reward: split into one part per data-parallel rank, of equal size and
  near-equal total workload (sequence length), each part with its lightest rows at both ends.
  Rows of one prompt end up scattered; ``non_tensor_batch["uid"]`` still names the group but
  the batch manager passes only ``extra_info``;
* ``rate_limited`` awaits the function under ``asyncio.wait_for(reward_model.timeout)`` (300 s
  by default) and records 0.0 on a timeout or any ``Exception``; it does not pass the timeout.

Rewards go into ``torch.float32`` tensors in verl, so ints do no harm there; the tests check
floats anyway (the dict keys are logged with ``np.array`` per key).
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import inspect
import json
import os
import socket
import subprocess
import sys
import unittest
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Dict, List, Tuple

from rubricate_client import RubricateConfigError
from rubricate_client.client import RubricateClient
from rubricate_client.groups import compute_score_group_batch
from rubricate_client.verl import RubricateAbort, compute_score, compute_score_async, compute_score_batch, compute_score_prime

from .support import FRUIT_RUBRIC, PROJECT_ROOT, FakeJudge, ServeProcess, expected_by_group, fruit_score, fruit_step, node_available, shaped_by_length, win_rates, wrong_rewards

TOKEN = "verl-test-token"
PROMPT = "Name some fruit."
VERL_FILE = os.path.join(PROJECT_ROOT, "clients", "python", "rubricate_client", "verl.py")
RESPONSES = ["apples and pears", "pears", "rotten apples", "nothing at all", "apples", "rotten pears"]

judge: FakeJudge
serve: ServeProcess
#: The same judge behind ``--mode listwise`` and ``--mode tournament`` servers.
listwise: ServeProcess
tournament: ServeProcess


def setUpModule() -> None:
    global judge, serve, listwise, tournament
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the verl tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url, token=TOKEN)
    listwise = ServeProcess(judge.base_url, token=TOKEN, extra=["--mode", "listwise"])
    tournament = ServeProcess(judge.base_url, token=TOKEN, extra=["--mode", "tournament"])


def tearDownModule() -> None:
    for server in (serve, listwise, tournament):
        server.stop()
    judge.close()


def row(response: str, rubric_in: str = "extra_info") -> Dict[str, Any]:
    """A verl row as docs/rl-integration.md builds it (build_dataset.py)."""
    rubric_json = json.dumps(FRUIT_RUBRIC)
    extra = {"prompt": PROMPT, "rubric": rubric_json} if rubric_in == "extra_info" else {"prompt": [{"role": "user", "content": PROMPT}]}
    return {"data_source": "rubric", "solution_str": response, "ground_truth": rubric_json, "extra_info": extra}


def call_with_kwargs(raw: Any, extra: Dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """verl's _call_with_kwargs: call-time keywords merged with reward_kwargs, which win."""
    return raw(*args, **{**kwargs, **extra})


async def call_with_kwargs_async(raw: Any, extra: Dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    return await raw(*args, **{**kwargs, **extra})


def verl_wrap(function: Any, reward_kwargs: Dict[str, Any]) -> Any:
    """get_custom_reward_fn: a partial over the kwargs-merging caller (module level, so picklable)."""
    if inspect.iscoroutinefunction(function):
        return functools.partial(call_with_kwargs_async, function, reward_kwargs)
    return functools.partial(call_with_kwargs, function, reward_kwargs)


def collect(results: List[Any]) -> Dict[str, List[Any]]:
    """How the managers read results: score, and every dict key appended per sample."""
    scores: List[float] = []
    extra: Dict[str, List[Any]] = {}
    for result in results:
        if isinstance(result, dict):
            scores.append(result["score"])
            for key, value in result.items():
                extra.setdefault(key, []).append(value)
        else:
            scores.append(result)
    return {"scores": scores, **extra}


def balance_batch_order(workloads: List[int], dp: int) -> List[int]:
    """The order of rows after verl's ``trainer.balance_batch`` (see the module comment), written
    from its described behaviour: ``dp`` parts of equal size and near-equal workload (a greedy fill,
    heaviest row first into the lightest part with room, where verl partitions by Karmarkar–Karp),
    each part sorted by workload with its lightest rows at both ends (as verl orders a part), the
    parts one after the other."""
    size = len(workloads) // dp
    parts: List[List[int]] = [[] for _ in range(dp)]
    totals = [0] * dp
    for index in sorted(range(len(workloads)), key=lambda index: (-workloads[index], index)):
        part = min((number for number in range(dp) if len(parts[number]) < size), key=lambda number: (totals[number], number))
        parts[part].append(index)
        totals[part] += workloads[index]
    order: List[int] = []
    for members in parts:
        members.sort(key=lambda index: (workloads[index], index))
        order.extend(members[::2] + members[1::2][::-1])
    return order


def verl_step(rows: List[Any], dp: int, url: str, uid: bool = False, group: int = 8, **reward_kwargs: Any) -> Tuple[List[Any], List[float]]:
    """One verl step through the batch manager: rows generated group by group, reordered by
    balance_batch, decoded, then one call of the function with the manager's keywords. Returns
    the rows in the order the manager saw them and the score of each."""
    order = balance_batch_order([len(prompt) + len(response) for prompt, response in rows], dp)
    seen = [rows[index] for index in order]
    rubric_json = json.dumps(FRUIT_RUBRIC)
    infos = [{"prompt": prompt, "rubric": rubric_json, **({"uid": f"uid-{index // group}"} if uid else {})} for index, (prompt, _) in zip(order, seen)]
    fn = verl_wrap(compute_score_group_batch, {"base_url": url, "token": TOKEN, **reward_kwargs})
    results = fn(data_sources=["rubric"] * len(seen), solution_strs=[response for _, response in seen], ground_truths=[rubric_json] * len(seen), extra_infos=infos)
    return seen, collect(results)["scores"]


class GroupsUnderBalanceBatchTest(unittest.TestCase):
    """verl's batch manager with group rewards after balance_batch's reorder: every reward exact."""

    def test_the_reorder_scatters_groups_at_dp_1_and_4(self) -> None:
        rows = fruit_step(8, 8)
        for dp in (1, 4):
            order = balance_batch_order([len(prompt) + len(response) for prompt, response in rows], dp)
            self.assertEqual(sorted(order), list(range(64)))
            adjacent_runs = 1 + sum(1 for first, second in zip(order, order[1:]) if rows[first][0] != rows[second][0])
            self.assertGreater(adjacent_runs, 8, f"dp={dp}: the reorder left the groups together, the test would prove nothing")

    def test_length_shaped_group_rewards_exact_at_dp_1_and_4(self) -> None:
        rows = fruit_step(8, 8)
        expected = expected_by_group(rows, 8)
        for dp in (1, 4):
            for uid in (False, True):
                with self.subTest(dp=dp, uid=uid):
                    seen, scores = verl_step(rows, dp, serve.url, uid=uid, group_size=8, shaping={"length_penalty": {}})
                    self.assertEqual(wrong_rewards(seen, scores, expected), [])

    def test_a_prompt_drawn_twice_needs_the_uid_and_a_wrong_group_size_stops_the_step(self) -> None:
        rows = fruit_step(2, 4)
        twice = rows + [(rows[0][0], response + " again") for _, response in rows[:4]]
        with self.assertRaises(RubricateAbort) as caught:
            verl_step(twice, 2, serve.url, group_size=4, shaping={"length_penalty": {}})
        self.assertEqual(caught.exception.code, "GROUP_INCOMPLETE")
        self.assertIn("extra_info['uid']", caught.exception.message)
        # With the group id every row is exact, the two groups of the same prompt apart.
        expected = {**expected_by_group(rows, 4), **expected_by_group(twice[8:], 4)}
        seen, scores = verl_step(twice, 2, serve.url, uid=True, group=4, group_size=4, shaping={"length_penalty": {}})
        self.assertEqual(wrong_rewards(seen, scores, expected), [])
        with self.assertRaises(RubricateAbort) as caught:
            verl_step(rows, 2, serve.url, group_size=5)
        self.assertIn("fewer rows than the group size 5", caught.exception.message)

    def test_listwise_and_tournament_groups_exact_under_the_reorder(self) -> None:
        rows = fruit_step(4, 8)
        seen, scores = verl_step(rows, 4, listwise.url, group_size=8, shaping={"length_penalty": {}})
        self.assertEqual(wrong_rewards(seen, scores, expected_by_group(rows, 8, shaped_by_length)), [])
        rows = fruit_step(4, 4)
        seen, scores = verl_step(rows, 4, tournament.url, group_size=4)
        self.assertEqual(wrong_rewards(seen, scores, expected_by_group(rows, 4, win_rates)), [])

    def test_end_of_turn_tokens_are_stripped_as_the_server_strips_them(self) -> None:
        infos = [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}] * 2
        fn = verl_wrap(compute_score_group_batch, {"base_url": serve.url, "token": TOKEN, "group_size": 2, "shaping": {"length_penalty": {}}})
        scores = collect(fn(data_sources=["rubric"] * 2, solution_strs=["apples</s>", "apples and more<|eot_id|><|finetune_right_pad_id|>"], ground_truths=[None] * 2, extra_infos=infos))["scores"]
        self.assertEqual(scores, shaped_by_length(["apples", "apples and more"]))


class RateLimitedTimeoutTest(unittest.TestCase):
    """verl's rate_limited gives up after reward_model.timeout and trains 0.0: the client's budget stays inside it."""

    def test_a_time_budget_at_or_above_verls_timeout_is_refused(self) -> None:
        for kwargs in ({"time_budget": 60.0, "reward_model_timeout": 60.0}, {"time_budget": 300.0}):
            with self.subTest(kwargs=kwargs), self.assertRaises(RubricateAbort) as caught:
                asyncio.run(verl_wrap(compute_score_async, {"base_url": serve.url, "token": TOKEN, **kwargs})(**row("apples")))
            self.assertEqual(caught.exception.code, "CONFIG_INVALID")
            self.assertIn("reward_model.timeout", caught.exception.message)

    def test_without_a_budget_the_call_ends_inside_verls_timeout(self) -> None:
        # A server that takes the request and never answers; verl's timeout 3 s: the client stops
        # at 90 % of it with RubricateAbort (a BaseException, past verl's except Exception), so
        # verl never records its 0.0.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        fn = verl_wrap(compute_score_async, {"base_url": f"http://127.0.0.1:{silent.getsockname()[1]}", "token": TOKEN, "reward_model_timeout": 3.0})

        async def run_single() -> Any:
            try:
                return await asyncio.wait_for(fn(**row("apples")), timeout=3.0)
            except asyncio.TimeoutError:
                return "verl timeout: 0.0"
            except Exception:
                return "verl error: 0.0"

        try:
            with self.assertRaises(RubricateAbort) as caught:
                asyncio.run(run_single())
            self.assertEqual(caught.exception.code, "TIMEOUT")
        finally:
            silent.close()


class LoadingTest(unittest.TestCase):
    """The three ways verl can load the module, each in a clean interpreter."""

    def run_child(self, code: str, pythonpath: str = "") -> Dict[str, Any]:
        environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "RUBRICATE_URL", "RUBRICATE_TOKEN")}
        if pythonpath:
            environment["PYTHONPATH"] = pythonpath
        # Not -I: PYTHONPATH must count for pkg://. The working directory is elsewhere, so the
        # package is importable only through PYTHONPATH (or not at all).
        completed = subprocess.run([sys.executable, "-c", code], cwd="/", env=environment, capture_output=True, text=True, timeout=120)
        self.assertEqual(completed.returncode, 0, completed.stderr[-3000:])
        return json.loads(completed.stdout.strip().splitlines()[-1])

    def test_file_path_as_verl_loads_it_without_the_package_on_the_path(self) -> None:
        code = f"""
import hashlib, importlib.util, json, os, pickle, sys
path = {VERL_FILE!r}
assert importlib.util.find_spec("rubricate_client") is None, "the package must not be importable here"
for name in ("custom_module_" + str(hash(os.path.abspath(path))), "custom_module"):  # HEAD, v0.5.0
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
fn = getattr(module, "compute_score")
result = fn(data_source="rubric", solution_str="apples and pears", ground_truth=None,
            extra_info={{"prompt": "Name some fruit.", "rubric": {json.dumps(FRUIT_RUBRIC)!r}}},
            base_url={serve.url!r}, token={TOKEN!r})
# prime pickles the function into worker processes: it must have an importable home.
restored = pickle.loads(pickle.dumps(module.compute_score_prime))
print(json.dumps({{"result": result, "module": fn.__module__, "same": restored is module.compute_score_prime,
                  "has_async": hasattr(module, "compute_score_async"), "has_batch": hasattr(module, "compute_score_batch")}}))
"""
        answer = self.run_child(code)
        self.assertEqual(answer["result"], {"score": 1.0, "reward_failed": 0.0, "criteria_met_fraction": 2 / 3})
        self.assertEqual(answer["module"], "rubricate_client._verl")
        self.assertTrue(answer["same"] and answer["has_async"] and answer["has_batch"])

    def test_pkg_path_and_normal_import(self) -> None:
        code = f"""
import importlib, json
module = importlib.import_module("rubricate_client.verl")  # what pkg://rubricate_client.verl does
from rubricate_client.verl import compute_score
assert compute_score is module.compute_score
print(json.dumps(module.compute_score("rubric", "pears", {json.dumps(json.dumps(FRUIT_RUBRIC))}, {{"prompt": "Name some fruit."}},
                                      base_url={serve.url!r}, token={TOKEN!r})))
"""
        answer = self.run_child(code, pythonpath=os.path.join(PROJECT_ROOT, "clients", "python"))
        self.assertEqual(answer, {"score": 0.25, "reward_failed": 0.0, "criteria_met_fraction": 1 / 3})


class ManagersTest(unittest.TestCase):
    def setUp(self) -> None:
        self.reward_kwargs = {"base_url": serve.url, "token": TOKEN}

    def assert_all_floats(self, collected: Dict[str, List[Any]]) -> None:
        for key, values in collected.items():
            for value in values:
                self.assertIs(type(value), float, f"{key}: {value!r}")

    def test_naive_manager_one_sample_per_call_over_one_connection(self) -> None:
        fn = verl_wrap(compute_score, self.reward_kwargs)
        results = []
        for response in RESPONSES:
            sample = row(response)
            results.append(fn(data_source=sample["data_source"], solution_str=sample["solution_str"], ground_truth=sample["ground_truth"], extra_info=sample["extra_info"]))
        collected = collect(results)
        self.assertEqual(collected["scores"], [fruit_score(response) for response in RESPONSES])
        self.assertEqual(set(collected), {"scores", "score", "reward_failed", "criteria_met_fraction"})
        self.assertEqual(collected["reward_failed"], [0.0] * len(RESPONSES))
        self.assert_all_floats(collected)
        # Per-call cost: the same keep-alive connection served every call of this thread.
        from rubricate_client import _verl

        budgeted = _verl._budgeted(_verl.DEFAULT_TIMEOUT, _verl.DEFAULT_MAX_RETRY_TIME, _verl.DEFAULT_TIME_BUDGET)
        clients = [
            client
            for client in _verl._clients.values()
            if isinstance(client, RubricateClient) and client.base_url == serve.url and client.token == TOKEN and (client.timeout, client.max_retry_time) == budgeted
        ]
        self.assertEqual(len(clients), 1)
        connection = clients[0]._local.connection
        self.assertIsNotNone(connection)
        fn(**{key: value for key, value in row("pears").items()})
        self.assertIs(clients[0]._local.connection, connection)

    def test_dapo_manager_extra_info_with_rollout_scores_and_message_prompts(self) -> None:
        fn = verl_wrap(compute_score, self.reward_kwargs)
        results = []
        for response in RESPONSES[:3]:
            sample = row(response, rubric_in="ground_truth")
            sample["extra_info"]["rollout_reward_scores"] = {}
            results.append(fn(**sample))
        collected = collect(results)
        self.assertEqual(collected["scores"], [fruit_score(response) for response in RESPONSES[:3]])
        self.assert_all_floats(collected)

    def test_batch_manager_signature_with_numpy_style_arrays(self) -> None:
        fn = verl_wrap(compute_score_batch, self.reward_kwargs)
        rows = [row(response) for response in RESPONSES]
        data_sources: Any = [sample["data_source"] for sample in rows]
        extra_infos: Any = [dict(sample["extra_info"], rollout_reward_scores={}) for sample in rows]
        try:
            import numpy  # verl passes non_tensor_batch columns as numpy object arrays

            data_sources = numpy.array(data_sources, dtype=object)
            extra_infos = numpy.array(extra_infos, dtype=object)
        except ImportError:
            pass
        scores = fn(data_sources=data_sources, solution_strs=[sample["solution_str"] for sample in rows], ground_truths=[sample["ground_truth"] for sample in rows], extra_infos=extra_infos)
        collected = collect(scores)
        self.assertEqual(collected["scores"], [fruit_score(response) for response in RESPONSES])
        self.assert_all_floats(collected)

    def test_batch_manager_bad_rubric_raises_unless_a_fallback_is_set(self) -> None:
        bad = dict(row("apples"), extra_info={"prompt": PROMPT, "rubric": {"criteria": [{"text": "x", "points": "many"}]}})
        good = row("pears")
        arguments = dict(data_sources=["rubric", "rubric"], solution_strs=[good["solution_str"], "apples"], ground_truths=[good["ground_truth"], None], extra_infos=[good["extra_info"], bad["extra_info"]])
        with self.assertRaises(RubricateAbort) as caught:
            compute_score_batch(**arguments, **self.reward_kwargs)
        self.assertIn("items[1].rubric.criteria[0].points", caught.exception.message)
        self.assertEqual(caught.exception.status, 400)
        scores = compute_score_batch(**arguments, fallback=0.0, **self.reward_kwargs)
        self.assertEqual(scores, [{"score": 0.25, "reward_failed": 0.0, "criteria_met_fraction": 1 / 3}, {"score": 0.0, "reward_failed": 1.0, "criteria_met_fraction": 0.0}])

    def test_reward_loop_awaits_compute_score_async_for_every_sample_at_once(self) -> None:
        fn = verl_wrap(compute_score_async, self.reward_kwargs)
        self.assertTrue(inspect.iscoroutinefunction(fn))
        rows = [row(response) for response in RESPONSES * 8]

        async def run() -> List[Any]:
            return await asyncio.gather(*(fn(**dict(sample, extra_info=dict(sample["extra_info"], num_turns=None, rollout_reward_scores={}))) for sample in rows))

        collected = collect(asyncio.run(run()))
        self.assertEqual(collected["scores"], [fruit_score(sample["solution_str"]) for sample in rows])
        # compute_rm_score takes the extra keys from row 0 and builds one array per key: every row has them all.
        self.assertEqual({len(values) for values in collected.values()}, {len(rows)})
        self.assert_all_floats(collected)

    def test_prime_manager_floats_from_worker_processes_and_no_silent_zero(self) -> None:
        fn = verl_wrap(compute_score_prime, self.reward_kwargs)
        rows = [row(response) for response in RESPONSES]
        scores = run_prime(fn, rows)
        self.assertEqual(scores, [fruit_score(response) for response in RESPONSES])
        # Under verl's default name too: prime reads the dict as result[0], the score.
        self.assertEqual(run_prime(verl_wrap(compute_score, self.reward_kwargs), rows), scores)
        self.assertTrue(all(type(score) is float for score in scores))
        # A sample the judge cannot grade, no fallback: prime would make the batch 0.0; the run stops instead.
        with self.assertRaises(RubricateAbort):
            run_prime(fn, [row("apples"), row("judge-breaks")])
        # With a fallback asked for, the number comes through (logged).
        with_fallback = verl_wrap(compute_score_prime, dict(self.reward_kwargs, fallback=-1.0))
        self.assertEqual(run_prime(with_fallback, [row("apples"), row("judge-breaks")]), [0.75, -1.0])


def run_prime(fn: Any, rows: List[Dict[str, Any]]) -> List[float]:
    """prime's verify: a process pool under asyncio; Exception/None → 0.0; float(result) or float(result[0])."""

    async def single(executor: ProcessPoolExecutor, sample: Dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(executor, functools.partial(fn, sample["data_source"], sample["solution_str"], sample["ground_truth"], sample["extra_info"]))
            return await asyncio.wait_for(future, timeout=300.0)
        except asyncio.TimeoutError:
            return None
        except Exception:
            return None

    async def parallel() -> List[float]:
        with ProcessPoolExecutor(max_workers=2) as executor:
            results = await asyncio.gather(*(single(executor, sample) for sample in rows))
        scores = []
        for result in results:
            if result is None:
                scores.append(0.0)
            elif isinstance(result, (int, float, bool)):
                scores.append(float(result))
            else:
                scores.append(float(result[0]))
        return scores

    try:
        return asyncio.run(parallel())
    except Exception:
        # "[Error] Unexpected error during scoring. Setting all as 0."
        return [0.0] * len(rows)


class FailLoudTest(unittest.TestCase):
    """Every failure raises RubricateAbort (a BaseException: prime and rate_limited catch Exception), unless a fallback is set."""

    def call(self, response: str = "apples", **options: Any) -> Dict[str, float]:
        arguments = {"base_url": serve.url, "token": TOKEN, **options}
        return compute_score("rubric", response, None, {"prompt": PROMPT, "rubric": FRUIT_RUBRIC}, **arguments)

    def test_wrong_token_wrong_path_bad_rubric_and_no_server_raise(self) -> None:
        cases = [
            ({"token": "wrong"}, "UNAUTHORIZED", "token"),
            ({"token": None}, "UNAUTHORIZED", "token"),
            ({"base_url": serve.url + "/v1"}, "NOT_FOUND", "no /v1"),
            ({"base_url": "http://127.0.0.1:9"}, "CONNECTION", "running"),
        ]
        for options, code, hint in cases:
            with self.subTest(options=options):
                with self.assertRaises(RubricateAbort) as caught:
                    self.call(**options)
                self.assertNotIsInstance(caught.exception, Exception)
                self.assertEqual(caught.exception.code, code)
                self.assertIn(hint, caught.exception.message)
                self.assertIsInstance(caught.exception.__cause__, RubricateConfigError)
        with self.assertRaises(RubricateAbort) as caught:
            compute_score("rubric", "apples", None, {"prompt": PROMPT, "rubric": {"criteria": []}}, base_url=serve.url, token=TOKEN)
        self.assertEqual(caught.exception.status, 400)

    def test_grading_failure_raises_without_fallback_and_is_flagged_with_one(self) -> None:
        with self.assertRaises(RubricateAbort) as caught:
            self.call("apples judge-breaks")
        self.assertEqual(caught.exception.code, "JUDGE_SERVER_ERROR")
        self.assertIn("reward_kwargs.fallback", caught.exception.message)
        self.assertEqual(self.call("apples judge-breaks", fallback=-1.0), {"score": -1.0, "reward_failed": 1.0, "criteria_met_fraction": 0.0})

    def test_connection_refused_at_start_up_costs_no_retries(self) -> None:
        client = RubricateClient("http://127.0.0.1:9", timeout=5)
        sleeps: List[float] = []
        client._sleep = sleeps.append
        with self.assertRaises(RubricateConfigError):
            client.score(PROMPT, "apples", FRUIT_RUBRIC)
        self.assertEqual(sleeps, [])


if __name__ == "__main__":
    unittest.main()
