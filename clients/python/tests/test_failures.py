"""Every trainer path of docs/rl-integration.md against every failure: the judge down, a wrong
token, a flaky judge (some calls fail) and a timeout (the judge never answers; the server's
deadline, scaled from 120 s to 0.1 s, passes). Each path reproduces how that trainer calls the
reward, turns the answer into numbers, catches exceptions and retries (facts in each
test_<trainer>.py, the verifiers and NeMo Gym ones here); retry pauses are scaled to nothing.

What must hold, for every cell: either the trainer stops with a message naming the cause, or
the failed sample reaches it in a form it leaves out (None/NaN in TRL ≥ 1.6, an errored rollout
in prime-rl); a failed sample never reaches it as 0.0 or any other number, and the samples that
were graded carry their exact reward.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import math
import os
import shutil
import socket
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Tuple

from rubricate_client import RubricateAbort, RubricateError
from rubricate_client.trl import make_reward_function, make_sync_reward_function
from rubricate_client.verifiers import make_rubric_reward
from rubricate_client.verl import compute_score, compute_score_async, compute_score_batch, compute_score_prime

from .support import FRUIT_RUBRIC, FakeJudge, ServeProcess, fruit_score, node_available, tensor_dtype
from .test_openrlhf import CHATML_PROMPT, OpenRLHFCaller, query
from .test_slime import SlimeCaller
from .test_trl import FakeTrlVersion, TrlCaller
from .test_verl import run_prime, verl_wrap

TOKEN = "failure-token"
PROMPT = "Name some fruit."
#: A stand-in for a failed sample once the trainer has left it out (prime-rl drops the rollout).
DROPPED = "dropped"

FAILURES: Dict[str, List[str]] = {
    "judge down": ["Apples and pears.", "Pears."],
    "wrong token": ["Apples and pears.", "Pears."],
    "flaky judge": ["Apples and pears.", "judge-breaks apples", "Pears.", "judge-breaks"],
    "timeout": ["Apples judge-held.", "Pears judge-held."],
}

servers: Dict[str, ServeProcess] = {}
judges: List[FakeJudge] = []


def setUpModule() -> None:
    # One sample's RubricateAbort ends the step while its siblings are still running: asyncio logs
    # those at shutdown; the outcome is what the test reads.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the failure tests need the real server")
    live, held = FakeJudge(), FakeJudge()
    judges.extend([live, held])
    servers["live"] = ServeProcess(live.base_url, token=TOKEN)
    servers["down"] = ServeProcess("http://127.0.0.1:9/v1", token=TOKEN)
    servers["held"] = ServeProcess(held.base_url, token=TOKEN, extra=["--deadline", "0.1"])


def tearDownModule() -> None:
    for judge in judges:
        judge.release_held()  # the calls past the deadline finish, so the server drains at once
    for serve in servers.values():
        serve.stop()
    for judge in judges:
        judge.close()


def setting(failure: str) -> Tuple[str, str]:
    """(server URL, token the trainer uses) for a failure."""
    serve = {"judge down": "down", "timeout": "held"}.get(failure, "live")
    return servers[serve].url, "wrong" if failure == "wrong token" else TOKEN


class Stopped(Exception):
    """The trainer stopped: the message is what its log shows."""


# -- the trainer paths: each returns the rewards the trainer trains on, or raises Stopped ------


def verl_row(response: str) -> Dict[str, Any]:
    return {"data_source": "rubric", "solution_str": response, "ground_truth": json.dumps(FRUIT_RUBRIC), "extra_info": {"prompt": PROMPT, "rubric": json.dumps(FRUIT_RUBRIC)}}


def stopping(call: Callable[[], List[Any]]) -> List[Any]:
    """Runs a trainer step; whatever escapes the trainer's own handling stops the run."""
    try:
        return call()
    except BaseException as error:  # noqa: BLE001 - RubricateAbort is a BaseException on purpose
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        raise Stopped(f"{type(error).__name__}: {error}") from error


