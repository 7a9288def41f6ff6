"""``tf.estimator.RunConfig``: where and how often an Estimator saves, logs and seeds."""

from __future__ import annotations

_DEFAULT_CHECKPOINT_SECS = 600


class RunConfig:
    """TF's fields and defaults: checkpoints every 600 s unless ``save_checkpoints_steps`` is
    given (not both), ``keep_checkpoint_max`` of them; the loss logged every
    ``log_step_count_steps``; ``tf_random_seed`` as the graph seed of every graph the Estimator
    builds. Distribution settings are accepted and ignored (one process here)."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs="default",
                 session_config=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200):
        if save_checkpoints_secs == "default":
            save_checkpoints_secs = None if save_checkpoints_steps is not None \
                else _DEFAULT_CHECKPOINT_SECS
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_secs and "
                             "save_checkpoints_steps.")
        for name, value in [("save_checkpoints_steps", save_checkpoints_steps),
                            ("log_step_count_steps", log_step_count_steps),
                            ("save_summary_steps", save_summary_steps),
                            ("keep_checkpoint_max", keep_checkpoint_max)]:
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be a non-negative integer or None, got {value!r}")
        self._fields = dict(
            model_dir=model_dir, tf_random_seed=tf_random_seed,
            save_summary_steps=save_summary_steps, save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps)

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(name)

    def replace(self, **kwargs):
        """A copy with some fields changed (TF's way to change a RunConfig)."""
        unknown = set(kwargs) - set(self._fields)
        if unknown:
            raise ValueError(f"RunConfig.replace: unknown fields {sorted(unknown)}")
        fields = {**self._fields, **kwargs}
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            fields["save_checkpoints_secs"] = None if kwargs["save_checkpoints_steps"] \
                is not None else _DEFAULT_CHECKPOINT_SECS
        return RunConfig(**fields)

    is_chief = True
    num_worker_replicas = 1
    num_ps_replicas = 0
    task_type = "worker"
    task_id = 0
    cluster_spec = None
    master = ""
    evaluation_master = ""
    global_id_in_cluster = 0
    train_distribute = None
    eval_distribute = None
    device_fn = None

    def __repr__(self):
        return "RunConfig(" + ", ".join(f"{k}={v!r}" for k, v in self._fields.items()) + ")"
