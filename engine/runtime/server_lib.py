"""``tf.train.ClusterSpec``, ``tf.train.Server`` and ``tf.train.replica_device_setter``: what a
one-process engine can honestly do with TF's distributed API.

A ``ClusterSpec`` is TF's data object (jobs, their tasks and addresses). A ``Server`` binds no
port and serves nothing: it names one task of a cluster served by this process, and its
``target`` is a string ``Session`` accepts. A session on that target runs in this process, as
every session here does; that is honest exactly when every task of the server's cluster is a
``Server`` of this process (TF's in-process cluster, the devices of ``tf.device("/job:...")``
all local): then the graph computes what TF's cluster computes. A session on a cluster with a
task no server of this process serves (between-process training: a parameter server and
workers in other processes) raises ``UnimplementedError`` naming those tasks, as does
``Server.join()`` (a task waiting for other processes' sessions) and a target that is no server
of this process.
"""

from __future__ import annotations

import itertools
import socket

from ..framework.errors import UnimplementedError

#: target -> Server, the servers this process made
_SERVERS: dict[str, Server] = {}
_PORTS = itertools.count(1)


class ClusterSpec:
    """TF's ``ClusterSpec``: job name -> {task index: network address}."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks) for job, tasks in cluster._cluster_spec.items()}
        elif isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, list | tuple):
                    job_tasks = dict(enumerate(tasks))
                elif isinstance(tasks, dict):
                    job_tasks = {int(i): task for i, task in tasks.items()}
                else:
                    raise TypeError(f"The tasks for job {job_name!r} must be a list or a "
                                    "dictionary from integers to strings.")
                self._cluster_spec[job_name] = job_tasks
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")

    def __bool__(self):
        return bool(self._cluster_spec)

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._cluster_spec == other._cluster_spec

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __str__(self):
        key_values = self.as_dict()
        items = [f"{k!r}: {key_values[k]!r}" for k in sorted(key_values)]
        return "ClusterSpec({" + ", ".join(items) + "})"

    __repr__ = __str__

    def as_dict(self):
        """Each job's tasks: a list of addresses when its indices are 0..n-1, else a dict."""
        out = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if indices == list(range(len(indices))):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {i: self.task_address(job, i) for i in indices}
        return out

    @property
    def jobs(self):
        return list(self._cluster_spec.keys())

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name):
        """The job's addresses by index, None where an index has no task."""
        job = self._job(job_name)
        out = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            out[i] = address
        return out


class ServerDef:
    """What a server was made from (TF's ``ServerDef`` fields)."""

    def __init__(self, cluster, job_name, task_index, protocol):
        self.cluster, self.job_name, self.task_index = cluster, job_name, task_index
        self.protocol = protocol


def _one(values, what):
    if len(values) != 1:
        raise ValueError(f"Must specify an explicit `{what}`.")
    return values[0]


class Server:
    """``tf.train.Server`` for one task of ``cluster`` (see the module's doc)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        cluster = server_or_cluster_def
        if isinstance(cluster, ServerDef):
            job_name = cluster.job_name if job_name is None else job_name
            task_index = cluster.task_index if task_index is None else task_index
            protocol = cluster.protocol if protocol is None else protocol
            cluster = cluster.cluster
        cluster = ClusterSpec(cluster)
        job_name = _one(cluster.jobs, "job_name") if job_name is None else job_name
        if task_index is None:
            task_index = _one(cluster.task_indices(job_name), "task_index")
        address = cluster.task_address(job_name, task_index)
        self._server_def = ServerDef(cluster, job_name, int(task_index), protocol or "grpc")
        if address.endswith(":0"):  # TF binds a free port: the target names the one it got
            address = f"{address[:-2]}:{_free_port()}"
        self._target = f"{self._server_def.protocol}://{address}"
        if self._target in _SERVERS:
            raise UnimplementedError(f"{address} (/job:{job_name}/task:{task_index}) is already "
                                     "served by a Server of this process")
        _SERVERS[self._target] = self

    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        """The string ``tf.Session(target)`` takes for this server."""
        return self._target

    def start(self):
        """Nothing to start: the server serves this process only."""

    def join(self):
        raise UnimplementedError(
            f"Server.join() at /job:{self._server_def.job_name}/task:"
            f"{self._server_def.task_index}: this engine runs graphs in one process, so a "
            "server serves no other process's sessions (between-process distributed training, "
            "parameter servers, is not supported)")

    @staticmethod
    def create_local_server(config=None, start=True):
        """A server of a one-task cluster on this machine (TF's port chosen for it)."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)


def _free_port():
    """A port number no other server of this process reports (one the OS has free now)."""
    try:
        with socket.socket() as s:
            s.bind(("localhost", 0))
            port = s.getsockname()[1]
    except OSError:
        port = 0
    used = {target.rsplit(":", 1)[-1] for target in _SERVERS}
    while not port or str(port) in used:
        port = 20000 + next(_PORTS)
    return port


def check_target(target):
    """Raises ``UnimplementedError`` unless a session on ``target`` computes what TF's would: the
    empty target, or a server of this process whose cluster's tasks are all served here."""
    if isinstance(target, bytes):
        target = target.decode()
    if not target:
        return
    server = _SERVERS.get(target)
    if server is None:
        raise UnimplementedError(
            f"Session target {target!r} is not a tf.train.Server of this process: this engine "
            "runs graphs in one process (pass '' or a local Server's target)")
    cluster = server.server_def.cluster
    served = {(s.server_def.job_name, s.server_def.task_index)
              for s in _SERVERS.values() if s.server_def.cluster == cluster}
    missing = [f"/job:{job}/task:{i} ({cluster.task_address(job, i)})" for job in cluster.jobs
               for i in cluster.task_indices(job) if (job, i) not in served]
    if missing:
        raise UnimplementedError(
            f"Session target {target!r}: the cluster's tasks {', '.join(missing)} are not "
            "served by this process, and this engine runs graphs in one process "
            "(between-process distributed training is not supported; a cluster whose every "
            "task is a tf.train.Server of this process works)")


class _ReplicaDeviceChooser:
    """Variables on the parameter-server tasks round robin, other ops on the worker device."""

    def __init__(self, ps_tasks, ps_device, worker_device, ps_ops):
        self._ps_tasks, self._ps_device = ps_tasks, ps_device
        self._worker_device, self._ps_ops = worker_device, ps_ops
        self._next = 0

    def device_function(self, op):
        if self._ps_tasks and op.type in self._ps_ops:
            task, self._next = self._next, (self._next + 1) % self._ps_tasks
            return f"{self._ps_device}/task:{task}"
        return self._worker_device or ""


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """TF's device function placing variables on the ps tasks (None when there are none).
    ``tf.device`` takes it and changes nothing here: every op runs in this process."""
    if cluster is not None:
        spec = ClusterSpec(cluster)
        ps_tasks = spec.num_tasks("ps") if "ps" in spec.jobs else 0
    if ps_tasks == 0:
        return None
    ops = ps_ops or ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                     "MutableHashTableV2", "MutableHashTableOfTensors",
                     "MutableDenseHashTable", "VarHandleOp")
    return _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, ops).device_function
