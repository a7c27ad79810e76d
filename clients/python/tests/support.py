"""Test support: a fake OpenAI-compatible judge (stdlib ``http.server`` in a thread) and a
real ``rubricate serve`` process pointed at it.

The judge reads rubricate's grading prompt and decides by a rule the tests can compute by
hand: a criterion is met when the response contains the criterion's last word. Listwise
prompts (responses labelled A, B, …) get every response's verdicts by the same rule, pairwise
ones (1, 2) the response with the higher ``fruit_score``. A response
containing ``judge-breaks`` makes it answer HTTP 500; one containing ``judge-held`` is held
until the test calls ``release_held()`` (a call in flight for as long as the test needs it).
``delay`` makes every answer take that long (a slow judge); calls are answered concurrently.

Also here: the dtype rule of ``torch.tensor`` on Python numbers, which the trainer tests
apply to the rewards they read (torch itself is not needed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

PROJECT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

RESPONSE_PATTERN = re.compile(r"<response-([0-9a-f]{16})>\n([\s\S]*?)\n</response-\1>")
# Listwise (A, B, …) and pairwise (1, 2) prompts label each response shown.
LABELLED_RESPONSE_PATTERN = re.compile(r"<response-([A-Z]+|\d)-([0-9a-f]{16})>\n([\s\S]*?)\n</response-\1-\2>")
CRITERION_ID_PATTERN = re.compile(r'<criterion-([0-9a-f]+) id="([^"]*)" points="[^"]*">\n([\s\S]*?)\n</criterion-\1>')
# Criteria are fenced like responses: <criterion-NONCE id=".." points="..">text</criterion-NONCE>.
CRITERION_PATTERN = re.compile(r'<criterion-([0-9a-f]+) id="[^"]*" points="[^"]*">\n([\s\S]*?)\n</criterion-\1>')

FRUIT_RUBRIC = {
    "criteria": [
        {"id": "apples", "text": "mentions apples", "points": 3},
        {"id": "pears", "text": "mentions pears", "points": 1},
        {"id": "rotten", "text": "mentions rotten", "points": -2},
    ]
}


def shaped_by_length(responses: List[str], lengths: Optional[List[int]] = None, weight: float = 1.0, threshold: float = 0.5) -> List[float]:
    """FRUIT_RUBRIC rewards of ONE group after Kimi k1.5's group length penalty, by hand from
    the documented formula: λᵢ = 0.5 − (lenᵢ − min) ÷ (max − min) over the group (0 when all
    lengths are equal); r + w·λᵢ when r ≥ threshold, else r + w·min(0, λᵢ). Lengths default to
    characters, as the server counts them without ``lengths``."""
    raw = [fruit_score(response) for response in responses]
    sizes = lengths if lengths is not None else [len(response) for response in responses]
    shortest, longest = min(sizes), max(sizes)
    shaped = []
    for reward, size in zip(raw, sizes):
        term = 0.0 if longest == shortest else 0.5 - (size - shortest) / (longest - shortest)
        shaped.append(reward + weight * (term if reward >= threshold else min(0.0, term)))
    return shaped


def win_rates(responses: List[str]) -> List[float]:
    """Tournament rewards of ONE group of distinct responses, by hand: each response's share of
    its comparisons won over every other response (a tie counts half), the judge preferring the
    higher FRUIT_RUBRIC score."""
    scores = [fruit_score(response) for response in responses]
    return [sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for j, other in enumerate(scores) if j != i) / (len(scores) - 1) for i, mine in enumerate(scores)]


FRAGMENTS = ["apples", "pears", "rotten", "apples and pears", "rotten apples", "plums", "pears, rotten", "apples, pears and rotten"]


def fruit_step(prompts: int, group: int) -> List[Any]:
    """(prompt, response) rows of one RL step laid out as trainers generate them (each prompt's
    ``group`` rollouts together), every response distinct, lengths and rewards varying within
    every group, so a reward shaped or ranked over the wrong members comes out different."""
    rows = []
    for prompt in range(prompts):
        for member in range(group):
            padding = "very " * ((prompt * 3 + member * 5) % 7)
            rows.append((f"Name some fruit (#{prompt}).", f"{FRAGMENTS[(prompt + member) % len(FRAGMENTS)]}, {padding}indeed (answer {prompt}.{member})"))
    return rows


def expected_by_group(rows: List[Any], group: int, rule: Any = None) -> Dict[Any, float]:
    """The reward each (prompt, response) must get, computed by hand over its true group (the
    ``group`` consecutive rows of the generation layout) with ``rule`` (a function of the
    group's responses; default ``shaped_by_length``)."""
    rule = rule or shaped_by_length
    expected: Dict[Any, float] = {}
    for start in range(0, len(rows), group):
        members = rows[start : start + group]
        for (prompt, response), value in zip(members, rule([response for _, response in members])):
            expected[(prompt, response)] = value
    return expected


def wrong_rewards(rows: List[Any], rewards: List[Any], expected: Dict[Any, float]) -> List[int]:
    """Rows whose reward is not the expected one (None included), to 1e-9."""
    return [index for index, (row, reward) in enumerate(zip(rows, rewards)) if reward is None or abs(float(reward) - expected[row]) > 1e-9]


def criterion_met(criterion_text: str, response: str) -> bool:
    return criterion_text.split()[-1].lower() in response.lower()


def fruit_score(response: str) -> float:
    """weighted_mean of FRUIT_RUBRIC by hand: points of met criteria / 4."""
    return sum(c["points"] for c in FRUIT_RUBRIC["criteria"] if criterion_met(c["text"], response)) / 4


# How often a loopback server's loop looks for shutdown(): the default 0.5 s is what each close would wait.
POLL_INTERVAL = 0.02

BINARY_RUBRIC = {"criteria": [{"id": "apples", "text": "mentions apples", "points": 1}]}


def tensor_dtype(values: List[Any]) -> str:
    """The dtype ``torch.tensor(values)`` infers from Python numbers: any float makes float32,
    else all bools make bool, else int64. ``None`` cannot become a tensor at all (TypeError)."""
    flat: List[Any] = []
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
        else:
            flat.append(value)
    if any(value is None for value in flat):
        raise TypeError("must be real number, not NoneType")
    if any(isinstance(value, float) for value in flat):
        return "float32"
    if all(isinstance(value, bool) for value in flat):
        return "bool"
    return "int64"


def tensor_mean(values: List[Any]) -> float:
    """``torch.tensor(values).mean()``: raises on an integer tensor, as torch does."""
    dtype = tensor_dtype(values)
    if dtype != "float32":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {dtype}")
    return sum(values) / len(values)


class _Server(ThreadingHTTPServer):
    # The grader opens many connections at once: a deep accept backlog avoids resets.
    request_queue_size = 512
    daemon_threads = True


class FakeJudge:
    def __init__(self, delay: float = 0.0) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.delay = delay
        self.held = threading.Event()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes on a kept-alive connection: with Nagle's algorithm
            # the body waits for the client's delayed ACK, 40 ms on Linux, on every answer.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length).decode("utf-8"))
                judge.requests.append(body)
                messages = body.get("messages", [])
                user_text = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
                labelled = LABELLED_RESPONSE_PATTERN.findall(user_text)
                if labelled:
                    self._send(200, judge._completion(body, judge._group_reply(labelled, user_text)))
                    return
                match = RESPONSE_PATTERN.search(user_text)
                response = match.group(2) if match else ""
                criteria = [text for _nonce, text in CRITERION_PATTERN.findall(user_text)]
                if judge.delay > 0:
                    time.sleep(judge.delay)
                if "judge-held" in response and not judge.held.wait(60):
                    self._send(500, {"error": {"message": "held call never released"}})
                    return
                if "judge-breaks" in response:
                    self._send(500, {"error": {"message": "scripted failure"}})
                    return
                met = criterion_met(criteria[0], response) if criteria else False
                content = json.dumps({"explanation": "scripted verdict", "criteria_met": met})
                self._send(
                    200,
                    {
                        "id": "fake",
                        "object": "chat.completion",
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                    },
                )

            def _send(self, status: int, payload: Dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the server gave up on the call (its deadline) and went away

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(POLL_INTERVAL,), daemon=True)
        self.thread.start()

    @staticmethod
    def _group_reply(labelled: List[Any], user_text: str) -> Dict[str, Any]:
        """A pairwise reply (responses 1 and 2: the higher FRUIT_RUBRIC score wins) or a listwise
        one (every labelled response's verdict on every criterion, by the same rule as one at a time)."""
        if labelled[0][0].isdigit():
            first, second = (fruit_score(text) for _label, _nonce, text in labelled[:2])
            return {"explanation": "scripted verdict", "winner": "tie" if first == second else "1" if first > second else "2"}
        criteria = [(criterion_id, text) for _nonce, criterion_id, text in CRITERION_ID_PATTERN.findall(user_text)]
        entries = [{"label": label, "verdicts": {criterion_id: {"explanation": "scripted verdict", "criteria_met": criterion_met(text, response)} for criterion_id, text in criteria}} for label, _nonce, response in labelled]
        return {"responses": entries}

    @staticmethod
    def _completion(body: Dict[str, Any], reply: Dict[str, Any]) -> Dict[str, Any]:
        message = {"role": "assistant", "content": json.dumps(reply)}
        return {"id": "fake", "object": "chat.completion", "model": body.get("model", "fake"), "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def release_held(self) -> None:
        """Answers the ``judge-held`` calls waiting now, and any later one at once."""
        self.held.set()

    def close(self) -> None:
        self.held.set()
        self.server.shutdown()
        self.server.server_close()


class ScriptedChatJudge:
    """A loopback OpenAI-compatible judge whose reply to each call is ``reply(last user text)``:
    a string is the assistant's content, ``None`` an HTTP 500 (a failed call). ``calls`` counts them."""

    def __init__(self, reply: Callable[[str], Optional[str]]) -> None:
        self.calls = 0
        judge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))).decode("utf-8"))
                judge.calls += 1
                text = next((message["content"] for message in reversed(body.get("messages", [])) if message.get("role") == "user"), "")
                content = reply(text)
                if content is None:
                    status, payload = 500, {"error": {"message": "scripted failure"}}
                else:
                    status, payload = 200, {"id": "fake", "object": "chat.completion", "model": "fake", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(POLL_INTERVAL,), daemon=True).start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def node_available() -> bool:
    return shutil.which("node") is not None and os.path.exists(os.path.join(PROJECT_ROOT, "bin", "rubricate.js"))


