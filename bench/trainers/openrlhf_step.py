"""One OpenRLHF step of PROMPTS × SAMPLES per-sample requests, all sent at once, against a
running `rubricate serve` (facts in clients/python/tests/test_openrlhf.py): each request is
`{"query": [q], "prompts": [p], "labels": [l]}` on a new connection, 180 s timeout, 5 tries
1 s apart on any failure or non-200, then the reward is None (which crashes the step).

The rubric has one criterion, so each reward is the simulated judge's verdict on it: met when
bit 0 of sha256(criterion, NUL, response) is set (bench/simulator/verdict.ts); every reward is
checked against it. Prints one JSON object.
Usage: python3 openrlhf_step.py SERVE_URL [PROMPTS] [SAMPLES]
"""

import asyncio
import hashlib
import json
import sys
import time
import urllib.parse

CRITERION = "The response names a fruit"
RUBRIC = json.dumps({"criteria": [{"id": "fruit", "text": CRITERION, "points": 1}]})
PROMPT = "<|im_start|>user\nName some fruit, prompt {prompt}.<|im_end|>\n<|im_start|>assistant\n"


def expected(response):
    digest = hashlib.sha256(CRITERION.encode() + b"\x00" + response.strip().encode()).digest()
    return 1.0 if digest[0] & 1 else 0.0


async def post_once(host, port, path, body):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        writer.write(head.encode() + body)
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    header, _, payload = raw.partition(b"\r\n\r\n")
    return int(header.split(b" ", 2)[1]), payload


async def sample(host, port, path, prompt, response, stats):
    body = json.dumps({"query": [prompt + response + "<|im_end|>"], "prompts": [prompt], "labels": [RUBRIC]}).encode()
    for attempt in range(5):
        stats["tries"] += 1
        try:
            status, payload = await asyncio.wait_for(post_once(host, port, path, body), 180)
            if status == 200:
                return json.loads(payload)["rewards"][0]
            stats["refused"][status] = stats["refused"].get(status, 0) + 1
        except (OSError, asyncio.TimeoutError, ValueError) as error:
            stats["errors"][type(error).__name__] = stats["errors"].get(type(error).__name__, 0) + 1
        await asyncio.sleep(1)
    return None


async def step(url, prompts, samples):
    parsed = urllib.parse.urlsplit(url)
    stats = {"tries": 0, "refused": {}, "errors": {}}
    work = [(PROMPT.format(prompt=p), f"Apples and pears, answer {s} to prompt {p}.") for p in range(prompts) for s in range(samples)]
    started = time.perf_counter()
    rewards = await asyncio.gather(*(sample(parsed.hostname, parsed.port, "/get_reward", prompt, response, stats) for prompt, response in work))
    seconds = time.perf_counter() - started
    return {
        "samples": len(work),
        "wall_s": seconds,
        "exact": sum(reward == expected(response) for reward, (_, response) in zip(rewards, work)),
        "none": sum(reward is None for reward in rewards),
        "float_rewards": all(isinstance(reward, float) for reward in rewards),
        "tries": stats["tries"],
        "refused": stats["refused"],
        "errors": stats["errors"],
    }


def main():
    url = sys.argv[1]
    prompts = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    print(json.dumps(asyncio.run(step(url, prompts, samples))))


main()
