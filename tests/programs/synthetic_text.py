"""The stand-in for word2vec's text8 corpus: a synthetic corpus whose words come in topics,
and the tutorials' skip-gram ``generate_batch``, shared by word2vec_nce.py and its test."""

import collections
import random

import numpy as np

VOCAB, TOPIC, SKIP_WINDOW, NUM_SKIPS = 40, 8, 1, 2


def corpus(n_sentences=300, length=6, seed=0):
    """Word ids: each sentence draws ``length`` words of one topic."""
    rng = np.random.RandomState(seed)
    words = []
    for _ in range(n_sentences):
        topic = rng.randint(0, VOCAB // TOPIC)
        words.extend(topic * TOPIC + rng.randint(0, TOPIC, length))
    return words


def batches(data, batch_size, seed=1):
    """The tutorial's generate_batch: a sliding window; ``NUM_SKIPS`` context words of each
    centre word, picked by a seeded random.sample."""
    picker = random.Random(seed)
    span = 2 * SKIP_WINDOW + 1
    index = 0
    window = collections.deque(maxlen=span)
    while True:
        batch = np.ndarray(shape=(batch_size,), dtype=np.int32)
        labels = np.ndarray(shape=(batch_size, 1), dtype=np.int32)
        for i in range(batch_size // NUM_SKIPS):
            while len(window) < span:
                window.append(data[index])
                index = (index + 1) % len(data)
            context = [w for w in range(span) if w != SKIP_WINDOW]
            for j, w in enumerate(picker.sample(context, NUM_SKIPS)):
                batch[i * NUM_SKIPS + j] = window[SKIP_WINDOW]
                labels[i * NUM_SKIPS + j, 0] = window[w]
            window.append(data[index])
            index = (index + 1) % len(data)
        yield batch, labels
