"""``tf.contrib.learn``: ``RunConfig`` (``contrib.learn``'s arguments accepted; those about
devices and clusters change nothing here, as ``tf.device``) and ``preprocessing``
(``VocabularyProcessor``, in ``contrib/learn_preprocessing``)."""

from __future__ import annotations

from ..estimator.run_config import RunConfig as _CoreRunConfig
from . import learn_preprocessing as preprocessing  # noqa: F401


class RunConfig(_CoreRunConfig):
    """``tf.contrib.learn.RunConfig``: the core RunConfig's arguments, and ``master``,
    ``num_cores``, ``log_device_placement``, ``gpu_memory_fraction``, ``evaluation_master``
    accepted and unused."""

    def __init__(self, master=None, num_cores=0, log_device_placement=False,
                 gpu_memory_fraction=1, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_secs="default", save_checkpoints_steps=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, evaluation_master="", model_dir=None,
                 session_config=None):
        super().__init__(model_dir=model_dir, tf_random_seed=tf_random_seed,
                         save_summary_steps=save_summary_steps,
                         save_checkpoints_steps=save_checkpoints_steps,
                         save_checkpoints_secs=save_checkpoints_secs,
                         session_config=session_config, keep_checkpoint_max=keep_checkpoint_max,
                         keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                         log_step_count_steps=log_step_count_steps)