def verl_naive(url: str, token: str, responses: List[str]) -> List[Any]:
    fn = verl_wrap(compute_score, {"base_url": url, "token": token})
    return stopping(lambda: [fn(**verl_row(response))["score"] for response in responses])


def verl_reward_loop(url: str, token: str, responses: List[str]) -> List[Any]:
    fn = verl_wrap(compute_score_async, {"base_url": url, "token": token})

    async def step() -> List[Any]:
        results = await asyncio.gather(*(fn(**verl_row(response)) for response in responses))
        # compute_rm_score: the extra keys of row 0, one array per key over every row.
        for key in results[0]:
            [result[key] for result in results]
        return [result["score"] for result in results]

    return stopping(lambda: asyncio.run(step()))


def verl_rate_limited(url: str, token: str, responses: List[str], timeout: float = 300.0, **reward_kwargs: Any) -> List[Any]:
    """RateLimitedRewardManager.run_single per sample: a semaphore (reward_model.max_concurrent),
    asyncio.wait_for(reward_model.timeout, 300 s), and TimeoutError or any Exception → 0.0."""
    fn = verl_wrap(compute_score_async, {"base_url": url, "token": token, **reward_kwargs})

    async def step() -> List[Any]:
        semaphore = asyncio.Semaphore(4)

        async def single(response: str) -> Any:
            async with semaphore:
                try:
                    result = await asyncio.wait_for(fn(**verl_row(response)), timeout=timeout)
                    return result["score"] if isinstance(result, dict) else result
                except asyncio.TimeoutError:
                    return 0.0
                except Exception:
                    return 0.0

        return list(await asyncio.gather(*(single(response) for response in responses)))

    return stopping(lambda: asyncio.run(step()))


def verl_batch(url: str, token: str, responses: List[str]) -> List[Any]:
    fn = verl_wrap(compute_score_batch, {"base_url": url, "token": token})
    rows = [verl_row(response) for response in responses]
    return stopping(lambda: [result["score"] for result in fn(data_sources=["rubric"] * len(rows), solution_strs=responses, ground_truths=[row["ground_truth"] for row in rows], extra_infos=[row["extra_info"] for row in rows])])


def verl_prime(function: Callable[..., Any]) -> Callable[[str, str, List[str]], List[Any]]:
    def path(url: str, token: str, responses: List[str]) -> List[Any]:
        fn = verl_wrap(function, {"base_url": url, "token": token})
        return stopping(lambda: run_prime(fn, [verl_row(response) for response in responses]))

    return path


def openrlhf_head(url: str, token: str, responses: List[str]) -> List[Any]:
    caller = OpenRLHFCaller(f"{url}/get_reward?token={token}", sleep=lambda seconds: None)
    with ThreadPoolExecutor(max_workers=len(responses)) as pool:
        answers = list(pool.map(lambda response: caller.sample(query(response), CHATML_PROMPT, FRUIT_RUBRIC), responses))
    if any(answer is None for answer in answers):
        # reward None → torch.cat / the reward-model branch raises: the step stops.
        raise Stopped(f"reward None after OpenRLHF's 5 tries, statuses {sorted({status for status, _ in caller.refusals})}")
    rewards = [answer["rewards"] for answer in answers]  # type: ignore[index]
    tensor_dtype(rewards)
    return [reward[0] for reward in rewards]


def openrlhf_legacy(url: str, token: str, responses: List[str]) -> List[Any]:
    caller = OpenRLHFCaller(f"{url}/get_reward?token={token}", sleep=lambda seconds: None)
    answer = caller.post({"query": [query(response) for response in responses], "prompts": [CHATML_PROMPT] * len(responses), "labels": [FRUIT_RUBRIC] * len(responses)})
    if answer is None:
        raise Stopped(f"request_api_wrapper raised after 5 tries, statuses {sorted({status for status, _ in caller.refusals})}")
    tensor_dtype(answer["rewards"])
    return list(answer["rewards"])


