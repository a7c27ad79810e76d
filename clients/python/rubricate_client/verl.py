"""verl custom reward functions backed by ``rubricate serve``.

verl does not pass the prompt to reward functions, so the dataset carries it:
``extra_info = {"prompt": ..., "rubric": {...}}`` (or ``"rubric_id"``; ``"reference"`` is
optional). A rubric in ``reward_model.ground_truth`` is used when ``extra_info`` has none.

Which function for which reward manager (``custom_reward_function.name``):

* ``compute_score`` (verl's default name): one sample per call, synchronous: the ``naive``,
  ``dapo`` and ``prime`` managers (its dict also reads as ``result[0]``, as prime reads it),
  or the reward loop (run in its default thread pool: a few samples at a time).
* ``compute_score_async``: one sample per call, a coroutine: the reward loop
  (``use_reward_loop``, ``rate_limited`` included), which awaits every sample of the step at
  once. The fastest.
* ``compute_score_batch``: the whole batch in one call: the ``batch`` manager.
* ``compute_score_prime``: the same as ``compute_score`` as a plain float.

The dict functions return the same keys every time: ``score`` (a float), ``reward_failed``
(1.0 when ``score`` is a fallback) and ``criteria_met_fraction``.

Failures never become a number unless you ask for one: configuration errors (wrong token or
URL, invalid rubric, server not running), a sample the server could not grade (unless
``reward_kwargs.fallback`` is set: then it gets that number, flagged with
``reward_failed = 1.0`` and logged) and a call past ``time_budget`` raise ``RubricateAbort``,
a ``BaseException``: verl's ``prime`` and ``rate_limited`` managers turn every ``Exception``
into a reward of 0.0, and both give up on a call after 300 s (so ``time_budget``, 270 s by
default, keeps every call, retries included, inside that). Settings come from
``reward_kwargs`` (``base_url``, ``token``, ``timeout``, ``fallback``, ``max_retry_time``,
``connect_retry_time``, ``time_budget``, ``max_concurrency``) or the ``RUBRICATE_URL`` /
``RUBRICATE_TOKEN`` environment variables.

This file works however verl loads it: imported as ``rubricate_client.verl`` (installed, on
``PYTHONPATH``, or ``path=pkg://rubricate_client.verl``), or loaded from its file path
(``path=.../rubricate_client/verl.py``), where verl runs it as a top-level module with no
package: it then makes the package next to it importable and takes the functions from there,
so they keep an importable home: verl's prime manager, its ``remote`` reward manager and
``launch_reward_fn_async`` pickle them into other processes, which import
``rubricate_client._verl`` by name: install the package on every worker.
"""

import os
import sys

if __package__:
    from ._verl import (
        DEFAULT_TIME_BUDGET,
        SCORE_KEYS,
        RubricateAbort,
        compute_score,
        compute_score_async,
        compute_score_batch,
        compute_score_prime,
    )
else:  # loaded from the file path: no parent package
    import importlib.util

    _package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if importlib.util.find_spec("rubricate_client") is None:
        sys.path.append(_package_root)
    from rubricate_client._verl import (  # noqa: E402
        DEFAULT_TIME_BUDGET,
        SCORE_KEYS,
        RubricateAbort,
        compute_score,
        compute_score_async,
        compute_score_batch,
        compute_score_prime,
    )

__all__ = [
    "DEFAULT_TIME_BUDGET",
    "SCORE_KEYS",
    "RubricateAbort",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "compute_score_prime",
]
