
filegroup(
    name = "rocminfo",
    srcs = ["bin/rocminfo"],
)
