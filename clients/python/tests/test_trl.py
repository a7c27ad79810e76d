"""TRL, as ``GRPOTrainer`` calls reward functions (facts from TRL f2cd577 after v1.9.0, v1.5.1
and v0.26.2):

* every reward function gets ``prompts``, ``completions``, ``completion_ids``, every dataset
  column by name, and (recent releases) ``trainer_state``, ``log_extra``, ``log_metric``;
* since v0.27 a coroutine function is run on TRL's own event loop in a daemon thread
  (``asyncio.run_coroutine_threadsafe``); before v0.27 the function is called and its result
  iterated directly, so an async function fails (``'coroutine' object is not iterable``);
* ``None`` becomes NaN in a float32 tensor; from v1.6 rows whose rewards are all NaN are left
  out of the group statistics (advantage 0); before v1.6 ``nansum`` turns them into 0, which
  enters the group mean and std like a real zero;
* advantages: (r − group mean) ÷ (group std + 1e-4), std with n − 1;
* with several processes, each calls the reward function on its own contiguous slice of the
  global batch (``per_device_train_batch_size × steps_per_generation`` rows); TRL only requires
  the global batch to divide by ``num_generations``, so a slice may hold part of a group.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import sys
import threading
import types
import unittest
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rubricate_client import RubricateConfigError
from rubricate_client.groups import make_group_reward_function
from rubricate_client.trl import completion_text, make_reward_function, make_sync_reward_function

from .support import FRUIT_RUBRIC, FakeJudge, ServeProcess, fruit_score, fruit_step, node_available, shaped_by_length, wrong_rewards

TOKEN = "trl-token"
PROMPT = [{"role": "user", "content": "Name some fruit."}]

judge: FakeJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the TRL tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url, token=TOKEN)


def tearDownModule() -> None:
    serve.stop()
    judge.close()


class FakeTrlVersion:
    """Makes ``import trl`` find a module of the given version (what the factories inspect)."""

    def __init__(self, version: str):
        self.module = types.ModuleType("trl")
        self.module.__version__ = version  # type: ignore[attr-defined]

    def __enter__(self) -> None:
        self.saved = sys.modules.get("trl")
        sys.modules["trl"] = self.module

    def __exit__(self, *exc_info: Any) -> None:
        if self.saved is None:
            sys.modules.pop("trl", None)
        else:
            sys.modules["trl"] = self.saved


class TrlCaller:
    """GRPOTrainer's reward step at a given version, without torch (float lists, NaN for None)."""

    def __init__(self, version: Tuple[int, int]):
        self.version = version
        self.extra: Dict[str, List[Any]] = {}
        self.metrics: Dict[str, List[float]] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    def rewards(self, reward_func: Callable[..., Any], prompts: Sequence[Any], completions: Sequence[Any], columns: Dict[str, List[Any]]) -> List[float]:
        kwargs: Dict[str, Any] = dict(columns)
        # log_extra(column, values) extends a completions-table column; log_metric(name, value) appends a value.
        kwargs.update(completion_ids=[[1, 2, 3]] * len(completions), trainer_state=object(), log_extra=lambda column, values: self.extra.setdefault(column, []).extend(values), log_metric=lambda name, value: self.metrics.setdefault(name, []).append(value))
        if self.version >= (0, 27) and inspect.iscoroutinefunction(reward_func):
            future = asyncio.run_coroutine_threadsafe(reward_func(prompts=prompts, completions=completions, **kwargs), self.loop)
            output = future.result(timeout=120)
        else:
            output = reward_func(prompts=prompts, completions=completions, **kwargs)
        return [math.nan if reward is None else float(reward) for reward in output]

    def advantages(self, rewards: List[float], group: int) -> List[float]:
        if self.version < (1, 6):
            rewards = [0.0 if math.isnan(reward) else reward for reward in rewards]  # nansum over one function
        result: List[float] = []
        for start in range(0, len(rewards), group):
            members = rewards[start : start + group]
            valid = [reward for reward in members if not math.isnan(reward)]
            mean = sum(valid) / len(valid)
            std = math.sqrt(sum((reward - mean) ** 2 for reward in valid) / (len(valid) - 1))
            result.extend(0.0 if math.isnan(reward) else (reward - mean) / (std + 1e-4) for reward in members)
        return result


