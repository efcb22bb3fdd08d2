"""Smoke test of installed ROCm wheels, for a GPU host after `pip install`:

    python -m jax_plugins.xla_rocm7.smoke [--size N]

Prints what the plugin was built with and what JAX sees, then runs the check from
the ROCm documentation on the first AMD GPU: `jnp.tanh(x @ x.T)` in bfloat16,
compared with the same computation in float32 NumPy on the host.

Exit status: 0 the check passed; 1 it ran and gave wrong numbers (or failed);
2 no AMD GPU is usable here (said in one sentence, with the reason); 3 a GPU is
there but JAX could not start the ROCm backend (its error is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import build_info, count_gpus

EXIT_OK, EXIT_WRONG, EXIT_NO_GPU, EXIT_BACKEND = 0, 1, 2, 3
# bfloat16 keeps 8 significant bits; tanh's results lie in [-1, 1] and the products
# are accumulated in float32, so a few bf16 ulps of 1.0 bound an honest error.
TOLERANCE = 3 * 2.0 ** -8


def check(size: int) -> tuple[bool, str]:
    """tanh(x @ x.T) in bf16 on the first ROCm device against float32 NumPy; (passed, report)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    device = jax.devices("rocm")[0]
    x = jax.device_put(jax.random.normal(jax.random.key(0), (size, size), dtype=jnp.bfloat16) / np.sqrt(size),
                       device)
    start = time.perf_counter()
    y = jnp.tanh(x @ x.T).block_until_ready()
    seconds = time.perf_counter() - start
    host = np.asarray(x, dtype=np.float32)
    expected = np.tanh(host @ host.T)
    error = float(np.max(np.abs(np.asarray(y, dtype=np.float32) - expected)))
    passed = bool(np.isfinite(error)) and error <= TOLERANCE
    return passed, (f"tanh(x @ x.T), bf16 {size}x{size} on {device}: max |error| {error:.3g} "
                    f"(tolerance {TOLERANCE:.3g}), {seconds * 1e3:.1f} ms including compilation")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_plugins.xla_rocm<N>.smoke",
                                     description=__doc__.split("\n\n")[0],
                                     epilog="Exit status: 0 passed, 1 wrong result, 2 no AMD GPU, 3 backend failed.")
    parser.add_argument("--size", type=int, default=1024, help="matrix size (default: %(default)s)")
    args = parser.parse_args(argv)

    info = build_info()
    print("plugin build info:", json.dumps(info, indent=2, sort_keys=True))
    import jax  # after build_info: a broken jax install still shows what the plugin is

    gpus = count_gpus(os.environ)
    try:
        print(f"jax {jax.__version__}, devices: {jax.devices()}")
        if gpus.count == 0:
            print(f"smoke: no AMD GPU is usable here ({gpus.reason}); nothing to check on a GPU.")
            return EXIT_NO_GPU
        jax.devices("rocm")
    except RuntimeError as e:  # JAX raises this when a backend it was asked for fails to start
        print(f"smoke: {gpus.count} AMD GPU(s) found ({gpus.reason}), but JAX could not start the ROCm backend: {e}")
        return EXIT_BACKEND
    try:
        passed, report = check(args.size)
    except Exception as e:  # a kernel or runtime failure is a failed check, reported as such
        print(f"smoke: the check failed to run: {type(e).__name__}: {e}")
        return EXIT_WRONG
    print(("smoke: PASSED " if passed else "smoke: WRONG RESULT ") + report)
    return EXIT_OK if passed else EXIT_WRONG


if __name__ == "__main__":
    sys.exit(main())
