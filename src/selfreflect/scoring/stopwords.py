"""Stopword policies for choosing which words of a test answer get masked (docs/protocol.md §5).

The authors mark a word as a stopword when its mean TF-IDF over the 20 Newsgroups corpus
exceeds 0.012, after stripping surrounding punctuation/whitespace and lower-casing; words
outside that corpus' vocabulary are kept. The vocabulary of scikit-learn's ``TfidfVectorizer``
only holds tokens of two or more word characters, so single characters (``a``, ``I``, ``5``)
and words with inner punctuation (``don't``, ``U.S``) are unknown there and always kept.

The corpus cannot be downloaded here, so the ``wordfreq`` policy uses wordfreq's offline
English Zipf frequencies instead: a word (same normalisation, same ``\\w\\w+`` shape rule) is a
stopword when its Zipf frequency is at least :data:`ZIPF_THRESHOLD`. The threshold was
calibrated by rebuilding the authors' rule on a synthetic corpus of 18,846 documents (20
Newsgroups' size, log-normal lengths with median 90 tokens) sampled from wordfreq's unigram
distribution and fitting scikit-learn's ``TfidfVectorizer`` to it: the words whose mean TF-IDF
exceeds 0.012 are the most frequent ones, down to about the Zipf value used here
(``selfreflect bench calibrate-stopwords`` prints the cutoff; docs/performance.md, "Stopword
threshold").
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Callable
from pathlib import Path

from selfreflect.errors import InputError

ZIPF_THRESHOLD = 6.3
_STRIP = string.whitespace + string.punctuation
_VOCAB_WORD = re.compile(r"\w\w+")

IsStopword = Callable[[str], bool]


def normalize(word: str) -> str:
    """The authors' preprocessing: strip surrounding whitespace/punctuation, lower-case."""
    return word.strip(_STRIP).lower()


def _never(word: str) -> bool:
    return False


def _wordfreq(word: str) -> bool:
    from wordfreq import zipf_frequency

    key = normalize(word)
    return bool(_VOCAB_WORD.fullmatch(key)) and zipf_frequency(key, "en") >= ZIPF_THRESHOLD


def _word_list(path: Path) -> IsStopword:
    """Stopwords from a file: one word per line, ``#`` starts a comment line."""
    if not path.is_file():
        raise InputError(f"{path}: stopword list not found")
    lines = path.read_text(encoding="utf-8").splitlines()
    words = {normalize(line) for line in lines if line.strip() and not line.startswith("#")}
    return lambda word: normalize(word) in words


BUILT_IN: dict[str, IsStopword] = {"wordfreq": _wordfreq, "none": _never}


def stopword_policy(policy: str | os.PathLike) -> IsStopword:
    """``wordfreq`` (default), ``none`` (mask every word) or the path of a word-list file."""
    if policy in BUILT_IN:
        return BUILT_IN[policy]
    return _word_list(Path(policy))


def masked_positions(words: list[str], is_stopword: IsStopword) -> list[int]:
    """Indices of the words to mask: the non-stopwords, or all words if all are stopwords."""
    keep = [i for i, word in enumerate(words) if not is_stopword(word)]
    return keep or list(range(len(words)))
