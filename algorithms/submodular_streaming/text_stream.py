"""A real text-derived stream: the speeches of tinyshakespeare as items, in the order of the text.

Each speech (a block "Speaker:\\n lines", blank-line separated, at least `min_words` words) is an
item. Topics come from a topic model fitted here: TF-IDF (English stop words dropped) and an NMF
with `num_topics` components; item i covers topic t when its NMF weight on t is at least
`share` of its largest weight (so 1 to a few topics each). The consumption probability models
reading effort: p_i = max_prob (0.05 + 0.95 (1 - r_i)), r_i the length rank of the speech in
[0, 1], so short speeches are read more often. Visits fall at seeded uniformly random times.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from optiforge.algorithms.submodular_streaming.stream import Stream, random_visits


def speeches(path: Path, min_words: int) -> list[str]:
    """The speeches of the file (speaker line dropped) with at least `min_words` words."""
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    texts = [block.split("\n", 1)[1] if "\n" in block else "" for block in blocks]
    return [text for text in texts if len(text.split()) >= min_words]


def shakespeare_stream(
    path: Path,
    num_topics: int = 50,
    num_visits: int = 50,
    seed: int = 0,
    min_words: int = 8,
    share: float = 0.4,
    max_prob: float = 0.1,
) -> Stream:
    """The speeches of `path` as a stream with NMF topics (see the module docstring)."""
    from sklearn.decomposition import NMF
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1], got {share!r}")
    if not 0.0 < max_prob <= 1.0:
        raise ValueError(f"max_prob must be in (0, 1], got {max_prob!r}")
    texts = speeches(path, min_words)
    tfidf = TfidfVectorizer(stop_words="english", max_features=5000, min_df=3).fit_transform(texts)
    weights = NMF(num_topics, init="nndsvd", max_iter=200, random_state=seed).fit_transform(tfidf)
    top = weights.max(axis=1, keepdims=True)
    topics = (weights >= share * top) & (top > 0)
    keep = topics.any(axis=1)
    lengths = np.array([len(text.split()) for text in texts])[keep]
    rank = np.argsort(np.argsort(lengths, kind="stable"), kind="stable") / max(len(lengths) - 1, 1)
    probs = max_prob * (0.05 + 0.95 * (1.0 - rank))
    return Stream(probs, topics[keep], random_visits(len(probs), num_visits, seed))
