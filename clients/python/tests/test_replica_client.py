"""The client over several ``rubricate serve`` replicas, against real loopback servers: a
replica that answers, one that refuses connections, one that takes a request and never answers,
one that drops a request, one that is draining, and all of them down. Each answering replica
computes a reward from the item alone (as replicas sharing a store do), so a reward is right
whichever replica answered, and a resent request shows in the counts."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

from rubricate_client import RubricateClient, RubricateConfigError, RubricateError
from rubricate_client.client import redact_url, replica_urls

from .support import POLL_INTERVAL


def reward_of(item: Dict[str, Any]) -> float:
    return len(item["response"]) / 100


class Replica:
    """A loopback stand-in for one replica. ``mode``: "ok"; "drop" (the first ``drops`` requests
    are read and the connection closed without an answer); "draining" (503 + Connection: close);
    "hold" (each answer waits for ``release``; ``arrived`` is set once a request is in)."""

    def __init__(self, mode: str = "ok", drops: int = 0):
        self.mode = mode
        self.drops = drops
        self.requests: List[Tuple[str, Optional[str], Any]] = []
        self.lock = threading.Lock()
        self.arrived = threading.Event()
        self.release = threading.Event()
        replica = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                with replica.lock:
                    replica.requests.append((self.path, self.headers.get("authorization"), body))
                    drop = replica.mode == "drop" and replica.drops > 0
                    replica.drops -= 1 if drop else 0
                replica.arrived.set()
                if replica.mode == "hold":
                    replica.release.wait(30)
                if drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if replica.mode == "draining":
                    self.answer(503, {"error": {"code": "OVERLOADED", "message": "the server is shutting down; retry on another replica"}}, {"Retry-After": "1", "Connection": "close"})
                    return
                if self.path.endswith("/v1/score/group"):
                    self.answer(200, {"rewards": [len(response) / 100 for response in body["responses"]]})
                elif self.path.endswith("/v1/score/batch"):
                    self.answer(200, {"results": [{"id": item["id"], "reward": reward_of(item)} for item in body["items"]]})
                else:
                    self.answer(200, {"id": body.get("id"), "reward": reward_of(body)})

            def answer(self, status: int, payload: Any, headers: Optional[Dict[str, str]] = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(POLL_INTERVAL,), daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def items(self) -> List[str]:
        return [item["id"] for path, _, body in self.requests if path.endswith("/batch") for item in body["items"]]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class Silent:
    """Accepts connections and reads, never answers: a replica that hangs."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = "http://127.0.0.1:%d" % self.socket.getsockname()[1]
        self.received: List[bytes] = []
        self.connections: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections.append(connection)
            try:
                self.received.append(connection.recv(65536))
            except OSError:
                pass

    def close(self) -> None:
        self.socket.close()
        for connection in self.connections:
            connection.close()


