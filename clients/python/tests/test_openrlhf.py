"""OpenRLHF, as its code calls a remote reward (facts from OpenRLHF HEAD 3c3be62 / v0.11.0 and
v0.9.0):

* HEAD (since v0.9.1): one POST per sample, ``{"query": [q], "prompts": [p], "labels": [l]}``,
  each with a new HTTP session (a new connection), total timeout 180 s, ``raise_for_status``,
  5 tries 1 s apart; after the fifth failure the reward is ``None``, which later crashes the
  step (``torch.cat`` of a None, or the reward-model branch);
* v0.9.0: one POST for the whole rollout batch, the same 5 tries and 180 s;
* up to v0.9, a reward function file (``--remote_rm_url file.py``) is called by
  ``RemoteRewardModel.get_rewards`` once per ``micro_rollout_batch_size`` chunk of the rollout
  batch (default 8), the samples of each prompt (``n_samples_per_prompt``) together, after
  ``--use_dynamic_batch``'s reorder when it is on; queries are decoded with
  ``skip_special_tokens=False``, so they end in the template's end-of-turn token (or padding);
* the answer's ``rewards`` become tensors (``torch.tensor([reward])`` at HEAD,
  ``torch.as_tensor(info["rewards"])`` in v0.9.0, also for ``scores`` and each ``extra_logs``
  key), then ``rewards.mean()`` / ``.std()`` for group_norm: an all-integer list is an int64
  tensor, on which both raise.

The server is the real ``rubricate serve``; the caller is written here from those facts.
"""

from __future__ import annotations

import json
import threading
import time
import unittest
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Tuple

from rubricate_client import RubricateConfigError
from rubricate_client.groups import openrlhf_group_rewards
from rubricate_client.text import split_query

from .support import RESPONSE_PATTERN, BINARY_RUBRIC, FRUIT_RUBRIC, FakeJudge, ServeProcess, expected_by_group, fruit_score, fruit_step, metric_value, node_available, tensor_dtype, tensor_mean, wait_until, wrong_rewards

CHATML_PROMPT = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n"
RESPONSES = ["Apples and pears.", "Pears.", "Rotten apples.", "Nothing.", "Apples.", "Rotten pears."]

judge: FakeJudge
#: The server of the tests that send more at once than it admits (``--max-queue 64``), shared by them.
queue_64: ServeProcess


def setUpModule() -> None:
    global judge, queue_64
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the OpenRLHF tests need the real server")
    judge = FakeJudge(delay=0.02)
    queue_64 = ServeProcess(judge.base_url, extra=["--max-queue", "64"])


def tearDownModule() -> None:
    queue_64.stop()
    judge.close()


