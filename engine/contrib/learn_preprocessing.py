"""``tf.contrib.learn.preprocessing``' text processing (TF 1.x ``learn/python/learn/
preprocessing/text.py`` and ``categorical_vocabulary.py``): ``VocabularyProcessor`` maps
documents to fixed-length rows of word ids, ``CategoricalVocabulary`` is its vocabulary, and
``tokenizer`` splits text as TF's regular expression does. Saved and restored with pickle, as TF
(a file another program wrote is read with the same trust as TF gives it)."""

from __future__ import annotations

import collections
import pickle
import re

import numpy as np

from ..platform import gfile

TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|[\'\w\-]+", re.UNICODE)


def tokenizer(iterator):
    """Each string's tokens: runs of capitals, capitalized words before another capital, and
    runs of word characters, apostrophes and hyphens."""
    for value in iterator:
        yield TOKENIZER_RE.findall(value)


class CategoricalVocabulary:
    """Ids for categories in order of first sight; id 0 is the unknown token (and what a frozen
    vocabulary gives an unseen category)."""

    def __init__(self, unknown_token="<UNK>", support_reverse=True):
        self._unknown_token = unknown_token
        self._mapping = {unknown_token: 0}
        self._support_reverse = support_reverse
        if support_reverse:
            self._reverse_mapping = [unknown_token]
        self._freq = collections.defaultdict(int)
        self._freeze = False

    def __len__(self):
        return len(self._mapping)

    def freeze(self, freeze=True):
        self._freeze = freeze

    def get(self, category):
        """The category's id, a new one unless the vocabulary is frozen (then 0)."""
        if category not in self._mapping:
            if self._freeze:
                return 0
            self._mapping[category] = len(self._mapping)
            if self._support_reverse:
                self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category, count=1):
        """Count ``category`` (given an id if new)."""
        if self.get(category) <= 0:
            return
        self._freq[category] += count

    def trim(self, min_frequency, max_frequency=-1):
        """Keep the categories seen more than ``min_frequency`` times (and fewer than
        ``max_frequency`` when it is positive), renumbered by falling count, ties by name."""
        freq = sorted(sorted(self._freq.items(), key=lambda x: (isinstance(x[0], str), x[0])),
                      key=lambda x: x[1], reverse=True)
        self._mapping = {self._unknown_token: 0}
        if self._support_reverse:
            self._reverse_mapping = [self._unknown_token]
        idx = 1
        for category, count in freq:
            if max_frequency > 0 and count >= max_frequency:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = idx
            idx += 1
            if self._support_reverse:
                self._reverse_mapping.append(category)
        self._freq = dict(freq[:idx - 1])

    def reverse(self, class_id):
        if not self._support_reverse:
            raise ValueError("This vocabulary wasn't initialized with support_reverse to support "
                             "reverse() function.")
        return self._reverse_mapping[class_id]


class VocabularyProcessor:
    """Documents as rows of ``max_document_length`` int64 word ids (0-padded, cut at the
    length); ``fit`` builds the vocabulary (trimmed to words seen more than ``min_frequency``
    times), then freezes it."""

    def __init__(self, max_document_length, min_frequency=0, vocabulary=None,
                 tokenizer_fn=None):
        self.max_document_length = max_document_length
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn if tokenizer_fn else tokenizer

    def fit(self, raw_documents, unused_y=None):
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents, unused_y=None):
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents):
        """A generator of one id row per document."""
        for tokens in self._tokenizer(raw_documents):
            word_ids = np.zeros(self.max_document_length, np.int64)
            for idx, token in enumerate(tokens):
                if idx >= self.max_document_length:
                    break
                word_ids[idx] = self.vocabulary_.get(token)
            yield word_ids

    def reverse(self, documents):
        """Id rows back to space-joined words (padding as the unknown token)."""
        for item in documents:
            yield " ".join(self.vocabulary_.reverse(class_id) for class_id in item)

    def save(self, filename):
        with gfile.GFile(filename, "wb") as f:
            f.write(pickle.dumps(self))

    @classmethod
    def restore(cls, filename):
        with gfile.GFile(filename, "rb") as f:
            return pickle.loads(f.read())
