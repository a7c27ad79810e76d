"""Group rewards, RuscaRL scaffolding and rubric rewards through the real ``rubricate serve``:
each trainer function as its trainer calls it (TRL's ``GRPOTrainer`` with ``completion_ids``
and ``trainer_state``, verl's ``batch`` manager, slime's ``--group-rm``, an OpenRLHF reward
function file), the shaping the server applies checked against values computed by hand.
"""

from __future__ import annotations

import asyncio
import types
import unittest
from typing import List

from rubricate_client import RubricateClient, RubricateError
from rubricate_client.groups import (
    compute_score_group_batch,
    consecutive_groups,
    make_group_reward_function,
    openrlhf_group_rewards,
    rubric_reward,
    scaffold_prompts,
    score_group,
    slime_group_rm,
)

from .support import FRUIT_RUBRIC, FakeJudge, ServeProcess, fruit_score, node_available

PROMPT = "Name some fruit."

judge: FakeJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the group tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url)


def tearDownModule() -> None:
    serve.stop()
    judge.close()


class GroupShaping(unittest.TestCase):
    def test_shaped_rewards_and_what_shaping_did_come_back_recorded(self) -> None:
        client = RubricateClient(serve.url)
        responses = ["apples and pears", "pears", "rotten apples"]
        answer = score_group(client, PROMPT, responses, FRUIT_RUBRIC, lengths=[100, 200, 300], shaping={"length_penalty": {"weight": 0.5}}, advantages="dr_grpo")
        raw = [fruit_score(response) for response in responses]
        self.assertEqual(answer["raw_rewards"], raw)
        # Kimi's λ = 0.5, 0, −0.5; the second and third do not pass (0.25 and 0.25 < 0.5): min(0, λ).
        expected = [raw[0] + 0.5 * 0.5, raw[1] + 0.0, raw[2] - 0.5 * 0.5]
        for got, want in zip(answer["rewards"], expected):
            self.assertAlmostEqual(got, want, places=12)
        self.assertEqual(answer["shaping"]["length_penalty"]["terms"], [0.5, 0.0, -0.5])
        mean = sum(expected) / 3
        for got, want in zip(answer["advantages"], expected):
            self.assertAlmostEqual(got, want - mean, places=12)
        self.assertIs(answer["zero_variance"], False)
        self.assertTrue(all(isinstance(value, float) for value in answer["rewards"]))

    def test_a_flat_group_is_flagged(self) -> None:
        answer = score_group(RubricateClient(serve.url), PROMPT, ["plums", "figs"], FRUIT_RUBRIC)
        self.assertEqual(answer["rewards"], [0.0, 0.0])
        self.assertIs(answer["zero_variance"], True)

    def test_consecutive_groups(self) -> None:
        self.assertEqual(consecutive_groups(["a", "a", "b", "a"]), [(0, 2), (2, 3), (3, 4)])
        self.assertEqual(consecutive_groups([]), [])


