"""CaRR through the Python client against a real ``rubricate serve``: the body built from a
trajectory, slime's per-sample and group calls (``(args, sample)`` and ``(args, samples)``, as
slime's custom reward path calls them) and verl's ``compute_score``.

The judge answers CaRR's three prompts by rule: the outcome is correct when the response holds
the reference answer; an entity is named when the response names it; a statement is supported
when the cited pages hold it word for word. So the rewards are worked out by hand below.
"""

from __future__ import annotations

import asyncio
import json
import re
import types
import unittest
from typing import Any, Dict, List, Optional

from rubricate_client import RubricateAbort, RubricateConfigError, RubricateError
from rubricate_client.carr import carr_body, compute_score, evaluate, evaluate_group, sample_body, slime_carr_group_rm, slime_carr_rm

from .support import ScriptedChatJudge, ServeProcess, node_available

QUESTION = "Which event, refereed by a former judoka, took place in a capital city?"
RUBRICS = ["<E0> took place in <E1>.", "<E1> is the capital of <E2>.", "<E3> refereed <E0>.", "<E4> wrote a book about <E5>.", "<E0> was held in 2019.", "<E6> sponsored <E0>."]
IDENTITIES = {"E0": "Fight Night 7", "E1": "Lisbon", "E2": "Portugal", "E3": "Ana Reis", "E4": "Rui Costa", "E5": "Tagus"}
SEARCH_OUTPUT = "\n".join(
    [
        "[1] Title: Fight Night 7 recap",
        "[1] URL Source: https://a.example/fight",
        "[1] Description: Fight Night 7 took place in Lisbon. Ana Reis refereed Fight Night 7.",
        "[2] Title: Lisbon",
        "[2] URL Source: https://b.example/lisbon",
        "[2] Description: Lisbon is the capital of Portugal.",
    ]
)
ANSWER = "The event is Fight Night 7 [[1](https://a.example/fight)], held in Lisbon [[2](https://b.example/lisbon)], the capital of Portugal. Its referee was Ana Reis [[3](https://a.example/fight)]."
TOOLS = [
    {"role": "user", "content": QUESTION},
    {"role": "assistant", "content": "", "tool_calls": [{"tool_call_id": "c1", "name": "browser.search", "arguments": json.dumps({"query": "fight night lisbon"})}]},
    {"role": "tool", "content": [{"tool_call_id": "c1", "output": SEARCH_OUTPUT}]},
]
# By hand: outcome 1 (the answer holds the label); rubrics 1, 2, 3 filled and supported by the
# pages, all three reach E0 (E0–E1 by rubric 1, E1–E2 by rubric 2, E3–E0 by rubric 3); rubric 4's
# entities are not named; so 3 of 6 rubrics: rubric reward 0.5, reward 0.7 · 1 + 0.3 · 0.5 = 0.85.
EXPECTED_REWARD = 0.85


def _block(tag: str, text: str) -> str:
    match = re.search(rf"<{tag}-([0-9a-f]{{16}})>\n([\s\S]*?)\n</{tag}-\1>", text)
    return match.group(2) if match else ""


def carr_reply(text: str) -> Optional[str]:
    """CaRR's three prompts answered by rule; a response holding ``judge-breaks`` gets HTTP 500."""
    response = _block("response", text)
    if "judge-breaks" in response:
        return None
    if "Reference answer:" in text:
        reference = _block("reference", text)
        correct = reference in response
        return f"extracted_final_answer: {reference if correct else 'something else'}\nreasoning: compared\ncorrect: {'yes' if correct else 'no'}"
    if "Constraints:" in text:
        ids = list(dict.fromkeys(re.findall(r"<(E\d+)>", _block("constraints", text))))
        values = {entity: (IDENTITIES[entity] if IDENTITIES.get(entity) and IDENTITIES[entity] in response else None) for entity in ids}
        return "Analysis: by rule.\n\n```json\n" + json.dumps(values) + "\n```"
    pages = _block("webpages", text)
    marks = {}
    for line in _block("statements", text).split("\n"):
        statement = re.match(r"^(S\d+)\. (.*)$", line)
        if statement:
            marks[statement.group(1)] = statement.group(2) in pages
    return "Support analysis by rule.\n\n```json\n" + json.dumps(marks) + "\n```"


judge: ScriptedChatJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the CaRR tests need the real server")
    judge = ScriptedChatJudge(carr_reply)
    serve = ServeProcess(judge.base_url, token="carr-token")


def tearDownModule() -> None:
    serve.stop()
    judge.close()


def trajectory(answer: str = ANSWER) -> List[Dict[str, Any]]:
    return TOOLS + [{"role": "assistant", "content": answer}]


def slime_sample(answer: str = ANSWER, label: str = "Fight Night 7") -> Any:
    """A slime ``Sample`` as the CaRR fork's agent loop leaves it: the trajectory in its metadata."""
    return types.SimpleNamespace(prompt=QUESTION, response=answer, label=label, metadata={"history": trajectory(answer), "task_unfinished": False, "remote_env_info": {"search_forbidden_strs": [QUESTION], "rubrics": RUBRICS}})


