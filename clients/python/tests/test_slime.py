"""slime, as its code calls a remote reward (facts from slime 624b824, ``rm_hub.remote_rm``):
one POST per sample with ``{prompt, response, label}`` through one shared session (at most 64
connections, 120 s total timeout), ``raise_for_status``, up to 10 tries with a back-off of
``min(2 ** attempt, 30)`` s plus jitter, re-raising the last error (which fails the rollout);
the stored reward is the whole JSON answer and ``--reward-key reward`` picks the number; the
GRPO normalisation builds ``torch.tensor(..., dtype=torch.float)``. With ``--group-rm`` and a
custom reward (``generate_and_rm_group`` → ``batched_async_rm``), the function gets ``(args,
samples)`` with one prompt's ``n_samples_per_prompt`` samples, the groups of a step gathered
concurrently; an exception fails the rollout (nothing retries the group), and a custom
generate function may leave the end-of-turn token in ``sample.response``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import types
import random
import threading
import unittest
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List

from rubricate_client import RubricateConfigError, RubricateError
from rubricate_client.groups import slime_group_rm

from .support import FRUIT_RUBRIC, FakeJudge, ServeProcess, expected_by_group, fruit_score, fruit_step, node_available, tensor_dtype, wrong_rewards

TEMPLATED_PROMPT = "<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n"

judge: FakeJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the slime tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url, token="slime-token", extra=["--max-queue", "16"])


def tearDownModule() -> None:
    serve.stop()
    judge.close()


class SlimeCaller:
    """slime's remote_rm: shared keep-alive connections (one per worker here), 120 s, 10 tries with back-off."""

    def __init__(self, url: str, sleep: Callable[[float], None], max_retries: int = 10):
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = parsed.hostname, parsed.port, parsed.path + (f"?{parsed.query}" if parsed.query else "")
        self.sleep = sleep
        self.max_retries = max_retries
        self.local = threading.local()
        self.statuses: List[int] = []

    def _connection(self) -> http.client.HTTPConnection:
        if getattr(self.local, "connection", None) is None:
            self.local.connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        return self.local.connection

    def remote_rm(self, prompt: Any, response: str, label: Any, reward_key: str = "reward") -> Any:
        body = json.dumps({"prompt": prompt, "response": response, "label": label})
        for attempt in range(self.max_retries):
            try:
                connection = self._connection()
                connection.request("POST", self.path, body=body, headers={"content-type": "application/json"})
                answer = connection.getresponse()
                payload = answer.read()
                self.statuses.append(answer.status)
                if answer.status >= 400:
                    raise RuntimeError(f"{answer.status}: {payload[:200]!r}")
                reward = json.loads(payload)
                return reward[reward_key] if isinstance(reward, dict) else reward
            except Exception:
                if getattr(self.local, "connection", None) is not None:
                    self.local.connection.close()
                self.local.connection = None
                if attempt == self.max_retries - 1:
                    raise
                self.sleep(min(2**attempt, 30) + random.random())


