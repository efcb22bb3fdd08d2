#!/bin/sh
# The python3 on the action's PATH (toolchains/python/BUILD.bazel says why).
exec python3 "$@"
