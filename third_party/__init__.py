"""third_party/ as a package, for Python run from the checkout (build/ci_build imports
third_party.gpus.find_rocm_config and third_party.private.source_tree, the files the repository
rules run). Without this file a `third_party` package in site-packages would shadow this folder."""
