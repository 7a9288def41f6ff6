"""Fixtures shared by the engine's tests."""

import pytest

import engine as tf


@pytest.fixture
def fresh_default_graph():
    """A new default graph for the test, and another after it, so that no test sees the nodes,
    collections or seeds another one left in the global graph. Modules that build into the
    default graph opt in with ``pytestmark = pytest.mark.usefixtures("fresh_default_graph")``."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
