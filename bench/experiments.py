"""End-to-end workloads: each shipped experiment (configs/experiment/) trained by the runner
against the same training written by hand in PyTorch and in JAX/optax (jit), one thread each.

gradpipe's variant is the runner itself: the model, data and Trainer that ``python -m runner
+experiment=NAME`` builds, stepping as its loop does on a step that logs nothing
(``Trainer.run_step``: the next batch, fed to one session call that updates every group). The
hand-written loops start from the runner's initial values, read the same training arrays in
shuffled batches of the same size, and do the same arithmetic per step: the model, each group's
gradients, its pipeline (clipping) and its optimizer. They compute no finite check and no
metrics; the runner's step does (its ``finite`` flag). Where a framework's own building block
is what its users write (``torch.nn.LSTM``, ``torch.optim.Adam``, ``optax.adam``), it is used.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from .workloads import Unavailable, import_jax, import_optax, import_torch

EXPERIMENTS = ("clip_adam", "two_optimizers", "clip_norm", "clip_value", "adagrad_decay",
               "linear_regression", "stop_gradient", "minimize", "digits_cnn", "digits_batchnorm",
               "embedding_adagrad_decay")
FRAMEWORKS = ("gradpipe", "torch", "jax")


def single_threaded_jax() -> None:
    """XLA's CPU backend on one thread, as torch and the runner run here; it must be set before
    jax is imported, so ``bench.run`` calls this when it runs end-to-end workloads only."""
    if "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_multi_thread_eigen=false".strip()


# -- the runner --------------------------------------------------------------------------------


@functools.cache
def _runner(experiment):
    """(trainer, initial values of the model's variables) for ``+experiment=NAME``."""
    from hydra import compose

    from runner.app import initialize_compose, plain_config
    from runner.loop import Trainer
    from runner.prepare import prepare

    with initialize_compose():
        cfg = plain_config(compose("config", overrides=[f"+experiment={experiment}"]))
    _, model, dataset = prepare(cfg, Path.cwd())
    trainer = Trainer(model, dataset, Path(tempfile.mkdtemp(prefix="bench-")))
    trainer.session.run(model.init_op)
    init = {name: np.array(trainer.session.run(v)) for name, v in model.variables.items()}
    return trainer, init, dataset


def _gradpipe(experiment):
    # one BLAS thread, as `python -m runner` runs (runner/__main__.py)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    trainer = _runner(experiment)[0]
    return lambda: trainer.run_step(full=False)


class _Batches:
    """Shuffled batches of ``size`` rows, a new permutation each epoch, the last partial batch
    dropped: what a hand-written loop does (and the runner's Batcher)."""

    def __init__(self, arrays, size, seed=0):
        self.arrays, self.size = arrays, size
        self.n = len(next(iter(arrays.values())))
        self.rng = np.random.default_rng(seed)
        self.order, self.pos = self.rng.permutation(self.n), 0

    def next(self):
        if self.pos + self.size > self.n:
            self.order, self.pos = self.rng.permutation(self.n), 0
        rows = self.order[self.pos:self.pos + self.size]
        self.pos += self.size
        return {k: a[rows] for k, a in self.arrays.items()}


def _data(experiment):
    """(initial values, batches or None) for the hand-written loops."""
    _, init, dataset = _runner(experiment)
    if dataset is None:
        return init, None
    return init, _Batches(dataset.train, dataset.batch_size)


# -- the models, written once over a framework namespace ---------------------------------------
# ``ns`` is torch or jax.numpy; each returns {group: objective} for one batch.


def _bce(ns, labels, logits):
    """TF's sigmoid_cross_entropy_with_logits."""
    relu = (logits + ns.abs(logits)) * 0.5  # max(logits, 0), exactly, in both namespaces
    return relu - logits * labels + ns.log1p(ns.exp(-ns.abs(logits)))


def _mlp(ns, p, b):
    return ns.tanh(b["x"] @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]


def _linear(ns, p, b):
    return ((b["x"] @ p["W"] + p["b"] - b["y"]) ** 2).mean()


def _stop_gradient(ns, p, b, stop):
    t1, t2 = b["t1"], b["t2"]
    fit1 = (p["w1"] + p["w2"] + p["w3"] - t1) ** 2
    fit2 = (p["w3"] + p["w4"] - t2) ** 2
    anchor = ((stop(p["w1"] + p["w2"]) + p["w3"] - t1) ** 2).sum()
    return {"weighted": (fit1 * b["g1"]).sum() + (fit2 * b["g2"]).sum(), "anchored": anchor}


MODELS = {
    "two_optimizers": lambda ns, p, b: _bce(ns, b["y"], _mlp(ns, p, b)).mean(),
    "clip_value": lambda ns, p, b: _bce(ns, b["y"], _mlp(ns, p, b)).mean(),
    "clip_norm": lambda ns, p, b: ((_mlp(ns, p, b) - 5.0 * b["y"]) ** 2).mean(),
    "adagrad_decay": _linear,
    "linear_regression": _linear,
    "minimize": lambda ns, p, b: p["w"] * p["x"],
    # torch only: nn.Embedding(sparse=True)'s lookup, whose gradient is a sparse tensor
    "embedding_adagrad_decay": lambda ns, p, b: ((ns.nn.functional.embedding(
        b["x"].long(), p["word_embedding"], sparse=True).mean(1) @ p["W"] + p["b"] - b["y"])
        ** 2).mean(),
}
STOP_GRADIENT_DATA = {"t1": [1.0, 2.0], "t2": [3.0, 4.0], "g1": [1.0, 2.0], "g2": [3.0, 4.0]}

# group -> (variables, optimizer, pipeline), as in configs/experiment/NAME.yaml
_ALL = None  # every trainable variable
GROUPS = {
    "clip_adam": {"encoder": (["kernel", "bias"], ("adam", 1e-2), ("global_norm", 1.0)),
                  "head": (["W_out", "b_out"], ("adam", 1e-2), ("global_norm", 1.0))},
    "two_optimizers": {"encoder": (["W1", "b1"], ("adam", 1e-2), ("global_norm", 5.0)),
                       "head": (["W2", "b2"], ("sgd_exponential_decay", 0.5, 1000, 0.5),
                                ("value", 1.0))},
    "clip_norm": {"net": (_ALL, ("adam", 1e-2), ("norm", 5.0))},
    "clip_value": {"net": (_ALL, ("adam", 1e-2), ("value", 1.0))},
    "adagrad_decay": {"linear": (_ALL, ("adagrad_decay", 0.5, 0.1, 50, 0.9), None)},
    "linear_regression": {"all": (_ALL, ("sgd", 0.1), None)},
    "stop_gradient": {"weighted": (["w1", "w2", "w4"], ("sgd", 0.05), None),
                      "anchored": (["w3"], ("sgd", 0.1), None)},
    "minimize": {"w_only": (["w"], ("sgd", 0.1), ("norm", 5.0))},
    "digits_cnn": {"all": (_ALL, ("adam", 2e-3), None)},
    "digits_batchnorm": {"all": (_ALL, ("adam", 1e-2), None)},
    "embedding_adagrad_decay": {
        "embedding": (["word_embedding"], ("sparse_adagrad_decay", 0.5, 0.1, 100, 0.9, 0.1), None),
        "head": (["W", "b"], ("adagrad_decay", 0.05, 0.1, 100, 0.9, 0.1), None)},
}
BATCH_NORM = {"momentum": 0.9, "epsilon": 1e-3}  # the batch_norm op's epsilon default


def _trainable(experiment):
    """The variables the runner's groups update (minimize's x is frozen; batch norm's moving
    statistics are not trainable), in the model's order."""
    model = _runner(experiment)[0].model
    names = {n for group in model.groups for n in group.var_names}
    return [n for n in model.variables if n in names]


def _groups(experiment, names):
    return [(g, names if v is _ALL else v, opt, pipe)
            for g, (v, opt, pipe) in GROUPS[experiment].items()]


# -- PyTorch -----------------------------------------------------------------------------------


def _torch_optimizer(torch, params, spec):
    kind = spec[0]
    if kind == "adam":
        return torch.optim.Adam(params, lr=spec[1])
    if kind in ("sgd", "sgd_exponential_decay"):
        return torch.optim.SGD(params, lr=spec[1])
    if kind == "adagrad_decay":
        return _TorchAdagradDecay(torch, params, *spec[1:])
    if kind == "sparse_adagrad_decay":
        return _TorchSparseAdagradDecay(torch, params, *spec[1:])
    raise ValueError(kind)


class _TorchAdagradDecay:
    """TF's AdagradDecay (engine/train/adagrad.py) by hand: every ``decay_step`` steps
    accum = max(accum * rate, baseline); then Adagrad."""

    def __init__(self, torch, params, lr, initial, decay_step, rate, baseline=0.0):
        self.params, self.lr, self.decay_step, self.rate = params, lr, decay_step, rate
        self.accums = [torch.full_like(p, initial) for p in params]
        self.baseline, self.step_count, self.power = baseline, 0, 0

    def step(self):
        self.step_count += 1
        decay = self.step_count // self.decay_step > self.power
        self.power += decay
        for p, acc in zip(self.params, self.accums):
            if decay:
                acc.mul_(self.rate).clamp_(min=self.baseline)
            acc.addcmul_(p.grad, p.grad)
            p.sub_(self.lr * p.grad / acc.sqrt())


class _TorchSparseAdagradDecay(_TorchAdagradDecay):
    """DeepRec's SparseApplyAdagradDecay by hand on a sparse gradient: its rows summed per id
    (``coalesce``), then for each row looked up, its own decay count: if step // decay_step
    exceeds it, the row's accumulator decays (max(accum * rate, baseline)); then Adagrad on
    the row. Rows not looked up are not touched."""

    def __init__(self, torch, params, *args):
        super().__init__(torch, params, *args)
        self.powers = [torch.zeros(p.shape[0], dtype=torch.int64) for p in params]

    def step(self):
        self.step_count += 1
        for p, acc, power in zip(self.params, self.accums, self.powers):
            grad = p.grad.coalesce()
            rows, values = grad.indices()[0], grad.values()
            due = self.step_count // self.decay_step > power[rows]
            power[rows[due]] += 1
            a = acc[rows]
            a[due] = (a[due] * self.rate).clamp_(min=self.baseline)
            a.addcmul_(values, values)
            acc[rows] = a
            p.index_add_(0, rows, -(self.lr * values) / a.sqrt())


def _torch_pipeline(torch, params, spec):
    if spec is None:
        return
    kind, c = spec
    if kind == "global_norm":
        torch.nn.utils.clip_grad_norm_(params, c)
    elif kind == "norm":  # TF's clip_by_norm: per tensor
        for p in params:
            p.grad.mul_(c / max(float(p.grad.norm()), c))
    elif kind == "value":
        for p in params:
            p.grad.clamp_(-c, c)


def _torch_lstm(torch, init):
    """torch.nn.LSTM with the runner's initial kernel: TF's columns (i, j, f, o) to torch's rows
    (i, f, g, o); forget_bias in bias_ih."""
    kernel, bias = init["kernel"], init["bias"].copy()
    features, hidden = kernel.shape[0] - kernel.shape[1] // 4, kernel.shape[1] // 4
    i, j, f, o = (np.arange(k * hidden, (k + 1) * hidden) for k in range(4))
    rows = np.concatenate([i, f, j, o])
    bias[f] += 1.0
    lstm = torch.nn.LSTM(features, hidden)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(kernel[:features, rows].T.copy()))
        lstm.weight_hh_l0.copy_(torch.from_numpy(kernel[features:, rows].T.copy()))
        lstm.bias_ih_l0.copy_(torch.from_numpy(bias[rows]))
        lstm.bias_hh_l0.zero_()
    return lstm


