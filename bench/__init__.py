"""bench/ as a package of the checkout: each benchmark runs as a module from it,
`python3 -m bench.bench_main_job ...` (bench/README.md)."""
