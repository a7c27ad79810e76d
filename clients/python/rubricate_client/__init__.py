"""Python client for the rubricate reward service (standard library only).

* ``RubricateClient`` / ``AsyncRubricateClient``: ``score``, ``score_batch``, ``score_group``.
* ``rubricate_client.verl``: verl custom reward functions (naive, dapo, batch, prime, reward loop).
* ``rubricate_client.trl``: TRL GRPOTrainer reward functions (async and sync).
* ``rubricate_client.verifiers``: a verifiers (legacy ``Rubric``) reward function; ``rubricate_judge``
  (a top-level module) is the verifiers v1 judge plugin.
* ``rubricate_client.groups``: group rewards with shaping (TRL, verl batch, slime, OpenRLHF), RuscaRL scaffolding, rubric rewards.
* ``rubricate_client.carr``: CaRR's reward (``/carr/evaluate``, C-GRPO groups) for slime and verl.

See docs/rl-integration.md for each trainer.
"""

from .client import AsyncRubricateClient, RubricateAbort, RubricateClient, RubricateConfigError, RubricateError, build_item, rubric_value

__all__ = ["AsyncRubricateClient", "RubricateAbort", "RubricateClient", "RubricateConfigError", "RubricateError", "build_item", "rubric_value"]
__version__ = "0.1.0"