def _torch_step(experiment):
    torch = import_torch()
    torch.set_num_threads(1)
    init, batches = _data(experiment)
    trainable = _trainable(experiment)
    p = {k: torch.nn.Parameter(torch.from_numpy(v.copy())) if k in trainable
         else torch.from_numpy(v.copy()) for k, v in init.items()}
    if experiment in ("digits_cnn", "digits_batchnorm"):
        model = functools.partial(_torch_digits, torch, experiment)
    elif experiment == "clip_adam":
        lstm = _torch_lstm(torch, init)
        p.update(kernel=list(lstm.parameters()), bias=[])

        def model(ns, q, b):  # x: [batch, time, 2] fed time-major as the runner does
            h, _ = lstm(b["x"].transpose(0, 1))
            return ((h[-1] @ q["W_out"] + q["b_out"] - b["y"]) ** 2).mean()
    elif experiment == "stop_gradient":
        model = functools.partial(_stop_gradient, stop=lambda t: t.detach())
        batches = None
    else:
        model = MODELS[experiment]
    fixed = {k: torch.tensor(v, dtype=torch.float32) for k, v in STOP_GRADIENT_DATA.items()}
    groups = []
    for g, names, opt, pipe in _groups(experiment, _trainable(experiment)):
        params = [t for n in names for t in (p[n] if isinstance(p[n], list) else [p[n]])]
        groups.append((g, params, _torch_optimizer(torch, params, opt), opt, pipe))
    state = {"step": 0}

    def step():
        b = ({k: torch.from_numpy(a) for k, a in batches.next().items()}
             if batches is not None else fixed)
        out = model(torch, p, b)
        objectives = out if isinstance(out, dict) else {g[0]: out for g in groups}
        shared = not isinstance(out, dict)
        if shared:
            all_params = [t for g in groups for t in g[1]]
            grads = torch.autograd.grad(out, all_params)
            for t, gr in zip(all_params, grads):
                t.grad = gr
        for g, params, optimizer, opt, pipe in groups:
            if not shared:
                for t, gr in zip(params, torch.autograd.grad(objectives[g], params,
                                                             retain_graph=True)):
                    t.grad = gr
            _torch_pipeline(torch, params, pipe)
            if opt[0] == "sgd_exponential_decay":
                optimizer.param_groups[0]["lr"] = opt[1] * opt[3] ** (state["step"] / opt[2])
            with torch.no_grad():
                optimizer.step()
        state["step"] += 1

    step.values = lambda: {k: t.detach().numpy() for k, t in p.items() if not isinstance(t, list)}
    return step