def trl(version: str) -> Callable[[str, str, List[str]], List[Any]]:
    def path(url: str, token: str, responses: List[str]) -> List[Any]:
        major, minor = (int(part) for part in version.split(".")[:2])
        caller = TrlCaller((major, minor))
        try:
            with FakeTrlVersion(version):
                reward = make_sync_reward_function(url, token) if (major, minor) < (0, 27) else make_reward_function(url, token)
            # A rubric column as Arrow stores a dict column: every row has every key, absent ones None.
            rubric = {"criteria": [dict(criterion, importance=None, tags=None) for criterion in FRUIT_RUBRIC["criteria"]], "gate": None}
            rewards = stopping(lambda: caller.rewards(reward, [PROMPT] * len(responses), responses, {"rubric": [rubric] * len(responses)}))
            if (major, minor) < (1, 6):
                rewards = [0.0 if math.isnan(value) else value for value in rewards]  # nansum before 1.6
            return [None if math.isnan(value) else value for value in rewards]
        finally:
            caller.close()

    return path


def slime(url: str, token: str, responses: List[str]) -> List[Any]:
    caller = SlimeCaller(f"{url}/slime/reward?token={token}", lambda seconds: None, max_retries=3)
    return stopping(lambda: [caller.remote_rm(CHATML_PROMPT, response, FRUIT_RUBRIC) for response in responses])


def post_json(url: str, body: Dict[str, Any], token: str) -> Tuple[int, Dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers={"content-type": "application/json", "authorization": f"Bearer {token}"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def vertex(url: str, token: str, responses: List[str]) -> List[Any]:
    """The documented Cloud Run contract: a reward only in a 200 answer."""
    rewards = []
    for response in responses:
        body = {"example": {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}], "references": {"rubric": json.dumps(FRUIT_RUBRIC)}}, "response": {"role": "model", "parts": [{"text": response}]}}
        status, answer = post_json(f"{url}/vertex/reward", body, token)
        if status != 200:
            raise Stopped(f"HTTP {status}: {answer.get('error')}")
        rewards.append((answer["reward"] + 1) / 2)  # back from 2·s − 1 to the item score
    return rewards


def verifiers_legacy(url: str, token: str, responses: List[str]) -> List[Any]:
    """Rubric._call_individual_reward_func: the score objects by name, float(await ...), any Exception → 0.0."""
    func = make_rubric_reward(url, token)

    async def step() -> List[Any]:
        async def single(response: str) -> float:
            merged = {"prompt": [{"role": "user", "content": PROMPT}], "completion": [{"role": "assistant", "content": response}], "answer": "", "state": {}, "info": {"rubric": FRUIT_RUBRIC}, "task": None, "parser": object()}
            try:
                return float(await func(**merged))
            except Exception:
                return 0.0

        return list(await asyncio.gather(*(single(response) for response in responses)))

    return stopping(lambda: asyncio.run(step()))


VERIFIERS_STUB = {
    # The names and behaviour rubricate_judge relies on (verifiers a60a606): Judge(config) keeps the
    # config; judge_question / judge_response read the task prompt and the trace's last reply.
    "verifiers/__init__.py": "",
    "verifiers/v1/__init__.py": "",
    "verifiers/v1/judges/__init__.py": "",
    "verifiers/v1/configs/__init__.py": "",
    "verifiers/v1/configs/judge.py": (
        "class JudgeConfig:\n"
        "    id = ''\n    name = ''\n    weight = 1.0\n"
        "    def __init__(self, **data):\n"
        "        for key, value in data.items():\n            setattr(self, key, value)\n"
        "    @classmethod\n    def model_validate(cls, data):\n        return cls(**data)\n"
    ),
    "verifiers/v1/judge.py": (
        "from typing import Generic, TypeVar\n"
        "from verifiers.v1.configs.judge import JudgeConfig\n"
        "P = TypeVar('P')\nC = TypeVar('C')\n"
        "class Judge(Generic[P, C]):\n"
        "    def __init__(self, config=None):\n        self.config = config\n"
        "def judge_question(task, question_field):\n    return task.prompt_text if not question_field else str(getattr(task, question_field))\n"
        "def judge_response(trace, view):\n    return trace.transcript if view == 'full_trace' else trace.last_reply\n"
    ),
}


