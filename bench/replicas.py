"""`npm run bench -- replicas` (through bench/replicas.ts): rewards/s of 4,096-sample steps on one
``rubricate serve`` replica against three replicas sharing one redis-server, reached through
Debian's nginx and through the Python client's own list of replicas; then a step in which one
replica is killed by PID at the judge's 1,024th call, with the judge's calls against the unique
work. The judge is the loopback fake judge (made-up verdicts by a rule, so every reward is
checked) answering each call after ``JUDGE_DELAY`` seconds, as a served model would; every
replica has ``--concurrency 64``. Rewards/s are medians of ``ROUNDS`` (3) steps, the configurations
taking turns. Prints one JSON object on its last line."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any, Dict, List

from rubricate_client import RubricateClient
from tests.fleet import Fleet, nginx_binary, step_items

STEP = 4096
KILL_AT = 1024
JUDGE_DELAY = float(os.environ.get("JUDGE_DELAY", "0.05"))


ROUNDS = int(os.environ.get("ROUNDS", "3"))


def step(fleet: Fleet, client: RubricateClient, name: str, kill: int = -1) -> Dict[str, Any]:
    """One step of unique samples (fresh: every sample a judge call) and, without a kill, the same
    step again (every verdict cached)."""
    items, expected = step_items(name, STEP)
    before = len(fleet.calls)
    if kill >= 0:
        fleet.at_call(before + KILL_AT, fleet.replicas[kill].kill)
    started = time.perf_counter()
    results = client.score_batch(items)
    fresh = time.perf_counter() - started
    calls = len(fleet.calls) - before
    exact = sum(1 for result, want in zip(results, expected) if result["reward"] == want)
    row: Dict[str, Any] = {"fresh": STEP / fresh, "judge_calls": calls, "exact": exact}
    if kill < 0:
        started = time.perf_counter()
        again = client.score_batch(items)
        row["cached"] = STEP / (time.perf_counter() - started)
        row["exact"] += sum(1 for result, want in zip(again, expected) if result["reward"] == want) - STEP
    return row


def client_for(urls: Any) -> RubricateClient:
    return RubricateClient(urls, timeout=120, batch_size=64, max_parallel_batches=12)


def summary(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    row = {"fresh_rewards_per_s": round(statistics.median(run["fresh"] for run in runs)), "judge_calls": sum(run["judge_calls"] for run in runs), "unique_work": STEP * len(runs), "exact": sum(run["exact"] for run in runs)}
    if "cached" in runs[0]:
        row["cached_rewards_per_s"] = round(statistics.median(run["cached"] for run in runs))
    row["calls_per_unique"] = round(row["judge_calls"] / row["unique_work"], 4)
    return row


def main() -> None:
    nginx = nginx_binary()
    if nginx is None:
        print(json.dumps({"skipped": "nginx is not installed (apt-get install nginx)"}))
        return
    load: List[float] = [round(value, 2) for value in os.getloadavg()]
    runs: Dict[str, List[Dict[str, Any]]] = {"one replica": [], "3 replicas behind nginx": [], "3 replicas, client list": []}
    # Both fleets at once, their rounds interleaved: the machine's load drifts over all of them alike.
    with Fleet(1, judge_delay=JUDGE_DELAY) as single, Fleet(3, nginx=nginx, judge_delay=JUDGE_DELAY) as fleet:
        clients = {"one replica": (single, client_for(single.urls)), "3 replicas behind nginx": (fleet, client_for(fleet.nginx.url)), "3 replicas, client list": (fleet, client_for(fleet.urls))}  # type: ignore[union-attr]
        for round_number in range(ROUNDS):
            for index, (name, (owner, client)) in enumerate(clients.items()):
                runs[name].append(step(owner, client, f"r{round_number}-{index}"))
        rows = {name: summary(entries) for name, entries in runs.items()}
        rows["nginx, replica 1 of 3 killed mid-step"] = summary([step(fleet, client_for(fleet.nginx.url), "nginx-kill", kill=0)])  # type: ignore[union-attr]
        rows["client list, replica 2 of 3 killed mid-step"] = summary([step(fleet, client_for(fleet.urls), "list-kill", kill=1)])
    one = rows["one replica"]
    for row in rows.values():
        row["fresh_vs_one_replica"] = round(row["fresh_rewards_per_s"] / one["fresh_rewards_per_s"], 2)
        if "cached_rewards_per_s" in row:
            row["cached_vs_one_replica"] = round(row["cached_rewards_per_s"] / one["cached_rewards_per_s"], 2)
    print(json.dumps({"judge_delay_s": JUDGE_DELAY, "step": STEP, "rounds": ROUNDS, "load_before": load, "load_after": [round(value, 2) for value in os.getloadavg()], "cores": os.cpu_count(), "rows": rows}))


if __name__ == "__main__":
    sys.exit(main())
