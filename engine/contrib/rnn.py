"""``tf.contrib.rnn``: the cells of ``tf.nn.rnn_cell``, the sequence functions TF1 exported
here too (``static_rnn``, ``static_bidirectional_rnn``), ``OutputProjectionWrapper`` and
``EmbeddingWrapper``."""

from ..nn.recurrent import static_bidirectional_rnn, static_rnn  # noqa: F401
from ..nn.rnn_cell import (  # noqa: F401
    BasicLSTMCell,
    BasicRNNCell,
    DropoutWrapper,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    RNNCell,
)
from .rnn_wrappers import EmbeddingWrapper, OutputProjectionWrapper  # noqa: F401