def refusing_url() -> str:
    """The address of a port nothing listens on (bound, then closed): connections are refused."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}"


def items(count: int, prefix: str = "i") -> List[Dict[str, Any]]:
    return [{"id": f"{prefix}{index}", "prompt": "p", "response": "x" * (index % 90), "rubric": {"criteria": [{"text": "t"}]}} for index in range(count)]


class FrozenClock:
    """The client's clock and sleep: quarantines last until the test sleeps through them."""

    def __init__(self, client: RubricateClient):
        self.now = 0.0
        self.sleeps: List[float] = []
        client._clock = lambda: self.now
        client._sleep = self.sleep

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class ReplicaClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.servers: List[Any] = []

    def tearDown(self) -> None:
        for server in self.servers:
            server.close()

    def start(self, server: Any) -> Any:
        self.servers.append(server)
        return server

    def test_urls_from_a_list_a_comma_string_or_the_environment(self) -> None:
        self.assertEqual(replica_urls(["http://a:1/", " http://b:2"]), ["http://a:1", "http://b:2"])
        self.assertEqual(replica_urls("http://a:1, http://b:2,"), ["http://a:1", "http://b:2"])
        os.environ["RUBRICATE_URL"] = "http://a:1,http://c:3"
        try:
            self.assertEqual([replica.url for replica in RubricateClient().replicas], ["http://a:1", "http://c:3"])
        finally:
            del os.environ["RUBRICATE_URL"]
        with self.assertRaises(RubricateConfigError) as caught:
            RubricateClient("http://a:1,http://b:2", token=["only-one"])
        self.assertIn("one per URL", caught.exception.message)
        with self.assertRaises(RubricateConfigError):
            RubricateClient(" , ")
        for wrong in ("http://a:port?token=hidden", "a:1", "ftp://a:1"):
            with self.assertRaises(RubricateConfigError) as caught:
                RubricateClient(f"http://ok:1,{wrong}")
            self.assertNotIn("hidden", caught.exception.message)

    def test_tokens_per_url_go_to_their_own_replica_and_are_redacted(self) -> None:
        first, second = self.start(Replica()), self.start(Replica())
        client = RubricateClient([f"{first.url}?token=alpha-secret", f"{second.url}?token=beta-secret"], timeout=10, batch_size=8)
        self.assertNotIn("secret", repr(client) + client.base_url)
        self.assertIn("token=[REDACTED]", client.base_url)
        results = client.score_batch(items(64))
        self.assertEqual([result["reward"] for result in results], [reward_of(item) for item in items(64)])
        self.assertEqual({auth for _, auth, _ in first.requests}, {"Bearer alpha-secret"})
        self.assertEqual({auth for _, auth, _ in second.requests}, {"Bearer beta-secret"})
        listed = RubricateClient([first.url, second.url], token=["one", "two"], timeout=10)
        listed.score("p", "r", {"criteria": [{"text": "t"}]})
        listed.score("p", "r", {"criteria": [{"text": "t"}]})
        self.assertIn("Bearer one", {auth for _, auth, _ in first.requests})
        self.assertIn("Bearer two", {auth for _, auth, _ in second.requests})
        self.assertEqual(redact_url("http://user:pw@h:1/x?token=t0k&model=m"), "http://[REDACTED]@h:1/x?token=[REDACTED]&model=m")

    def test_the_trainer_adapters_take_a_list_of_replicas(self) -> None:
        from rubricate_client import trl
        from rubricate_client._verl import _client

        first, second = self.start(Replica()), self.start(Replica())
        urls = [first.url, second.url]
        client = _client(RubricateClient, urls, None, 10.0, 30.0, 5.0)
        self.assertIs(_client(RubricateClient, list(urls), None, 10.0, 30.0, 5.0), client)
        self.assertEqual([replica.url for replica in client.replicas], urls)
        reward = trl.make_reward_function(base_url=urls, timeout=10)
        settings = reward.args[0]
        self.assertEqual(settings.base_url, tuple(urls))
        hash(settings.key("sync"))

    def test_chunks_spread_whole_over_replicas_and_come_back_in_order(self) -> None:
        replicas = [self.start(Replica()) for _ in range(3)]
        client = RubricateClient([replica.url for replica in replicas], timeout=10, batch_size=16, max_parallel_batches=6)
        batch = items(480)
        results = client.score_batch(batch)
        self.assertEqual([result["id"] for result in results], [item["id"] for item in batch])
        self.assertEqual([result["reward"] for result in results], [reward_of(item) for item in batch])
        seen = [replica.items() for replica in replicas]
        self.assertEqual(sorted(sum(seen, [])), sorted(item["id"] for item in batch), "every item sent exactly once")
        self.assertTrue(all(seen), f"every replica got work: {[len(part) for part in seen]}")
        for replica in replicas:  # each request was one whole chunk of 16 consecutive items
            for path, _, body in replica.requests:
                numbers = [int(item["id"][1:]) for item in body["items"]]
                self.assertEqual(numbers, list(range(numbers[0], numbers[0] + 16)))
                self.assertEqual(numbers[0] % 16, 0)

    def test_each_request_goes_to_the_replica_with_the_fewest_in_flight(self) -> None:
        slow, fast = self.start(Replica("hold")), self.start(Replica())
        client = RubricateClient([slow.url, fast.url], timeout=30)
        client._turn = -1  # the first pick, with nothing in flight anywhere, is the first replica
        held = threading.Thread(target=client.score, args=("p", "held", {"criteria": [{"text": "t"}]}))
        held.start()
        self.assertTrue(slow.arrived.wait(30), "the first request reached the first replica")
        # One request in flight on the slow replica, none on the other: each call goes to the other.
        answers = [client.score("p", "r" * length, {"criteria": [{"text": "t"}]}) for length in range(1, 5)]
        slow.release.set()
        held.join(30)
        self.assertEqual([answer["reward"] for answer in answers], [length / 100 for length in range(1, 5)])
        self.assertEqual((len(slow.requests), len(fast.requests)), (1, 4))

    def test_a_group_goes_whole_to_one_replica(self) -> None:
        replicas = [self.start(Replica()) for _ in range(2)]
        client = RubricateClient([replica.url for replica in replicas], timeout=10)
        for index in range(4):
            client.score_group("p", [f"r{index}-{member}" for member in range(8)], {"criteria": [{"text": "t"}]})
        groups = [body["responses"] for replica in replicas for path, _, body in replica.requests]
        self.assertEqual(sorted(groups), [[f"r{index}-{member}" for member in range(8)] for index in range(4)])

    def test_a_refusing_replica_is_quarantined_and_its_work_goes_elsewhere(self) -> None:
        good = self.start(Replica())
        refused = refusing_url() + "?token=never-shown"
        client = RubricateClient([refused, good.url], timeout=10, batch_size=8)
        clock = FrozenClock(client)
        with self.assertLogs("rubricate_client", logging.WARNING) as logs:
            results = client.score_batch(items(40))
        self.assertEqual([result["reward"] for result in results], [reward_of(item) for item in items(40)])
        self.assertEqual(sorted(good.items()), sorted(item["id"] for item in items(40)))
        self.assertEqual(clock.sleeps, [], "the request moved to the healthy replica at once")
        self.assertIn("quarantined for 0.5 s (connection refused)", logs.output[0])
        self.assertNotIn("never-shown", "".join(logs.output))
        # Still out (the clock has not moved): later calls go straight to the healthy one.
        self.assertGreater(client.replicas[0].down_until, clock.now)
        self.assertEqual(client.replicas[0].failures, 1)

    def test_a_replica_that_hangs_times_out_and_the_request_is_answered_by_another(self) -> None:
        silent, good = self.start(Silent()), self.start(Replica())
        client = RubricateClient([silent.url, good.url], timeout=0.5)
        FrozenClock(client)
        client._turn = -1  # the first pick is the first replica: the silent one
        with self.assertLogs("rubricate_client", logging.WARNING) as logs:
            answers = [client.score("p", "r" * length, {"criteria": [{"text": "t"}]}) for length in range(1, 5)]
        self.assertEqual([answer["reward"] for answer in answers], [length / 100 for length in range(1, 5)])
        self.assertEqual(len(silent.received), 1, "the silent replica got the first request only, then was quarantined")
        self.assertEqual(len(good.requests), 4)
        self.assertIn("no answer within 0.5 s", logs.output[0])

    def test_a_request_that_may_have_taken_effect_is_not_resent_off_the_scoring_paths(self) -> None:
        silent, good = self.start(Silent()), self.start(Replica())
        client = RubricateClient([silent.url, good.url], timeout=0.5)
        FrozenClock(client)
        client._turn = -1
        with self.assertLogs("rubricate_client", logging.WARNING), self.assertRaises(RubricateError) as caught:
            client._request("POST", "/v1/rubrics/x/step", {})
        self.assertEqual(caught.exception.code, "TIMEOUT")
        self.assertIn("not resent", caught.exception.message)
        self.assertEqual(good.requests, [])

    def test_a_dropped_request_is_resent_to_another_replica_once(self) -> None:
        dying, good = self.start(Replica("drop", drops=1)), self.start(Replica())
        client = RubricateClient([dying.url, good.url], timeout=10, batch_size=32)
        FrozenClock(client)
        client._turn = -1
        with self.assertLogs("rubricate_client", logging.WARNING):
            results = client.score_batch(items(32))
        self.assertEqual([result["reward"] for result in results], [reward_of(item) for item in items(32)])
        self.assertEqual((len(dying.requests), len(good.requests)), (1, 1))

    def test_a_draining_replica_passes_the_request_on_without_a_wait(self) -> None:
        draining, good = self.start(Replica("draining")), self.start(Replica())
        client = RubricateClient([draining.url, good.url], timeout=10)
        clock = FrozenClock(client)
        client._turn = -1
        with self.assertLogs("rubricate_client", logging.WARNING):
            answer = client.score("p", "abc", {"criteria": [{"text": "t"}]})
        self.assertEqual(answer["reward"], 0.03)
        self.assertEqual((len(draining.requests), len(good.requests), clock.sleeps), (1, 1, []))

    def test_every_replica_down_before_any_answered_is_a_configuration_error(self) -> None:
        urls = [refusing_url() + "?token=hidden-1", refusing_url() + "?token=hidden-2"]
        client = RubricateClient(urls, timeout=5)
        FrozenClock(client)
        with self.assertLogs("rubricate_client", logging.WARNING), self.assertRaises(RubricateConfigError) as caught:
            client.score_batch(items(4))
        self.assertEqual(caught.exception.code, "CONNECTION")
        for url in urls:
            self.assertIn(redact_url(url), caught.exception.message)
        self.assertNotIn("hidden", caught.exception.message)

    def test_every_replica_lost_mid_run_raises_after_connect_retry_time_never_a_reward(self) -> None:
        replicas = [self.start(Replica()) for _ in range(2)]
        client = RubricateClient([replica.url for replica in replicas], timeout=5, connect_retry_time=5)
        clock = FrozenClock(client)
        client.score_batch(items(2))
        for replica in replicas:
            replica.close()
        self.servers.clear()
        client.close()
        with self.assertLogs("rubricate_client", logging.WARNING), self.assertRaises(RubricateError) as caught:
            client.score_batch(items(2))
        self.assertNotIsInstance(caught.exception, RubricateConfigError)
        self.assertEqual(caught.exception.code, "CONNECTION")
        self.assertIn("every rubricate replica is down", caught.exception.message)
        self.assertLessEqual(sum(clock.sleeps), 5)
        self.assertGreaterEqual(len(clock.sleeps), 2, "it waited for the replicas to come back, twice or more")


if __name__ == "__main__":
    unittest.main()
