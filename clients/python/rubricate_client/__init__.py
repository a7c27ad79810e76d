"""Python client for the rubricate reward service (standard library only).

* ``RubricateClient`` / ``AsyncRubricateClient``: ``score``, ``score_batch``, ``score_group``.
* ``rubricate_client.verl.compute_score``: a verl custom reward function.
* ``rubricate_client.trl.make_reward_function``: a TRL GRPOTrainer reward function.

See docs/rl-integration.md for each trainer.
"""

from .client import AsyncRubricateClient, RubricateClient, RubricateError, build_item

__all__ = ["AsyncRubricateClient", "RubricateClient", "RubricateError", "build_item"]
__version__ = "0.1.0"
