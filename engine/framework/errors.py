"""Engine errors, named as TF names them so that user code catching them keeps working."""


class OpError(Exception):
    """Base of run-time errors raised while a plan executes (``tf.errors.OpError``)."""

    def __init__(self, message="", node_def=None, op=None):
        super().__init__(message)
        self.message = message
        self.node_def = node_def
        self.op = op


class CancelledError(OpError):
    """An operation was cancelled (an enqueue into a closed queue)."""


class DeadlineExceededError(OpError):
    """An operation would have waited past the session's timeout (``operation_timeout_in_ms``
    or ``RunOptions.timeout_in_ms``)."""


class FailedPreconditionError(OpError):
    """A variable was read before it was initialized."""


class InvalidArgumentError(OpError, ValueError):
    """A value fed or computed at run time does not fit (shape, dtype, domain)."""


class NotFoundError(OpError):
    """Something named does not exist."""


class AlreadyExistsError(OpError):
    """Something to be made exists already (a file a copy would overwrite)."""


class OutOfRangeError(OpError):
    """An iteration went past its end."""


class ResourceExhaustedError(OpError):
    """Memory or another resource ran out."""


class UnimplementedError(OpError):
    """The operation is not supported."""


class InternalError(OpError):
    """An invariant of the engine broke."""


class DataLossError(OpError):
    """A file holds data that cannot be read back (truncated or corrupted)."""


class ShapeError(ValueError):
    """Static shapes do not fit at graph-build time; the message names the op and both shapes."""
