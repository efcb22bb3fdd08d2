
cc_library(
    name = "%{name}",
    hdrs = %{hdrs},
    srcs = %{srcs},
    includes = ["include"],
    deps = %{deps},
    data = %{data},
)
