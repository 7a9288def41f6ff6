"""``tf.keras``: the parts of Keras this engine offers: ``keras.optimizers`` (Keras 3, eager
only), ``keras.backend.learning_phase`` (the training switch of TF1 graphs) and
``keras.utils`` (``get_file``, ``to_categorical``)."""

from . import backend, optimizers, utils
