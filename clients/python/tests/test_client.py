"""The Python client, the verl function and the TRL function against a real
``rubricate serve`` process and a fake judge."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List

from rubricate_client import AsyncRubricateClient, RubricateAbort, RubricateClient, RubricateConfigError, RubricateError
from rubricate_client.trl import make_reward_function
from rubricate_client.verl import compute_score, compute_score_async

from .support import FRUIT_RUBRIC, POLL_INTERVAL, FakeJudge, ServeProcess, fruit_score, node_available

TOKEN = "python-test-token"
PROMPT = "Name some fruit."

judge: FakeJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the client tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url, token=TOKEN)


def tearDownModule() -> None:
    exit_code = serve.stop()
    judge.close()
    assert exit_code == 0, f"serve exited with {exit_code}: {''.join(serve.stderr_lines[-20:])}"


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = RubricateClient(serve.url, token=TOKEN, timeout=30)

    def test_serve_prints_its_address(self) -> None:
        self.assertRegex(serve.url, r"^http://127\.0\.0\.1:\d+$")
        self.assertIn("/get_reward", serve.address["routes"])
        self.assertEqual(self.client.health()["status"], "ok")

    def test_score_one_response(self) -> None:
        result = self.client.score(PROMPT, "Apples, a bit rotten.", FRUIT_RUBRIC, id="one")
        self.assertEqual(result["id"], "one")
        self.assertEqual(result["status"], "ok")
        self.assertEqual(result["reward"], fruit_score("Apples, a bit rotten."))
        self.assertEqual(result["reward"], 0.25)
        self.assertEqual([c["met"] for c in result["criteria"]], [True, False, True])

    def test_rubric_as_json_string_and_messages_prompt(self) -> None:
        result = self.client.score([{"role": "user", "content": PROMPT}], "pears", json.dumps(FRUIT_RUBRIC))
        self.assertEqual(result["reward"], 0.25)

    def test_failed_item_has_no_reward(self) -> None:
        result = self.client.score(PROMPT, "apples judge-breaks", FRUIT_RUBRIC)
        self.assertIsNone(result["reward"])
        self.assertEqual(result["status"], "error")
        self.assertEqual(result["error"]["code"], "JUDGE_SERVER_ERROR")

    def test_batch_in_order_across_chunks(self) -> None:
        client = RubricateClient(serve.url, token=TOKEN, timeout=30, batch_size=2)
        responses = ["apples", "pears", "apples and pears", "rotten", "nothing"]
        results = client.score_batch([{"id": f"b{i}", "prompt": PROMPT, "response": r, "rubric": FRUIT_RUBRIC} for i, r in enumerate(responses)])
        self.assertEqual([r["id"] for r in results], [f"b{i}" for i in range(5)])
        self.assertEqual([r["reward"] for r in results], [fruit_score(r) for r in responses])

    def test_group_with_grpo_advantages(self) -> None:
        answer = self.client.score_group(PROMPT, ["apples and pears", "pears", "judge-breaks", "nothing"], FRUIT_RUBRIC, advantages="grpo", eps=0)
        self.assertEqual(answer["rewards"], [1.0, 0.25, None, 0.0])
        # Over the three real rewards 1, 0.25, 0: mean 5/12, sample std (n - 1) as the trainers use.
        mean = 5 / 12
        std = math.sqrt(((7 / 12) ** 2 + (2 / 12) ** 2 + (5 / 12) ** 2) / 2)
        expected = [(1 - mean) / std, (0.25 - mean) / std, None, (0 - mean) / std]
        for got, want in zip(answer["advantages"], expected):
            if want is None:
                self.assertIsNone(got)
            else:
                self.assertAlmostEqual(got, want, places=10)

    def test_wrong_token_is_refused(self) -> None:
        with self.assertRaises(RubricateError) as caught:
            RubricateClient(serve.url, token="wrong", timeout=10).score(PROMPT, "apples", FRUIT_RUBRIC)
        self.assertEqual(caught.exception.code, "UNAUTHORIZED")
        self.assertEqual(caught.exception.status, 401)

    def test_invalid_item_raises_with_the_field(self) -> None:
        with self.assertRaises(RubricateError) as caught:
            self.client.score(PROMPT, "apples", {"criteria": []})
        self.assertEqual(caught.exception.code, "INPUT_INVALID")
        self.assertIn("rubric.criteria", caught.exception.message)

    def test_async_client(self) -> None:
        async def run() -> List[Any]:
            async with AsyncRubricateClient(serve.url, token=TOKEN, timeout=30) as client:
                return await asyncio.gather(*(client.score(PROMPT, r, FRUIT_RUBRIC) for r in ["apples", "pears", "rotten apples"]))

        results = asyncio.run(run())
        self.assertEqual([r["reward"] for r in results], [0.75, 0.25, 0.25])


class VerlTest(unittest.TestCase):
    def setUp(self) -> None:
        self.keywords = {"base_url": serve.url, "token": TOKEN, "timeout": 30}

    def test_compute_score_reads_prompt_and_rubric_from_extra_info(self) -> None:
        score = compute_score("rubric/fruit", "apples and pears", None, {"prompt": PROMPT, "rubric": FRUIT_RUBRIC}, **self.keywords)
        self.assertEqual(score, {"score": 1.0, "reward_failed": 0.0, "criteria_met_fraction": 2 / 3})

    def test_rubric_from_ground_truth(self) -> None:
        score = compute_score("rubric/fruit", "pears", json.dumps(FRUIT_RUBRIC), {"prompt": [{"role": "user", "content": PROMPT}]}, **self.keywords)
        self.assertEqual(score["score"], 0.25)

    def test_failure_is_a_flagged_fallback(self) -> None:
        score = compute_score("rubric/fruit", "judge-breaks", None, {"prompt": PROMPT, "rubric": FRUIT_RUBRIC}, fallback=-1.0, **self.keywords)
        self.assertEqual(score, {"score": -1.0, "reward_failed": 1.0, "criteria_met_fraction": 0.0})

    def test_unreachable_server_raises_at_once(self) -> None:
        with self.assertRaises(RubricateAbort) as caught:
            compute_score("rubric/fruit", "apples", None, {"prompt": PROMPT, "rubric": FRUIT_RUBRIC}, base_url="http://127.0.0.1:9", timeout=2)
        self.assertEqual(caught.exception.code, "CONNECTION")
        self.assertIn("is `rubricate serve` running", caught.exception.message)

    def test_missing_prompt_is_a_configuration_error(self) -> None:
        with self.assertRaises(RubricateAbort) as caught:
            compute_score("rubric/fruit", "apples", None, {"rubric": FRUIT_RUBRIC}, **self.keywords)
        self.assertIn("extra_info['prompt'] is missing", caught.exception.message)

    def test_async_variant(self) -> None:
        score = asyncio.run(compute_score_async("rubric/fruit", "rotten pears", None, {"prompt": PROMPT, "rubric": FRUIT_RUBRIC}, **self.keywords))
        self.assertEqual(score["score"], -0.25)


class TrlTest(unittest.TestCase):
    def test_reward_function_returns_floats_and_none_for_failures(self) -> None:
        reward = make_reward_function(serve.url, TOKEN, timeout=30)
        self.assertEqual(reward.__name__, "rubric_reward")
        prompts = [[{"role": "user", "content": PROMPT}]] * 3
        completions = [[{"role": "assistant", "content": "apples"}], [{"role": "assistant", "content": "judge-breaks"}], [{"role": "assistant", "content": "pears"}]]
        rubrics = [FRUIT_RUBRIC, FRUIT_RUBRIC, json.dumps(FRUIT_RUBRIC)]
        rewards = asyncio.run(reward(prompts=prompts, completions=completions, rubric=rubrics, completion_ids=[[1], [2], [3]]))
        self.assertEqual(rewards, [0.75, None, 0.25])

    def test_other_column_name_and_plain_text(self) -> None:
        reward = make_reward_function(serve.url, TOKEN, rubric_column="criteria_json", name="fruit")
        rewards = asyncio.run(reward(prompts=[PROMPT], completions=["apples and pears"], criteria_json=[FRUIT_RUBRIC]))
        self.assertEqual(rewards, [1.0])
        self.assertEqual(reward.__name__, "fruit")


class RetryTest(unittest.TestCase):
    """The client honours Retry-After on 503 (a full admission queue) and then succeeds."""

    def test_retries_after_503(self) -> None:
        calls: List[str] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                calls.append(self.path)
                if len(calls) == 1:
                    body = json.dumps({"error": {"code": "OVERLOADED", "message": "queue full"}}).encode()
                    self.send_response(503)
                    self.send_header("Retry-After", "1")
                else:
                    body = json.dumps({"id": "x", "reward": 0.5, "status": "ok", "criteria": [], "usage": {}}).encode()
                    self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, args=(POLL_INTERVAL,), daemon=True)
        thread.start()
        try:
            host, port = server.server_address[:2]
            client = RubricateClient(f"http://{host}:{port}", timeout=10)
            # The wait goes through the client's sleep, recorded here instead of slept (as in RetryBudgetTest).
            sleeps: List[float] = []
            client._sleep = sleeps.append
            result = client.score(PROMPT, "x", FRUIT_RUBRIC)
            self.assertEqual(result["reward"], 0.5)
            self.assertEqual(len(calls), 2)
            self.assertEqual(sleeps, [1.0])
        finally:
            server.shutdown()
            server.server_close()

    def test_gives_up_with_the_server_code(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                body = json.dumps({"error": {"code": "OVERLOADED", "message": "queue full"}}).encode()
                self.send_response(503)
                self.send_header("Retry-After", "0")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, args=(POLL_INTERVAL,), daemon=True).start()
        try:
            host, port = server.server_address[:2]
            with self.assertRaises(RubricateError) as caught:
                RubricateClient(f"http://{host}:{port}", timeout=10, max_retries=2).score(PROMPT, "x", FRUIT_RUBRIC)
            self.assertEqual(caught.exception.code, "OVERLOADED")
            self.assertEqual(caught.exception.status, 503)
        finally:
            server.shutdown()
            server.server_close()


class StubServer:
    """A loopback server answering every request with one status, body and headers."""

    def __init__(self, status: int, body: Any, headers: Any = None):
        self.calls = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                stub.calls += 1
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(POLL_INTERVAL,), daemon=True).start()
        host, port = self.server.server_address[:2]
        self.url = f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RetryBudgetTest(unittest.TestCase):
    def client(self, url: str, **options: Any) -> "tuple[RubricateClient, List[float]]":
        client = RubricateClient(url, timeout=10, **options)
        clock = [0.0]
        sleeps: List[float] = []

        def sleep(seconds: float) -> None:
            sleeps.append(seconds)
            clock[0] += seconds

        client._sleep = sleep
        client._clock = lambda: clock[0]
        return client, sleeps

    def test_403_from_a_proxy_raises_at_once(self) -> None:
        stub = StubServer(403, "<html>Forbidden</html>")
        try:
            client, sleeps = self.client(stub.url)
            with self.assertRaises(RubricateConfigError) as caught:
                client.score(PROMPT, "x", FRUIT_RUBRIC)
            self.assertEqual((caught.exception.status, stub.calls, sleeps), (403, 1, []))
            self.assertIn("proxy", caught.exception.message)
        finally:
            stub.close()

    def test_overload_retries_stop_at_max_retry_time(self) -> None:
        stub = StubServer(503, {"error": {"code": "OVERLOADED", "message": "queue full"}}, {"Retry-After": "4"})
        try:
            client, sleeps = self.client(stub.url, max_retry_time=15)
            with self.assertRaises(RubricateError) as caught:
                client.score(PROMPT, "x", FRUIT_RUBRIC)
            self.assertEqual(caught.exception.code, "OVERLOADED")
            self.assertEqual(sleeps, [4.0, 4.0, 4.0])
            self.assertLessEqual(sum(sleeps), 15)
            self.assertEqual(stub.calls, 4)
        finally:
            stub.close()

    def test_a_server_lost_after_start_up_is_retried_for_connect_retry_time_only(self) -> None:
        stub = StubServer(200, {"status": "ok"})
        client, sleeps = self.client(stub.url, connect_retry_time=5)
        client._request("POST", "/v1/score", {})
        stub.close()
        client.close()  # the old keep-alive connection's handler outlives the listener
        with self.assertRaises(RubricateError) as caught:
            client._request("POST", "/v1/score", {})
        self.assertEqual(caught.exception.code, "CONNECTION")
        self.assertNotIsInstance(caught.exception, RubricateConfigError)
        self.assertLessEqual(sum(sleeps), 5)
        self.assertGreaterEqual(len(sleeps), 2)

if __name__ == "__main__":
    unittest.main()
