"""Three ``rubricate serve`` replicas sharing one ``redis-server``, as docs/deployment.md runs
them: a 4,096-sample step through Debian's nginx in front of them, and one through the client's
own list of replicas; in each, one replica is killed by PID mid-step (at the judge's 1,024th call
of the step). Every reward must come back exact (each is known in advance), none lost, and the
judge must not be paid more than 1.05 × the step's unique work (a killed replica's calls in
flight, whose replies it never stored, are made again elsewhere; nothing else is)."""

from __future__ import annotations

import asyncio
import logging
import unittest
from typing import List

from rubricate_client import RubricateClient
from rubricate_client.trl import make_reward_function
from rubricate_client.verl import compute_score

from .fleet import Fleet, nginx_binary, step_items
from .support import node_available

STEP = 4096
KILL_AT = 1024
fleet: Fleet


def setUpModule() -> None:
    global fleet
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the replica test needs the real server")
    nginx = nginx_binary()
    if nginx is None:
        raise unittest.SkipTest("nginx is not installed (Debian: apt-get install nginx; .ci/run installs it): the replica test runs serve replicas behind it")
    fleet = Fleet(3, nginx=nginx)


def tearDownModule() -> None:
    fleet.close()


class ReplicaStepTest(unittest.TestCase):
    def run_step(self, name: str, client: RubricateClient, victim: int) -> int:
        """Scores a step, killing replica ``victim`` at the step's KILL_AT-th judge call; checks
        every reward; returns the judge calls the step made."""
        items, expected = step_items(name, STEP)
        before = len(fleet.calls)
        fleet.at_call(before + KILL_AT, fleet.replicas[victim].kill)
        results = client.score_batch(items)
        calls = len(fleet.calls) - before
        self.assertIsNotNone(fleet.replicas[victim].process.poll(), "the replica was killed mid-step")
        self.assertEqual(len(results), STEP, "none lost")
        self.assertEqual([result["id"] for result in results], [item["id"] for item in items])
        wrong = [(item["id"], result["reward"], want) for item, result, want in zip(items, results, expected) if result["reward"] != want]
        self.assertEqual(wrong, [], "every reward exact")
        self.assertGreaterEqual(calls, STEP, "every sample was graded once at least")
        self.assertLessEqual(calls, 1.05 * STEP, f"{calls} judge calls for {STEP} unique")
        return calls

    def test_through_nginx(self) -> None:
        victim = fleet.replicas[0]
        client = RubricateClient(fleet.nginx.url, timeout=120, batch_size=64, max_parallel_batches=12)  # type: ignore[union-attr]
        self.run_step("nginx", client, 0)
        # nginx passed the killed replica's requests to another: "$upstream_addr" lists both.
        failovers = [line for line in fleet.nginx.access_log() if f"127.0.0.1:{victim.port}, " in line]  # type: ignore[union-attr]
        self.assertTrue(failovers, "nginx moved a request off the killed replica")
        self.assertTrue(all(line.startswith("200 ") for line in fleet.nginx.access_log()), "every answer the client got was 200")  # type: ignore[union-attr]

    def test_through_the_client_list_of_replicas(self) -> None:
        victim = fleet.replicas[1]
        client = RubricateClient(fleet.urls, timeout=120, batch_size=64, max_parallel_batches=12)
        with self.assertLogs("rubricate_client", logging.WARNING) as logs:
            self.run_step("client", client, 1)
        quarantined: List[str] = [line for line in logs.output if f"replica {victim.url} quarantined" in line]
        self.assertTrue(quarantined, logs.output)

    def test_trainer_adapters_take_the_replicas_as_one_comma_separated_url(self) -> None:
        # Run last (by name): two of the three replicas are dead by now, and the adapters pass over them.
        urls = ",".join(fleet.urls)
        items, expected = step_items("adapters", 16)
        quiet = logging.getLogger("rubricate_client")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            verl = [compute_score("rubric", item["response"], None, {"prompt": item["prompt"], "rubric": item["rubric"]}, base_url=urls)["score"] for item in items]
            reward = make_reward_function(urls)
            trl = asyncio.run(reward(prompts=[item["prompt"] for item in items], completions=[item["response"] for item in items], rubric=[item["rubric"] for item in items]))
        finally:
            quiet.setLevel(level)
        self.assertEqual(verl, expected)
        self.assertEqual(trl, expected)


if __name__ == "__main__":
    unittest.main()
