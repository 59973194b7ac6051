"""A small JAX training loop on CPU with a profiler server, for
test_capture.py: `python jax_job.py PORT SECONDS` starts
jax.profiler.start_server(PORT), prints "ready" once the first step has
compiled, then runs steps marked with jax.profiler.StepTraceAnnotation for
SECONDS."""
import sys
import time

import jax
import jax.numpy as jnp


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    jax.profiler.start_server(port)

    @jax.jit
    def train_step(w, x):
        loss = lambda w: jnp.mean(jnp.tanh(x @ w) ** 2)
        return w - 0.01 * jax.grad(loss)(w)

    w = jnp.ones((256, 256)) * 0.01
    x = jnp.ones((64, 256))
    w = train_step(w, x).block_until_ready()
    print("ready", flush=True)
    end = time.time() + seconds
    step = 0
    while time.time() < end:
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            w = train_step(w, x).block_until_ready()
        step += 1
        time.sleep(0.005)


if __name__ == "__main__":
    main()