def _torch_digits(torch, experiment, ns, p, b):
    """The digits models in torch.nn.functional: NHWC data and HWIO kernels as the config
    declares them, moved to torch's NCHW / OIHW; training mode (dropout, batch statistics with
    the moving averages updated in place)."""
    fn = torch.nn.functional
    x, y = b["x"], b["y"].long()
    if experiment == "digits_cnn":
        h = x.permute(0, 3, 1, 2)
        h = fn.relu(fn.conv2d(h, p["K1"].permute(3, 2, 0, 1), p["c1"], padding=1))
        h = fn.relu(fn.conv2d(h, p["K2"].permute(3, 2, 0, 1), p["c2"], padding=1))
        h = fn.max_pool2d(h, 2).permute(0, 2, 3, 1).reshape(-1, 512)
        logits = fn.dropout(h, 0.5, training=True) @ p["W"] + p["b"]
    else:
        h = x.reshape(-1, 64)
        for k in ("1", "2"):
            h = h @ p[f"W{k}"]
            h = fn.relu(fn.batch_norm(h, p[f"mean{k}"], p[f"var{k}"], p[f"gamma{k}"],
                                      p[f"beta{k}"], training=True,
                                      momentum=1 - BATCH_NORM["momentum"],
                                      eps=BATCH_NORM["epsilon"]))
        logits = h @ p["W3"] + p["b3"]
    return fn.cross_entropy(logits, y)


