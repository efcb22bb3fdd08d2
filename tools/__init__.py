"""tools/: the developer tools (linters, pins, prefetch, the fat binary reader, the GPU slot
wrapper, the `bazel` launcher), run as modules from the checkout (`python3 -m tools.update_pins`),
and what every program of the project shares to run another (modules.py), hash a file
(digest.py) or set up a pinned venv (venvs.py). A regular package, so that a `tools` installed
in site-packages cannot stand in for this folder.
"""
