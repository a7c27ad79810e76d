"""64 samples through the verl reward paths, against a running `rubricate serve`.

Reproduces how verl calls the function (facts in clients/python/tests/test_verl.py):
  naive       one blocking compute_score call per sample, in sequence (naive and dapo managers);
  naive-fresh the same, with a new connection per call (what the client did before keep-alive);
  reward-loop compute_score_async for every sample at once, awaited together (the reward loop);
  batch       one compute_score_batch call for the whole batch (the batch manager).
Prints one JSON object: wall seconds per path and whether every reward was real.
Usage: python3 verl_managers.py SERVE_URL [SAMPLES]
"""

import asyncio
import json
import sys
import time

from rubricate_client import _verl
from rubricate_client.client import RubricateClient
from rubricate_client.verl import compute_score, compute_score_async, compute_score_batch

RUBRIC = {"criteria": [{"id": f"c{index}", "text": f"The response covers point {index}", "points": index + 1} for index in range(3)]}


def rows(tag, count):
    return [("rubric", f"Answer {index} for {tag}: a response of a few words.", json.dumps(RUBRIC), {"prompt": f"Question {index}?", "rubric": json.dumps(RUBRIC)}) for index in range(count)]


def timed(function):
    started = time.perf_counter()
    results = function()
    return time.perf_counter() - started, results


def main():
    url = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    options = {"base_url": url}
    report = {"samples": count}

    # Warm-up: one call, so connection set-up and first-request costs are not billed to a path.
    compute_score(*rows("warm-up", 1)[0], **options)

    seconds, results = timed(lambda: [compute_score(*row, **options) for row in rows("naive", count)])
    report["naive_s"], report["naive_real"] = seconds, sum(result["reward_failed"] == 0.0 for result in results)

    def fresh_connection_each_call():
        out = []
        for row in rows("naive-fresh", count):
            out.append(compute_score(*row, **options))
            for client in list(_verl._clients.values()):
                if isinstance(client, RubricateClient):
                    client.close()
        return out

    seconds, results = timed(fresh_connection_each_call)
    report["naive_fresh_connection_s"] = seconds

    async def loop():
        return await asyncio.gather(*(compute_score_async(*row, **options) for row in rows("reward-loop", count)))

    seconds, results = timed(lambda: asyncio.run(loop()))
    report["reward_loop_s"], report["reward_loop_real"] = seconds, sum(result["reward_failed"] == 0.0 for result in results)

    batch = rows("batch", count)
    seconds, results = timed(lambda: compute_score_batch([row[0] for row in batch], [row[1] for row in batch], [row[2] for row in batch], [row[3] for row in batch], **options))
    report["batch_s"], report["batch_real"] = seconds, sum(result["reward_failed"] == 0.0 for result in results)
    print(json.dumps(report))


main()
