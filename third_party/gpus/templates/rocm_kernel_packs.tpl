
# The kernel packs %{library} loads, of the build's amdgpu targets (--//rocm:amdgpu_targets).
kernel_packs(
    name = "%{name}",
    packs = %{packs},
    manifests = %{manifests},
)
