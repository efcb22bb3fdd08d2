"""JAX's ROCm targets, transcribed once for both modes (the public macros: //jaxlib/rocm:defs.bzl).

Sources and dependencies per target follow JAX's jaxlib/BUILD, jaxlib/gpu/BUILD,
jaxlib/cpu/BUILD and jaxlib/rocm/BUILD at the pin (third_party/jax/pin.json). Labels of JAX's
own packages become targets of the package calling the macro, or JAX's files in @jax:
    //jaxlib/gpu:X.cc -> @jax//:jaxlib/gpu/X.cc      //jaxlib:NAME -> :NAME
    //jaxlib/gpu:triton_cc_proto -> @jax_protos//jaxlib/gpu:triton_cc_proto
Headers come with @jax//:headers. Every target is rocm_only(): without --config=rocm, `//...`
skips them and fetches no JAX.

jax_kernel_modules (kernels mode, //jaxlib/rocm): the six modules of JAX's own kernels and
every library they need; device code by rocm_library (--//rocm:amdgpu_targets), host code by
the host compiler, bindings by nanobind, one module per Python of @local_config_python.
Abseil is built from source and linked statically into every module, like libstdc++.

jax_xla_internal_modules (full mode, full/jaxlib/rocm): _triton and rocm_plugin_extension,
which need XLA's internals, with XLA's real dependencies. kernel_helpers, hip_vendor and
hip_gpu_kernel_helpers name neither XLA nor nanobind: full mode takes kernels mode's.

Four of JAX's libraries are declared by both (_jaxlib_helpers), each with its mode's labels
for what JAX takes from XLA and nanobind (_KERNELS_MODE, _FULL_MODE).
"""

load("@local_config_rocm//:build_defs.bzl", "rocm_only")
load("@rules_cc//cc:defs.bzl", "cc_library")
load("//rocm:defs.bzl", "rocm_library")
load(":rpath.bzl", "rocm_nanobind_extension")

_GPU = "@jax//:jaxlib/gpu/"

_ABSL = "@com_google_absl//absl/"

# JAX's flags for its module code.
_JAX_COPTS = [
    "-fexceptions",
    "-fno-strict-aliasing",
]

# Kernels mode's libraries both modes use, by Label: the same targets whichever module's
# BUILD file calls the macro (in full mode, @jax_rocm_build//jaxlib/rocm).
_KERNEL_HELPERS = Label("//jaxlib/rocm:kernel_helpers")

_HIP_VENDOR = Label("//jaxlib/rocm:hip_vendor")

_HIP_GPU_KERNEL_HELPERS = Label("//jaxlib/rocm:hip_gpu_kernel_helpers")

# Kernels mode's XLA FFI headers: XLA's files from the jaxlib wheel, under XLA's target names.
_FFI = "@xla_ffi_headers//:ffi"

_FFI_C_API = "@xla_ffi_headers//:c_api"

# numpy's C API through XLA's header, compiled per Python (@xla_python_headers: XLA's
# own file when an XLA tree is given, else third_party/xla_compat's).
_NUMPY_PER_PYTHON = ["@xla_python_headers//:numpy_{python}"]

# What the libraries both modes declare take from XLA and nanobind, per mode: lists, so that
# a mode without such a target gives []. Each mode keeps its own order (ffi_api: both of XLA's
# FFI targets; nanobind_headers before Abseil, nanobind after it): a dependency's place orders
# the include paths of every compile above it, and another order is another action.
_KERNELS_MODE = struct(
    ffi = [_FFI],
    ffi_c_api = [_FFI_C_API],
    ffi_api = [_FFI, _FFI_C_API],
    # Headers only: each module links nanobind itself, once per Python.
    nanobind_headers = ["@nanobind//:headers"],
    nanobind = [],
    numpy = [],  # per Python, from the module (_NUMPY_PER_PYTHON)
    # JAX's copts and features of these libraries, which full mode keeps as JAX's BUILD has
    # them: kernels mode never set them (the libraries have no sources, nothing to change).
    copts = None,
    features = None,
)

_FULL_MODE = struct(
    ffi = ["@xla//xla/ffi/api:ffi"],
    ffi_c_api = ["@xla//xla/ffi/api:c_api"],
    ffi_api = [
        "@xla//xla/ffi/api:c_api",
        "@xla//xla/ffi/api:ffi",
    ],
    nanobind_headers = [],
    nanobind = ["@nanobind"],
    numpy = ["@xla//xla/tsl/python/lib/core:numpy"],
    copts = _JAX_COPTS,
    features = ["-use_header_modules"],
)