# -- JAX / optax -------------------------------------------------------------------------------


def _optax_transform(optax, jnp, opt, pipe):
    kind = opt[0]
    if kind == "adam":
        tx = optax.adam(opt[1])
    elif kind == "sgd":
        tx = optax.sgd(opt[1])
    elif kind == "sgd_exponential_decay":
        tx = optax.sgd(optax.exponential_decay(opt[1], opt[2], opt[3]))
    else:
        tx = _optax_adagrad_decay(optax, jnp, *opt[1:])
    if pipe is None:
        return tx
    kind, c = pipe
    if kind == "global_norm":
        clip = optax.clip_by_global_norm(c)
    elif kind == "value":
        clip = optax.clip(c)
    else:  # TF's clip_by_norm, per tensor
        clip = optax.stateless(lambda u, _: {k: g * c / jnp.maximum(jnp.linalg.norm(g), c)
                                             for k, g in u.items()})
    return optax.chain(clip, tx)


def _optax_adagrad_decay(optax, jnp, lr, initial, decay_step, rate, baseline=0.0):
    def init(params):
        return {"acc": {k: jnp.full_like(v, initial) for k, v in params.items()},
                "count": jnp.zeros([], jnp.int32), "power": jnp.zeros([], jnp.int32)}

    def update(grads, state, params=None):
        count = state["count"] + 1
        decay = count // decay_step > state["power"]
        acc = {k: jnp.where(decay, jnp.maximum(a * rate, baseline), a) + grads[k] ** 2
               for k, a in state["acc"].items()}
        updates = {k: -lr * grads[k] / jnp.sqrt(acc[k]) for k in grads}
        return updates, {"acc": acc, "count": count, "power": state["power"] + decay}

    return optax.GradientTransformation(init, update)


