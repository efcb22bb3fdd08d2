
cc_library(
    name = "%{name}",
    hdrs = %{hdrs},
    srcs = %{srcs},
    includes = ["rocm/include"],
    deps = %{deps},
    visibility = ["//visibility:public"],
)
