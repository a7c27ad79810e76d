"""What every route answers, read with Python's ``json`` as the trainers read it: rewards and
scores are floats even when they are 0 or 1 (an all-int list becomes an int64 tensor), and no
answer, nor Vertex's aux info, carries the judge's address or a stack trace."""

from __future__ import annotations

import json
import unittest
import urllib.error
import urllib.request
from typing import Any, Dict, List, Tuple

from .support import BINARY_RUBRIC, FakeJudge, ServeProcess, node_available

PROMPT = "Name some fruit."


def post(url: str, path: str, body: Dict[str, Any]) -> Tuple[int, str]:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode("utf-8"), headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


def vertex_request(response: str) -> Dict[str, Any]:
    return {
        "example": {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}], "references": {"rubric": json.dumps(BINARY_RUBRIC)}},
        "response": {"role": "model", "parts": [{"text": response}]},
        "metadata": {"step": 1, "tuning_job_id": "job"},
    }


def requests_for(response: str) -> List[Tuple[str, Dict[str, Any]]]:
    item = {"prompt": PROMPT, "response": response, "rubric": BINARY_RUBRIC}
    return [
        ("/v1/score", item),
        ("/v1/score/batch", {"items": [item, dict(item, response="apples")]}),
        ("/v1/score/group", {"prompt": PROMPT, "rubric": BINARY_RUBRIC, "responses": [response, "apples", "pears"], "advantages": "grpo"}),
        ("/get_reward", {"query": [response], "prompts": [""], "labels": [BINARY_RUBRIC]}),
        ("/slime/reward", {"prompt": PROMPT, "response": response, "label": BINARY_RUBRIC}),
        ("/vertex/reward", vertex_request(response)),
    ]


def reward_numbers(value: Any, key: str = "") -> List[Tuple[str, Any]]:
    """Every number under a reward-like key, wherever it sits in the answer."""
    found: List[Tuple[str, Any]] = []
    if isinstance(value, dict):
        for child_key, child in value.items():
            found += reward_numbers(child, child_key if child_key in ("reward", "rewards", "score", "scores", "advantages", "extra_logs", "reward_failed", "criteria_met_fraction") else key)
    elif isinstance(value, list):
        for child in value:
            found += reward_numbers(child, key)
    elif key and isinstance(value, (int, float)) and not isinstance(value, bool):
        found.append((key, value))
    return found


class FloatAnswersTest(unittest.TestCase):
    def test_every_reward_and_score_is_a_python_float_even_for_0_and_1(self) -> None:
        if not node_available():
            self.skipTest("node or bin/rubricate.js not found")
        judge = FakeJudge()
        serve = ServeProcess(judge.base_url)
        try:
            for response in ["apples", "pears"]:  # all met (1), none met (0)
                for path, body in requests_for(response):
                    with self.subTest(path=path, response=response):
                        status, text = post(serve.url, path, body)
                        self.assertEqual(status, 200, text)
                        answer = json.loads(text)
                        if path == "/vertex/reward":
                            answer["aux"] = json.loads(answer.pop("user_requested_aux_info"))
                        numbers = reward_numbers(answer)
                        self.assertTrue(numbers, f"no reward in {text}")
                        for key, number in numbers:
                            self.assertIs(type(number), float, f"{path} {key}={number!r} in {text}")
        finally:
            serve.stop()
            judge.close()


class NoInternalsTest(unittest.TestCase):
    def test_judge_address_never_reaches_a_client(self) -> None:
        if not node_available():
            self.skipTest("node or bin/rubricate.js not found")
        # A judge that cannot be reached: every failure message would name its address.
        serve = ServeProcess("http://127.0.0.1:9/v1", extra=["--on-error", "null"])
        try:
            for path, body in requests_for("apples"):
                with self.subTest(path=path):
                    status, text = post(serve.url, path, body)
                    self.assertIn(status, (200, 502), text)
                    self.assertIn("JUDGE_CONNECTION", text)
                    for leak in ("127.0.0.1:9", "http://", "    at ", "node:"):
                        self.assertNotIn(leak, text)
                    if path == "/vertex/reward":
                        self.assertNotIn("127.0.0.1:9", json.loads(text)["user_requested_aux_info"])
        finally:
            serve.stop()


if __name__ == "__main__":
    unittest.main()