class CarrClientTest(unittest.TestCase):
    def test_one_trajectory_gets_the_hand_worked_reward(self) -> None:
        answer = evaluate(carr_body(trajectory(), "Fight Night 7", QUESTION, RUBRICS), base_url=serve.url, token="carr-token")
        self.assertEqual(answer["outcome_reward"], 1.0)
        self.assertEqual(answer["rubric_reward"], 0.5)
        self.assertAlmostEqual(answer["reward"], EXPECTED_REWARD, places=12)
        self.assertEqual(answer["rubric_scores"]["2"]["filled_rubric"], "Ana Reis refereed Fight Night 7.")
        self.assertFalse(answer["rubric_scores"]["3"]["all_entity_identified"])

    def test_a_group_gets_c_grpo_rewards(self) -> None:
        # Wrong label: outcome 0, same evidence (rubric 0.5). No citation: rubric 0. Group max 0.5.
        bodies = [carr_body(trajectory(), "Fight Night 7", QUESTION, RUBRICS), carr_body(trajectory(), "Another Event", QUESTION, RUBRICS), carr_body(trajectory("Fight Night 7, in Lisbon."), "Fight Night 7", QUESTION, RUBRICS)]
        answer = evaluate_group(bodies, normalize="group-max", base_url=serve.url, token="carr-token")
        self.assertEqual([(result["outcome_reward"], result["rubric_reward"]) for result in answer["results"]], [(1.0, 0.5), (0.0, 0.5), (1.0, 0.0)])
        for reward, expected in zip(answer["rewards"], [0.7 + 0.3 * 1.0, 0.3 * 1.0, 0.7]):
            self.assertAlmostEqual(reward, expected, places=12)

    def test_slime_per_sample_and_group_calls(self) -> None:
        # The fork's remote_url names the route itself, with the token in the query (its client sends no header).
        args = types.SimpleNamespace(rm_url=f"{serve.url}/carr/evaluate?token=carr-token", rubric_reward_ratio=0.3, normalize_rubric_reward=True, rubric_only_positive=True, rubric_only_negative=False)
        answer = asyncio.run(slime_carr_rm(args, slime_sample()))
        self.assertAlmostEqual(answer["reward"], EXPECTED_REWARD, places=12)
        self.assertEqual((answer["outcome_reward"], answer["rubric_reward"]), (1.0, 0.5))
        group = [slime_sample(), slime_sample(label="Another Event"), slime_sample("Fight Night 7, in Lisbon.")]
        rewards = asyncio.run(slime_carr_group_rm(args, group))
        # Only on correct answers, as released: the raw rubric reward on the correct ones, none on the wrong one.
        for reward, expected in zip(rewards, [0.7 + 0.3 * 0.5, 0.0, 0.7]):
            self.assertAlmostEqual(reward, expected, places=12)
        self.assertTrue(all(isinstance(reward, float) for reward in rewards))

    def test_verl_compute_score(self) -> None:
        info = {"history": TOOLS, "question": QUESTION, "rubrics": RUBRICS, "rubric_reward_ratio": 0.3}
        result = compute_score("carr", ANSWER, "Fight Night 7", info, base_url=serve.url, token="carr-token")
        self.assertAlmostEqual(result["score"], EXPECTED_REWARD, places=12)
        self.assertEqual((result["outcome_reward"], result["rubric_reward"]), (1.0, 0.5))

    def test_a_failed_judge_raises_never_a_zero(self) -> None:
        broken = ANSWER + " judge-breaks"
        with self.assertRaises(RubricateError) as raised:
            evaluate(carr_body(trajectory(broken), "Fight Night 7", QUESTION, RUBRICS), base_url=serve.url, token="carr-token")
        self.assertNotEqual(raised.exception.code, "INPUT_INVALID")
        args = types.SimpleNamespace(rm_url=f"{serve.url}?token=carr-token")
        with self.assertRaises(RubricateError):
            asyncio.run(slime_carr_group_rm(args, [slime_sample(), slime_sample(broken)]))
        with self.assertRaises(RubricateAbort):
            compute_score("carr", broken, "Fight Night 7", {"history": TOOLS, "question": QUESTION, "rubrics": RUBRICS}, base_url=serve.url, token="carr-token")
        # A trajectory without what CaRR needs is an error too, before any call.
        calls = judge.calls
        with self.assertRaises(RubricateAbort):
            compute_score("carr", ANSWER, "Fight Night 7", {"history": TOOLS}, base_url=serve.url, token="carr-token")
        # No reference answer: the outcome reward cannot be judged (never against an empty one).
        with self.assertRaises(RubricateAbort):
            compute_score("carr", ANSWER, None, {"history": TOOLS, "question": QUESTION, "rubrics": RUBRICS}, base_url=serve.url, token="carr-token")
        with self.assertRaises(RubricateConfigError):
            sample_body(slime_sample(label=None))
        # A sample with neither a history nor a response is not a trajectory.
        with self.assertRaises(RubricateConfigError):
            sample_body(types.SimpleNamespace(prompt=QUESTION, label="Fight Night 7", metadata={"question": QUESTION, "rubrics": RUBRICS}))
        self.assertEqual(judge.calls, calls)
        # Only the rubric's reward (ratio 1) needs no reference.
        self.assertEqual(sample_body(slime_sample(label=None), ratio=1.0)["label"], "")


if __name__ == "__main__":
    unittest.main()