class TrlCurrentTest(unittest.TestCase):
    """TRL ≥ 1.6 (HEAD): async function, None masked."""

    def setUp(self) -> None:
        self.trl = TrlCaller((1, 9))

    def tearDown(self) -> None:
        self.trl.close()

    def test_async_function_on_trls_loop_with_a_masked_failure(self) -> None:
        with FakeTrlVersion("1.9.0"):
            reward = make_reward_function(serve.url, TOKEN)
        responses = ["Apples and pears.", "Pears.", "judge-breaks", "Rotten apples.", "Apples.", "Nothing.", "Pears and apples.", "rotten"]
        completions = [[{"role": "assistant", "content": text}] for text in responses]
        rewards = self.trl.rewards(reward, [PROMPT] * 8, completions, {"rubric": [json.dumps(FRUIT_RUBRIC)] * 8})
        for index, text in enumerate(responses):
            if text == "judge-breaks":
                self.assertTrue(math.isnan(rewards[index]))
            else:
                self.assertEqual(rewards[index], fruit_score(text))
        advantages = self.trl.advantages(rewards, group=4)
        self.assertEqual(advantages[2], 0.0)
        # The failure shows in TRL's completions table, next to its completion, and as a metric.
        errors = self.trl.extra["rubric_reward_error"]
        self.assertTrue(errors[2].startswith("JUDGE_SERVER_ERROR: "), errors[2])
        self.assertEqual([error for index, error in enumerate(errors) if index != 2], [""] * 7)
        self.assertEqual(self.trl.metrics["rubric_reward/failed_fraction"], [1 / 8])
        # The failed row is out of its group's mean: the group is the three real rewards.
        real = [fruit_score(text) for text in responses[:4] if text != "judge-breaks"]
        mean = sum(real) / 3
        self.assertAlmostEqual(advantages[0], (real[0] - mean) / (math.sqrt(sum((value - mean) ** 2 for value in real) / 2) + 1e-4), places=9)

    def test_content_blocks_and_multi_turn_completions(self) -> None:
        forms = [
            [{"role": "assistant", "content": [{"type": "text", "text": "Apples "}, {"type": "text", "text": "and pears."}]}],
            [{"type": "text", "text": "Pears."}],
            [{"role": "assistant", "content": "Let me check."}, {"role": "tool", "content": "apples in stock"}, {"role": "assistant", "content": "Rotten apples."}],
            "Apples.",
        ]
        self.assertEqual([completion_text(form) for form in forms], ["Apples and pears.", "Pears.", "Let me check.\n\nRotten apples.", "Apples."])
        reward = make_reward_function(serve.url, TOKEN)
        rewards = self.trl.rewards(reward, [PROMPT] * 4, forms, {"rubric": [FRUIT_RUBRIC] * 4})
        self.assertEqual(rewards, [1.0, 0.25, 0.25, 0.75])

    def test_one_invalid_rubric_fails_only_its_row(self) -> None:
        reward = make_reward_function(serve.url, TOKEN, rubric_column="rubric_json")
        rubrics = [json.dumps(FRUIT_RUBRIC), '{"criteria": [{"text": "x", "points": "many"}]}', FRUIT_RUBRIC, "not json"]
        rewards = self.trl.rewards(reward, ["Name some fruit."] * 4, ["Apples.", "Apples.", "Pears.", "Apples."], {"rubric_json": rubrics})
        self.assertEqual(rewards[0], 0.75)
        self.assertTrue(math.isnan(rewards[1]))
        self.assertEqual(rewards[2], 0.25)
        self.assertTrue(math.isnan(rewards[3]))

    def test_a_rubric_dict_column_as_arrow_fills_it_grades_every_row(self) -> None:
        # datasets/parquet store a list of dicts as one struct column: every row gets the union of
        # the keys, absent ones None (here, row 0 has a tag and an importance, row 1 has neither).
        rows = [
            {"criteria": [dict(FRUIT_RUBRIC["criteria"][0], tags=["fruit"], importance=None), *FRUIT_RUBRIC["criteria"][1:]]},
            {"criteria": FRUIT_RUBRIC["criteria"]},
        ]
        keys = {key for rubric in rows for criterion in rubric["criteria"] for key in criterion}
        arrow = [{"criteria": [{key: criterion.get(key) for key in sorted(keys)} for criterion in rubric["criteria"]]} for rubric in rows]
        self.assertIsNone(arrow[1]["criteria"][0]["tags"])
        reward = make_reward_function(serve.url, TOKEN)
        self.assertEqual(self.trl.rewards(reward, [PROMPT] * 2, ["Apples.", "Pears."], {"rubric": arrow}), [0.75, 0.25])
        # The server reads the nulls as absent too, for clients that send them as they are.
        body = json.dumps({"items": [{"prompt": "q", "response": "Apples.", "rubric": arrow[1]}]}).encode()
        request = urllib.request.Request(f"{serve.url}/v1/score/batch", data=body, headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"}, method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            self.assertEqual(json.loads(answer.read())["results"][0]["reward"], 0.75)

    def test_configuration_errors_raise_on_the_first_call(self) -> None:
        for options, code in [({"token": "wrong"}, "UNAUTHORIZED"), ({"base_url": serve.url + "/v1"}, "NOT_FOUND"), ({"base_url": "http://127.0.0.1:9"}, "CONNECTION")]:
            with self.subTest(options=options):
                reward = make_reward_function(**{"base_url": serve.url, "token": TOKEN, **options})
                with self.assertRaises(RubricateConfigError) as caught:
                    self.trl.rewards(reward, [PROMPT], ["Apples."], {"rubric": [FRUIT_RUBRIC]})
                self.assertEqual(caught.exception.code, code)


class TrlOlderTest(unittest.TestCase):
    def test_trl_0_27_to_1_5_failures_raise_instead_of_training_as_zero(self) -> None:
        trl = TrlCaller((1, 5))
        try:
            with FakeTrlVersion("1.5.1"):
                reward = make_reward_function(serve.url, TOKEN)
                fallback = make_reward_function(serve.url, TOKEN, failed=-1.0)
            self.assertEqual(trl.rewards(reward, [PROMPT] * 2, ["Apples.", "Pears."], {"rubric": [FRUIT_RUBRIC] * 2}), [0.75, 0.25])
            with self.assertRaises(RuntimeError) as caught:
                trl.rewards(reward, [PROMPT] * 2, ["Apples.", "judge-breaks"], {"rubric": [FRUIT_RUBRIC] * 2})
            self.assertIn("would train as 0", str(caught.exception))
            # An explicit number is the user's choice (logged).
            self.assertEqual(trl.rewards(fallback, [PROMPT] * 2, ["Apples.", "judge-breaks"], {"rubric": [FRUIT_RUBRIC] * 2}), [0.75, -1.0])
        finally:
            trl.close()

    def test_trl_before_0_27_needs_the_sync_function(self) -> None:
        trl = TrlCaller((0, 26))
        try:
            with FakeTrlVersion("0.26.2"):
                with self.assertRaises(RuntimeError) as caught:
                    make_reward_function(serve.url, TOKEN)
                self.assertIn("make_sync_reward_function", str(caught.exception))
                reward = make_sync_reward_function(serve.url, TOKEN)
            self.assertFalse(inspect.iscoroutinefunction(reward))
            self.assertEqual(trl.rewards(reward, ["Name some fruit."] * 3, ["Apples.", "Pears.", "Rotten apples and pears."], {"rubric": [FRUIT_RUBRIC] * 3}), [0.75, 0.25, 0.5])
            # What TRL < 0.27 does with an async function: calls it and iterates the coroutine.
            async_reward = make_reward_function(serve.url, TOKEN)  # no TRL pinned here: allowed
            with self.assertRaises(TypeError):
                coroutine = async_reward(prompts=["x"], completions=["y"], rubric=[FRUIT_RUBRIC])
                try:
                    list(coroutine)
                finally:
                    coroutine.close()
        finally:
            trl.close()


def token_ids(text: str) -> List[int]:
    """completion_ids of a completion: one id per word (the lengths the length penalty reads)."""
    return [1] * len(text.split())


def trl_step(trl: TrlCaller, reward_func: Callable[..., Any], rows: List[Any], processes: int) -> List[List[float]]:
    """One GRPO step over ``processes`` processes: the global batch (each prompt's rollouts
    together) cut into equal contiguous slices, each process calling the function on its own."""
    per_process = len(rows) // processes
    rewards: List[List[float]] = []
    for start in range(0, len(rows), per_process):
        part = rows[start : start + per_process]
        prompts = [[{"role": "user", "content": prompt}] for prompt, _ in part]
        completions = [[{"role": "assistant", "content": response}] for _, response in part]
        kwargs: Dict[str, Any] = {"rubric": [FRUIT_RUBRIC] * len(part), "completion_ids": [token_ids(response) for _, response in part], "trainer_state": types.SimpleNamespace(global_step=3)}
        kwargs.update(log_extra=lambda column, values: trl.extra.setdefault(column, []).extend(values), log_metric=lambda name, value: trl.metrics.setdefault(name, []).append(value))
        future = asyncio.run_coroutine_threadsafe(reward_func(prompts=prompts, completions=completions, **kwargs), trl.loop)
        rewards.append([math.nan if reward is None else float(reward) for reward in future.result(timeout=120)])
    return rewards


def token_shaped(rows: List[Any], group: int) -> Dict[Any, float]:
    """Expected group rewards by hand, token lengths as completion_ids give them."""
    expected: Dict[Any, float] = {}
    for start in range(0, len(rows), group):
        members = rows[start : start + group]
        responses = [response for _, response in members]
        for row, value in zip(members, shaped_by_length(responses, [len(token_ids(response)) for response in responses])):
            expected[row] = value
    return expected


class TrlGroupTest(unittest.TestCase):
    """make_group_reward_function as GRPOTrainer calls it, over 1 and 4 processes and with a flaky judge."""

    def setUp(self) -> None:
        self.trl = TrlCaller((1, 9))

    def tearDown(self) -> None:
        self.trl.close()

    def test_one_and_four_processes_with_whole_groups_are_exact(self) -> None:
        rows = fruit_step(8, 8)
        expected = token_shaped(rows, 8)
        reward = make_group_reward_function(serve.url, TOKEN, group_size=8, shaping={"length_penalty": {}})
        for processes in (1, 4):
            with self.subTest(processes=processes):
                rewards = [value for part in trl_step(self.trl, reward, rows, processes) for value in part]
                self.assertEqual(wrong_rewards(rows, rewards, expected), [])

    def test_a_group_split_between_processes_stops_the_step_at_start_up_or_on_the_call(self) -> None:
        rows = fruit_step(6, 8)  # 48 rows, 12 per process: groups cut in two
        args = types.SimpleNamespace(num_generations=8, per_device_train_batch_size=12, steps_per_generation=1, world_size=4)
        with self.assertRaises(RubricateConfigError) as caught:
            make_group_reward_function(serve.url, TOKEN, args=args)
        self.assertEqual(caught.exception.code, "GROUP_INCOMPLETE")
        self.assertIn("multiple of num_generations", caught.exception.message)
        # Without the config, each process finds it holds part of a group and raises: no reward at all.
        reward = make_group_reward_function(serve.url, TOKEN, group_size=8, shaping={"length_penalty": {}})
        with self.assertRaises(RubricateConfigError) as caught:
            trl_step(self.trl, reward, rows, 4)
        self.assertIn("fewer rows than the group size 8", caught.exception.message)
        # The same global batch in one process is whole.
        good = make_group_reward_function(serve.url, TOKEN, args=types.SimpleNamespace(num_generations=8, per_device_train_batch_size=16, steps_per_generation=3, world_size=4), shaping={"length_penalty": {}})
        self.assertEqual(wrong_rewards(rows, trl_step(self.trl, good, rows, 1)[0], token_shaped(rows, 8)), [])

    def test_flaky_judge_on_trl_1_5_stops_the_step_and_on_1_6_masks_only_the_failed_rows(self) -> None:
        rows = [(prompt, "judge-breaks" if index % 3 == 0 else response) for index, (prompt, response) in enumerate(fruit_step(4, 8))]
        with FakeTrlVersion("1.5.1"):
            reward = make_group_reward_function(serve.url, TOKEN, group_size=8, shaping={"length_penalty": {}})
            fallback = make_group_reward_function(serve.url, TOKEN, group_size=8, failed=-1.0, name="flagged")
        old = TrlCaller((1, 5))
        try:
            with self.assertRaises(RuntimeError) as caught:
                trl_step(old, reward, rows, 1)
            self.assertIn("would train as 0", str(caught.exception))
            # The opt-in number is flagged in TRL's completions table, row by row.
            flagged = trl_step(old, fallback, rows, 1)[0]
            failing = [index for index, (_, response) in enumerate(rows) if response == "judge-breaks"]
            self.assertEqual([flagged[index] for index in failing], [-1.0] * len(failing))
            self.assertEqual([index for index, error in enumerate(old.extra["flagged_error"]) if error], failing)
        finally:
            old.close()
        # TRL ≥ 1.6: None (NaN) on the failed rows; the others shaped over the real members only.
        with FakeTrlVersion("1.9.0"):
            masked = make_group_reward_function(serve.url, TOKEN, group_size=8, shaping={"length_penalty": {}})
        rewards = trl_step(self.trl, masked, rows, 1)[0]
        expected: Dict[Any, float] = {}
        for start in range(0, len(rows), 8):
            real = [row for row in rows[start : start + 8] if row[1] != "judge-breaks"]
            expected.update(token_shaped(real, len(real)))
        for index, (row, value) in enumerate(zip(rows, rewards)):
            if row[1] == "judge-breaks":
                self.assertTrue(math.isnan(value), index)
            else:
                self.assertAlmostEqual(value, expected[row], places=9, msg=str(index))

    def test_trl_before_0_27_cannot_await_the_group_function_so_it_is_refused(self) -> None:
        with FakeTrlVersion("0.26.2"), self.assertRaises(RuntimeError) as caught:
            make_group_reward_function(serve.url, TOKEN, group_size=8)
        self.assertIn("TRL >= 0.27", str(caught.exception))

    def test_the_tokenizers_special_tokens_are_stripped(self) -> None:
        tokenizer = types.SimpleNamespace(eos_token="<|my_eos|>", pad_token="<|my_pad|>", all_special_tokens=["<|my_eos|>", "<|my_pad|>", "<|my_bos|>"])
        reward = make_group_reward_function(serve.url, TOKEN, group_size=2, tokenizer=tokenizer, shaping={"length_penalty": {}})
        rows = [("Name some fruit.", "apples"), ("Name some fruit.", "apples and pears too")]
        suffixed = [(prompt, response + "<|my_eos|><|my_pad|><|my_pad|>") for prompt, response in rows]
        rewards = trl_step(self.trl, reward, suffixed, 1)[0]
        # Token lengths come from completion_ids (here the suffixed words), the text is clean.
        self.assertEqual(rewards, shaped_by_length(["apples", "apples and pears too"], [len(token_ids(response)) for _, response in suffixed]))


if __name__ == "__main__":
    unittest.main()
