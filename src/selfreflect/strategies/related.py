"""Strategies from related work: semantic clusters with frequencies, SaySelf, verbalised confidence.

- ``cluster_and_verbalize``: fresh answers clustered by meaning, the clusters stated from a
  template with their shares ("most likely X (about 60 %), could also be Y (about 30 %)"),
  no model call; ``cluster_and_verbalize_llm``: the summariser writes the summary from them.
- ``sayself_rationale`` (SaySelf, arXiv 2405.20974): from the clusters, the model writes its
  answer, a self-reflective rationale naming what it is unsure about, and a confidence.
- ``verbalized_confidence``: the greedy answer followed by a stated confidence percentage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from selfreflect.strategies.clustering import Cluster, cluster_answers, resolve_embedder
from selfreflect.strategies.text import prompt, user_chat

if TYPE_CHECKING:
    from selfreflect.strategies.context import Batch


def stated(clusters: Sequence[Cluster], min_share: float) -> list[tuple[str, int]]:
    """(answer, percent) of the largest cluster and of every other one of ``min_share`` or more."""
    total = sum(c.size for c in clusters)
    return [
        (c.text, round(100 * c.size / total))
        for i, c in enumerate(clusters)
        if i == 0 or c.size / total >= min_share
    ]


def verbalize(options: Sequence[tuple[str, int]]) -> str:
    """The template summary of (answer, percent) options: most likely the first, could also
    be each further one."""
    parts = [
        prompt("cluster_verbalize_more" if i else "cluster_verbalize_first", answer=a, percent=p)
        for i, (a, p) in enumerate(options)
    ]
    return prompt("cluster_verbalize_separator").join(parts)


def cluster_lines(clusters: Sequence[Cluster], min_share: float) -> str:
    return "\n".join(
        prompt("cluster_line", answer=a, percent=p) for a, p in stated(clusters, min_share)
    )


def fresh_clusters(batch: Batch) -> dict[int, tuple[int, list[Cluster]]]:
    """(number of answers, clusters) by row; rows whose fresh answers are all empty fail."""
    fresh = batch.fresh_answers()
    settings = batch.settings["cluster"]
    embedder = batch.notes["embedder"] = resolve_embedder(settings["embedder"])
    groups = cluster_answers(list(fresh.values()), embedder, settings["threshold"])
    out = {}
    for (row, answers), clusters in zip(fresh.items(), groups, strict=True):
        if clusters:
            out[row] = (len(answers), clusters)
        else:
            batch.fail(row, "every fresh answer is empty")
    return out


def cluster_and_verbalize(batch: Batch) -> dict[int, str]:
    min_share = batch.settings["cluster"]["min_share"]
    return {r: verbalize(stated(c, min_share)) for r, (_, c) in fresh_clusters(batch).items()}


def _cluster_prompts(batch: Batch, key: str) -> dict[int, str]:
    min_share = batch.settings["cluster"]["min_share"]
    return {
        r: prompt(key, question=batch.questions[r], n=n, clusters=cluster_lines(c, min_share))
        for r, (n, c) in fresh_clusters(batch).items()
    }


def cluster_and_verbalize_llm(batch: Batch) -> dict[int, str]:
    chats = _cluster_prompts(batch, "cluster_and_verbalize_llm")
    return batch.summarize({r: user_chat(text) for r, text in chats.items()})


def sayself_rationale(batch: Batch) -> dict[int, str]:
    chats = _cluster_prompts(batch, "sayself_rationale")
    return batch.summarize({r: user_chat(text) for r, text in chats.items()})


def verbalized_confidence(batch: Batch) -> dict[int, str]:
    rows = batch.rows()
    chats = {r: user_chat(prompt("verbalized_confidence", question=q)) for r, q in rows.items()}
    return batch.summarize(chats)