def _jaxlib_helpers(mode):
    """ffi_helpers, kernel_nanobind_helpers, absl_status_casters (jaxlib/BUILD) and ffi_wrapper
    (jaxlib/rocm/BUILD), with `mode`'s labels (_KERNELS_MODE or _FULL_MODE)."""
    cc_library(
        name = "ffi_helpers",
        features = mode.features,
        target_compatible_with = rocm_only(),
        deps = [
            "@jax//:headers",
            _ABSL + "algorithm:container",
            _ABSL + "base:core_headers",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
        ] + mode.ffi_api,
    )

    cc_library(
        name = "kernel_nanobind_helpers",
        copts = mode.copts,
        features = mode.features,
        target_compatible_with = rocm_only(),
        deps = [_KERNEL_HELPERS] + mode.nanobind_headers + [_ABSL + "base"] + mode.nanobind + mode.ffi_c_api + mode.numpy,
    )

    cc_library(
        name = "absl_status_casters",
        copts = mode.copts,
        features = mode.features,
        target_compatible_with = rocm_only(),
        deps = ["@jax//:headers"] + mode.nanobind_headers + [
            _ABSL + "status",
            _ABSL + "status:statusor",
        ],
    )

    cc_library(
        name = "ffi_wrapper",
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            _HIP_VENDOR,
        ] + mode.ffi,
    )