def _jax_lstm(jax, jnp, kernel, bias, x):
    """TF's BasicLSTMCell (forget_bias 1.0) over time-major x with lax.scan."""
    hidden = kernel.shape[1] // 4
    features = x.shape[2]
    xw = x @ kernel[:features] + bias

    def cell(carry, xw_t):
        c, h = carry
        i, j, f, o = jnp.split(xw_t + h @ kernel[features:], 4, axis=1)
        c = c * jax.nn.sigmoid(f + 1.0) + jax.nn.sigmoid(i) * jnp.tanh(j)
        h = jnp.tanh(c) * jax.nn.sigmoid(o)
        return (c, h), h

    zeros = jnp.zeros((x.shape[1], hidden), x.dtype)
    return jax.lax.scan(cell, (zeros, zeros), xw)[1]


def _jax_step(experiment):
    jax, jnp = import_jax()
    optax = import_optax()
    init, batches = _data(experiment)
    if experiment in ("digits_cnn", "digits_batchnorm"):
        model = functools.partial(_jax_digits, jax, optax, experiment)
    elif experiment == "clip_adam":
        def model(ns, p, b):
            h = _jax_lstm(jax, jnp, p["kernel"], p["bias"], jnp.swapaxes(b["x"], 0, 1))
            return ((h[-1] @ p["W_out"] + p["b_out"] - b["y"]) ** 2).mean()
    elif experiment == "stop_gradient":
        model = functools.partial(_stop_gradient, stop=jax.lax.stop_gradient)
    else:
        model = MODELS[experiment]
    groups = [(g, names, _optax_transform(optax, jnp, opt, pipe))
              for g, names, opt, pipe in _groups(experiment, _trainable(experiment))]

    def objective(group, sub, params, b):
        """(the group's objective, the non-trainable variables' new values: batch norm's)"""
        out = model(jnp, {**params, **sub}, b)
        out, aux = out if isinstance(out, tuple) else (out, {})
        return (out[group] if isinstance(out, dict) else out), aux

    @jax.jit
    def update(params, states, b):
        new, out_states = dict(params), []
        for (g, names, tx), s in zip(groups, states):
            sub = {n: params[n] for n in names}
            grads, aux = jax.grad(functools.partial(objective, g), has_aux=True)(sub, params, b)
            updates, s = tx.update(grads, s, sub)
            new.update(optax.apply_updates(sub, updates))
            new.update(aux)
            out_states.append(s)
        return new, out_states

    params = {k: jnp.asarray(v) for k, v in init.items()}
    state = {"p": params, "s": [tx.init({n: params[n] for n in names})
                                for _, names, tx in groups]}
    fixed = {k: jnp.asarray(v, jnp.float32) for k, v in STOP_GRADIENT_DATA.items()}

    def step():
        b = batches.next() if batches is not None else fixed
        if experiment == "digits_cnn":  # dropout's key: the step number folded into a seed
            b["step"] = np.int32(state.setdefault("step", 0))
            state["step"] += 1
        state["p"], state["s"] = update(state["p"], state["s"], b)
        jax.block_until_ready(state["p"])

    step.values = lambda: {k: np.asarray(v) for k, v in state["p"].items()}
    return step


