"""What TF keeps under ``platform``: ``tf_logging`` (``tf.logging``)."""
