"""TF's session option messages: ``ConfigProto``, ``GPUOptions``, ``GraphOptions``,
``OptimizerOptions``, ``RunOptions`` and ``RunMetadata``.

They behave like the protobuf messages user code builds and edits (keyword construction,
``config.gpu_options.allow_growth = True``, a clear error for a field that does not exist) and
change nothing about the numbers: this engine runs on the CPU of the process, so devices,
placement, GPU memory and tracing have nothing to act on. One field is read:
``ConfigProto.intra_op_parallelism_threads`` (the BLAS thread count a session uses; 0 leaves the
engine's default). ``RunMetadata`` stays empty.
"""

from __future__ import annotations


class Message:
    """A protobuf-like message: fixed fields with defaults; nested messages made on access."""

    _FIELDS: dict = {}

    def __init__(self, **fields):
        for name, default in self._FIELDS.items():
            object.__setattr__(self, name, default() if callable(default) else default)
        for name, value in fields.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __repr__(self):
        changed = {k: v for k, v in vars(self).items() if v != type(self)._default(k)}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    @classmethod
    def _default(cls, name):
        default = cls._FIELDS[name]
        return default() if callable(default) else default

    def CopyFrom(self, other):  # noqa: N802 (protobuf's name)
        for name in self._FIELDS:
            object.__setattr__(self, name, getattr(other, name))


class GPUOptions(Message):
    _FIELDS = {"per_process_gpu_memory_fraction": 0.0, "allow_growth": False,
               "allocator_type": "", "deferred_deletion_bytes": 0, "visible_device_list": "",
               "polling_active_delay_usecs": 0, "polling_inactive_delay_msecs": 0,
               "force_gpu_compatible": False, "experimental": None}


class OptimizerOptions(Message):
    L1, L0 = 0, -1
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2
    _FIELDS = {"do_common_subexpression_elimination": False, "do_constant_folding": False,
               "max_folded_constant_in_bytes": 0, "do_function_inlining": False,
               "opt_level": 0, "global_jit_level": 0}


class GraphOptions(Message):
    _FIELDS = {"enable_recv_scheduling": False, "optimizer_options": OptimizerOptions,
               "build_cost_model": 0, "build_cost_model_after": 0, "infer_shapes": False,
               "place_pruned_graph": False, "enable_bfloat16_sendrecv": False,
               "timeline_step": 0, "rewrite_options": None}


class ConfigProto(Message):
    _FIELDS = {"device_count": dict, "intra_op_parallelism_threads": 0,
               "inter_op_parallelism_threads": 0, "use_per_session_threads": False,
               "session_inter_op_thread_pool": list, "placement_period": 0,
               "device_filters": list, "gpu_options": GPUOptions, "allow_soft_placement": False,
               "log_device_placement": False, "graph_options": GraphOptions,
               "operation_timeout_in_ms": 0, "rpc_options": None, "cluster_def": None,
               "isolate_session_state": False, "share_cluster_devices_in_session": False,
               "experimental": None}


class RunOptions(Message):
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _FIELDS = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0,
               "output_partition_graphs": False, "debug_options": None,
               "report_tensor_allocations_upon_oom": False, "experimental": None}


class RunMetadata(Message):
    _FIELDS = {"step_stats": None, "cost_graph": None, "partition_graphs": list,
               "function_graphs": list}

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        """The wire form of an empty message (what a session run fills here is nothing)."""
        return b""
