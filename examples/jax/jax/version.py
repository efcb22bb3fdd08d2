# examples/jax stand-in (not JAX's file).
#
# The JAX release this stand-in tree stands in for: the one third_party/jax/pin.json and
# the other pins (XLA's commit, the jaxlib wheel XLA's FFI headers come from) belong to.
# build/ci_build reads it for the wheels' version, like a real checkout's jax/version.py,
# so that wheels built from this tree carry the same version as wheels built from the
# pinned JAX (and install beside jax and jaxlib 0.10.2). Only `_version` is read
# (third_party/private/source_tree.py's version_of); nothing here is JAX's code.
_version = "0.10.2"
