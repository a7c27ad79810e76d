"""verifiers, as it calls reward functions and judge plugins (facts from verifiers a60a606):

* legacy ``Rubric._call_individual_reward_func``: ``inspect.signature(func)``; a function with
  ``**kwargs`` gets every score object (``prompt``, ``completion``, ``answer``, ``state``,
  ``info``, ``task``, the ``parser`` and the dataset row's other columns), one without gets the
  names it lists; ``float(await maybe_await(func, ...))``; any ``Exception`` → 0.0, logged with
  ``func.__name__``;
* v1: a judge id resolves to ``verifiers.v1.judges.<id>`` or the top-level module ``<id>``
  exporting one ``Judge`` subclass in ``__all__``, whose config class validates the entry;
  ``Task.score`` awaits ``judge.score(task, trace)`` and records the reward under the judge's
  ``reward_name`` with its ``weight``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import unittest
from typing import Any, Dict

from rubricate_client.verifiers import make_rubric_reward

from .support import FRUIT_RUBRIC, FakeJudge, ServeProcess, fruit_score, node_available
from .test_failures import Task, Trace, VerifiersV1

judge: FakeJudge
serve: ServeProcess


def setUpModule() -> None:
    global judge, serve
    if not node_available():
        raise unittest.SkipTest("node or bin/rubricate.js not found: the verifiers tests need the real server")
    judge = FakeJudge()
    serve = ServeProcess(judge.base_url)


def tearDownModule() -> None:
    serve.stop()
    judge.close()


async def legacy_call(func: Any, objects: Dict[str, Any]) -> float:
    """The legacy Rubric's call, by signature."""
    signature = inspect.signature(func)
    if any(parameter.kind == parameter.VAR_KEYWORD for parameter in signature.parameters.values()):
        arguments = objects
    else:
        arguments = {key: value for key, value in objects.items() if key in signature.parameters}
    try:
        result = func(**arguments)
        return float(await result if inspect.isawaitable(result) else result)
    except Exception:
        return 0.0


class LegacyRubricTest(unittest.TestCase):
    def test_multi_turn_completion_rubric_from_a_row_column_and_the_reward_name(self) -> None:
        reward = make_rubric_reward(serve.url, rubric_field="rubric_json", name="rubric")
        self.assertEqual(reward.__name__, "rubric")
        completion = [{"role": "assistant", "content": "Let me check."}, {"role": "tool", "content": "apples in stock"}, {"role": "assistant", "content": "Apples and pears."}]
        objects = {"prompt": [{"role": "user", "content": "Name some fruit."}], "completion": completion, "answer": "", "state": {}, "info": {}, "task": None, "parser": object(), "rubric_json": json.dumps(FRUIT_RUBRIC)}
        self.assertEqual(asyncio.run(legacy_call(reward, objects)), fruit_score("Let me check.\n\nApples and pears."))
        # The prompt reached the judge with the response.
        self.assertIn("Name some fruit.", judge.requests[-1]["messages"][-1]["content"])


class V1JudgePluginTest(unittest.TestCase):
    def test_the_plugin_resolves_by_id_validates_its_entry_and_grades_the_view_asked_for(self) -> None:
        with VerifiersV1() as verifiers:
            plugged = verifiers.load_judge({"id": "rubricate_judge", "base_url": serve.url, "view": "full_trace", "weight": 2.0})
            self.assertEqual((type(plugged).__name__, plugged.config.weight, plugged.config.rubric_field), ("RubricateJudge", 2.0, "rubric"))
            trace = Trace("Pears.")
            trace.transcript = "user: Name some fruit.\nassistant: Rotten apples?\nuser: Again.\nassistant: Pears."
            reward = asyncio.run(plugged.score(Task(FRUIT_RUBRIC), trace))
            last_reply = verifiers.load_judge({"id": "rubricate_judge", "base_url": serve.url})
            reply_reward = asyncio.run(last_reply.score(Task(json.dumps(FRUIT_RUBRIC)), trace))
        # full_trace grades the whole transcript; the default, the last reply only.
        self.assertEqual((reward, reply_reward), (fruit_score(trace.transcript), fruit_score("Pears.")))
        self.assertNotEqual(reward, reply_reward)
        self.assertEqual(type(reward), float)


if __name__ == "__main__":
    unittest.main()
