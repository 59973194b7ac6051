#!/usr/bin/env python3
"""Record JAX programs that no test uses, on a GPU, with and without XLA's
command buffers, to check rtfprof on traces it was not built against.

    python3 tools/xplane/record_heldout.py --all OUT_DIR
    python3 tools/xplane/record_heldout.py --unpack OUT_DIR HELDOUT_DIR

runs each program twice in its own process (XLA reads XLA_FLAGS once, when
the backend starts): with XLA's default command buffers, and with
`XLA_FLAGS=--xla_gpu_enable_command_buffer=` (the `_nocb` twin: the same
HLO module, every kernel naming its own instruction). It writes
OUT_DIR/<program>[_nocb].xplane.pb.gz, the `vm.xplane.pb` that
`jax.profiler.trace` wrote, and OUT_DIR/versions.txt. Recorded as the
shared traces were (../shared/traces/README.md): 3 untraced warm-up steps,
then 10 steps, each inside `jax.profiler.StepTraceAnnotation("train",
step_num=i)`.

The programs, chosen for what the shared traces lack:

  tx_scan   a decoder-only transformer whose 4 layers are stacked with
            `lax.scan` over stacked weights, each layer under
            `jax.checkpoint` (remat): while loops in the forward and the
            backward pass, command buffers inside them; AdamW after a global
            norm clip, the update skipped by a `lax.cond` when the loss is
            not finite.
  multi     three programs a step: a jitted augmentation of a batch put on
            the device each step (host-to-device copy), a Flax CNN's
            training step in bfloat16 with its state donated, and an
            evaluation whose loss is read back (device-to-host copy).
  gru_switch  a GRU over `lax.scan` unrolled by two, and a `lax.switch` of
            three update rules on the step count (a conditional with
            three branches in the step).
  tx_flax   a Flax transformer in bfloat16: `nn.scan` over `nn.remat`
            blocks (saving only the matrix products), two micro-batches
            whose gradients are summed in an outer `lax.scan` (a loop in a
            loop), AdamW on a warm-up cosine schedule.
  cond_gemm a probe of conditionals in command buffers: cuBLAS gemms before,
            inside and after a `lax.switch` and a `lax.cond` (a library call's
            graph inside a branch's graph), and a `lax.fori_loop` of a
            trip count known only on the device.
  cnn_multisteps  a Flax CNN (cuDNN convolutions) under optax.MultiSteps:
            gradients accumulated over two steps, the update in a `lax.cond`.
  moe_scan  a mixture-of-experts layer (top-2 gating with `lax.top_k`,
            dispatch by one-hot einsums) applied 3 times by a `lax.scan`
            whose body holds a `lax.cond` (an auxiliary loss on odd layers).
  unet      a small convolutional U-Net in bfloat16 (GroupNorm, strided and
            transposed convolutions, a self-attention block at the bottom,
            a sinusoidal time embedding) with an EMA of its weights.
  ssm_fft   a diagonal state-space layer computed by `lax.associative_scan`,
            an FFT long convolution (`jnp.fft`, which no graph holds),
            dropout, and a `fori_loop` of a fixed trip count.

`--only NAME,...` records only those programs.

Then, on this machine: `--unpack` writes HELDOUT_DIR/<name>/vm.xplane.pb,
`tools/xplane/xprof_goldens.py --heldout HELDOUT_DIR` XProf's answers
beside them, and `RTFPROF_HELDOUT_JAX_GPU=HELDOUT_DIR cargo test --release
--test integration -- xplane:: device:: steps:: memory::` holds rtfprof to
the rules the shared traces are held to.
"""
import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time

PROGRAMS = ["tx_scan", "multi", "gru_switch", "tx_flax", "cond_gemm", "cnn_multisteps", "moe_scan", "unet", "ssm_fft"]
WARMUP, STEPS = 3, 10


