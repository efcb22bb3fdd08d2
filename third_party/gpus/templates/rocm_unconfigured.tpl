
rocm_unconfigured(name = "%{name}")
