"""The text-derived stream: speeches as items, NMF topics, probabilities from length."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from optiforge.algorithms.submodular_streaming import shakespeare_stream

WORDS = ["crown king throne royal", "love heart sweet kiss", "sword battle blood war"]


def test_speeches_become_items_with_topics_and_probabilities(tmp_path: Path) -> None:
    """Every kept speech covers a topic, p_i lies in (0, max_prob], shorter means likelier."""
    rng = np.random.default_rng(0)
    blocks = []
    for i in range(60):
        words = WORDS[i % 3].split() * int(rng.integers(1, 5))
        blocks.append(f"Speaker {i}:\n" + " ".join(rng.permutation(words)))
    path = tmp_path / "play.txt"
    path.write_text("\n\n".join(blocks))
    stream = shakespeare_stream(path, num_topics=3, num_visits=4, seed=0, min_words=4)
    assert len(stream) == 60 and stream.topics.any(axis=1).all()
    assert np.all((stream.probs > 0) & (stream.probs <= 0.1))
    lengths = np.array([len(b.split("\n", 1)[1].split()) for b in blocks])
    assert stream.probs[np.argmin(lengths)] >= stream.probs[np.argmax(lengths)]
    again = shakespeare_stream(path, num_topics=3, num_visits=4, seed=0, min_words=4)
    assert np.array_equal(stream.topics, again.topics) and len(stream.visits) == 4