class VerifiersV1:
    """verifiers v1 loading a judge plugin by id, Task.score recording a judge error on the trace,
    and prime-rl dropping errored rollouts (advantage r − mean over the survivors)."""

    def __enter__(self) -> "VerifiersV1":
        self.directory = tempfile.mkdtemp()
        for path, text in VERIFIERS_STUB.items():
            os.makedirs(os.path.dirname(os.path.join(self.directory, path)), exist_ok=True)
            with open(os.path.join(self.directory, path), "w") as handle:
                handle.write(text)
        sys.path.insert(0, self.directory)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        sys.path.remove(self.directory)
        for name in [name for name in sys.modules if name == "verifiers" or name.startswith("verifiers.") or name == "rubricate_judge"]:
            del sys.modules[name]
        shutil.rmtree(self.directory)

    def load_judge(self, raw: Dict[str, Any]) -> Any:
        from verifiers.v1.judge import Judge

        plugin_id = raw["id"]
        namespaced = f"verifiers.v1.judges.{plugin_id}"
        module = importlib.import_module(namespaced if importlib.util.find_spec(namespaced) else plugin_id)
        [cls] = [getattr(module, name) for name in module.__all__ if isinstance(getattr(module, name), type) and issubclass(getattr(module, name), Judge)]
        config_cls = next(arg for base in cls.__orig_bases__ for arg in getattr(base, "__args__", ()) if isinstance(arg, type) and hasattr(arg, "model_validate"))
        return cls(config_cls.model_validate(raw))


class Task:
    def __init__(self, rubric: Any):
        self.prompt_text = PROMPT
        self.rubric = rubric


class Trace:
    def __init__(self, reply: str):
        self.last_reply = reply
        self.transcript = f"user: {PROMPT}\nassistant: {reply}"
        self.error: Optional[BaseException] = None


def prime_rl(url: str, token: str, responses: List[str]) -> List[Any]:
    with VerifiersV1() as verifiers:
        judge = verifiers.load_judge({"id": "rubricate_judge", "base_url": url, "token": token})

        async def group() -> List[Any]:
            async def rollout(response: str) -> Any:
                trace = Trace(response)
                try:  # Task.score: boundary(TaskError, ...) records the error on the trace
                    return await judge.score(Task(json.dumps(FRUIT_RUBRIC)), trace)
                except Exception as error:
                    trace.error = error
                    return DROPPED

            return list(await asyncio.gather(*(rollout(response) for response in responses)))

        rewards = asyncio.run(group())
    survivors = [reward for reward in rewards if reward is not DROPPED]
    if survivors:
        mean = sum(survivors) / len(survivors)
        [reward - mean for reward in survivors]  # the advantages train on survivors only
    return rewards


