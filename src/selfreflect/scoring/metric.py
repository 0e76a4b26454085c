"""The SelfReflect score (docs/protocol.md §5), whole, as pure math.

For every task (one target token of one masked word of one held-out answer) the judge gives two
next-token logit vectors over the whole vocabulary: one with the summary as context, one with
the reference context (the conditioning answers). Each becomes a distribution
``softmax(logits / T)`` at a post-hoc temperature ``T`` (5 in the paper); the task's distance is
their total variation ``0.5 * sum_v |p(v) - q(v)|`` (the paper's 1-Wasserstein distance under
the 0/1 ground metric). A summary's score for a question is the mean distance over all its
tasks, every target token of every masked word of every held-out answer counting once: 0 is a
perfect summary, 1 the worst.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def distributions(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """``softmax(logits / temperature)`` in float32; (n, V) -> (n, V).

    Log-probabilities work as well as logits: a per-row shift does not change the result.
    """
    return torch.softmax(logits.float() / temperature, dim=-1)


def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Total variation distance between the rows of two distributions; (n, V), (n, V) -> (n,)."""
    return 0.5 * (p - q).abs().sum(dim=-1)


def task_distances(
    summary_logits: torch.Tensor, reference_logits: torch.Tensor, temperature: float
) -> torch.Tensor:
    """The distance of each task; (n, V), (n, V) -> (n,)."""
    p = distributions(summary_logits, temperature)
    return total_variation(p, distributions(reference_logits, temperature))


def top_predictions(p: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``k`` most likely tokens of each row and their probabilities; (n, V) -> (n, k) twice."""
    probs, tokens = p.topk(k, dim=-1)
    return tokens, probs


def score(distances: Sequence[float]) -> float:
    """A question's score: the mean distance over its tasks; (n,) -> scalar (n > 0)."""
    return sum(distances) / len(distances)