def tx_scan(jax, jnp, small):
    import optax

    vocab, d, heads, layers, seq, batch = (512, 64, 4, 2, 32, 2) if small else (8192, 512, 8, 4, 256, 16)
    keys = iter(jax.random.split(jax.random.PRNGKey(0), 16))

    def dense(k, *shape):
        return jax.random.normal(k, shape, jnp.float32) * (shape[-2] ** -0.5)

    params = {
        "embed": jax.random.normal(next(keys), (vocab, d)) * 0.02,
        "layers": {
            "ln1": jnp.ones((layers, d)),
            "qkv": dense(next(keys), layers, d, 3 * d),
            "proj": dense(next(keys), layers, d, d),
            "ln2": jnp.ones((layers, d)),
            "up": dense(next(keys), layers, d, 4 * d),
            "down": dense(next(keys), layers, 4 * d, d),
        },
        "ln_f": jnp.ones((d,)),
    }

    def norm(x, scale):
        x = x - x.mean(-1, keepdims=True)
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5) * scale

    def layer(x, w):
        with jax.named_scope("attention"):
            h = norm(x, w["ln1"])
            q, k, v = jnp.split(h @ w["qkv"], 3, axis=-1)
            split = lambda t: t.reshape(batch, seq, heads, d // heads)
            scores = jnp.einsum("bqhd,bkhd->bhqk", split(q), split(k)) / (d // heads) ** 0.5
            mask = jnp.tril(jnp.ones((seq, seq), bool))
            scores = jnp.where(mask, scores, -1e9)
            attn = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), split(v))
            x = x + attn.reshape(batch, seq, d) @ w["proj"]
        with jax.named_scope("mlp"):
            x = x + jax.nn.gelu(norm(x, w["ln2"]) @ w["up"]) @ w["down"]
        return x, None

    def loss_fn(params, tokens):
        x = params["embed"][tokens[:, :-1]]
        x, _ = jax.lax.scan(jax.checkpoint(layer), x, params["layers"])
        logits = norm(x, params["ln_f"]) @ params["embed"].T
        with jax.named_scope("loss"):
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-4))
    opt_state = opt.init(params)

    @jax.jit
    def step(params, opt_state, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)

        def apply(args):
            params, opt_state = args
            updates, opt_state = opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        params, opt_state = jax.lax.cond(jnp.isfinite(loss), apply, lambda args: args, (params, opt_state))
        return params, opt_state, loss

    tokens = jax.random.randint(next(keys), (batch, seq + 1), 0, vocab)
    state = [params, opt_state]

    def run():
        state[0], state[1], loss = step(state[0], state[1], tokens)
        return loss

    return run


