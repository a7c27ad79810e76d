"""Reward functions cross process boundaries: TRL's AsyncGRPOTrainer spawns its rollout worker
and pickles the reward functions into it (trl f2cd577, ``AsyncRolloutWorker.start`` checks
``pickle.dumps`` first); verl's ``prime`` manager, its ``remote`` reward manager and
``launch_reward_fn_async`` (a Ray task) unpickle the function in another process, which
imports its module by name.

Each function is pickled in one interpreter and unpickled and called in a fresh one whose
``sys.path`` is the standard library plus a directory holding the package as ``pip install``
lays it out (``rubricate_client/`` and ``rubricate_judge.py``), and nothing else: no checkout,
no PYTHONPATH, no working directory. Without the package there, unpickling fails: the package
must be installed on every worker.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict

from .support import FRUIT_RUBRIC, PROJECT_ROOT, FakeJudge, ServeProcess, node_available

CLIENT_ROOT = os.path.join(PROJECT_ROOT, "clients", "python")

judge: FakeJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the pickling tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url)


def tearDownModule() -> None:
    serve.stop()
    judge.close()


def fresh_python(code: str, site: str) -> subprocess.CompletedProcess:
    """``python -I`` (no PYTHONPATH, no user site, no script directory), run from ``/``, with
    ``site`` (possibly empty) as the only addition to the standard library's path."""
    prelude = f"import sys; sys.path[:] = [p for p in sys.path if p.startswith(sys.base_prefix) or p.startswith(sys.prefix)]; sys.path.insert(0, {site!r}) if {site!r} else None\n"
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "RUBRICATE_URL", "RUBRICATE_TOKEN")}
    return subprocess.run([sys.executable, "-I", "-c", prelude + code], cwd="/", env=environment, capture_output=True, text=True, timeout=120)


class PicklingTest(unittest.TestCase):
    def setUp(self) -> None:
        self.directory = tempfile.mkdtemp()
        self.site = os.path.join(self.directory, "site-packages")
        os.makedirs(self.site)
        shutil.copytree(os.path.join(CLIENT_ROOT, "rubricate_client"), os.path.join(self.site, "rubricate_client"), ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(os.path.join(CLIENT_ROOT, "rubricate_judge.py"), self.site)
        self.pickles = os.path.join(self.directory, "functions.pickle")

    def tearDown(self) -> None:
        shutil.rmtree(self.directory)

    def test_trl_verl_and_verifiers_functions_unpickle_and_run_in_a_fresh_worker(self) -> None:
        verl_file = os.path.join(CLIENT_ROOT, "rubricate_client", "verl.py")
        # The trainer's process: TRL and verifiers functions built as documented, verl's loaded by file path as verl does.
        dumped = fresh_python(
            f"""
import importlib.util, pickle
from rubricate_client.trl import make_reward_function, make_sync_reward_function
from rubricate_client.verifiers import make_rubric_reward
spec = importlib.util.spec_from_file_location("custom_module_1234", {verl_file!r})
verl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verl)
functions = {{"trl": make_reward_function({serve.url!r}), "trl_sync": make_sync_reward_function({serve.url!r}),
             "verl": verl.compute_score, "verl_async": verl.compute_score_async, "verifiers": make_rubric_reward({serve.url!r})}}
with open({self.pickles!r}, "wb") as handle:
    pickle.dump(functions, handle)
""",
            self.site,
        )
        self.assertEqual(dumped.returncode, 0, dumped.stderr[-3000:])
        row = {"prompt": "Name some fruit.", "rubric": json.dumps(FRUIT_RUBRIC)}
        # The worker: a fresh interpreter with only the installed package.
        ran = fresh_python(
            f"""
import asyncio, inspect, json, pickle
with open({self.pickles!r}, "rb") as handle:
    functions = pickle.load(handle)
assert inspect.iscoroutinefunction(functions["trl"]) and not inspect.iscoroutinefunction(functions["trl_sync"])
rubric = [{json.dumps(FRUIT_RUBRIC)!r}] * 2
logged = {{}}
answers = {{
    "trl": asyncio.run(functions["trl"](prompts=["q", "q"], completions=["Apples.", "Pears."], rubric=rubric,
                                          log_extra=lambda column, values: logged.setdefault(column, values))),
    "trl_sync": functions["trl_sync"](prompts=["q"], completions=["Rotten apples."], rubric=rubric[:1]),
    "verl": functions["verl"]("rubric", "Apples and pears.", None, {row!r}, base_url={serve.url!r})["score"],
    "verl_async": asyncio.run(functions["verl_async"]("rubric", "Pears.", None, {row!r}, base_url={serve.url!r}))["score"],
    "verifiers": asyncio.run(functions["verifiers"](prompt="q", completion="Apples.", info={{"rubric": {json.dumps(FRUIT_RUBRIC)!r}}})),
    "modules": sorted({{getattr(f, "func", f).__module__ for f in functions.values()}}),
    "logged": logged,
}}
print(json.dumps(answers))
""",
            self.site,
        )
        self.assertEqual(ran.returncode, 0, ran.stderr[-3000:])
        answers: Dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
        self.assertEqual(answers["trl"], [0.75, 0.25])
        self.assertEqual(answers["logged"], {"rubric_reward_error": ["", ""]})
        self.assertEqual(answers["trl_sync"], [0.25])
        self.assertEqual((answers["verl"], answers["verl_async"], answers["verifiers"]), (1.0, 0.25, 0.75))
        self.assertEqual(answers["modules"], ["rubricate_client._verl", "rubricate_client.trl", "rubricate_client.verifiers"])
        # A worker without the package cannot even unpickle them: install it on every worker.
        missing = fresh_python(f"import pickle\npickle.load(open({self.pickles!r}, 'rb'))", "")
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("No module named 'rubricate_client'", missing.stderr)


if __name__ == "__main__":
    unittest.main()