class SlimeTest(unittest.TestCase):
    def caller(self, token: str = "slime-token", sleep: Callable[[float], None] = lambda seconds: None, max_retries: int = 10) -> SlimeCaller:
        return SlimeCaller(f"{serve.url}/slime/reward?token={token}", sleep, max_retries)

    def test_concurrent_samples_exact_with_float_rewards(self) -> None:
        responses = [f"{text} #{index}" for index, text in enumerate(["Apples and pears.", "Pears.", "Rotten apples.", "Nothing."] * 16)]
        caller = self.caller()
        with ThreadPoolExecutor(max_workers=64) as pool:
            rewards = list(pool.map(lambda response: caller.remote_rm(TEMPLATED_PROMPT, response + "<|im_end|>", json.dumps(FRUIT_RUBRIC)), responses))
        self.assertEqual(rewards, [fruit_score(response) for response in responses])
        self.assertTrue(all(type(reward) is float for reward in rewards))
        self.assertEqual(tensor_dtype(rewards), "float32")
        # 64 at once through --max-queue 16: they waited for room, nothing was refused.
        self.assertEqual(set(caller.statuses), {200})

    def test_messages_prompt_and_dict_label(self) -> None:
        reward = self.caller().remote_rm([{"role": "user", "content": "Name some fruit."}], "Apples.", {"rubric": FRUIT_RUBRIC})
        self.assertEqual(reward, 0.75)
        self.assertIs(type(reward), float)

    def test_judge_failure_is_retried_then_raised_never_a_reward(self) -> None:
        sleeps: List[float] = []
        caller = self.caller(sleep=sleeps.append, max_retries=3)
        with self.assertRaises(RuntimeError) as caught:
            caller.remote_rm(TEMPLATED_PROMPT, "judge-breaks", FRUIT_RUBRIC)
        self.assertTrue(str(caught.exception).startswith("502"))
        self.assertEqual(caller.statuses, [502, 502, 502])
        self.assertNotIn(judge.base_url.split("//")[1].split("/")[0], str(caught.exception))

    def test_missing_label_is_a_400_naming_the_field(self) -> None:
        with self.assertRaises(RuntimeError) as caught:
            self.caller(max_retries=1).remote_rm(TEMPLATED_PROMPT, "Apples.", None)
        self.assertIn("label", str(caught.exception))
        self.assertTrue(str(caught.exception).startswith("400"))

    def test_wrong_token_is_401_every_time(self) -> None:
        caller = self.caller(token="wrong", max_retries=2)
        with self.assertRaises(RuntimeError):
            caller.remote_rm(TEMPLATED_PROMPT, "Apples.", FRUIT_RUBRIC)
        self.assertEqual(caller.statuses, [401, 401])


def slime_group_step(rows: List[Any], group: int, endings: List[str]) -> List[List[float]]:
    """slime's group reward step: one call per prompt's samples, all groups gathered at once,
    shaping from RUBRICATE_SHAPING as the docs set it."""
    args = types.SimpleNamespace(rm_url=f"{serve.url}?token=slime-token", n_samples_per_prompt=group)
    groups = [[types.SimpleNamespace(prompt=TEMPLATED_PROMPT.replace("Name some fruit.", prompt), response=response + endings[index % len(endings)], label=json.dumps({"rubric": FRUIT_RUBRIC})) for index, (prompt, response) in enumerate(rows[start : start + group], start)] for start in range(0, len(rows), group)]

    async def step() -> List[List[float]]:
        return list(await asyncio.gather(*(slime_group_rm(args, samples) for samples in groups)))

    saved = os.environ.get("RUBRICATE_SHAPING")
    os.environ["RUBRICATE_SHAPING"] = json.dumps({"length_penalty": {}})
    try:
        return asyncio.run(step())
    finally:
        if saved is None:
            os.environ.pop("RUBRICATE_SHAPING")
        else:
            os.environ["RUBRICATE_SHAPING"] = saved


class SlimeGroupTest(unittest.TestCase):
    def test_groups_with_end_of_turn_tokens_are_exact(self) -> None:
        rows = fruit_step(8, 8)
        rewards = slime_group_step(rows, 8, ["<|im_end|>", "<|endoftext|>", "</s>", ""])
        flat = [value for group in rewards for value in group]
        self.assertEqual(wrong_rewards(rows, flat, expected_by_group(rows, 8)), [])
        self.assertEqual(tensor_dtype(flat), "float32")

    def test_an_incomplete_group_or_a_failed_sample_fails_the_rollout_saying_nothing_retries_it(self) -> None:
        rows = fruit_step(1, 8)
        with self.assertRaises(RubricateConfigError) as caught:
            slime_group_step(rows[:7], 8, [""])
        self.assertEqual(caught.exception.code, "GROUP_INCOMPLETE")
        broken = rows[:7] + [(rows[7][0], "judge-breaks")]
        with self.assertRaises(RubricateError) as caught:
            slime_group_step(broken, 8, [""])
        self.assertEqual(caught.exception.code, "NOT_GRADED")
        self.assertIn("slime does not retry a group", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