class TrainerFunctions(unittest.TestCase):
    def test_trl_groups_the_rows_of_each_prompt_with_token_lengths_and_the_step(self) -> None:
        reward = make_group_reward_function(serve.url, shaping={"length_penalty": {}})
        prompts = [[{"role": "user", "content": "Name some fruit."}]] * 2 + [[{"role": "user", "content": "Name a fruit."}]] * 2
        completions = [[{"role": "assistant", "content": text}] for text in ["apples", "apples and pears", "judge-breaks", "pears"]]
        state = types.SimpleNamespace(global_step=12)
        rewards = asyncio.run(reward(prompts, completions, rubric=[FRUIT_RUBRIC] * 4, completion_ids=[[1] * 3, [1] * 9, [1] * 5, [1] * 5], trainer_state=state))
        # Group 1: λ = 0.5 and −0.5, both pass (0.75 and 1.0 ≥ 0.5). Group 2: one row failed (None), the other alone: λ 0.
        self.assertAlmostEqual(rewards[0], 0.75 + 0.5, places=12)
        self.assertAlmostEqual(rewards[1], 1.0 - 0.5, places=12)
        self.assertIsNone(rewards[2])
        self.assertAlmostEqual(rewards[3], 0.25, places=12)
        self.assertEqual(reward.__name__, "rubric_group_reward")

    def test_verl_batch_manager_gets_one_dict_per_sample_with_the_same_keys(self) -> None:
        infos = [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}] * 3
        scores = compute_score_group_batch(["rubric"] * 3, ["apples", "pears", "pears"], [None] * 3, infos, base_url=serve.url)
        self.assertEqual([score["score"] for score in scores], [0.75, 0.25, 0.25])
        self.assertEqual({tuple(sorted(score)) for score in scores}, {("reward_failed", "score", "zero_variance")})
        with self.assertRaises(RubricateError):
            compute_score_group_batch(["rubric"], ["judge-breaks"], [None], [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}], base_url=serve.url)
        flagged = compute_score_group_batch(["rubric"], ["judge-breaks"], [None], [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}], base_url=serve.url, fallback=0.0)
        self.assertEqual(flagged, [{"score": 0.0, "reward_failed": 1.0, "zero_variance": 1.0}])

    def test_slime_group_rm_and_openrlhf_reward_file(self) -> None:
        samples = [types.SimpleNamespace(prompt=PROMPT, response=text, label={"rubric": FRUIT_RUBRIC}) for text in ["apples", "rotten"]]
        args = types.SimpleNamespace(rm_url=serve.url)
        self.assertEqual(asyncio.run(slime_group_rm(args, samples)), [0.75, -0.5])
        templated = "<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n"
        result = openrlhf_group_rewards([templated + "apples", templated + "pears"], [templated] * 2, [{"rubric": FRUIT_RUBRIC}] * 2, base_url=serve.url)
        self.assertEqual(result["rewards"], [0.75, 0.25])
        self.assertEqual(result["scores"], [0.75, 0.25])
        self.assertEqual(result["extra_logs"]["zero_variance"], [0.0, 0.0])


class Scaffolding(unittest.TestCase):
    def test_rollout_prompts_carry_a_decaying_share_of_the_rubric(self) -> None:
        client = RubricateClient(serve.url)
        prompts = scaffold_prompts(client, PROMPT, FRUIT_RUBRIC, step=1, total_steps=1, group_size=4)
        shown = [prompt[0]["content"].count("\n- ") if prompt[0]["role"] == "system" else 0 for prompt in prompts]
        # 3 criteria × [1, 2/3, 1/3, 0].
        self.assertEqual(shown, [3, 2, 1, 0])
        self.assertEqual(prompts[3], [{"role": "user", "content": PROMPT}])
        late: List[List[dict]] = scaffold_prompts(client, PROMPT, FRUIT_RUBRIC, step=90, total_steps=100, group_size=4)
        self.assertTrue(all(prompt == [{"role": "user", "content": PROMPT}] for prompt in late))


class RubricReward(unittest.TestCase):
    def test_a_rubric_is_rewarded_by_the_pairs_it_reproduces_and_by_rank_correlation(self) -> None:
        client = RubricateClient(serve.url)
        pairs = rubric_reward(client, PROMPT, FRUIT_RUBRIC, pairs=[("apples", "pears"), ("pears", "apples and pears"), ("apples", "rotten apples")])
        self.assertAlmostEqual(pairs["reward"], 2 / 3, places=12)
        self.assertEqual(pairs["pairs"]["reversed"], 1)
        ranked = rubric_reward(client, PROMPT, FRUIT_RUBRIC, responses=[("apples and pears", 3), ("apples", 2), ("pears", 1)], reward="kendall")
        self.assertEqual(ranked["reward"], 1.0)
        self.assertEqual(ranked["reward_from"], "kendall")


if __name__ == "__main__":
    unittest.main()
