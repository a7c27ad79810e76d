"""`npm run bench -- serve-scale` (through bench/serve-scale.ts): the scale curve of ``rubricate
serve`` (issue #49). For each count (10⁴, 10⁵, 10⁶ rewards by default; ``SERVE_SCALE_REWARDS``
chooses), a fresh ``serve`` (the build, as installed) with the scripted judge (``scripted:mixed``:
verdicts made up at once, no model) and a fresh SQLite reply cache is driven by the Python
client as a trainer drives it: steps of ``STEP`` unique samples through ``score_batch``. Every
reward is uncached (a judge call per criterion). Reports the serve process's CPU per reward
(user + system from /proc, start-up left out), its peak RSS (VmHWM) and the RSS at each tenth of
the run, the wall time, the client's own CPU, and the 1-minute load average before and after.
Prints one JSON list on its last line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

from rubricate_client import RubricateClient

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP = int(os.environ.get("SERVE_SCALE_STEP", "4096"))
CRITERIA = int(os.environ.get("SERVE_SCALE_CRITERIA", "1"))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def rubric() -> Dict[str, Any]:
    return {"criteria": [{"id": f"c{index}", "text": f"The answer names fruit number {index}.", "points": 1} for index in range(CRITERIA)]}


def cpu_ms(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / CLOCK_TICKS


def status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024 / 1e6
    return 0.0


def load() -> float:
    return round(os.getloadavg()[0], 1)


def start_serve(directory: str) -> "tuple[subprocess.Popen[str], str]":
    args = ["node", os.path.join(PROJECT_ROOT, "bin", "rubricate.js"), "serve", "--port", "0", "--judge", "scripted:mixed", "--cache", os.path.join(directory, "cache.sqlite"), "--concurrency", "64", "--log-level", "warn"]
    environment = {key: value for key, value in os.environ.items() if key not in ("NODE_OPTIONS", "RUBRICATE_TOKEN", "RUBRICATE_STORE")}
    environment["RUBRICATE_USE_BUILD"] = "1"  # the build, even when the sources changed since it was made
    process = subprocess.Popen(args, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment)
    line = process.stdout.readline()  # type: ignore[union-attr]
    if not line:
        process.wait()
        raise RuntimeError(f"rubricate serve exited with {process.returncode} before it listened")
    return process, json.loads(line)["url"]


def run(rewards: int) -> Dict[str, Any]:
    load_before = load()
    with tempfile.TemporaryDirectory(prefix="rubricate-bench-serve-scale-") as directory:
        process, url = start_serve(directory)
        try:
            client = RubricateClient(url, timeout=120, batch_size=256, max_parallel_batches=8)
            shared_rubric = rubric()
            startup_cpu = cpu_ms(process.pid)
            startup_rss = status_mb(process.pid, "VmRSS")
            rss_by_tenth: List[float] = []
            client_cpu = time.process_time()
            started = time.perf_counter()
            done = failed = 0
            while done < rewards:
                count = min(STEP, rewards - done)
                items = [{"prompt": f"prompt {(done + index) // 64}", "response": f"answer {done + index}", "rubric": shared_rubric} for index in range(count)]
                for result in client.score_batch(items):
                    if not isinstance(result.get("reward"), (int, float)):
                        failed += 1
                tenth_before = done * 10 // rewards
                done += count
                if done * 10 // rewards > tenth_before:
                    rss_by_tenth.append(round(status_mb(process.pid, "VmRSS")))
            wall = time.perf_counter() - started
            serve_cpu = cpu_ms(process.pid) - startup_cpu
            return {
                "scenario": f"serve scale {rewards:,} rewards",
                "rewards": rewards,
                "criteria_per_reward": CRITERIA,
                "failed": failed,
                "wall_s": wall,
                "rewards_per_s": rewards / wall,
                "serve_cpu_ms_per_reward": serve_cpu / rewards,
                "serve_startup_cpu_ms": startup_cpu,
                "serve_startup_rss_mb": startup_rss,
                "peak_rss_mb": status_mb(process.pid, "VmHWM"),
                "rss_mb_by_tenth": rss_by_tenth,
                "client_cpu_ms_per_reward": (time.process_time() - client_cpu) * 1000 / rewards,
                "load": f"{load_before}–{load()}",
            }
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main() -> None:
    counts = [int(text) for text in os.environ.get("SERVE_SCALE_REWARDS", "10000,100000,1000000").split(",")]
    rows = []
    for count in counts:
        rows.append(run(count))
        print(json.dumps(rows[-1]), file=sys.stderr)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