class OpenRLHFCaller:
    """The request loop of OpenRLHF's remote reward client: a fresh connection per request,
    180 s timeout, 5 tries 1 s apart on any failure or non-200, then the reward is None."""

    def __init__(self, url: str, sleep: Callable[[float], None] = time.sleep):
        self.url = url
        self.sleep = sleep
        self.attempts = 0
        self.refusals: List[Tuple[int, Optional[str]]] = []
        self.lock = threading.Lock()

    def post(self, body: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        data = json.dumps(body).encode("utf-8")
        for _ in range(5):
            with self.lock:
                self.attempts += 1
            request = urllib.request.Request(self.url, data=data, headers={"content-type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=180) as answer:
                    return json.loads(answer.read().decode("utf-8"))
            except urllib.error.HTTPError as error:
                with self.lock:
                    self.refusals.append((error.code, error.headers.get("Retry-After")))
                error.read()
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            self.sleep(1.0)
        return None

    def sample(self, query: str, prompt: str, label: Any) -> Optional[Dict[str, Any]]:
        """HEAD: one sample per request."""
        return self.post({"query": [query], "prompts": [prompt], "labels": [label]})


def query(response: str) -> str:
    return f"{CHATML_PROMPT}{response}<|im_end|>"


class OpenRLHFHeadTest(unittest.TestCase):
    def caller(self, sleep: Callable[[float], None] = time.sleep) -> OpenRLHFCaller:
        return OpenRLHFCaller(f"{queue_64.url}/get_reward", sleep)

    def test_per_sample_rewards_are_floats_the_trainer_can_average(self) -> None:
        caller = self.caller()
        answers = [caller.sample(query(response), CHATML_PROMPT, json.dumps(FRUIT_RUBRIC)) for response in RESPONSES]
        rewards = [answer["rewards"] for answer in answers if answer is not None]
        self.assertEqual([reward[0] for reward in rewards], [fruit_score(response) for response in RESPONSES])
        # torch.tensor([reward_val]) per sample, then torch.cat and mean/std for group_norm.
        self.assertEqual(tensor_dtype(rewards), "float32")
        tensor_mean([reward[0] for reward in rewards])
        for answer in answers:
            assert answer is not None
            for key in ("rewards", "scores"):
                self.assertIs(type(answer[key][0]), float)
            for values in answer["extra_logs"].values():
                self.assertIs(type(values[0]), float)

    def test_binary_rubric_all_met_or_none_met_still_floats(self) -> None:
        caller = self.caller()
        rewards = [caller.sample(query(response), CHATML_PROMPT, BINARY_RUBRIC)["rewards"][0] for response in ["Apples.", "Pears.", "apples again"]]
        self.assertEqual(rewards, [1.0, 0.0, 1.0])
        self.assertTrue(all(type(reward) is float for reward in rewards))
        self.assertEqual(tensor_dtype(rewards), "float32")
        self.assertEqual(tensor_mean(rewards), 2 / 3)
        # What an integer answer would have done: the crash of the issue.
        with self.assertRaises(RuntimeError):
            tensor_mean([1, 0, 1])

    def test_overload_512_concurrent_samples_through_max_queue_64_all_real(self) -> None:
        caller = self.caller()
        responses = [RESPONSES[index % len(RESPONSES)] + f" #{index}" for index in range(512)]
        with ThreadPoolExecutor(max_workers=512) as pool:
            answers = list(pool.map(lambda response: caller.sample(query(response), CHATML_PROMPT, FRUIT_RUBRIC), responses))
        self.assertTrue(all(answer is not None for answer in answers), "a sample ran out of OpenRLHF's 5 tries")
        rewards = [answer["rewards"][0] for answer in answers]  # type: ignore[index]
        self.assertEqual(rewards, [fruit_score(response) for response in responses])
        self.assertEqual(sum(answer["extra_logs"]["reward_failed"][0] for answer in answers), 0.0)  # type: ignore[index]
        # Nothing was refused: the 448 beyond --max-queue waited in line (default --max-waiting 4096).
        self.assertEqual(caller.refusals, [])
        self.assertEqual(caller.attempts, 512)
        self.assertGreaterEqual(metric_value(queue_64.url, 'rubricate_rewards_total{outcome="ok"}'), 512)
        self.assertEqual(metric_value(queue_64.url, "rubricate_fallback_rewards_total"), 0)
        self.assertEqual(metric_value(queue_64.url, 'rubricate_admission_rejected_total{reason="queue_full"}'), 0)

    def test_missing_label_key_is_a_400_naming_the_field_then_none(self) -> None:
        sleeps: List[float] = []
        caller = self.caller(sleeps.append)
        # OpenRLHF sends "" as the label when --label_key is not set.
        self.assertIsNone(caller.sample(query("Apples."), CHATML_PROMPT, ""))
        self.assertEqual(caller.attempts, 5)
        self.assertEqual(sleeps, [1.0] * 5)
        self.assertEqual({status for status, _ in caller.refusals}, {400})
        request = urllib.request.Request(f"{queue_64.url}/get_reward", data=json.dumps({"query": [query("x")], "prompts": [CHATML_PROMPT], "labels": [""]}).encode(), headers={"Content-Type": "application/json"}, method="POST")
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        self.assertIn("labels[0]", json.loads(caught.exception.read())["error"]["message"])
        # The trainer then crashes on the None instead of training on an invented 0.
        with self.assertRaises(TypeError):
            tensor_dtype([[0.5], None])


class OpenRLHFLegacyTest(unittest.TestCase):
    """v0.9.0: the whole rollout batch in one request."""

    def test_batch_larger_than_max_queue_is_admitted_in_parts(self) -> None:
        responses = [RESPONSES[index % len(RESPONSES)] + f" (batch {index})" for index in range(512)]
        answer = OpenRLHFCaller(f"{queue_64.url}/get_reward").post({"query": [query(response) for response in responses], "prompts": [CHATML_PROMPT] * 512, "labels": [json.dumps(FRUIT_RUBRIC)] * 512})
        assert answer is not None
        self.assertEqual(answer["rewards"], [fruit_score(response) for response in responses])
        # torch.as_tensor on rewards, scores and every extra_logs key: all float.
        for values in [answer["rewards"], answer["scores"], *answer["extra_logs"].values()]:
            self.assertEqual(tensor_dtype(values), "float32")
        self.assertEqual(sum(answer["extra_logs"]["reward_failed"]), 0.0)

    def test_judge_failures_fail_the_request_or_give_flagged_fallbacks_when_asked(self) -> None:
        body = {"query": [query("Apples."), query("judge-breaks")], "prompts": [CHATML_PROMPT] * 2, "labels": [FRUIT_RUBRIC] * 2}
        serve = ServeProcess(judge.base_url)
        try:
            sleeps: List[float] = []
            caller = OpenRLHFCaller(f"{serve.url}/get_reward", sleeps.append)
            self.assertIsNone(caller.post(body))
            self.assertEqual({status for status, _ in caller.refusals}, {502})
        finally:
            serve.stop()
        serve = ServeProcess(judge.base_url, extra=["--on-error", "fallback=0"])
        try:
            answer = OpenRLHFCaller(f"{serve.url}/get_reward").post(body)
            assert answer is not None
            self.assertEqual(answer["rewards"], [0.75, 0.0])
            self.assertEqual(answer["extra_logs"]["reward_failed"], [0.0, 1.0])
            self.assertTrue(all(type(value) is float for value in answer["rewards"] + answer["extra_logs"]["reward_failed"]))
            # The log line travels through the stderr pipe, maybe after the answer: wait for it.
            wait_until(lambda: any("fallback reward" in line for line in serve.stderr_lines), what="a fallback must be logged: no log line")
        finally:
            serve.stop()


def queue_state(url: str) -> Dict[str, int]:
    with urllib.request.urlopen(f"{url}/healthz", timeout=30) as answer:
        return json.loads(answer.read())["queue"]


class WaitingLineTest(unittest.TestCase):
    def test_past_the_waiting_line_a_sample_is_held_open_then_graded_never_refused(self) -> None:
        serve = ServeProcess(judge.base_url, extra=["--max-queue", "1", "--max-waiting", "0"])
        try:
            caller = OpenRLHFCaller(f"{serve.url}/get_reward")
            with ThreadPoolExecutor(max_workers=2) as pool:
                # A held judge call takes the only slot; the waiting line holds nothing: the second sample is held open.
                holding = pool.submit(caller.sample, query("Apples judge-held."), CHATML_PROMPT, FRUIT_RUBRIC)
                wait_until(lambda: queue_state(serve.url)["depth"] == 1)
                held = pool.submit(caller.sample, query("Pears."), CHATML_PROMPT, FRUIT_RUBRIC)
                wait_until(lambda: queue_state(serve.url)["held"] == 1)
                judge.release_held()
                answers = [holding.result(), held.result()]
            self.assertEqual([answer["rewards"][0] if answer else None for answer in answers], [0.75, 0.25])
            # Nothing was refused, so none of OpenRLHF's 5 tries was spent.
            self.assertEqual((caller.refusals, caller.attempts), ([], 2))
        finally:
            serve.stop()


class StepLargerThanQueueTest(unittest.TestCase):
    """A 1,024 × 16 OpenRLHF step against a 1 s judge, scaled down: the same ratio of step to
    --max-queue + --max-waiting (16,384 to 4,096 + 4,096, here 256 to 64 + 64), every sample sent
    at once as OpenRLHF ≥ 0.9.1 does, and a judge slow enough that the step outlasts OpenRLHF's
    5 × 1 s retries many times over (one-criterion rubrics, 1 s judge at concurrency 512: ~32 s;
    here 50 ms at concurrency 8: 256 × 0.05 / 8 = 1.6 s, against retries scaled to nothing). Every reward must be
    exact on the first try: past the line, samples are held open, not refused. The full-size
    figure is `npm run bench -- trainers`."""

    def test_every_reward_exact_with_no_refusal(self) -> None:
        slow = FakeJudge(delay=0.05)
        serve = ServeProcess(slow.base_url, extra=["--max-queue", "64", "--max-waiting", "64", "--concurrency", "8", "--expected-step-size", "256"])
        try:
            # The start-up warning names the shortfall (a step of 256 against 64 + 64).
            wait_until(lambda: any("--expected-step-size 256" in line for line in serve.stderr_lines), what="no start-up warning")
            caller = OpenRLHFCaller(f"{serve.url}/get_reward", sleep=lambda seconds: None)
            responses = [f"{RESPONSES[index % len(RESPONSES)]} (prompt {index // 16}, sample {index % 16})" for index in range(256)]
            with ThreadPoolExecutor(max_workers=256) as pool:
                answers = list(pool.map(lambda response: caller.sample(query(response), CHATML_PROMPT, json.dumps(BINARY_RUBRIC)), responses))
            self.assertTrue(all(answer is not None for answer in answers), "a sample ran out of OpenRLHF's 5 tries")
            expected = [1.0 if "apples" in response.lower() else 0.0 for response in responses]
            self.assertEqual([answer["rewards"][0] for answer in answers], expected)  # type: ignore[index]
            self.assertGreater(sum(expected), 0)
            self.assertEqual((caller.refusals, caller.attempts), ([], 256))
            self.assertEqual(metric_value(serve.url, "rubricate_fallback_rewards_total"), 0)
        finally:
            serve.stop()
            slow.close()


def chatml(prompt: str) -> str:
    return f"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


#: What a decoder with skip_special_tokens=False leaves after a response: end of turn, end of turn and padding, nothing (truncated).
ENDINGS = ["<|im_end|>", "<|im_end|><|endoftext|><|endoftext|>", ""]


def reward_file(queries: List[str], prompts: List[str], labels: List[str]) -> Dict[str, Any]:
    """The user's reward function file, as docs/rl-integration.md writes it (torch left out)."""
    return openrlhf_group_rewards(queries, prompts, labels, base_url=queue_64.url, group_size=8, shaping={"length_penalty": {}})


def openrlhf_09_step(rows: List[Any], micro: int, reorder: bool = False) -> Tuple[List[Any], List[float]]:
    """RemoteRewardModel.get_rewards with a reward file: the rollout batch (optionally reordered,
    as --use_dynamic_batch does) cut into micro_rollout_batch_size chunks, one call each, then
    ``torch.cat(torch.as_tensor(info["rewards"]))`` over the chunks."""
    order = list(range(len(rows)))
    if reorder:
        order.sort(key=lambda index: (len(rows[index][1]), index))
    seen = [rows[index] for index in order]
    queries = [chatml(prompt) + response + ENDINGS[index % len(ENDINGS)] for index, (prompt, response) in zip(order, seen)]
    prompts = [chatml(prompt) for prompt, _ in seen]
    labels = [json.dumps({"rubric": FRUIT_RUBRIC})] * len(seen)
    rewards: List[float] = []
    for start in range(0, len(seen), micro):
        info = reward_file(queries[start : start + micro], prompts[start : start + micro], labels[start : start + micro])
        assert tensor_dtype(info["rewards"]) == "float32"
        rewards.extend(info["rewards"])
    return seen, rewards


class OpenRLHFGroupRewardFileTest(unittest.TestCase):
    """openrlhf_group_rewards as OpenRLHF 0.9 calls a reward file: per micro-batch, with end-of-turn tokens."""

    def test_micro_batches_of_whole_groups_are_exact_and_partial_ones_stop_the_step(self) -> None:
        rows = fruit_step(8, 8)
        expected = expected_by_group(rows, 8)
        seen, rewards = openrlhf_09_step(rows, 8)
        self.assertEqual(wrong_rewards(seen, rewards, expected), [])
        for micro in (4, 12):
            with self.subTest(micro=micro), self.assertRaises(RubricateConfigError) as caught:
                openrlhf_09_step(rows, micro)
            self.assertEqual(caught.exception.code, "GROUP_INCOMPLETE")
            self.assertIn("--micro_rollout_batch_size", caught.exception.message)
        # The whole batch in one call, reordered: gathered by prompt, exact.
        seen, rewards = openrlhf_09_step(rows, 64, reorder=True)
        self.assertEqual(wrong_rewards(seen, rewards, expected), [])

    def test_the_group_size_is_required_and_one_sample_per_call_is_refused(self) -> None:
        query, prompt = chatml("Name some fruit.") + "apples<|im_end|>", chatml("Name some fruit.")
        label = json.dumps(FRUIT_RUBRIC)
        with self.assertRaises(RubricateConfigError) as caught:
            openrlhf_group_rewards([query], [prompt], [label], base_url=queue_64.url)
        self.assertIn("group_size", caught.exception.message)
        with self.assertRaises(RubricateConfigError):
            reward_file([query], [prompt], [label])  # OpenRLHF ≥ 0.9.1: one sample per call

    def test_the_response_is_split_as_get_reward_splits_it(self) -> None:
        queries = [chatml("Name some fruit.") + " Apples, then pears. <|im_end|><|endoftext|>", "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nRotten pears.<|eot_id|>"]
        prompts = [chatml("Name some fruit."), "a prompt the query does not start with"]
        for query, prompt in zip(queries, prompts):
            with self.subTest(query=query):
                before = len(judge.requests)
                OpenRLHFCaller(f"{queue_64.url}/get_reward").post({"query": [query], "prompts": [prompt], "labels": [json.dumps(BINARY_RUBRIC)]})
                seen = {match.group(2) for body in judge.requests[before:] for match in [RESPONSE_PATTERN.search(body["messages"][-1]["content"])] if match}
                self.assertEqual(seen, {split_query(query, prompt)[1]})


if __name__ == "__main__":
    unittest.main()
