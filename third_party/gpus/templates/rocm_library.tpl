
cc_library(
    name = "%{name}",
    hdrs = %{hdrs},
    srcs = %{srcs},
    includes = ["toolkit/include"],
    deps = %{deps},
    visibility = ["//visibility:public"],
)