def multi(jax, jnp, small):
    import flax.linen as nn
    import numpy as np
    import optax

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            for features in (32, 64, 128):
                x = nn.Conv(features, (3, 3), dtype=jnp.bfloat16)(x)
                x = nn.BatchNorm(use_running_average=not train, dtype=jnp.bfloat16)(x)
                x = nn.max_pool(nn.relu(x), (2, 2), strides=(2, 2))
            x = x.reshape(x.shape[0], -1)
            return nn.Dense(10, dtype=jnp.bfloat16)(nn.relu(nn.Dense(256, dtype=jnp.bfloat16)(x)))

    net, batch = Net(), 8 if small else 128
    rng = np.random.default_rng(0)
    images = rng.standard_normal((batch, 48, 48, 3), np.float32)
    labels = rng.integers(0, 10, batch)
    variables = net.init(jax.random.PRNGKey(0), jnp.asarray(images), train=False)
    opt = optax.sgd(0.05, momentum=0.9)
    state = {"params": variables["params"], "stats": variables["batch_stats"]}
    state["opt"] = opt.init(state["params"])

    @jax.jit
    def augment(x, key):
        flip = jax.random.bernoulli(key, 0.5, (x.shape[0], 1, 1, 1))
        x = jnp.where(flip, x[:, :, ::-1], x)
        return (x - x.mean((1, 2), keepdims=True)) / (x.std((1, 2), keepdims=True) + 1e-6)

    def loss_fn(params, stats, x, y):
        logits, updated = net.apply({"params": params, "batch_stats": stats}, x, train=True, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()
        return loss, updated["batch_stats"]

    def train(state, x, y):
        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(state["params"], state["stats"], x, y)
        updates, opt_state = opt.update(grads, state["opt"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "stats": stats, "opt": opt_state}, loss

    train = jax.jit(train, donate_argnums=0)

    @jax.jit
    def evaluate(state, x, y):
        logits = net.apply({"params": state["params"], "batch_stats": state["stats"]}, x, train=False)
        return optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()

    keys = [jax.random.PRNGKey(1)]
    box = [state]

    def run():
        keys[0], key = jax.random.split(keys[0])
        x = augment(jax.device_put(images), key)
        y = jax.device_put(labels)
        box[0], loss = train(box[0], x, y)
        return loss, float(evaluate(box[0], x, y))

    return run


def gru_switch(jax, jnp, small):
    import optax

    vocab, hidden, seq, batch = (64, 32, 8, 4) if small else (4096, 768, 48, 64)
    keys = iter(jax.random.split(jax.random.PRNGKey(2), 8))
    dense = lambda k, n, m: jax.random.normal(k, (n, m)) * n**-0.5  # noqa: E731
    params = {
        "embed": jax.random.normal(next(keys), (vocab, hidden)) * 0.02,
        "gates": dense(next(keys), 2 * hidden, 2 * hidden),
        "candidate": dense(next(keys), 2 * hidden, hidden),
        "out": dense(next(keys), hidden, vocab),
    }

    def loss_fn(params, tokens):
        def cell(h, x):
            with jax.named_scope("gru"):
                z, r = jnp.split(jax.nn.sigmoid(jnp.concatenate([x, h], -1) @ params["gates"]), 2, -1)
                candidate = jnp.tanh(jnp.concatenate([x, r * h], -1) @ params["candidate"])
                h = (1 - z) * h + z * candidate
            return h, h

        xs = jnp.swapaxes(params["embed"][tokens[:, :-1]], 0, 1)
        _, hs = jax.lax.scan(cell, jnp.zeros((batch, hidden)), xs, unroll=2)
        logits = jnp.swapaxes(hs, 0, 1) @ params["out"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    opt = optax.adam(1e-3)

    @jax.jit
    def step(params, opt_state, count, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)

        def adam(args):
            params, opt_state = args
            updates, opt_state = opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        def sgd(args):
            params, opt_state = args
            return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), opt_state

        branches = [adam, sgd, lambda args: args]
        params, opt_state = jax.lax.switch(count % 3, branches, (params, opt_state))
        return params, opt_state, count + 1, loss

    tokens = jax.random.randint(next(keys), (batch, seq + 1), 0, vocab)
    state = [params, opt.init(params), jnp.int32(0)]

    def run():
        state[0], state[1], state[2], loss = step(*state, tokens)
        return loss

    return run


def tx_flax(jax, jnp, small):
    import flax.linen as nn
    import optax

    vocab, d, heads, layers, seq, batch = (256, 64, 4, 2, 16, 4) if small else (8192, 768, 12, 6, 256, 16)

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _):
            mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
            h = nn.LayerNorm(dtype=jnp.bfloat16)(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=heads, dtype=jnp.bfloat16)(h, h, mask=mask)
            h = nn.Dense(4 * d, dtype=jnp.bfloat16)(nn.LayerNorm(dtype=jnp.bfloat16)(x))
            return x + nn.Dense(d, dtype=jnp.bfloat16)(nn.gelu(h)), None

    class Model(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            embed = nn.Embed(vocab, d)
            policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
            blocks = nn.scan(nn.remat(Block, policy=policy), variable_axes={"params": 0}, split_rngs={"params": True}, length=layers)
            x, _ = blocks(name="blocks")(embed(tokens).astype(jnp.bfloat16), None)
            return embed.attend(nn.LayerNorm(dtype=jnp.bfloat16)(x).astype(jnp.float32))

    model = Model()
    tokens = jax.random.randint(jax.random.PRNGKey(3), (2, batch, seq + 1), 0, vocab)
    params = model.init(jax.random.PRNGKey(4), tokens[0, :, :-1])
    schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-4, 5, 100)
    opt = optax.adamw(schedule)

    def loss_fn(params, micro):
        logits = model.apply(params, micro[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, micro[:, 1:]).mean()

    @jax.jit
    def step(params, opt_state, tokens):
        def accumulate(total, micro):
            loss, grads = jax.value_and_grad(loss_fn)(params, micro)
            return jax.tree.map(jnp.add, total, (loss, grads)), None

        zero = (jnp.float32(0), jax.tree.map(jnp.zeros_like, params))
        (loss, grads), _ = jax.lax.scan(accumulate, zero, tokens)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    state = [params, opt.init(params)]

    def run():
        state[0], state[1], loss = step(state[0], state[1], tokens)
        return loss

    return run


def cond_gemm(jax, jnp, small):
    rows, width = (64, 32) if small else (4096, 512)
    keys = jax.random.split(jax.random.PRNGKey(5), 3)
    w = jax.random.normal(keys[0], (width, width)) * width**-0.5
    x = jax.random.normal(keys[1], (rows, width))

    @jax.jit
    def step(w, x, count):
        h = jnp.tanh(x @ w) * 2 + 1
        with jax.named_scope("switch"):
            h = jax.lax.switch(count % 3, [lambda h: jnp.tanh(h @ w) * 3, lambda h: jax.nn.relu(h) + 1, lambda h: (h @ w.T) - h], h)
        h = jnp.tanh(h @ w) + h
        with jax.named_scope("cond"):
            h = jax.lax.cond(count % 2 == 0, lambda h: jnp.sin(h @ w), lambda h: jnp.cos(h), h)
        with jax.named_scope("loop"):
            h = jax.lax.fori_loop(0, 2 + count % 2, lambda i, h: jnp.tanh(h @ w) + 0.1, h)
        h = jax.nn.gelu(h @ w)
        return w - 1e-3 * (x.T @ h) / rows, count + 1, (h * h).mean()

    state = [w, jnp.int32(0)]

    def run():
        state[0], state[1], loss = step(state[0], x, state[1])
        return loss

    return run


def training(jax, opt, loss_fn, params):
    """`run()`: one jitted step (`jit_step`) of `opt` on `loss_fn(params)`,
    returning the loss."""
    import optax

    @jax.jit
    def step(params, opt_state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    state = [params, opt.init(params)]

    def run():
        state[0], state[1], loss = step(*state)
        return loss

    return run


def cnn_multisteps(jax, jnp, small):
    import flax.linen as nn
    import optax

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            for features in (32, 64):
                x = nn.avg_pool(nn.relu(nn.Conv(features, (3, 3))(x)), (2, 2), strides=(2, 2))
            return nn.Dense(10)(x.reshape(x.shape[0], -1))

    batch, size = (4, 16) if small else (64, 64)
    net = Net()
    x = jax.random.normal(jax.random.PRNGKey(6), (batch, size, size, 3))
    y = jax.random.randint(jax.random.PRNGKey(7), (batch,), 0, 10)
    params = net.init(jax.random.PRNGKey(8), x)
    opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)

    return training(jax, opt, lambda p: optax.softmax_cross_entropy_with_integer_labels(net.apply(p, x), y).mean(), params)


def moe_scan(jax, jnp, small):
    import optax

    tokens, d, experts, hidden, layers = (32, 16, 4, 32, 3) if small else (2048, 512, 8, 1024, 3)
    keys = iter(jax.random.split(jax.random.PRNGKey(9), 8))
    params = {
        "gate": jax.random.normal(next(keys), (layers, d, experts)) * d**-0.5,
        "up": jax.random.normal(next(keys), (layers, experts, d, hidden)) * d**-0.5,
        "down": jax.random.normal(next(keys), (layers, experts, hidden, d)) * hidden**-0.5,
    }
    x = jax.random.normal(next(keys), (tokens, d))

    def loss_fn(params):
        def layer(carry, w):
            h, aux, i = carry
            with jax.named_scope("moe"):
                probs = jax.nn.softmax(h @ w["gate"], axis=-1)
                weights, chosen = jax.lax.top_k(probs, 2)
                dispatch = jax.nn.one_hot(chosen, experts) * weights[..., None]
                routed = jnp.einsum("tke,td->etd", dispatch, h)
                out = jnp.einsum("eth,ehd->etd", jax.nn.gelu(jnp.einsum("etd,edh->eth", routed, w["up"])), w["down"])
                h = h + out.sum(0)
            with jax.named_scope("aux"):
                aux = jax.lax.cond(i % 2 == 1, lambda a: a + (probs.mean(0) ** 2).sum() * experts, lambda a: a, aux)
            return (h, aux, i + 1), None

        (h, aux, _), _ = jax.lax.scan(layer, (x, jnp.float32(0), 0), params)
        return (h**2).mean() + 0.01 * aux

    return training(jax, optax.sgd(1e-3), loss_fn, params)


def unet(jax, jnp, small):
    import flax.linen as nn
    import optax

    size, batch, width = (16, 2, 8) if small else (64, 32, 64)

    class Block(nn.Module):
        features: int

        @nn.compact
        def __call__(self, x, t):
            h = nn.Conv(self.features, (3, 3), dtype=jnp.bfloat16)(nn.silu(nn.GroupNorm(8)(x)))
            h = h + nn.Dense(self.features, dtype=jnp.bfloat16)(t)[:, None, None, :]
            h = nn.Conv(self.features, (3, 3), dtype=jnp.bfloat16)(nn.silu(nn.GroupNorm(8)(h)))
            return h + nn.Conv(self.features, (1, 1), dtype=jnp.bfloat16)(x)

    class UNet(nn.Module):
        @nn.compact
        def __call__(self, x, t):
            freqs = jnp.exp(-jnp.arange(16) / 16 * jnp.log(1e4))
            t = nn.Dense(width * 4)(jnp.concatenate([jnp.sin(t[:, None] * freqs), jnp.cos(t[:, None] * freqs)], -1))
            x = nn.Conv(width, (3, 3), dtype=jnp.bfloat16)(x)
            skips = []
            for k in (1, 2):
                x = Block(width * k)(x, t)
                skips.append(x)
                x = nn.Conv(width * k, (3, 3), strides=(2, 2), dtype=jnp.bfloat16)(x)
            b, hh, ww, c = x.shape
            flat = x.reshape(b, hh * ww, c)
            x = x + nn.SelfAttention(num_heads=4, dtype=jnp.bfloat16)(nn.GroupNorm(8)(flat)).reshape(x.shape)
            for k in (2, 1):
                x = nn.ConvTranspose(width * k, (2, 2), strides=(2, 2), dtype=jnp.bfloat16)(x)
                x = Block(width * k)(jnp.concatenate([x, skips.pop()], -1), t)
            return nn.Conv(3, (3, 3))(x)

    model = UNet()
    keys = jax.random.split(jax.random.PRNGKey(10), 4)
    images = jax.random.normal(keys[0], (batch, size, size, 3))
    params = model.init(keys[1], images, jnp.zeros((batch,)))
    opt = optax.adam(2e-4)

    @jax.jit
    def step(params, ema, opt_state, key):
        t_key, n_key = jax.random.split(key)
        t = jax.random.uniform(t_key, (batch,))
        noise = jax.random.normal(n_key, images.shape)
        noisy = jnp.sqrt(1 - t)[:, None, None, None] * images + jnp.sqrt(t)[:, None, None, None] * noise
        loss, grads = jax.value_and_grad(lambda p: ((model.apply(p, noisy, t) - noise) ** 2).mean())(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        ema = jax.tree.map(lambda e, p: 0.999 * e + 0.001 * p, ema, params)
        return params, ema, opt_state, loss

    state = [params, params, opt.init(params), keys[2]]

    def run():
        state[3], key = jax.random.split(state[3])
        state[0], state[1], state[2], loss = step(state[0], state[1], state[2], key)
        return loss

    return run


def ssm_fft(jax, jnp, small):
    import optax

    length, d, batch = (64, 8, 2) if small else (4096, 256, 8)
    keys = iter(jax.random.split(jax.random.PRNGKey(11), 8))
    params = {
        "decay": jax.random.uniform(next(keys), (d,), minval=0.9, maxval=0.999),
        "mix": jax.random.normal(next(keys), (d, d)) * d**-0.5,
        "kernel": jax.random.normal(next(keys), (length, d)) * 0.01,
    }
    x = jax.random.normal(next(keys), (batch, length, d))

    # (x is an argument: closed over, it would be a 32 MB constant in the
    # trace's HloProto.)
    def loss_fn(params, x, key):
        with jax.named_scope("ssm"):
            a = jnp.broadcast_to(params["decay"], x.shape)
            _, h = jax.lax.associative_scan(lambda l, r: (l[0] * r[0], r[0] * l[1] + r[1]), (a, x), axis=1)
        with jax.named_scope("long_conv"):
            spectrum = jnp.fft.rfft(h, n=2 * length, axis=1) * jnp.fft.rfft(params["kernel"], n=2 * length, axis=0)
            y = jnp.fft.irfft(spectrum, n=2 * length, axis=1)[:, :length]
        keep = jax.random.bernoulli(key, 0.9, y.shape)
        y = jnp.where(keep, y / 0.9, 0) @ params["mix"]
        y = jax.lax.fori_loop(0, 3, lambda i, y: jnp.tanh(y @ params["mix"]) + y, y)
        return ((y - x) ** 2).mean()

    opt = optax.adamw(1e-3)

    @jax.jit
    def step(params, opt_state, x, key):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, key)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    state = [params, opt.init(params), next(keys)]

    def run():
        state[2], key = jax.random.split(state[2])
        state[0], state[1], loss = step(state[0], state[1], x, key)
        return loss

    return run


def record(program, trace_dir, small):
    import jax
    import jax.numpy as jnp

    run = globals()[program](jax, jnp, small)
    for _ in range(WARMUP):
        jax.block_until_ready(run())
    with jax.profiler.trace(trace_dir):
        for i in range(STEPS):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                jax.block_until_ready(run())


def record_all(out, small, programs):
    os.makedirs(out, exist_ok=True)
    log = []
    for program in programs:
        for suffix, flags in (("", None), ("_nocb", "--xla_gpu_enable_command_buffer=")):
            name = program + suffix
            env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
            env.pop("XLA_FLAGS", None)
            if flags:
                env["XLA_FLAGS"] = flags
            with tempfile.TemporaryDirectory() as trace_dir:
                start = time.time()
                command = [sys.executable, __file__, "--program", program, "--trace-dir", trace_dir] + ["--small"] * small
                try:
                    code = subprocess.run(command, env=env, timeout=130).returncode
                except subprocess.TimeoutExpired:
                    code = "timed out"
                found = [os.path.join(d, f) for d, _, fs in os.walk(trace_dir) for f in fs if f.endswith(".xplane.pb")]
                log.append(f"{name}: exit {code}, {time.time() - start:.0f} s, {[os.path.getsize(f) for f in found]} bytes")
                print(log[-1], flush=True)
                if code == 0 and len(found) == 1:
                    with open(found[0], "rb") as src, gzip.open(os.path.join(out, name + ".xplane.pb.gz"), "wb") as dst:
                        shutil.copyfileobj(src, dst)
    import jax

    smi = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv"]
    versions = subprocess.run(smi, capture_output=True, text=True).stdout if shutil.which(smi[0]) else "no nvidia-smi\n"
    import flax
    import optax

    versions += f"jax {jax.__version__} {jax.devices()}\nflax {flax.__version__} optax {optax.__version__}\n"
    with open(os.path.join(out, "versions.txt"), "w") as f:
        f.write(versions + "\n".join(log) + "\n")


def unpack(out, heldout):
    """OUT/<name>.xplane.pb.gz -> HELDOUT/<name>/vm.xplane.pb."""
    for name in sorted(os.listdir(out)):
        if name.endswith(".xplane.pb.gz"):
            folder = os.path.join(heldout, name[: -len(".xplane.pb.gz")])
            os.makedirs(folder, exist_ok=True)
            with gzip.open(os.path.join(out, name), "rb") as src, open(os.path.join(folder, "vm.xplane.pb"), "wb") as dst:
                shutil.copyfileobj(src, dst)
            print(folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", metavar="OUT_DIR")
    parser.add_argument("--unpack", nargs=2, metavar=("OUT_DIR", "HELDOUT_DIR"))
    parser.add_argument("--program", choices=PROGRAMS)
    parser.add_argument("--trace-dir")
    parser.add_argument("--small", action="store_true", help="tiny shapes: a dry run on a CPU")
    parser.add_argument("--only", help="comma-separated programs (default: all)")
    args = parser.parse_args()
    if args.unpack:
        unpack(*args.unpack)
    elif args.all:
        programs = args.only.split(",") if args.only else PROGRAMS
        unknown = set(programs) - set(PROGRAMS)
        if unknown:
            parser.error(f"no such program: {', '.join(sorted(unknown))} (programs: {', '.join(PROGRAMS)})")
        record_all(args.all, args.small, programs)
    elif args.program and args.trace_dir:
        record(args.program, args.trace_dir, args.small)
    else:
        parser.error("give --all OUT_DIR, or --program and --trace-dir")


if __name__ == "__main__":
    main()
