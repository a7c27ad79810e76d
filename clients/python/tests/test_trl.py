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
* advantages: (r − group mean) ÷ (group std + 1e-4), std with n − 1.
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
from rubricate_client.trl import completion_text, make_reward_function, make_sync_reward_function

from .support import FRUIT_RUBRIC, FakeJudge, ServeProcess, fruit_score, node_available

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


if __name__ == "__main__":
    unittest.main()
