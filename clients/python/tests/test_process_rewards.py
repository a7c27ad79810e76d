"""Process rewards through the Python client against a real ``rubricate serve``: a trajectory
response graded by a step-scoped criterion answers ``step_rewards`` and each step's verdict, and
the trajectory reward is the declared fold, worked out by hand. A failed step is no reward.

The judge here rules by step: a step-scoped criterion is met on the odd steps (its criterion
text says which step it is asked about); a response-wide criterion is met when the trajectory
names Paris; a trajectory holding ``judge-breaks`` gets HTTP 500 at step 2.
"""

from __future__ import annotations

import json
import re
import unittest
from typing import Any, Dict, List, Optional

from rubricate_client import RubricateClient

from .support import ScriptedChatJudge, ServeProcess, node_available


def step_judge_reply(text: str) -> Optional[str]:
    """Step k met when k is odd; step 2 of a trajectory holding ``judge-breaks`` gets HTTP 500."""
    step = re.search(r"\(Process step (\d+) of \d+:", text)
    if step is None:
        return json.dumps({"explanation": "by rule", "criteria_met": "Paris" in text})
    if step.group(1) == "2" and "judge-breaks" in text:
        return None
    return json.dumps({"explanation": "by rule", "criteria_met": int(step.group(1)) % 2 == 1})


judge: ScriptedChatJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the process-reward tests need the real server")
    judge = ScriptedChatJudge(step_judge_reply)
    serve = ServeProcess(judge.base_url)


def tearDownModule() -> None:
    serve.stop()
    judge.close()


def trajectory(note: str = "") -> List[Dict[str, Any]]:
    """Three steps: a search, a lookup, the answer."""
    return [
        {"role": "assistant", "content": f"Searching. {note}", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "capital of France"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Paris is the capital of France."},
        {"role": "assistant", "content": "Checking.", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "Paris: capital."},
        {"role": "assistant", "content": "The capital of France is Paris."},
    ]


RUBRIC = {
    "criteria": [
        {"id": "useful", "text": "The step moves the task forward", "points": 3, "scope": "step"},
        {"id": "answer", "text": "The answer names the city", "points": 1},
    ],
    "step_aggregate": {"rule": "discounted", "gamma": 0.5},
}

# Steps 1, 2, 3 met, unmet, met: discounted with γ = 0.5 is (1 + 0 + 0.25) ÷ (1 + 0.5 + 0.25) = 5/7;
# the reward is (3 · 5/7 + 1 · 1) ÷ 4.
FOLDED = 1.25 / 1.75
REWARD = (3 * FOLDED + 1) / 4


class ProcessRewardTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = RubricateClient(serve.url)
        self.addCleanup(self.client.close)

    def test_score_answers_step_rewards_and_each_step(self) -> None:
        answer = self.client.score("What is the capital of France?", trajectory(), RUBRIC)
        self.assertEqual(answer["step_rewards"], [1.0, 0.0, 1.0])
        self.assertAlmostEqual(answer["reward"], REWARD, places=12)
        useful = next(criterion for criterion in answer["criteria"] if criterion["id"] == "useful")
        self.assertEqual(useful["process"]["aggregate"], "discounted")
        self.assertEqual(useful["process"]["gamma"], 0.5)
        self.assertEqual([(verdict["step"], verdict["met"]) for verdict in useful["process"]["verdicts"]], [(1, True), (2, False), (3, True)])
        self.assertAlmostEqual(answer["reward_components"]["criterion:useful"], FOLDED, places=12)

    def test_group_answers_a_vector_per_response_and_no_reward_for_a_failed_step(self) -> None:
        answer = self.client.score_group("What is the capital of France?", [trajectory(), trajectory("judge-breaks")], RUBRIC)
        self.assertAlmostEqual(answer["rewards"][0], REWARD, places=12)
        self.assertIsNone(answer["rewards"][1])
        self.assertEqual(answer["step_rewards"], [[1.0, 0.0, 1.0], [1.0, None, 1.0]])
        self.assertEqual(answer["results"][1]["status"], "error")
        self.assertRegex(answer["results"][1]["error"]["message"], r"step 2: ")


if __name__ == "__main__":
    unittest.main()