def time_scale() -> float:
    """Timeouts here are hang guards, never assertions: scaled with the machine's load.

    ``npm test`` sets RUBRICATE_TEST_TIME_SCALE once for every step (test/support/run-tests.mjs);
    run alone, the factor is worked out the same way: 1 plus the load average per core, at most 10.
    """
    try:
        given = float(os.environ.get("RUBRICATE_TEST_TIME_SCALE", ""))
        if given >= 1:
            return given
    except ValueError:
        pass
    try:
        load = max(os.getloadavg()[:2])
    except OSError:
        return 1.0
    return min(10.0, max(1.0, 1.0 + load / (os.cpu_count() or 1)))


def hang_guard(seconds: float) -> float:
    return seconds * time_scale()


class ServeProcess:
    """``rubricate serve --port 0`` started from the project root; waits for its address line.

    The wait ends on an event: the address line, or the process ending. ``start_timeout`` (180 s,
    scaled with the load) only ends a hang; when the start fails the error says what the process
    printed on stdout and stderr, or that it printed nothing.
    """

    def __init__(self, judge_base_url: str, token: Optional[str] = None, extra: Optional[List[str]] = None, start_timeout: Optional[float] = None):
        args = ["node", "bin/rubricate.js", "serve", "--port", "0", "--judge", "openai:fake", "--judge-base-url", judge_base_url]
        args += ["--no-cache", "--log-level", "warn", "--max-attempts", "1"]
        if token:
            args += ["--token", token]
        args += extra or []
        environment = dict(os.environ)
        environment.pop("NODE_OPTIONS", None)
        environment.pop("RUBRICATE_TOKEN", None)
        self.stderr_lines: List[str] = []
        self.stdout_lines: List[str] = []
        started = time.monotonic()
        self.process = subprocess.Popen(args, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        # Drain stderr so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()
        address: Dict[str, Any] = {}
        settled = threading.Event()

        def read_address() -> None:
            # Lines before the address (none today) are kept for the message; EOF means the process ended.
            try:
                for line in self.process.stdout:
                    self.stdout_lines.append(line)
                    try:
                        parsed = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(parsed, dict) and isinstance(parsed.get("url"), str):
                        address.update(parsed)
                        return
            finally:
                settled.set()

        reader = threading.Thread(target=read_address, daemon=True)
        reader.start()
        guard = start_timeout if start_timeout is not None else hang_guard(180.0)
        settled.wait(guard)
        if not address:
            running = self.process.poll() is None
            if running:
                self.process.kill()
            self.process.wait()
            self._drain.join(5)
            waited = time.monotonic() - started
            state = f"no address line within {waited:.0f} s (the hang guard)" if running else f"it exited with code {self.process.returncode} after {waited:.1f} s"
            raise RuntimeError(f"rubricate serve did not start: {state}; {self._printed()}")
        self.url: str = address["url"]
        self.address = address

    def _printed(self) -> str:
        stdout = "".join(self.stdout_lines)[-3000:]
        stderr = "".join(self.stderr_lines[-40:])[-3000:]
        if not stdout and not stderr:
            return "it printed nothing on stdout or stderr"
        return f"its stdout: {stdout!r}; its stderr: {stderr!r}"

    def _drain_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr_lines.append(line)

    def stop(self, timeout: float = 15.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(hang_guard(timeout))
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._drain.join(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.process.returncode


def metric_value(url: str, sample: str) -> float:
    """One sample of the server's /metrics, e.g. ``rubricate_rewards_total{outcome="ok"}``; 0 when absent."""
    import urllib.request

    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:
        text = answer.read().decode("utf-8")
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.split(" ")[-1])
    return 0.0


def wait_until(condition: Any, timeout: float = 60.0, what: str = "condition not reached") -> None:
    """Waits for a condition the server reports (its queue, its metrics, its log): no fixed sleeps.

    ``timeout`` is a hang guard, scaled with the load.
    """
    timeout = hang_guard(timeout)
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout:g} s")
        time.sleep(0.02)
