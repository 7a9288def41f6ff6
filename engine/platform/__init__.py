"""What TF keeps under ``platform``: ``tf_logging`` (``tf.logging``) and ``gfile``
(``tf.gfile``)."""
