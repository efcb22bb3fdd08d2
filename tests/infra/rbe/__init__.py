"""A loopback remote-execution cluster in the sandbox root, for trying and testing
--config=rocm_rbe without a real one (docs/rbe.md): `python3 -m tests.infra.rbe.cluster`. The tests of
the RBE configs and bench/bench_rbe.py run their builds against it."""
