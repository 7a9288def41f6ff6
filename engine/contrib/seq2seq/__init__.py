"""``tf.contrib.seq2seq`` as TF 1.15's contrib: ``sequence_loss`` (``loss``), the decoders'
helpers (``helper``), ``Decoder`` and ``dynamic_decode`` (``decoder``), ``BasicDecoder``
(``basic_decoder``), ``BeamSearchDecoder`` with ``tile_batch`` (``beam_search_decoder``) and
``gather_tree`` (the op, in ``ops/beam_search_ops``), ``AttentionWrapper`` with
``BahdanauAttention`` and ``LuongAttention`` (``attention_wrapper``), the monotonic mechanisms
with ``hardmax``, ``safe_cumprod`` and ``monotonic_attention`` (``monotonic_attention``)."""

from ...ops.beam_search_ops import gather_tree  # noqa: F401
from .attention_wrapper import (  # noqa: F401
    AttentionMechanism,
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    LuongAttention,
)
from .basic_decoder import BasicDecoder, BasicDecoderOutput  # noqa: F401
from .beam_search_decoder import (  # noqa: F401
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput,
    tile_batch,
)
from .decoder import Decoder, dynamic_decode  # noqa: F401
from .helper import (  # noqa: F401
    CustomHelper,
    GreedyEmbeddingHelper,
    Helper,
    InferenceHelper,
    SampleEmbeddingHelper,
    ScheduledEmbeddingTrainingHelper,
    ScheduledOutputTrainingHelper,
    TrainingHelper,
)
from .loss import sequence_loss  # noqa: F401
from .monotonic_attention import (  # noqa: F401
    BahdanauMonotonicAttention,
    LuongMonotonicAttention,
    hardmax,
    monotonic_attention,
    safe_cumprod,
)
