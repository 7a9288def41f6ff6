"""Numpy re-implementations of what the programs of this folder train, written from the
formulas (TF1's optimizer updates as TF documents them, backpropagation by hand), so that the
tests compare the engine's numbers with arithmetic derived independently of it."""

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def sigmoid_layers(x, layers):
    """Activations [x, a1, ...] of sigmoid(a @ W + b) layer after layer."""
    acts = [x]
    for w, b in layers:
        acts.append(sigmoid(acts[-1] @ w + b))
    return acts


def sigmoid_layers_grads(acts, layers, d_out):
    """[(dW, db)] per layer and d_input, from dL/d(last activation)."""
    grads, d = [], d_out
    for (w, _), a_in, a_out in zip(layers[::-1], acts[-2::-1], acts[:0:-1]):
        dz = d * a_out * (1 - a_out)
        grads.append((a_in.T @ dz, dz.sum(0)))
        d = dz @ w.T
    return grads[::-1], d


class RMSProp:
    """TF1's RMSPropOptimizer (no momentum, not centered): ms starts at 1.0;
    ms += (g^2 - ms) * (1 - decay); var -= lr * g / sqrt(ms + epsilon)."""

    def __init__(self, lr, decay=0.9, epsilon=1e-10):
        self.lr, self.decay, self.eps, self.ms = lr, decay, epsilon, {}

    def step(self, key, var, g):
        ms = self.ms.setdefault(key, np.ones_like(var))
        ms += (g * g - ms) * (1 - self.decay)
        var -= self.lr * g / np.sqrt(ms + self.eps)


class Adam:
    """TF1's AdamOptimizer: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
    var -= lr_t * m / (sqrt(v) + epsilon), the "epsilon hat" form; t counts this
    optimizer's own steps."""

    def __init__(self, lr, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, epsilon
        self.t, self.m, self.v = 0, {}, {}

    def begin_step(self):
        self.t += 1

    def step(self, key, var, g):
        m = self.m.setdefault(key, np.zeros_like(var))
        v = self.v.setdefault(key, np.zeros_like(var))
        m += (g - m) * (1 - self.b1)
        v += (g * g - v) * (1 - self.b2)
        lr_t = self.lr * np.sqrt(1 - self.b2 ** self.t) / (1 - self.b1 ** self.t)
        var -= lr_t * m / (np.sqrt(v) + self.eps)


def lstm_forward(xs, kernel, bias, forget_bias=1.0):
    """TF's BasicLSTMCell over the steps ``xs`` [time, batch, depth] from zero state:
    i, j, f, o = split(concat([x, h]) @ kernel + bias); c = c * sigmoid(f + forget_bias)
    + sigmoid(i) * tanh(j); h = tanh(c) * sigmoid(o). Returns the hs and a cache."""
    units = kernel.shape[1] // 4
    h = c = np.zeros((xs.shape[1], units))
    hs, cache = [], []
    for x in xs:
        xh = np.concatenate([x, h], 1)
        i, j, f, o = np.split(xh @ kernel + bias, 4, axis=1)
        si, tj, sf, so = sigmoid(i), np.tanh(j), sigmoid(f + forget_bias), sigmoid(o)
        c_prev, c = c, c * sf + si * tj
        h = np.tanh(c) * so
        cache.append((xh, c_prev, c, si, tj, sf, so))
        hs.append(h)
    return hs, cache


def lstm_backward(dhs, kernel, cache):
    """(d kernel, d bias) by backpropagation through time from dL/dh of every step."""
    units = kernel.shape[1] // 4
    depth = kernel.shape[0] - units
    dk, db = np.zeros_like(kernel), np.zeros(kernel.shape[1])
    dh_next = dc_next = 0.0
    for dh_out, (xh, c_prev, c, si, tj, sf, so) in zip(dhs[::-1], cache[::-1]):
        dh = dh_out + dh_next
        tc = np.tanh(c)
        dc = dc_next + dh * so * (1 - tc ** 2)
        dz = np.concatenate([dc * tj * si * (1 - si), dc * si * (1 - tj ** 2),
                             dc * c_prev * sf * (1 - sf), dh * tc * so * (1 - so)], 1)
        dk += xh.T @ dz
        db += dz.sum(0)
        dxh = dz @ kernel.T
        dh_next, dc_next = dxh[:, depth:], dc * sf
    return dk, db
