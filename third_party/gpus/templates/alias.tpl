
alias(
    name = "%{name}",
    actual = "//rocm:%{name}",
)