# It declares a package's worth of targets, each under JAX's own name: no one name to take.
# buildifier: disable=unnamed-macro
def jax_kernel_modules():
    """Kernels mode: _prng, _linalg, _solver, _sparse, _rnn, _hybrid and the libraries they need."""
    _jaxlib_helpers(_KERNELS_MODE)

    # --- JAX's shared helpers (jaxlib/BUILD, jaxlib/gpu/BUILD) ---------------------------
    cc_library(
        name = "kernel_helpers",
        target_compatible_with = rocm_only(),
        deps = [
            "@jax//:headers",
            _ABSL + "base",
            _ABSL + "status",
            _ABSL + "status:statusor",
        ],
    )

    cc_library(
        name = "tridiagonal_solve_perturbed",
        target_compatible_with = rocm_only(),
        deps = [
            "@eigen_archive//:eigen3",
            "@jax//:headers",
        ],
    )

    cc_library(
        name = "handle_pool",
        target_compatible_with = rocm_only(),
        deps = [
            "@jax//:headers",
            _ABSL + "base:core_headers",
            _ABSL + "status:statusor",
            _ABSL + "synchronization",
        ],
    )

    # --- the HIP flavour of jaxlib/gpu (jaxlib/rocm/BUILD) -----------------------------
    # vendor.h with JAX_GPU_HIP=1: the HIP libraries under JAX's gpu* names.
    cc_library(
        name = "hip_vendor",
        defines = ["JAX_GPU_HIP=1"],
        target_compatible_with = rocm_only(),
        deps = [
            "@jax//:headers",
            "@local_config_rocm//rocm:rocm_headers",
        ],
    )

    cc_library(
        name = "hip_gpu_kernel_helpers",
        srcs = [_GPU + "gpu_kernel_helpers.cc"],
        copts = ["-fexceptions"],
        target_compatible_with = rocm_only(),
        deps = [
            ":hip_vendor",
            _ABSL + "base:core_headers",
            _ABSL + "log:check",
            _ABSL + "memory",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings",
            _ABSL + "strings:str_format",
        ],
    )

    rocm_library(
        name = "hip_make_batch_pointers",
        srcs = [_GPU + "make_batch_pointers.cu.cc"],
        deps = [":hip_vendor"],
    )

    # From JAX 0.11.0 on, householder_kernels.h and linalg_kernels*.cc also use absl::Status
    # and the kernel helpers: the dependencies are the union of the releases', so that one
    # transcription compiles 0.10.2, 0.11.0 and the stand-ins alike.
    rocm_library(
        name = "hip_householder_kernels",
        srcs = [_GPU + "householder_kernels.cu.cc"],
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            _ABSL + "status",
            "@eigen_archive//:eigen3",
        ],
    )

    cc_library(
        name = "hip_blas_handle_pool",
        srcs = [_GPU + "blas_handle_pool.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":handle_pool",
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            _ABSL + "status:statusor",
            _ABSL + "synchronization",
            "@local_config_rocm//rocm:hipblas",
        ],
    )

    cc_library(
        name = "hip_solver_handle_pool",
        srcs = [_GPU + "solver_handle_pool.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":handle_pool",
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            _ABSL + "status:statusor",
            _ABSL + "synchronization",
            "@local_config_rocm//rocm:hipsolver",
        ],
    )

    # --- _prng: threefry2x32 -----------------------------------------------------------
    rocm_library(
        name = "hip_prng_kernels_impl",
        srcs = [_GPU + "prng_kernels.cu.cc"],
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            ":kernel_helpers",
            _FFI,
        ],
    )

    cc_library(
        name = "hip_prng_kernels",
        srcs = [_GPU + "prng_kernels.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            ":hip_gpu_kernel_helpers",
            ":hip_prng_kernels_impl",
            ":hip_vendor",
            ":kernel_helpers",
            _ABSL + "algorithm:container",
            _ABSL + "status",
            _FFI,
            _FFI_C_API,
        ],
    )

    rocm_nanobind_extension(
        name = "_prng",
        srcs = [_GPU + "prng.cc"],
        copts = _JAX_COPTS,
        per_python_deps = _NUMPY_PER_PYTHON,
        target_compatible_with = rocm_only(),
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_prng_kernels",
            ":hip_vendor",
            ":kernel_nanobind_helpers",
            "@local_config_rocm//rocm:hip_runtime",
        ],
    )

    # --- _linalg: LU pivots, tridiagonal solve -----------------------------------------
    rocm_library(
        name = "hip_linalg_kernels_impl",
        srcs = [_GPU + "linalg_kernels.cu.cc"],
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            ":tridiagonal_solve_perturbed",
            _ABSL + "status",
            _FFI,
        ],
    )

    cc_library(
        name = "hip_linalg_kernels",
        srcs = [_GPU + "linalg_kernels.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            ":hip_blas_handle_pool",
            ":hip_gpu_kernel_helpers",
            ":hip_linalg_kernels_impl",
            ":hip_vendor",
            ":kernel_helpers",
            _ABSL + "status",
            _ABSL + "strings:str_format",
            _FFI,
        ],
    )

    rocm_nanobind_extension(
        name = "_linalg",
        srcs = [_GPU + "linalg.cc"],
        copts = _JAX_COPTS,
        per_python_deps = _NUMPY_PER_PYTHON,
        target_compatible_with = rocm_only(),
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_linalg_kernels",
            ":hip_vendor",
            ":kernel_nanobind_helpers",
        ],
    )

    # --- _solver: hipSOLVER, rocSOLVER (gesdd), hipBLAS ----------------------------------
    cc_library(
        name = "hipsolver_interface",
        srcs = [_GPU + "solver_interface.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
            "@local_config_rocm//rocm:hipblas",
            "@local_config_rocm//rocm:hipsolver",
            "@local_config_rocm//rocm:rocsolver",
        ],
    )

    cc_library(
        name = "hipsolver_kernels_ffi",
        srcs = [_GPU + "solver_kernels_ffi.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            ":hip_blas_handle_pool",
            ":hip_gpu_kernel_helpers",
            ":hip_householder_kernels",
            ":hip_make_batch_pointers",
            ":hip_solver_handle_pool",
            ":hip_vendor",
            ":hipsolver_interface",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
            _FFI,
        ],
    )

    rocm_nanobind_extension(
        name = "_solver",
        srcs = [_GPU + "solver.cc"],
        copts = _JAX_COPTS,
        per_python_deps = _NUMPY_PER_PYTHON,
        target_compatible_with = rocm_only(),
        deps = [
            ":hip_vendor",
            ":hipsolver_kernels_ffi",
            ":kernel_nanobind_helpers",
        ],
    )

    # --- _sparse: hipSPARSE --------------------------------------------------------------
    cc_library(
        name = "hipsparse_kernels",
        srcs = [_GPU + "sparse_kernels.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            ":ffi_wrapper",
            ":handle_pool",
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            ":kernel_helpers",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings",
            _ABSL + "strings:str_format",
            _ABSL + "synchronization",
            "@local_config_rocm//rocm:hipsparse",
            _FFI,
        ],
    )

    rocm_nanobind_extension(
        name = "_sparse",
        srcs = [_GPU + "sparse.cc"],
        copts = _JAX_COPTS,
        per_python_deps = _NUMPY_PER_PYTHON,
        target_compatible_with = rocm_only(),
        deps = [
            ":absl_status_casters",
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            ":hipsparse_kernels",
            ":kernel_nanobind_helpers",
            _ABSL + "algorithm:container",
            _ABSL + "base",
            _ABSL + "container:flat_hash_map",
            _ABSL + "hash",
            _ABSL + "strings:str_format",
        ],
    )

    # --- _rnn: MIOpen --------------------------------------------------------------------
    cc_library(
        name = "miopen_rnn_kernels",
        srcs = [_GPU + "rnn_kernels.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_wrapper",
            ":handle_pool",
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            ":kernel_helpers",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
            _ABSL + "synchronization",
            "@local_config_rocm//rocm:miopen",
            _FFI,
        ],
    )

    rocm_nanobind_extension(
        name = "_rnn",
        srcs = [_GPU + "rnn.cc"],
        copts = _JAX_COPTS,
        per_python_deps = _NUMPY_PER_PYTHON,
        target_compatible_with = rocm_only(),
        deps = [
            ":absl_status_casters",
            ":hip_vendor",
            ":kernel_nanobind_helpers",
            ":miopen_rnn_kernels",
            _ABSL + "container:flat_hash_map",
            _ABSL + "strings:str_format",
        ],
    )

    # --- _hybrid: host LAPACK (from scipy at run time) next to the GPU -------------------
    cc_library(
        name = "lapack_kernels",
        srcs = ["@jax//:jaxlib/cpu/lapack_kernels.cc"],
        copts = ["-fexceptions"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            ":tridiagonal_solve_perturbed",
            "@xla_python_headers//:tsl_platform",  # after JAX 0.11.0
            _ABSL + "algorithm:container",
            _ABSL + "base:dynamic_annotations",
            _ABSL + "functional:function_ref",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "synchronization",
            _ABSL + "types:span",
            _FFI,
            _FFI_C_API,
        ],
    )

    cc_library(
        name = "hip_hybrid_kernels",
        srcs = [_GPU + "hybrid_kernels.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_helpers",
            ":hip_gpu_kernel_helpers",
            ":hip_vendor",
            ":lapack_kernels",
            _ABSL + "algorithm:container",
            _ABSL + "base:core_headers",
            _ABSL + "container:flat_hash_map",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
            _ABSL + "synchronization",
            _ABSL + "types:span",
            _FFI,
        ],
    )

    rocm_nanobind_extension(
        name = "_hybrid",
        srcs = [_GPU + "hybrid.cc"],
        copts = _JAX_COPTS,
        per_python_deps = _NUMPY_PER_PYTHON,
        target_compatible_with = rocm_only(),
        deps = [
            ":hip_gpu_kernel_helpers",
            ":hip_hybrid_kernels",
            ":hip_vendor",
            ":kernel_nanobind_helpers",
            ":lapack_kernels",
            "@local_config_rocm//rocm:hip_runtime",
            "@xla_python_headers//:safe_static_init",
            _FFI,
        ],
    )

