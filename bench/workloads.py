"""The benchmark workloads of issue 6, each written once per framework.

A workload is a function ``make(framework, size) -> step`` where ``step()`` runs one training
step; frameworks that are not installed raise ``Unavailable`` and are reported as skipped.
Every variant does the same arithmetic on the same shapes, so medians compare directly.
"""

from __future__ import annotations

import math

import numpy as np


class Unavailable(Exception):
    """The framework of a variant is not installed here."""


def import_torch():
    """torch on 2 threads, or Unavailable."""
    try:
        import torch
    except ImportError as exc:
        raise Unavailable("torch not installed") from exc
    torch.set_num_threads(2)
    return torch


def import_jax():
    """(jax, jax.numpy), or Unavailable."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        raise Unavailable("jax not installed") from exc
    return jax, jnp


def import_optax():
    """optax, or Unavailable."""
    try:
        import optax
    except ImportError as exc:
        raise Unavailable("optax not installed") from exc
    return optax


# -- tiny scalar graph: y = w * x, squared loss, SGD ---------------------------------------


def tiny(framework, size=None):
    lr, x, y = 0.01, 2.0, 3.0
    if framework == "gradpipe":
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            w = tf.Variable(0.5)
            xp, yp = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
            loss = tf.square(w * xp - yp)
            train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
            sess = tf.Session()
            sess.run(tf.global_variables_initializer())
        run = sess.make_callable(train, [xp, yp])
        return lambda: run(x, y)
    if framework == "python":
        state = {"w": 0.5}

        def step():
            w = state["w"]
            r = w * x - y
            state["w"] = w - lr * (2 * r * x)

        return step
    if framework == "torch":
        torch = import_torch()
        w = torch.tensor(0.5, requires_grad=True)
        xt, yt = torch.tensor(x), torch.tensor(y)

        def step():
            loss = (w * xt - yt) ** 2
            loss.backward()
            with torch.no_grad():
                w.sub_(lr * w.grad)
                w.grad = None

        return step
    if framework == "jax":
        jax, jnp = import_jax()
        upd = jax.jit(lambda w, x, y: w - lr * jax.grad(lambda w: (w * x - y) ** 2)(w))
        state = {"w": jnp.float32(0.5)}
        xj, yj = jnp.float32(x), jnp.float32(y)

        def step():
            state["w"] = upd(state["w"], xj, yj)
            state["w"].block_until_ready()

        return step
    raise Unavailable(framework)


# -- Adam after clip_by_global_norm over 1e7 parameters in 10 tensors ----------------------


def adam_clip(framework, size=10_000_000):
    n_tensors = 10
    per = size // n_tensors
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(per).astype(np.float32) for _ in range(n_tensors)]
    grads = [rng.standard_normal(per).astype(np.float32) for _ in range(n_tensors)]
    lr, b1, b2, eps, clip = 1e-3, 0.9, 0.999, 1e-8, 1.0
    if framework == "gradpipe":
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            # TF1's way to start large variables from numpy arrays: fed to their initializers
            # through placeholders, so that the graph keeps no constant copy of them
            inits = [tf.placeholder(tf.float32, [per]) for _ in range(n_tensors)]
            vs = [tf.Variable(p) for p in inits]
            gs = [tf.placeholder(tf.float32, [per]) for _ in range(n_tensors)]
            clipped, _ = tf.clip_by_global_norm(gs, clip)
            train = tf.train.AdamOptimizer(lr, b1, b2, eps).apply_gradients(zip(clipped, vs))
            sess = tf.Session()
            sess.run(tf.global_variables_initializer(), dict(zip(inits, params)))
        run = sess.make_callable(train, gs)
        return lambda: run(*grads)
    if framework == "numpy":
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        tmp = [np.empty_like(p) for p in params]
        state = {"t": 0}

        def step():
            state["t"] += 1
            t = state["t"]
            norm = math.sqrt(sum(float(np.dot(gr, gr)) for gr in grads))
            scale = np.float32(clip / max(norm, clip))
            alpha = np.float32(lr * math.sqrt(1 - b2**t) / (1 - b1**t))
            for p, gr, mi, vi, tm in zip(params, grads, m, v, tmp):
                np.multiply(gr, scale, out=tm)
                mi *= np.float32(b1)
                mi += np.float32(1 - b1) * tm
                np.multiply(tm, tm, out=tm)
                vi *= np.float32(b2)
                tm *= np.float32(1 - b2)
                vi += tm
                np.sqrt(vi, out=tm)
                tm += np.float32(eps)
                np.divide(mi, tm, out=tm)
                tm *= alpha
                p -= tm

        return step
    if framework in ("torch_fused", "torch_foreach"):
        torch = import_torch()
        ps = [torch.nn.Parameter(torch.from_numpy(p.copy())) for p in params]
        gt = [torch.from_numpy(gr) for gr in grads]
        kw = {"fused": True} if framework == "torch_fused" else {"foreach": True}
        opt = torch.optim.Adam(ps, lr=lr, betas=(b1, b2), eps=eps, **kw)

        def step():
            for p, gr in zip(ps, gt):
                p.grad = gr.clone() if p.grad is None else p.grad.copy_(gr)
            torch.nn.utils.clip_grad_norm_(ps, clip, foreach=True)
            opt.step()

        return step
    if framework == "optax":
        jax, jnp = import_jax()
        optax = import_optax()
        tx = optax.chain(optax.clip_by_global_norm(clip), optax.adam(lr, b1, b2, eps))
        ps = [jnp.asarray(p) for p in params]
        gj = [jnp.asarray(gr) for gr in grads]
        state = {"p": ps, "s": tx.init(ps)}

        @jax.jit
        def upd(p, s, gr):
            u, s = tx.update(gr, s, p)
            return optax.apply_updates(p, u), s

        def step():
            state["p"], state["s"] = upd(state["p"], state["s"], gj)
            jax.block_until_ready(state["p"])

        return step
    raise Unavailable(framework)


#: bytes an Adam step moves per parameter at the least: reads var, m, v, grad; writes var, m, v
ADAM_BYTES_PER_PARAM = 28


def triad(framework, size=10_000_000):
    """STREAM's triad a = b + s * c over float32 arrays, one pass on every core: 12 bytes per
    element, the memory bandwidth the Adam workload is measured against (``TRIAD_BYTES``)."""
    rng = np.random.default_rng(0)
    b, c = (rng.standard_normal(size).astype(np.float32) for _ in range(2))
    a = np.empty_like(b)
    if framework == "torch":
        torch = import_torch()
        at, bt, ct = (torch.from_numpy(x) for x in (a, b, c))
        return lambda: torch.add(bt, ct, alpha=0.5, out=at)
    if framework == "numexpr":
        import numexpr

        s = np.float32(0.5)
        names = {"b": b, "s": s, "c": c}
        return lambda: numexpr.evaluate("b + s * c", local_dict=names, out=a, casting="same_kind")
    raise Unavailable(framework)


TRIAD_BYTES = 12


# -- MLP 784-512-512-10, batch 256, softmax cross-entropy, Adam ----------------------------


def mlp(framework, size=256):
    rng = np.random.default_rng(0)
    dims = [784, 512, 512, 10]
    ws = [(rng.standard_normal((a, b)) * math.sqrt(2 / a)).astype(np.float32)
          for a, b in zip(dims, dims[1:])]
    bs = [np.zeros(b, np.float32) for b in dims[1:]]
    x = rng.standard_normal((size, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, size)]
    lr = 1e-3
    if framework == "gradpipe":
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            xp, yp = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.float32, [None, 10])
            h = xp
            wv = [tf.Variable(w) for w in ws]
            bv = [tf.Variable(b) for b in bs]
            for i, (w, b) in enumerate(zip(wv, bv)):
                h = tf.matmul(h, w) + b
                if i < 2:
                    h = tf.nn.relu(h)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=yp, logits=h))
            train = tf.train.AdamOptimizer(lr).minimize(loss)
            sess = tf.Session()
            sess.run(tf.global_variables_initializer())
        run = sess.make_callable(train, [xp, yp])
        return lambda: run(x, y)
    if framework == "torch":
        torch = import_torch()
        layers = []
        for w, b in zip(ws, bs):
            lin = torch.nn.Linear(*w.shape)
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(w.T.copy()))
                lin.bias.copy_(torch.from_numpy(b))
            layers += [lin, torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        xt, yt = torch.from_numpy(x), torch.from_numpy(y.argmax(1))

        def step():
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(xt), yt).backward()
            opt.step()

        return step
    if framework == "jax":
        jax, jnp = import_jax()
        optax = import_optax()
        params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in zip(ws, bs)]
        tx = optax.adam(lr)

        def loss_fn(p, x, y):
            h = x
            for i, (w, b) in enumerate(p):
                h = h @ w + b
                if i < 2:
                    h = jax.nn.relu(h)
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h), -1))

        @jax.jit
        def upd(p, s, x, y):
            gr = jax.grad(loss_fn)(p, x, y)
            u, s = tx.update(gr, s, p)
            return optax.apply_updates(p, u), s

        state = {"p": params, "s": tx.init(params)}
        xj, yj = jnp.asarray(x), jnp.asarray(y)

        def step():
            state["p"], state["s"] = upd(state["p"], state["s"], xj, yj)
            jax.block_until_ready(state["p"])

        return step
    raise Unavailable(framework)


# -- elementwise model: pred = a*tanh(b*x + c) + d*x*x, squared loss, SGD ------------------


def elementwise(framework, size=1_000_000):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(size).astype(np.float32)
    y = (0.7 * np.tanh(1.3 * x - 0.2) + 0.1 * x * x).astype(np.float32)
    init = dict(a=0.5, b=1.0, c=0.0, d=0.0)
    lr = 0.1
    if framework == "gradpipe":
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            a, b, c, d = (tf.Variable(np.float32(init[k])) for k in "abcd")
            xp, yp = tf.placeholder(tf.float32, [size]), tf.placeholder(tf.float32, [size])
            pred = a * tf.tanh(b * xp + c) + d * xp * xp
            loss = tf.reduce_mean(tf.square(pred - yp))
            train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
            sess = tf.Session()
            sess.run(tf.global_variables_initializer())
        run = sess.make_callable(train, [xp, yp])
        return lambda: run(x, y)
    if framework == "numpy":
        p = {k: np.float32(v) for k, v in init.items()}
        t, u, r = (np.empty_like(x) for _ in range(3))
        x2 = x * x

        def step():
            np.multiply(x, p["b"], out=u)
            np.add(u, p["c"], out=u)
            np.tanh(u, out=t)
            np.multiply(t, p["a"], out=r)
            np.add(r, p["d"] * x2, out=r)
            np.subtract(r, y, out=r)
            np.multiply(r, np.float32(2.0 / size), out=r)  # d loss / d pred
            ga, gd = np.dot(r, t), np.dot(r, x2)
            np.multiply(t, t, out=u)
            np.subtract(1, u, out=u)
            np.multiply(u, r, out=u)
            np.multiply(u, p["a"], out=u)  # d loss / d (b*x + c)
            gc, gb = u.sum(), np.dot(u, x)
            for k, gk in zip("abcd", (ga, gb, gc, gd)):
                p[k] = np.float32(p[k] - lr * gk)

        return step
    if framework == "torch":
        torch = import_torch()
        ps = [torch.tensor(init[k], requires_grad=True) for k in "abcd"]
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)

        def step():
            a, b, c, d = ps
            loss = ((a * torch.tanh(b * xt + c) + d * xt * xt - yt) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for q in ps:
                    q.sub_(lr * q.grad)
                    q.grad = None

        return step
    if framework == "jax":
        jax, jnp = import_jax()

        def loss_fn(p, x, y):
            a, b, c, d = p
            return jnp.mean((a * jnp.tanh(b * x + c) + d * x * x - y) ** 2)

        @jax.jit
        def upd(p, x, y):
            gr = jax.grad(loss_fn)(p, x, y)
            return tuple(q - lr * gq for q, gq in zip(p, gr))

        state = {"p": tuple(jnp.float32(init[k]) for k in "abcd")}
        xj, yj = jnp.asarray(x), jnp.asarray(y)

        def step():
            state["p"] = upd(state["p"], xj, yj)
            jax.block_until_ready(state["p"])

        return step
    raise Unavailable(framework)


# -- tanh RNN: 50 steps, batch 64, hidden 128, linear readout, SGD + clip_by_global_norm --------


def rnn(framework, size=None):
    steps, batch, features, hidden, classes = 50, 64, 32, 128, 10
    lr, clip = 0.1, 1.0
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps, batch, features)).astype(np.float32)
    y = rng.standard_normal((batch, classes)).astype(np.float32)
    k0 = (rng.standard_normal((features + hidden, hidden)) / math.sqrt(features + hidden)
          ).astype(np.float32)
    w0 = (rng.standard_normal((hidden, classes)) / math.sqrt(hidden)).astype(np.float32)
    if framework == "gradpipe":
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            xp = tf.placeholder(tf.float32, [steps, batch, features])
            yp = tf.placeholder(tf.float32, [batch, classes])
            kernel, bias = tf.Variable(k0), tf.Variable(np.zeros(hidden, np.float32))
            w, b = tf.Variable(w0), tf.Variable(np.zeros(classes, np.float32))
            h = tf.rnn(xp, kernel, bias, cell="tanh")[-1]
            loss = tf.reduce_mean(tf.square(tf.matmul(h, w) + b - yp))
            params = [kernel, bias, w, b]
            clipped, _ = tf.clip_by_global_norm(tf.gradients(loss, params), clip)
            train = tf.train.GradientDescentOptimizer(lr).apply_gradients(zip(clipped, params))
            sess = tf.Session()
            sess.run(tf.global_variables_initializer())
        run = sess.make_callable(train, [xp, yp])
        return lambda: run(x, y)
    if framework == "numpy":
        p = {"k": k0.copy(), "b": np.zeros(hidden, np.float32), "w": w0.copy(),
             "bo": np.zeros(classes, np.float32)}
        hs = np.zeros((steps + 1, batch, hidden), np.float32)
        xs = x.reshape(steps * batch, features)

        def step():
            kx, kh = p["k"][:features], p["k"][features:]
            xk = (xs @ kx).reshape(steps, batch, hidden)
            for t in range(steps):
                np.tanh(xk[t] + hs[t] @ kh + p["b"], out=hs[t + 1])
            dlog = (hs[-1] @ p["w"] + p["bo"] - y) * np.float32(2 / y.size)
            grads = {"w": hs[-1].T @ dlog, "bo": dlog.sum(0)}
            dh = dlog @ p["w"].T
            das = np.empty_like(xk)
            dkh = np.zeros_like(kh)
            for t in range(steps - 1, -1, -1):
                da = dh * (1 - hs[t + 1] * hs[t + 1])
                das[t] = da
                dkh += hs[t].T @ da
                dh = da @ kh.T
            das = das.reshape(steps * batch, hidden)
            grads["k"] = np.concatenate([xs.T @ das, dkh])
            grads["b"] = das.sum(0)
            norm = math.sqrt(sum(float(np.vdot(gr, gr)) for gr in grads.values()))
            scale = np.float32(lr * clip / max(norm, clip))
            for name, gr in grads.items():
                p[name] -= gr * scale

        return step
    if framework == "torch":
        torch = import_torch()
        kernel = torch.nn.Parameter(torch.from_numpy(k0.copy()))
        bias = torch.nn.Parameter(torch.zeros(hidden))
        w = torch.nn.Parameter(torch.from_numpy(w0.copy()))
        b = torch.nn.Parameter(torch.zeros(classes))
        params = [kernel, bias, w, b]
        opt = torch.optim.SGD(params, lr=lr)
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)

        def step():
            opt.zero_grad(set_to_none=True)
            xk = (xt.reshape(-1, features) @ kernel[:features]).reshape(steps, batch, hidden)
            kh = kernel[features:]
            h = torch.zeros(batch, hidden)
            for t in range(steps):
                h = torch.tanh(xk[t] + h @ kh + bias)
            ((h @ w + b - yt) ** 2).mean().backward()
            torch.nn.utils.clip_grad_norm_(params, clip, foreach=True)
            opt.step()

        return step
    if framework == "jax":
        jax, jnp = import_jax()
        optax = import_optax()
        tx = optax.chain(optax.clip_by_global_norm(clip), optax.sgd(lr))

        def loss_fn(p, x, y):
            kernel, bias, w, b = p
            xk = x @ kernel[:features]
            kh = kernel[features:]

            def cell(h, xk_t):
                h = jnp.tanh(xk_t + h @ kh + bias)
                return h, None

            h, _ = jax.lax.scan(cell, jnp.zeros((batch, hidden), jnp.float32), xk)
            return jnp.mean((h @ w + b - y) ** 2)

        @jax.jit
        def upd(p, s, x, y):
            gr = jax.grad(loss_fn)(p, x, y)
            u, s = tx.update(gr, s, p)
            return optax.apply_updates(p, u), s

        params = tuple(jnp.asarray(a) for a in (k0, np.zeros(hidden, np.float32), w0,
                                                 np.zeros(classes, np.float32)))
        state = {"p": params, "s": tx.init(params)}
        xj, yj = jnp.asarray(x), jnp.asarray(y)

        def step():
            state["p"], state["s"] = upd(state["p"], state["s"], xj, yj)
            jax.block_until_ready(state["p"])

        return step
    raise Unavailable(framework)


# -- LeNet-5: 28x28x1, batch 64, conv5x5x6-pool-conv5x5x16-pool-120-84-10, Adam ----------------
# ``size`` is the number of threads each framework may use (1 or 2).


def _lenet_weights(rng):
    shapes = [(5, 5, 1, 6), (5, 5, 6, 16), (256, 120), (120, 84), (84, 10)]
    ws = [(rng.standard_normal(s) * math.sqrt(2 / math.prod(s[:-1]))).astype(np.float32)
          for s in shapes]
    return ws, [np.zeros(s[-1], np.float32) for s in shapes]


def lenet(framework, size=1):
    rng = np.random.default_rng(0)
    ws, bs = _lenet_weights(rng)
    x = rng.uniform(0, 1, (64, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, 64).astype(np.int32)
    lr = 1e-3
    if framework == "gradpipe":
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            xp, yp = tf.placeholder(tf.float32, [None, 28, 28, 1]), tf.placeholder(tf.int32, [None])
            wv = [tf.Variable(w) for w in ws]
            bv = [tf.Variable(b) for b in bs]
            h = xp
            for w, b in zip(wv[:2], bv[:2]):
                h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(h, w, 1, "VALID") + b), 2, 2, "VALID")
            h = tf.reshape(h, [-1, 256])
            for i, (w, b) in enumerate(zip(wv[2:], bv[2:])):
                h = tf.matmul(h, w) + b
                if i < 2:
                    h = tf.nn.relu(h)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yp,
                                                                                 logits=h))
            train = tf.train.AdamOptimizer(lr).minimize(loss)
            sess = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=size))
            sess.run(tf.global_variables_initializer())
        run = sess.make_callable(train, [xp, yp])
        return lambda: run(x, y)
    if framework == "torch":
        torch = import_torch()
        torch.set_num_threads(size)
        nn = torch.nn
        model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                              nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120),
                              nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
        params = [p for p in model.parameters()]
        with torch.no_grad():  # the same numbers: HWIO -> OIHW, [in, out] -> [out, in]
            for k, (w, b) in enumerate(zip(ws, bs)):
                w = w.transpose(3, 2, 0, 1) if w.ndim == 4 else w.T
                params[2 * k].copy_(torch.from_numpy(np.ascontiguousarray(w)))
                params[2 * k + 1].copy_(torch.from_numpy(b))
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
        yt = torch.from_numpy(y.astype(np.int64))

        def step():
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(xt), yt).backward()
            opt.step()

        return step
    raise Unavailable(framework)


# -- embedding: a large table, a batch of id bags, one sparse Adagrad step (issue 15) -------

EMBED_DIM, EMBED_BATCH, EMBED_BAG = 64, 1024, 20


def embedding(framework, size=EMBED_DIM * 1_000_000):
    """``size`` float32 table entries (1e6 rows of 64): a batch of 1024 bags of 20 ids, the
    bags' mean embeddings against fixed targets (mean squared error), one Adagrad step.

    gradpipe's step feeds the ids and updates only the rows looked up (IndexedSlices and
    SparseApplyAdagrad); ``gradpipe_dense`` is the same model whose gradient is made dense
    before the update (the path without sparse gradients: a table-sized gradient and update
    each step); torch's nn.Embedding(sparse=True) with its sparse Adagrad and SparseAdam. The
    ids come from a pool of 8 batches, the same for every variant.
    """
    rows = max(size // EMBED_DIM, 1)
    rng = np.random.default_rng(0)
    table = (rng.standard_normal((rows, EMBED_DIM)) * 0.01).astype(np.float32)
    pool = [rng.integers(0, rows, (EMBED_BATCH, EMBED_BAG)) for _ in range(8)]
    target = rng.standard_normal((EMBED_BATCH, EMBED_DIM)).astype(np.float32)
    lr, initial = 0.1, 0.1
    turn = {"k": 0}

    def next_ids():
        turn["k"] = (turn["k"] + 1) % len(pool)
        return pool[turn["k"]]

    if framework in ("gradpipe", "gradpipe_dense"):
        import engine as tf

        g = tf.Graph()
        with g.as_default():
            init = tf.placeholder(tf.float32, [rows, EMBED_DIM])
            weights = tf.Variable(init)
            ids = tf.placeholder(tf.int64, [None, EMBED_BAG])
            bags = tf.reduce_mean(tf.nn.embedding_lookup(weights, ids), axis=1)
            loss = tf.reduce_mean(tf.square(bags - tf.constant(target)))
            opt = tf.train.AdagradOptimizer(lr, initial)
            (grad, var), = opt.compute_gradients(loss, [weights])
            if framework == "gradpipe_dense":
                grad = tf.convert_to_tensor(grad)
            train = opt.apply_gradients([(grad, var)])
            sess = tf.Session()
            sess.run(tf.global_variables_initializer(), {init: table})
        run = sess.make_callable(train, [ids])
        return lambda: run(next_ids())
    if framework in ("torch_adagrad", "torch_sparse_adam"):
        torch = import_torch()
        emb = torch.nn.Embedding(rows, EMBED_DIM, sparse=True)
        with torch.no_grad():
            emb.weight.copy_(torch.from_numpy(table))
        if framework == "torch_adagrad":
            opt = torch.optim.Adagrad(emb.parameters(), lr=lr, initial_accumulator_value=initial)
        else:
            opt = torch.optim.SparseAdam(emb.parameters(), lr=lr)
        target_t = torch.from_numpy(target)
        pool_t = [torch.from_numpy(p) for p in pool]

        def step():
            turn["k"] = (turn["k"] + 1) % len(pool_t)
            opt.zero_grad(set_to_none=True)
            bags = emb(pool_t[turn["k"]]).mean(dim=1)
            ((bags - target_t) ** 2).mean().backward()
            opt.step()

        return step
    raise Unavailable(framework)


WORKLOADS = {
    "tiny": (tiny, [None], ["gradpipe", "python", "torch", "jax"]),
    "adam_clip": (adam_clip, [10_000_000], ["gradpipe", "numpy", "torch_fused", "torch_foreach",
                                             "optax"]),
    "triad": (triad, [10_000_000], ["torch", "numexpr"]),
    "mlp": (mlp, [256], ["gradpipe", "torch", "jax"]),
    "elementwise": (elementwise, [1_000_000, 4_000_000], ["gradpipe", "numpy", "torch", "jax"]),
    "rnn": (rnn, [None], ["gradpipe", "numpy", "torch", "jax"]),
    "embedding": (embedding, [EMBED_DIM * 1_000_000], ["gradpipe", "gradpipe_dense", "torch_adagrad",
                                                       "torch_sparse_adam"]),
    "lenet": (lenet, [1, 2], ["gradpipe", "torch"]),
}
