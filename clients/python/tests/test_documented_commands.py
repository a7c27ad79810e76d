"""Every trainer command line of docs/rl-integration.md runs on the versions it names.

Each code block that starts a trainer (verl's ``main_ppo``, OpenRLHF's ``train_ppo_ray``,
slime's ``train.py``, TRL's ``GRPOTrainer``) follows a marker ``<!-- checked: trainer@version
... -->``, and is checked against what that version's parser or config schema accepts, as
written down from its source in trainer_command_facts.json:

* verl (Hydra, struct mode): ``key=value`` needs the key in the schema, ``+key=value`` needs it
  outside the schema and read by verl (else Hydra refuses it, or accepts it and verl ignores
  it); the reward manager must be registered for the mode (reward loop or legacy) and the
  function name must be one of rubricate_client.verl;
* OpenRLHF and slime (argparse): every flag must be one the version defines, with a value
  among its choices where it has them (argparse refuses unknown flags);
* TRL: the keyword arguments of ``GRPOConfig(...)`` and ``GRPOTrainer(...)`` must be fields
  and parameters of that version.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import unittest
from typing import Any, Dict, List, Tuple

import rubricate_client.groups as groups_module
import rubricate_client.verl as verl_module

from .support import PROJECT_ROOT

DOCS = os.path.join(PROJECT_ROOT, "docs", "rl-integration.md")
with open(os.path.join(os.path.dirname(__file__), "trainer_command_facts.json"), encoding="utf-8") as facts_file:
    FACTS: Dict[str, Any] = json.load(facts_file)
MARKER = re.compile(r"<!-- checked: ([^>]*?) -->\s*\n```(\w+)\n([\s\S]*?)```")
TRAINER_CALL = re.compile(r"verl\.trainer\.main_ppo|openrlhf\.cli\.train_ppo_ray|python train\.py|GRPOTrainer\(")


def documented_blocks() -> Tuple[List[Tuple[List[str], str]], List[str]]:
    """(versions, code) of each marked block, and the code of trainer blocks without a marker."""
    with open(DOCS, encoding="utf-8") as docs:
        text = docs.read()
    marked = [(match.group(1).split(), match.group(3)) for match in MARKER.finditer(text)]
    marked_code = {code for _, code in marked}
    unmarked = [code for code in re.findall(r"```\w*\n([\s\S]*?)```", text) if TRAINER_CALL.search(code) and code not in marked_code]
    return marked, unmarked


def command_words(code: str) -> List[str]:
    """The words of the command lines of a shell block: comments, `...` and continuations left out."""
    lines = [line.split(" #")[0] for line in code.splitlines() if not line.lstrip().startswith("#")]
    return [word for word in shlex.split(" ".join(line.rstrip("\\") for line in lines)) if word != "..."]


def commented_alternatives(code: str) -> List[List[str]]:
    """Hydra overrides the docs give in comments as alternatives, one line each (`#   key=value key=value`)."""
    return [line.split("#", 1)[1].split() for line in code.splitlines() if re.match(r"\s*#\s{3}\S+=", line)]


class DocumentedCommandsTest(unittest.TestCase):
    def test_every_trainer_command_names_its_versions(self) -> None:
        marked, unmarked = documented_blocks()
        self.assertEqual(unmarked, [], "a trainer command without a <!-- checked: trainer@version --> marker")
        trainers = {version.split("@")[0] for versions, _ in marked for version in versions}
        self.assertEqual(trainers, {"verl", "openrlhf", "slime", "trl"})

    def test_each_command_is_accepted_by_the_versions_it_names(self) -> None:
        marked, _ = documented_blocks()
        self.assertGreaterEqual(sum(len(versions) for versions, _ in marked), 10)
        for versions, code in marked:
            for version in versions:
                trainer, release = version.split("@")
                with self.subTest(version=version, block=code.splitlines()[0]):
                    self.assertIn(release, FACTS[trainer], f"no facts recorded for {version}")
                    getattr(self, f"check_{trainer}")(FACTS[trainer][release], code)

    def check_verl(self, facts: Dict[str, Any], code: str) -> None:
        words = command_words(code)
        self.assertEqual(words[:3], ["python", "-m", "verl.trainer.main_ppo"])
        command = dict(word.split("=", 1) for word in words[3:])
        for alternative in [[]] + commented_alternatives(code):
            self.check_verl_overrides(facts, {**command, **dict(word.split("=", 1) for word in alternative)})

    def check_verl_overrides(self, facts: Dict[str, Any], overrides: Dict[str, str]) -> None:
        for key in overrides:
            if key.startswith("+"):
                self.assertNotIn(key[1:], facts["schema_keys"], f"{key}: the key is in the schema, Hydra refuses + on it")
                self.assertTrue(any(key[1:] == read or key[1:].startswith(read + ".") for read in facts["read_outside_schema"]), f"{key}: accepted by Hydra but never read by verl")
            else:
                self.assertIn(key.split(".")[0], facts["top_level"], f"{key}: no such section (Hydra: not in struct)")
                self.assertIn(key, facts["schema_keys"], f"{key}: not in verl's config at this commit")
        name = overrides.get("custom_reward_function.name", "compute_score")
        path = overrides.get("custom_reward_function.path", "")
        module = groups_module if path == "pkg://rubricate_client.groups" else verl_module
        self.assertTrue(callable(getattr(module, name, None)), f"{module.__name__} has no {name}")
        self.assertTrue(path in ("pkg://rubricate_client.verl", "pkg://rubricate_client.groups") or os.path.exists(os.path.join(PROJECT_ROOT, path)), path)
        legacy = overrides.get("reward_model.use_reward_loop") == "False" or "reward_model.use_reward_loop" not in facts["schema_keys"]
        allowed = next(names for mode, names in facts["reward_managers"].items() if mode.startswith("legacy") == legacy)
        self.assertIn(overrides.get("reward_model.reward_manager", "naive"), allowed)
        if legacy:
            self.assertNotEqual(name, "compute_score_async", "legacy managers cannot use a coroutine function")

    def check_argparse(self, facts: Dict[str, Any], words: List[str]) -> None:
        flags = [word for word in words if word.startswith("--")]
        self.assertTrue(flags)
        for flag in flags:
            self.assertIn(flag, facts["flags"], f"{flag} is not a flag of this version (argparse: unrecognized arguments)")
            self.assertNotIn(flag, facts.get("absent", []))
        for flag, choices in facts.get("choices", {}).items():
            if flag in words:
                self.assertIn(words[words.index(flag) + 1], choices, flag)

    def check_openrlhf(self, facts: Dict[str, Any], code: str) -> None:
        words = command_words(code)
        self.assertEqual(words[:3], ["python", "-m", "openrlhf.cli.train_ppo_ray"])
        self.check_argparse(facts, words[3:])

    def check_slime(self, facts: Dict[str, Any], code: str) -> None:
        words = command_words(code)
        self.assertEqual(words[:2], ["python", "train.py"])
        self.check_argparse(facts, words[2:])

    def check_trl(self, facts: Dict[str, Any], code: str) -> None:
        calls = {node.func.id: [keyword.arg for keyword in node.keywords] for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("GRPOConfig", "GRPOTrainer")}
        self.assertEqual(set(calls), {"GRPOConfig", "GRPOTrainer"})
        for name, keywords in calls.items():
            for keyword in keywords:
                self.assertIn(keyword, facts[name], f"{name}({keyword}=...) is not accepted by this version")

    def test_the_checks_catch_what_the_old_docs_got_wrong(self) -> None:
        # The spellings of the previous round: reward.-prefixed verl keys, OpenRLHF flags of two eras mixed.
        with self.assertRaises(AssertionError):
            self.check_verl(FACTS["verl"]["b178a3c"], "python -m verl.trainer.main_ppo \\\n  reward.custom_reward_function.path=clients/python/rubricate_client/verl.py\n")
        with self.assertRaises(AssertionError):
            self.check_verl(FACTS["verl"]["b178a3c"], "python -m verl.trainer.main_ppo \\\n  +reward.custom_reward_function.reward_kwargs.base_url=http://h:8000\n")
        mixed = "python -m openrlhf.cli.train_ppo_ray \\\n  --prompt_data p.jsonl --reward.remote_url http://h:8000/get_reward --advantage_estimator group_norm\n"
        for release in ("v0.9.0", "v0.10.4", "v0.11.0"):
            with self.subTest(release=release), self.assertRaises(AssertionError):
                self.check_openrlhf(FACTS["openrlhf"][release], mixed)


if __name__ == "__main__":
    unittest.main()