def jax_xla_internal_modules(module_rule):
    """Full mode: _triton and rocm_plugin_extension and the libraries they need, with XLA's
    real dependencies. `module_rule` makes a Python module (name, srcs, deps) as JAX links it
    (full/jaxlib/rocm/defs.bzl: XLA's nanobind and hermetic Python, which only full mode has)."""
    _jaxlib_helpers(_FULL_MODE)

    # --- jaxlib/BUILD --------------------------------------------------------------------
    cc_library(
        name = "ffi",
        srcs = ["@jax//:jaxlib/ffi.cc"],
        copts = _JAX_COPTS,
        features = ["-use_header_modules"],
        target_compatible_with = rocm_only(),
        deps = [
            "@jax//:headers",
            _ABSL + "base",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
            _ABSL + "types:span",
            "@dlpack",
            "@nanobind",
            "@xla//third_party/python_runtime:headers",
            "@xla//xla:xla_data_proto_cc",
            "@xla//xla/ffi:ffi_interop",
            "@xla//xla/ffi:ffi_registry",
            "@xla//xla/ffi/api:c_api",
            "@xla//xla/ffi/api:ffi",
            "@xla//xla/pjrt:host_callback",
            "@xla//xla/pjrt:status_casters",
            "@xla//xla/python:dlpack_types",
            "@xla//xla/python:nb_numpy",
            "@xla//xla/python:types",
            "@xla//xla/service:custom_call_target_registry",
            "@xla//xla/tsl/platform:statusor",
        ],
    )

    # --- jaxlib/gpu/BUILD ----------------------------------------------------------------
    cc_library(
        name = "gpu_plugin_extension",
        srcs = [_GPU + "gpu_plugin_extension.cc"],
        copts = _JAX_COPTS,
        features = ["-use_header_modules"],
        target_compatible_with = rocm_only(),
        deps = [
            ":kernel_nanobind_helpers",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings:str_format",
            "@nanobind",
            "@xla//xla:util",
            "@xla//xla/ffi/api:c_api",
            "@xla//xla/pjrt:status_casters",
            "@xla//xla/pjrt/c:pjrt_c_api_ffi_extension_hdrs",
            "@xla//xla/pjrt/c:pjrt_c_api_gpu_extension_hdrs",
            "@xla//xla/pjrt/c:pjrt_c_api_hdrs",
            "@xla//xla/pjrt/c:pjrt_c_api_helpers",
            "@xla//xla/pjrt/c:pjrt_c_api_status_utils",
            "@xla//xla/pjrt/c:pjrt_c_api_triton_extension_hdrs",
            "@xla//xla/tsl/platform:statusor",
            "@xla//xla/tsl/python/lib/core:numpy",
        ],
    )

    # --- jaxlib/rocm/BUILD ---------------------------------------------------------------
    cc_library(
        name = "triton_utils",
        srcs = [_GPU + "triton_utils.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            "@jax_protos//jaxlib/gpu:triton_cc_proto",
            _HIP_GPU_KERNEL_HELPERS,
            _HIP_VENDOR,
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings",
            "@zlib",
        ],
    )

    cc_library(
        name = "triton_kernels",
        srcs = [_GPU + "triton_kernels.cc"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi_wrapper",
            ":triton_utils",
            "@jax_protos//jaxlib/gpu:triton_cc_proto",
            _HIP_GPU_KERNEL_HELPERS,
            _HIP_VENDOR,
            _ABSL + "algorithm:container",
            _ABSL + "base:core_headers",
            _ABSL + "cleanup",
            _ABSL + "container:flat_hash_map",
            _ABSL + "container:flat_hash_set",
            _ABSL + "hash",
            _ABSL + "log",
            _ABSL + "log:check",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings",
            _ABSL + "strings:str_format",
            _ABSL + "strings:string_view",
            _ABSL + "synchronization",
            "@xla//xla/ffi/api:ffi",
            "@xla//xla/service:custom_call_status",
            "@xla//xla/tsl/platform:env",
            "@xla//xla/tsl/platform:errors",
            "@xla//xla/tsl/util:env_var",
        ],
    )

    module_rule(
        name = "_triton",
        srcs = [_GPU + "triton.cc"],
        deps = [
            ":absl_status_casters",
            ":kernel_nanobind_helpers",
            ":triton_kernels",
            ":triton_utils",
            "@jax_protos//jaxlib/gpu:triton_cc_proto",
            _HIP_GPU_KERNEL_HELPERS,
            _HIP_VENDOR,
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings",
            "@local_config_rocm//rocm:hip_runtime",
            "@xla//xla/ffi/api:ffi",
        ],
    )

    cc_library(
        name = "py_client_gpu",
        srcs = [_GPU + "py_client_gpu.cc"],
        copts = _JAX_COPTS,
        features = ["-use_header_modules"],
        target_compatible_with = rocm_only(),
        deps = [
            ":ffi",
            _HIP_VENDOR,
            _ABSL + "algorithm:container",
            _ABSL + "base",
            _ABSL + "container:inlined_vector",
            _ABSL + "log:check",
            _ABSL + "status",
            _ABSL + "status:statusor",
            _ABSL + "strings",
            _ABSL + "strings:str_format",
            _ABSL + "types:span",
            "@dlpack",
            "@nanobind",
            "@xla//third_party/python_runtime:headers",
            "@xla//xla:comparison_util",
            "@xla//xla:shape_util",
            "@xla//xla:util",
            "@xla//xla:xla_data_proto_cc",
            "@xla//xla/ffi/api:c_api",
            "@xla//xla/ffi/api:ffi",
            "@xla//xla/pjrt:host_callback",
            "@xla//xla/pjrt:transpose",
            "@xla//xla/python:nb_numpy",
            "@xla//xla/python:types",
            "@xla//xla/service:platform_util",
        ],
    )

    module_rule(
        name = "rocm_plugin_extension",
        srcs = ["@jax//:jaxlib/rocm/rocm_plugin_extension.cc"],
        deps = [
            ":gpu_plugin_extension",
            ":kernel_nanobind_helpers",
            ":py_client_gpu",
            _ABSL + "log",
            _ABSL + "strings",
            "@local_config_rocm//rocm:hip_runtime",
            "@local_config_rocm//rocm:rocm_headers",
        ],
    )
