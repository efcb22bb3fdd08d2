
rocm_missing(
    name = "%{name}",
    message = %{message},
)