def _jax_embedding_step():
    """embedding_adagrad_decay in JAX, which has no sparse gradients: the gradient with respect
    to the looked-up rows, summed per distinct id (``jnp.unique`` padded to a static size, then
    ``segment_sum``), and DeepRec's SparseApplyAdagradDecay on those rows with ``.at[]``
    (padding dropped), in one jit with the table and its state donated (updated in place); the
    head by the dense AdagradDecay of the other experiments."""
    jax, jnp = import_jax()
    optax = import_optax()
    init, batches = _data("embedding_adagrad_decay")
    spec = GROUPS["embedding_adagrad_decay"]
    _, (_, lr, initial, decay_step, rate, baseline), _ = spec["embedding"]
    head, head_opt, _ = spec["head"]
    head_tx = _optax_adagrad_decay(optax, jnp, *head_opt[1:])
    table_rows = init["word_embedding"].shape[0]

    def loss(rows, p, b):
        return ((rows.mean(1) @ p["W"] + p["b"] - b["y"]) ** 2).mean()

    @functools.partial(jax.jit, donate_argnums=(0,))
    def update(state, b):
        table, acc, power, p, head_state, t = state
        ids = b["x"].reshape(-1)
        rows_grad, head_grad = jax.grad(loss, argnums=(0, 1))(table[b["x"]], p, b)
        unique, inverse = jnp.unique(ids, return_inverse=True, size=ids.size,
                                     fill_value=table_rows)
        g = jax.ops.segment_sum(rows_grad.reshape(ids.size, -1), inverse.reshape(-1),
                                num_segments=ids.size)
        t = t + 1
        due = t // decay_step > power[unique]
        a = acc[unique]
        a = jnp.where(due[:, None], jnp.maximum(a * rate, baseline), a) + g * g
        acc = acc.at[unique].set(a, mode="drop")
        power = power.at[unique].add(due.astype(power.dtype), mode="drop")
        table = table.at[unique].add(-(lr * g) / jnp.sqrt(a), mode="drop")
        updates, head_state = head_tx.update(head_grad, head_state, p)
        return table, acc, power, optax.apply_updates(p, updates), head_state, t

    head_params = {k: jnp.asarray(init[k]) for k in head}
    table = jnp.asarray(init["word_embedding"])
    state = {"s": (table, jnp.full_like(table, initial), jnp.zeros(table_rows, jnp.int32),
                   head_params, head_tx.init(head_params), jnp.zeros([], jnp.int32))}

    def step():
        state["s"] = update(state["s"], batches.next())
        jax.block_until_ready(state["s"][0])

    step.values = lambda: {"word_embedding": np.asarray(state["s"][0]),
                           **{k: np.asarray(v) for k, v in state["s"][3].items()}}
    return step


def _jax_digits(jax, optax, experiment, jnp, p, b):
    """The digits models in jax.lax: NHWC and HWIO as declared; training mode (dropout with a
    key per step; batch statistics, the moving averages returned as new values)."""
    x, aux = b["x"], {}
    if experiment == "digits_cnn":
        dims = ("NHWC", "HWIO", "NHWC")
        h = x
        for k, c in (("K1", "c1"), ("K2", "c2")):
            h = jax.lax.conv_general_dilated(h, p[k], (1, 1), "SAME", dimension_numbers=dims)
            h = jax.nn.relu(h + p[c])
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = h.reshape(-1, 512)
        key = jax.random.fold_in(jax.random.PRNGKey(0), b["step"])
        h = jnp.where(jax.random.bernoulli(key, 0.5, h.shape), h / 0.5, 0.0)
        logits = h @ p["W"] + p["b"]
    else:
        h = x.reshape(-1, 64)
        m = BATCH_NORM["momentum"]
        for k in ("1", "2"):
            h = h @ p[f"W{k}"]
            mean, var = h.mean(0), h.var(0)
            aux[f"mean{k}"] = jax.lax.stop_gradient(p[f"mean{k}"] * m + mean * (1 - m))
            aux[f"var{k}"] = jax.lax.stop_gradient(p[f"var{k}"] * m + var * (1 - m))
            h = (h - mean) / jnp.sqrt(var + BATCH_NORM["epsilon"]) * p[f"gamma{k}"]
            h = jax.nn.relu(h + p[f"beta{k}"])
        logits = h @ p["W3"] + p["b3"]
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, b["y"]).mean()
    return loss, aux


def make(framework, experiment):
    """One training step of ``experiment`` in ``framework`` (gradpipe is the runner). The
    hand-written loops' steps have ``values()``: their variables by the config's names."""
    if framework == "gradpipe":
        return _gradpipe(experiment)
    if framework == "torch":
        return _torch_step(experiment)
    if framework == "jax":
        if experiment == "embedding_adagrad_decay":
            return _jax_embedding_step()
        return _jax_step(experiment)
    raise Unavailable(framework)
