"""tools/ as a package, for Python run from the checkout (build/ci_build): `from tools import venvs`.

The scripts here run as files too (python3 tools/prefetch.py) and import each other by their own
names (`import digest`), their folder being on sys.path. Without this file a `tools` package
installed in site-packages would shadow this folder.
"""
