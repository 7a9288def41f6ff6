"""tf.train.ClusterSpec / Server / replica_device_setter: ClusterSpec as TF 2.21's compat.v1
prints and raises (the docs' dense and sparse clusters), a cluster whose every task is a Server
of this process runs sessions on its targets with the numbers of a plain session (the
cookbook's in-process cluster), and the clear errors where a one-process engine cannot do what
TF does (a task of the cluster in another process, Server.join, a foreign target)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.framework.errors import UnimplementedError

DENSE = {"worker": ["worker0.example.com:2222", "worker1.example.com:2222",
                    "worker2.example.com:2222"],
         "ps": ["ps0.example.com:2222", "ps1.example.com:2222"]}


def test_cluster_spec_as_tf_prints_it():
    c = tf.train.ClusterSpec(DENSE)
    assert str(c) == ("ClusterSpec({'ps': ['ps0.example.com:2222', 'ps1.example.com:2222'], "
                      "'worker': ['worker0.example.com:2222', 'worker1.example.com:2222', "
                      "'worker2.example.com:2222']})")
    assert c.as_dict() == DENSE and c.jobs == ["worker", "ps"]
    assert (c.num_tasks("worker"), c.task_indices("ps")) == (3, [0, 1])
    assert c.task_address("ps", 1) == "ps1.example.com:2222"
    sparse = tf.train.ClusterSpec({"worker": {1: "worker1.example.com:2222"},
                                   "ps": ["ps0.example.com:2222"]})
    assert str(sparse) == ("ClusterSpec({'ps': ['ps0.example.com:2222'], "
                           "'worker': {1: 'worker1.example.com:2222'}})")
    assert sparse.job_tasks("worker") == [None, "worker1.example.com:2222"]
    assert sparse.task_indices("worker") == [1]
    assert tf.train.ClusterSpec(sparse) == sparse
    assert tf.train.ClusterSpec({"a": ["x:1"]}) != sparse
    assert not tf.train.ClusterSpec({})


@pytest.mark.parametrize("call, error, message", [
    (lambda c: c.task_address("chief", 0), ValueError, "No such job in cluster: 'chief'"),
    (lambda c: c.task_address("ps", 5), ValueError, "No task with index 5 in job 'ps'"),
    (lambda c: tf.train.ClusterSpec(["a"]), TypeError, "`cluster` must be a dictionary"),
    (lambda c: tf.train.ClusterSpec({"a": "x:1"}), TypeError,
     "The tasks for job 'a' must be a list or a dictionary"),
    (lambda c: tf.train.Server(c, start=False), ValueError,
     "Must specify an explicit `job_name`."),
    (lambda c: tf.train.Server(c, job_name="ps"), ValueError,
     "Must specify an explicit `task_index`."),
])
def test_tfs_errors(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace("[", r"\[")):
        call(tf.train.ClusterSpec(DENSE))


def test_an_in_process_cluster_computes_as_a_plain_session():
    # the cookbook's "parallelizing" program: two tasks of one job, both servers here, ops
    # pinned to either task; the session on a server's target runs them all in this process
    tf.reset_default_graph()
    cluster = tf.train.ClusterSpec({"local": ["localhost:2222", "localhost:2223"]})
    first = tf.train.Server(cluster, job_name="local", task_index=0)
    second = tf.train.Server(cluster, job_name="local", task_index=1)
    assert (first.target, second.target) == ("grpc://localhost:2222", "grpc://localhost:2223")
    with tf.device("/job:local/task:0"):
        a = tf.constant(np.arange(6.0).reshape(2, 3))
    with tf.device("/job:local/task:1"):
        total = tf.add_n([tf.reduce_sum(a), tf.reduce_sum(2 * a)])
    with tf.Session(second.target) as sess:
        assert sess.run(total) == 45.0
    with pytest.raises(UnimplementedError, match="already served"):
        tf.train.Server(cluster, job_name="local", task_index=1)


def test_a_local_server_serves_a_monitored_session():
    tf.reset_default_graph()
    server = tf.train.Server.create_local_server()
    assert server.target.startswith("grpc://localhost:")
    assert server.target != tf.train.Server.create_local_server().target
    v = tf.Variable(3.0)
    step = tf.assign_add(v, 1.0)
    with tf.train.MonitoredTrainingSession(master=server.target) as sess:
        assert sess.run(step) == 4.0


def test_tasks_of_other_processes_are_refused_by_name():
    # MorvanZhou's 504_distributed_training: each process serves one task of a ps/worker
    # cluster; a session here cannot reach the parameter server's variables
    tf.reset_default_graph()
    cluster = tf.train.ClusterSpec({"ps": ["localhost:3221"],
                                    "worker": ["localhost:3222", "localhost:3224"]})
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    setter = tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)
    with tf.device(setter):
        v = tf.Variable(1.0)
    assert setter(v.op) == "/job:ps/task:0"
    with pytest.raises(UnimplementedError,
                       match=r"/job:ps/task:0 \(localhost:3221\), /job:worker/task:1"):
        tf.Session(worker.target)
    with pytest.raises(UnimplementedError, match="between-process distributed training"):
        tf.train.MonitoredTrainingSession(master=worker.target, is_chief=True)
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    with pytest.raises(UnimplementedError, match="serves no other process"):
        ps.join()
    with pytest.raises(UnimplementedError, match="not a tf.train.Server of this process"):
        tf.Session("grpc://elsewhere:2222")
    assert tf.train.replica_device_setter(ps_tasks=0) is None
