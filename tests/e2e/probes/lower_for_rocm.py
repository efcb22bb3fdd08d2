"""Lowers functions that use JAX's ROCm FFI targets for platform `rocm` (no GPU needed) and
prints, as JSON, the custom-call targets each lowered module names, or the error lowering
raised. Run by tests/e2e/test_wheels.py in a venv with jax and our wheels."""

import json
import re

import jax
import jax.numpy as jnp
from jax.experimental import rnn, sparse

# The threefry kernel is used on GPUs only when asked for.
jax.config.update("jax_threefry_gpu_kernel_lowering", True)
# BCOO products through hipSPARSE (else a generic lowering).
jax.config.update("jax_bcoo_cusparse_lowering", True)

results = {}


def lower(name, f, *args):
    try:
        text = jax.jit(f).trace(*args).lower(lowering_platforms=("rocm",)).as_text()
    except Exception as exc:  # reported, not raised: some lowerings call into the module
        results[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        return
    targets = set(re.findall(r"custom_call @([A-Za-z0-9_]+)", text))
    targets |= set(re.findall(r'call_target_name = "([^"]+)"', text))
    results[name] = {"targets": sorted(targets)}


x = jnp.ones((4, 4), jnp.float32)
lower("threefry", lambda k: jax.random.uniform(k, (8,)), jax.random.key(0))
lower("lu", jax.scipy.linalg.lu_factor, x)
lower("qr", jnp.linalg.qr, x)
lower("eigh", jnp.linalg.eigh, x)
lower("svd", jnp.linalg.svd, x)
bcoo = sparse.BCOO.fromdense(jnp.eye(4, dtype=jnp.float32))
lower("bcoo_matvec", lambda v: bcoo @ v, jnp.ones(4, jnp.float32))
weights = jnp.ones(rnn.get_num_params_in_lstm(2, 2, 1, False), jnp.float32)
lower("lstm", lambda x, h, c, w: rnn.lstm(x, h, c, w, jnp.array([3], jnp.int32), input_size=2, hidden_size=2,
                                          num_layers=1, dropout=0.0, bidirectional=False),
      jnp.ones((1, 3, 2)), jnp.ones((1, 1, 2)), jnp.ones((1, 1, 2)), weights)
print(json.dumps(results))
