"""Group rewards, RuscaRL scaffolding and rubric rewards through the real ``rubricate serve``:
each trainer function as its trainer calls it (TRL's ``GRPOTrainer`` with ``completion_ids``
and ``trainer_state``, verl's ``batch`` manager, slime's ``--group-rm``, an OpenRLHF reward
function file), the shaping the server applies checked against values computed by hand.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import types
import unittest
from typing import List

from rubricate_client import RubricateAbort, RubricateClient, RubricateConfigError
from rubricate_client.groups import (
    compute_score_group_batch,
    gather_groups,
    make_group_reward_function,
    openrlhf_group_rewards,
    rubric_reward,
    scaffold_prompts,
    score_group,
    score_rows,
    slime_group_rm,
)
from rubricate_client.text import ASSISTANT_MARKERS, END_OF_TURN_TOKENS, prompt_messages, split_query, strip_end_of_turn

from .support import FRUIT_RUBRIC, PROJECT_ROOT, FakeJudge, ServeProcess, expected_by_group, fruit_score, fruit_step, node_available, wrong_rewards

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

    def test_groups_are_gathered_by_key_and_incomplete_ones_refused(self) -> None:
        self.assertEqual(gather_groups(["a", "b", "a", "b"]), [[0, 2], [1, 3]])
        self.assertEqual(gather_groups(["a", "b", "a", "b"], 2), [[0, 2], [1, 3]])
        # A prompt drawn twice in one step: two groups, in the order the trainer laid them out.
        self.assertEqual(gather_groups(["a", "a", "b", "b", "a", "a"], 2), [[0, 1], [4, 5], [2, 3]])
        self.assertEqual(gather_groups([]), [])
        for keys, options in [(["a", "a", "b"], {}), (["a", "a", "a"], {}), (["a"] * 4, {"split_repeats": False})]:
            with self.subTest(keys=keys, options=options), self.assertRaises(RubricateConfigError) as caught:
                gather_groups(keys, 2, fix="Do this.", **options)
            self.assertEqual(caught.exception.code, "GROUP_INCOMPLETE")
            self.assertTrue(caught.exception.message.endswith("Do this."), caught.exception.message)


class TrainerFunctions(unittest.TestCase):
    def test_trl_groups_the_rows_of_each_prompt_with_token_lengths_and_the_step(self) -> None:
        reward = make_group_reward_function(serve.url, shaping={"length_penalty": {}}, group_size=2, failed="none")
        prompts = [[{"role": "user", "content": "Name some fruit."}]] * 2 + [[{"role": "user", "content": "Name a fruit."}]] * 2
        completions = [[{"role": "assistant", "content": text}] for text in ["apples", "judge-breaks", "apples and pears", "pears"]]
        state = types.SimpleNamespace(global_step=12)
        rewards = asyncio.run(reward(prompts, completions, rubric=[FRUIT_RUBRIC] * 4, completion_ids=[[1] * 3, [1] * 5, [1] * 9, [1] * 5], trainer_state=state))
        # Group 1: one row failed (None), the other alone: λ 0. Group 2: λ = −0.5 and 0.5, the first passes (1.0 ≥ 0.5), the second does not (min(0, 0.5)).
        self.assertEqual(rewards[0], 0.75)
        self.assertIsNone(rewards[1])
        self.assertAlmostEqual(rewards[2], 1.0 - 0.5, places=12)
        self.assertAlmostEqual(rewards[3], 0.25, places=12)
        self.assertEqual(reward.__name__, "rubric_group_reward")
        with self.assertRaises(RubricateConfigError):
            make_group_reward_function(serve.url)  # no group size: refused at start-up

    def test_verl_batch_manager_gets_one_dict_per_sample_with_the_same_keys(self) -> None:
        infos = [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}] * 3
        scores = compute_score_group_batch(["rubric"] * 3, ["apples", "pears", "pears"], [None] * 3, infos, base_url=serve.url)
        self.assertEqual([score["score"] for score in scores], [0.75, 0.25, 0.25])
        self.assertEqual({tuple(sorted(score)) for score in scores}, {("reward_failed", "score", "zero_variance")})
        with self.assertRaises(RubricateAbort):
            compute_score_group_batch(["rubric"], ["judge-breaks"], [None], [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}], base_url=serve.url)
        flagged = compute_score_group_batch(["rubric"], ["judge-breaks"], [None], [{"prompt": PROMPT, "rubric": FRUIT_RUBRIC}], base_url=serve.url, fallback=0.0)
        self.assertEqual(flagged, [{"score": 0.0, "reward_failed": 1.0, "zero_variance": 1.0}])

    def test_slime_group_rm_and_openrlhf_reward_file(self) -> None:
        samples = [types.SimpleNamespace(prompt=PROMPT, response=text, label={"rubric": FRUIT_RUBRIC}) for text in ["apples", "rotten"]]
        args = types.SimpleNamespace(rm_url=serve.url, n_samples_per_prompt=2)
        self.assertEqual(asyncio.run(slime_group_rm(args, samples)), [0.75, -0.5])
        templated = "<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n"
        result = openrlhf_group_rewards([templated + "apples", templated + "pears"], [templated] * 2, [{"rubric": FRUIT_RUBRIC}] * 2, base_url=serve.url, group_size=2)
        self.assertEqual(result["rewards"], [0.75, 0.25])
        self.assertEqual(result["scores"], [0.75, 0.25])
        self.assertEqual(result["extra_logs"]["zero_variance"], [0.0, 0.0])
        with self.assertRaises(RubricateConfigError):
            openrlhf_group_rewards([templated + "apples"], [templated], [{"rubric": FRUIT_RUBRIC}], base_url=serve.url)


class GenericCall(unittest.TestCase):
    def test_rows_in_any_order_are_graded_by_group_and_answered_in_the_callers_order(self) -> None:
        rows = fruit_step(4, 4)
        expected = expected_by_group(rows, 4)
        shuffled = rows[:]
        random.Random(7).shuffle(shuffled)
        answers = score_rows(RubricateClient(serve.url), [prompt for prompt, _ in shuffled], [response + "<|im_end|>" for _, response in shuffled], [FRUIT_RUBRIC] * 16, group_size=4, shaping={"length_penalty": {}})
        self.assertEqual(wrong_rewards(shuffled, [answer["reward"] for answer in answers], expected), [])
        self.assertEqual(len({answer["group"] for answer in answers}), 4)
        # The trainer's own group ids win over prompt and rubric: two ids over one prompt are two groups.
        ids = ["g1", "g1", "g2", "g2"]
        same_prompt = score_rows(RubricateClient(serve.url), [PROMPT] * 4, ["apples", "apples, longer", "pears", "pears, much longer"], [FRUIT_RUBRIC] * 4, group_ids=ids, group_size=2, shaping={"length_penalty": {}})
        self.assertEqual([answer["reward"] for answer in same_prompt], [0.75 + 0.5, 0.75 - 0.5, 0.25, 0.25 - 0.5])
        with self.assertRaises(RubricateConfigError):
            score_rows(RubricateClient(serve.url), [PROMPT] * 3, ["a", "b", "c"], [FRUIT_RUBRIC] * 3, group_size=2)


class OneNormalisation(unittest.TestCase):
    def test_the_token_and_marker_lists_are_the_servers(self) -> None:
        with open(os.path.join(PROJECT_ROOT, "src", "server", "adapters", "conversation.ts"), encoding="utf-8") as source:
            typescript = source.read()

        def array(name: str) -> List[str]:
            body = re.search(r"const " + name + r" = \[([\s\S]*?)\];", typescript)
            assert body is not None, name
            return [entry.replace("\\n", "\n") for entry in re.findall(r"'((?:[^'\\]|\\.)*)'", body.group(1))]

        self.assertEqual(array("endOfTurnTokens"), list(END_OF_TURN_TOKENS))
        self.assertEqual(array("assistantMarkers"), list(ASSISTANT_MARKERS))

    def test_the_rules_match_the_servers_examples(self) -> None:
        chatml = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n"
        self.assertEqual(split_query(chatml + "Apples.<|im_end|>", chatml), (chatml, "Apples."))
        self.assertEqual(split_query("noise " + chatml + " Pears.<|im_end|><|endoftext|>", chatml)[1], "Pears.")
        self.assertEqual(strip_end_of_turn("  Answer <|im_end|>\n<|endoftext|>  "), "  Answer")
        self.assertEqual(strip_end_of_turn("Answer</s><pad><pad>"), "Answer")
        self.assertEqual(strip_end_of_turn("Answer<|my_eos|>", ["<|my_eos|>"]), "Answer")
        self.assertEqual(prompt_messages(chatml), [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name some fruit."}])
        self.assertEqual(prompt_messages("User: hi\nAssistant:"), [{"role": "user", "content": "User: hi\nAssistant:"}])


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


AXIS_RUBRIC = {
    "criteria": [
        {"id": "apples", "text": "mentions apples", "points": 1, "tags": ["axis:accuracy"]},
        {"id": "pears", "text": "mentions pears", "points": 1, "tags": ["axis:style"]},
    ]
}


class ScoreGroupsGdpo(unittest.TestCase):
    def test_score_groups_returns_components_and_gdpo_advantages_over_the_batch(self) -> None:
        client = RubricateClient(serve.url)
        groups = [
            {"id": "one", "prompt": PROMPT, "rubric": AXIS_RUBRIC, "responses": ["apples", "none"]},
            {"id": "two", "prompt": [{"role": "user", "content": PROMPT}], "rubric": AXIS_RUBRIC, "responses": ("apples and pears", "none")},
        ]
        gdpo = client.score_groups(groups, advantages="gdpo", eps=0)
        self.assertEqual([group["id"] for group in gdpo["groups"]], ["one", "two"])
        self.assertEqual(gdpo["groups"][0]["reward_components"], {"axis:accuracy": [1.0, 0.0], "axis:style": [0.0, 0.0]})
        self.assertEqual(gdpo["groups"][1]["reward_components"], {"axis:accuracy": [1.0, 0.0], "axis:style": [1.0, 0.0]})
        # Sums ±1/√2 and ±√2, whitened by their sample std √(5/3).
        batch_std = (5 / 3) ** 0.5
        self.assertAlmostEqual(gdpo["groups"][0]["advantages"][0], 0.5 ** 0.5 / batch_std, places=9)
        self.assertAlmostEqual(gdpo["groups"][1]["advantages"][1], -(2 ** 0.5) / batch_std, places=9)
        grpo = client.score_groups(groups, advantages="grpo", eps=0)
        for group in grpo["groups"]:
            self.assertAlmostEqual(group["advantages"][0], 0.5 ** 0.5, places=9)
        self.assertIsInstance(grpo["groups"][0]["results"][0]["reward_components"]["axis:accuracy"], float)