def nemo_gym(url: str, token: str, responses: List[str]) -> List[Any]:
    """simple_agent: the row plus the rollout's Responses object to /verify, raise_for_status, then result['reward']."""
    rewards = []
    for response in responses:
        row = {
            "responses_create_params": {"input": [{"role": "user", "content": PROMPT}]},
            "response": {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": response}]}]},
            "rubric": FRUIT_RUBRIC,
        }
        status, answer = post_json(f"{url}/verify", row, token)
        if not 200 <= status < 300:
            raise Stopped(f"raise_for_status: HTTP {status} {answer.get('error')}")
        rewards.append(float(answer["reward"]))
    return rewards


PATHS: Dict[str, Callable[[str, str, List[str]], List[Any]]] = {
    "verl naive/dapo (compute_score)": verl_naive,
    "verl reward loop (compute_score_async)": verl_reward_loop,
    "verl rate_limited (compute_score_async)": verl_rate_limited,
    "verl batch (compute_score_batch)": verl_batch,
    "verl prime (compute_score)": verl_prime(compute_score),
    "verl prime (compute_score_prime)": verl_prime(compute_score_prime),
    "OpenRLHF >= 0.9.1 (per sample)": openrlhf_head,
    "OpenRLHF <= 0.9.0 (batch)": openrlhf_legacy,
    "TRL >= 1.6": trl("1.9.0"),
    "TRL 0.27 - 1.5": trl("1.5.1"),
    "TRL < 0.27 (sync)": trl("0.26.2"),
    "slime": slime,
    "Vertex AI": vertex,
    "verifiers legacy Rubric": verifiers_legacy,
    "verifiers v1 judge + prime-rl": prime_rl,
    "NeMo Gym /verify": nemo_gym,
}


def outcome(path: str, failure: str) -> Tuple[str, List[Any]]:
    """("stopped: <message>", []) or ("trained", the rewards as the trainer sees them)."""
    url, token = setting(failure)
    try:
        return "trained", PATHS[path](url, token, FAILURES[failure])
    except Stopped as stopped:
        return f"stopped: {stopped}", []


class NoInventedRewardTest(unittest.TestCase):
    def test_every_failure_on_every_trainer_path_stops_or_leaves_the_sample_out(self) -> None:
        names_of_causes = {"judge down": "JUDGE_CONNECTION", "wrong token": "401", "flaky judge": "JUDGE_SERVER_ERROR", "timeout": "DEADLINE_EXCEEDED"}
        for failure, responses in FAILURES.items():
            failing = [index for index, response in enumerate(responses) if failure != "flaky judge" or "judge-breaks" in response]
            for path in PATHS:
                with self.subTest(path=path, failure=failure):
                    result, rewards = outcome(path, failure)
                    if result.startswith("stopped"):
                        # The cause is named where the trainer stops (OpenRLHF shows the statuses it got).
                        cause = names_of_causes[failure]
                        statuses = {"JUDGE_CONNECTION": "502", "401": "401", "JUDGE_SERVER_ERROR": "502", "DEADLINE_EXCEEDED": "504"}[cause]
                        self.assertTrue(cause in result or "UNAUTHORIZED" in result and cause == "401" or statuses in result, result)
                        continue
                    self.assertEqual(len(rewards), len(responses))
                    for index, reward in enumerate(rewards):
                        if index in failing:
                            self.assertTrue(reward is None or reward is DROPPED, f"sample {index} ({responses[index]!r}) reached the trainer as {reward!r}")
                        else:
                            self.assertEqual(reward, fruit_score(responses[index]))

    def test_rate_limited_timeout_is_outlasted_by_the_time_budget(self) -> None:
        # verl's rate_limited gives up on a call after reward_model.timeout (300 s) and scores 0.0;
        # time_budget (270 s) ends the call first, with RubricateAbort. Scaled: 300 s → 1 s,
        # 270 s → 0.3 s, against a server that takes the request and never answers.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        try:
            url = f"http://127.0.0.1:{silent.getsockname()[1]}"
            # Which fired first is told by the outcome, not the clock: had verl's own timeout come first,
            # rate_limited would have scored 0.0 and returned, and nothing would have been raised.
            with self.assertRaises(Stopped) as caught:
                verl_rate_limited(url, TOKEN, ["Apples."], timeout=1.0, time_budget=0.3)
            self.assertIn("TIMEOUT", str(caught.exception))
        finally:
            silent.close()

    def test_the_aborts_are_not_exceptions_and_keep_their_cause(self) -> None:
        url, _ = setting("wrong token")
        with self.assertRaises(RubricateAbort) as caught:
            compute_score("rubric", "Apples.", None, {"prompt": PROMPT, "rubric": FRUIT_RUBRIC}, base_url=url, token="wrong")
        self.assertNotIsInstance(caught.exception, Exception)
        self.assertEqual((caught.exception.code, caught.exception.status), ("UNAUTHORIZED", 401))
        self.assertIsInstance(caught.exception.__cause__, RubricateError)


if __name__ == "__main__":
    unittest.main()
