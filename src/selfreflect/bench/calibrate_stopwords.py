"""Calibrate the ``wordfreq`` stopword policy's Zipf threshold; prints the cutoff.

The authors mark a word as a stopword when its mean TF-IDF over the 20 Newsgroups corpus
exceeds 0.012 (scikit-learn ``TfidfVectorizer`` defaults). That corpus cannot be downloaded
here, so this command rebuilds the rule on a synthetic corpus of the same size (18,846
documents, 3 % empty, log-normal lengths) whose tokens are drawn from wordfreq's English unigram
distribution, fits ``TfidfVectorizer`` and prints the Zipf frequency cutoff that best separates
the words above the threshold from the others (fewest disagreements).
``selfreflect.scoring.stopwords.ZIPF_THRESHOLD`` is set from it.

    selfreflect bench calibrate-stopwords
    selfreflect bench calibrate-stopwords --median-length 56
"""

from __future__ import annotations

from dataclasses import dataclass

import click
import numpy as np


def synthetic_corpus(
    words: list[str],
    weights: np.ndarray,
    documents: int,
    median_length: float,
    sigma: float,
    empty: float,
    seed: int,
) -> list[str]:
    """Documents of words drawn i.i.d. from ``weights``, log-normal lengths, some empty."""
    rng = np.random.default_rng(seed)
    lengths = np.rint(rng.lognormal(np.log(median_length), sigma, documents)).astype(int)
    lengths[rng.random(documents) < empty] = 0
    tokens = rng.choice(len(words), size=int(lengths.sum()), p=weights / weights.sum())
    vocabulary = np.asarray(words, dtype=object)
    bounds = np.cumsum(lengths)[:-1]
    return [" ".join(doc) for doc in np.split(vocabulary[tokens], bounds)]


@dataclass(frozen=True)
class Corpus:
    """The synthetic corpus's shape: documents, length distribution, vocabulary, seed."""

    documents: int
    median_length: float
    sigma: float
    empty: float
    vocabulary: int
    seed: int


def calibrate(corpus: Corpus, threshold: float) -> None:
    """Fit TF-IDF on the synthetic corpus; print the Zipf cutoff that best matches it."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from wordfreq import top_n_list, word_frequency, zipf_frequency

    # wordfreq folds digits into placeholders such as "00": not words, left out
    words = [w for w in top_n_list("en", corpus.vocabulary) if not any(c.isdigit() for c in w)]
    weights = np.array([word_frequency(w, "en") for w in words])
    documents = synthetic_corpus(
        words,
        weights,
        corpus.documents,
        corpus.median_length,
        corpus.sigma,
        corpus.empty,
        corpus.seed,
    )
    vectorizer = TfidfVectorizer()
    mean = np.asarray(vectorizer.fit_transform(documents).mean(axis=0)).ravel()
    vocabulary = vectorizer.get_feature_names_out()
    zipf = np.array([zipf_frequency(w, "en") for w in vocabulary])
    above = mean > threshold
    candidates = np.unique(zipf[zipf >= zipf[above].min()])
    errors = [int((above & (zipf < c)).sum() + (~above & (zipf >= c)).sum()) for c in candidates]
    cutoff = candidates[int(np.argmin(errors))]
    disagree = vocabulary[above != (zipf >= cutoff)]
    print(
        f"{above.sum()} words have mean TF-IDF > {threshold} ({corpus.documents} documents, "
        f"median length {corpus.median_length:g}, sigma {corpus.sigma:g}); Zipf >= {cutoff:.2f} "
        f"selects {(zipf >= cutoff).sum()} words and disagrees on {len(disagree)}: "
        f"{', '.join(map(str, disagree))}"
    )
    print(f"cutoff: Zipf >= {cutoff:.2f}")


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--documents", type=int, default=18846, show_default=True)
@click.option(
    "--median-length", type=float, default=90.0, show_default=True, help="tokens per document"
)
@click.option(
    "--sigma", type=float, default=1.0, show_default=True, help="log-normal shape of lengths"
)
@click.option(
    "--empty", type=float, default=0.03, show_default=True, help="share of empty documents"
)
@click.option(
    "--vocabulary", type=int, default=50000, show_default=True, help="most frequent words used"
)
@click.option(
    "--threshold", type=float, default=0.012, show_default=True, help="mean TF-IDF cutoff"
)
@click.option("--seed", type=int, default=0, show_default=True)
def calibrate_stopwords(threshold: float, **corpus) -> None:
    calibrate(Corpus(**corpus), threshold)
