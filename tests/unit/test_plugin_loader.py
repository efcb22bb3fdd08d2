"""jax_plugins/rocm (the pjrt wheel's loader) against fake sysfs trees and a stand-in jax.

The package is copied as the wheel rule copies it, to jax_plugins/xla_rocm7/ with a
build_info.json and a dummy xla_rocm_plugin.so, and imported from there. jax is replaced by
modules that record calls; the real jax is exercised by the e2e tier.
"""

from __future__ import annotations

import importlib
import json
import logging
import shutil
import sys
import textwrap
import types
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, CPU_NODE as CPU, gpu_node as gpu, kfd_tree
from tests.infra.plugin_modules import plugin_modules

pytestmark = pytest.mark.unit

SOURCE = CHECKOUT / "jax_plugins" / "rocm"
# Packed beside the loader by //:plugin_loader: pytest-rocm's reading of the GPUs a process sees.
GPUS = CHECKOUT / "pytest_rocm" / "pytest_rocm" / "gpus.py"
BUILD_INFO = {
    "jax_version": "0.10.2", "plugin_version": "0.10.2+rocm7.2.4", "rocm_version": "7.2.4", "rocm_major": 7,
    "hip_version": "7.2.53211", "amdgpu_targets": ["gfx942", "gfx950"],
    "sources": {"xla": {"commit": "a" * 40, "origin": "pinned"}, "jax": {"commit": "b" * 40, "origin": "override"}},
    "built_by": "jax-rocm-build",
}
C_API = "c-api-capsule"


class FakeJax:
    """jax, jax.ffi, jax._src.xla_bridge and jax._src.lib.xla_client, recording calls."""

    def __init__(self) -> None:
        self.plugins: list[tuple[str, dict]] = []
        self.targets: list[tuple[str, object, str, int]] = []
        self.types: list[tuple[str, object, str]] = []
        self.call_handlers: dict[str, object] = {}
        self.type_handlers: dict[str, object] = {}
        self.register_error: Exception | None = None
        self.options: object = lambda: {"platform_name": "cuda", "allocator": "default"}

        self.jax = types.ModuleType("jax")
        self.ffi = types.ModuleType("jax.ffi")
        self.src = types.ModuleType("jax._src")
        self.xb = types.ModuleType("jax._src.xla_bridge")
        self.lib = types.ModuleType("jax._src.lib")
        self.xla_client = types.SimpleNamespace(
            register_custom_call_handler=lambda p, h: self.call_handlers.setdefault(p, h),
            register_custom_type_handler=lambda p, h: self.type_handlers.setdefault(p, h),
        )
        self.jax.ffi, self.jax._src, self.src.xla_bridge, self.src.lib = self.ffi, self.src, self.xb, self.lib
        self.lib.xla_client = self.xla_client
        self.xb._backend_factories = {"cpu": object()}
        self.xb.register_plugin = self._register_plugin
        self.ffi.register_ffi_target = lambda name, fn, platform="cpu", api_version=1: self.targets.append(
            (name, fn, platform, api_version))
        self.ffi.register_ffi_type = lambda name, reg, platform="cpu": self.types.append((name, reg, platform))

    def _register_plugin(self, plugin_name, *, priority=400, library_path=None, options=None, **kwargs):
        if self.register_error:
            raise self.register_error
        self.plugins.append((plugin_name, {"priority": priority, "library_path": library_path, "options": options}))
        return C_API

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        if callable(self.options):
            self.xla_client.generate_pjrt_gpu_plugin_options = self.options
        for name, module in [("jax", self.jax), ("jax.ffi", self.ffi), ("jax._src", self.src),
                             ("jax._src.xla_bridge", self.xb), ("jax._src.lib", self.lib)]:
            monkeypatch.setitem(sys.modules, name, module)


@pytest.fixture
def fake_jax(monkeypatch) -> FakeJax:
    fake = FakeJax()
    fake.install(monkeypatch)
    return fake


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site-packages dir on sys.path; the imported plugin modules are dropped afterwards."""
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    yield path
    for name in [n for n in sys.modules if n.split(".")[0] in ("jax_plugins", "jax_rocm7_plugin", "jax_rocm6_plugin")]:
        del sys.modules[name]


@pytest.fixture
def make_plugin(site):
    def make(name: str = "xla_rocm7", build_info: dict | None = BUILD_INFO, library: bool = True):
        package = site / "jax_plugins" / name
        shutil.copytree(SOURCE, package, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(GPUS, package / "gpus.py")
        if build_info is not None:
            (package / "build_info.json").write_text(json.dumps(build_info))
        if library:
            (package / "xla_rocm_plugin.so").write_bytes(b"\x7fELF dummy")
        for n in [n for n in sys.modules if n == "jax_plugins" or n.startswith("jax_plugins.")]:
            del sys.modules[n]
        importlib.invalidate_caches()
        return importlib.import_module(f"jax_plugins.{name}")

    return make


@pytest.fixture
def plugin(make_plugin):
    return make_plugin()


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# ----------------------------------------------------------------------------- GPU counting


def test_gpus_are_kfd_nodes_with_simd_units(plugin, tmp_path):
    root = kfd_tree(tmp_path / "root", [CPU, gpu(), gpu()])
    assert plugin.count_gpus({}, root).count == 2
    cpu_only = plugin.count_gpus({}, kfd_tree(tmp_path / "cpu-only", [CPU]))
    assert cpu_only.count == 0 and cpu_only.reason.startswith("no GPU node in /sys/class/kfd")
    none = plugin.count_gpus({}, tmp_path / "empty")
    assert none.count == 0 and "no KFD topology at /sys/class/kfd/kfd/topology/nodes" in none.reason
    (tmp_path / "wsl/dev").mkdir(parents=True)
    (tmp_path / "wsl/dev/dxg").write_text("")
    assert plugin.count_gpus({}, tmp_path / "wsl").count == 1


def test_gpus_without_a_usable_dev_kfd_count_as_none(plugin, tmp_path):
    found = plugin.count_gpus({}, kfd_tree(tmp_path, [CPU, gpu()], dev_kfd=False))
    assert found.count == 0 and "/dev/kfd is missing or not readable" in found.reason


# The filters themselves are tests/unit/test_gpus.py's; here, that count_gpus applies them and says so.
@pytest.mark.parametrize("value, count", [("1", 1), ("", 0), ("0,5,1", 1), ("GPU-00000000000000CD,0", 2)])
def test_rocr_visible_devices_filters_like_the_rocm_runtime(plugin, tmp_path, value, count):
    root = kfd_tree(tmp_path, [CPU, gpu(0xAB), gpu(0xCD), gpu(0xCE)])
    found = plugin.count_gpus({"ROCR_VISIBLE_DEVICES": value}, root)
    assert found.count == count and f"{count} of them visible with ROCR_VISIBLE_DEVICES={value!r}" in found.reason


@pytest.mark.parametrize("value, count", [("-1", 0), ("0,7,1", 1), ("GPU-00AB", 3)])
def test_hip_visible_devices_limits_the_count(plugin, tmp_path, value, count):
    root = kfd_tree(tmp_path, [CPU, gpu(), gpu(), gpu()])
    found = plugin.count_gpus({"ROCR_VISIBLE_DEVICES": "2,1,0", "HIP_VISIBLE_DEVICES": value}, root)
    assert found.count == count and f"{count} with HIP_VISIBLE_DEVICES={value!r}" in found.reason


def test_a_forced_count_wins_and_a_bad_one_is_ignored_with_a_warning(plugin, tmp_path, caplog):
    assert plugin.count_gpus({"JAX_ROCM_GPU_COUNT": "3"}, tmp_path) == plugin.GpuCount(3, "JAX_ROCM_GPU_COUNT=3")
    root = kfd_tree(tmp_path / "root", [CPU, gpu(), gpu()])
    assert plugin.count_gpus({"JAX_ROCM_GPU_COUNT": "0", "ROCR_VISIBLE_DEVICES": "0,1"}, root).count == 0
    assert plugin.count_gpus({"JAX_ROCM_GPU_COUNT": "four"}, root).count == 2
    assert warnings_of(caplog) == ["JAX_ROCM_GPU_COUNT='four' is not a GPU count; ignored"]


def test_jax_platforms_asking_for_rocm(plugin):
    assert plugin.rocm_requested("rocm") and plugin.rocm_requested("cpu, ROCm") and plugin.rocm_requested("gpu")
    assert not plugin.rocm_requested(None) and not plugin.rocm_requested("") and not plugin.rocm_requested("cpu")


# ----------------------------------------------------------------------------- initialize()


def test_no_gpu_is_one_warning_and_no_registration(plugin, fake_jax, tmp_path, caplog):
    root = kfd_tree(tmp_path, [CPU])
    plugin.initialize({}, root)
    plugin.initialize({}, root)
    [message] = warnings_of(caplog)
    assert message.startswith("jax_rocm7: no AMD GPU found (no GPU node in /sys/class/kfd/kfd/topology/nodes); "
                              "JAX will use the CPU; check that the amdgpu driver is loaded")
    assert "\n" not in message and fake_jax.plugins == []


def test_no_gpu_is_quiet_when_jax_platforms_names_others(plugin, fake_jax, tmp_path, caplog):
    plugin.initialize({"JAX_PLATFORMS": "cpu"}, tmp_path)
    assert warnings_of(caplog) == [] and fake_jax.plugins == []


def test_no_gpu_but_jax_platforms_rocm_registers_for_jax_to_report(plugin, fake_jax, tmp_path, caplog):
    plugin.initialize({"JAX_PLATFORMS": "rocm"}, tmp_path)
    assert [name for name, _ in fake_jax.plugins] == ["rocm"] and warnings_of(caplog) == []


def test_gpus_register_the_plugin_beside_the_package(plugin, fake_jax, tmp_path, caplog):
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    [(name, kwargs)] = fake_jax.plugins
    assert name == "rocm" and kwargs["priority"] == 500
    assert kwargs["library_path"] == str(Path(plugin.__file__).parent / "xla_rocm_plugin.so")
    assert kwargs["options"] == {"platform_name": "ROCM", "allocator": "default"}
    assert warnings_of(caplog) == []


def test_a_real_looking_tree_registers_too(plugin, fake_jax, tmp_path):
    plugin.initialize({"ROCR_VISIBLE_DEVICES": "1"}, kfd_tree(tmp_path, [CPU, gpu(), gpu()]))
    assert len(fake_jax.plugins) == 1


def test_missing_options_helper_still_sets_the_platform(plugin, tmp_path, monkeypatch):
    fake = FakeJax()
    fake.options = None
    fake.install(monkeypatch)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert fake.plugins[0][1]["options"] == {"platform_name": "ROCM"}


def test_bad_client_options_are_one_line_and_no_registration(plugin, tmp_path, monkeypatch, caplog):
    fake = FakeJax()

    def bad_options():
        raise ValueError('XLA_PYTHON_CLIENT_ALLOCATOR env var must be "default", ... got "foo"')

    fake.options = bad_options
    fake.install(monkeypatch)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert fake.plugins == []
    assert warnings_of(caplog) == ["jax_rocm7: ROCm plugin not registered, JAX will use the CPU: ValueError: "
                                   'XLA_PYTHON_CLIENT_ALLOCATOR env var must be "default", ... got "foo"']


def test_a_failing_load_is_logged_not_raised(plugin, fake_jax, tmp_path, caplog):
    fake_jax.register_error = RuntimeError("libamdhip64.so.7: cannot open shared object file")
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "2"}, tmp_path)
    assert warnings_of(caplog)[-1] == ("jax_rocm7: ROCm plugin not registered, JAX will use the CPU: "
                                       "RuntimeError: libamdhip64.so.7: cannot open shared object file")


def test_a_second_rocm_plugin_is_not_loaded(plugin, fake_jax, tmp_path, caplog):
    fake_jax.xb._backend_factories["rocm"] = object()
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert fake_jax.plugins == [] and "another ROCm PJRT plugin is already registered" in warnings_of(caplog)[0]


# ----------------------------------------------------------------------------- the library


def test_library_override_is_used(plugin, fake_jax, tmp_path, caplog, monkeypatch):
    other = tmp_path / "debug" / "other.so"
    other.parent.mkdir()
    other.write_bytes(b"")
    with caplog.at_level(logging.DEBUG, logger=plugin.__name__):
        plugin.initialize({"JAX_ROCM_PLUGIN_LIBRARY": str(other), "JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert fake_jax.plugins[0][1]["library_path"] == str(other)
    assert any("JAX_ROCM_PLUGIN_LIBRARY" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)
    assert warnings_of(caplog) == []
    monkeypatch.setenv("JAX_ROCM_PLUGIN_LIBRARY", str(other))
    assert plugin.build_info()["library_path"] == str(other)


def test_missing_library_override_is_one_warning_and_no_registration(plugin, fake_jax, tmp_path, caplog):
    env = {"JAX_ROCM_PLUGIN_LIBRARY": "/nowhere/x.so", "JAX_ROCM_GPU_COUNT": "1"}
    plugin.initialize(env, tmp_path)
    plugin.initialize(env, tmp_path)
    assert warnings_of(caplog) == ["jax_rocm7: JAX_ROCM_PLUGIN_LIBRARY=/nowhere/x.so does not exist; "
                                   "ROCm plugin not registered, JAX will use the CPU"]
    assert fake_jax.plugins == []


def test_a_wheel_without_its_library_warns(make_plugin, fake_jax, tmp_path, caplog):
    plugin = make_plugin(library=False)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    [message] = warnings_of(caplog)
    assert "xla_rocm7/xla_rocm_plugin.so does not exist" in message and fake_jax.plugins == []


def test_a_bare_source_tree_is_quiet(make_plugin, fake_jax, tmp_path, caplog):
    plugin = make_plugin(name="rocm", build_info=None, library=False)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert warnings_of(caplog) == [] and fake_jax.plugins == []


# ----------------------------------------------------------------------------- /dev/shm


def test_shm_warning_only_for_several_gpus_and_a_small_shm(plugin):
    mib = 1 << 20
    assert plugin.shm_warning(1, 64 * mib) is None
    assert plugin.shm_warning(8, 1024 * mib) is None
    assert plugin.shm_warning(2, 64 * mib, "jax_rocm7") == (
        "jax_rocm7: 2 GPUs but /dev/shm is only 64 MiB (less than 1024 MiB); RCCL collectives across GPUs "
        "may fail, give /dev/shm more (e.g. docker run --shm-size=16g)")
    assert "/dev/shm is missing" in plugin.shm_warning(4, None)


def test_shm_is_checked_once_with_several_gpus(plugin, fake_jax, tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(plugin, "shm_bytes", lambda path: 64 << 20)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "2"}, tmp_path)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "2"}, tmp_path)
    assert warnings_of(caplog) == [plugin.shm_warning(2, 64 << 20, "jax_rocm7")]


def test_shm_bytes_reads_the_file_system(plugin, tmp_path):
    assert plugin.shm_bytes(tmp_path) > 0 and plugin.shm_bytes(tmp_path / "missing") is None


# ----------------------------------------------------------------------------- FFI


def fake_plugin_package(site: Path, name: str = "jax_rocm7_plugin", solver_error: str | None = None) -> None:
    package = site / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rocm_plugin_extension.py").write_text(textwrap.dedent("""
        calls = []
        def register_custom_call_target(c_api, name, fn, platform, api_version=0, traits=0):
            calls.append(("target", c_api, name, platform, api_version))
        def register_custom_type(c_api, name, type_id):
            calls.append(("type", c_api, name))
        def ffi_types():
            return {"hip_state": {"type_id": "capsule:type"}}
        def ffi_handlers():
            return {"xla_python_gpu_callback": "capsule:callback"}
    """))
    (package / "_linalg.py").write_text('def registrations():\n    return {"hip_lu_pivots_to_permutation": "c:lu"}\n')
    (package / "_prng.py").write_text(
        'def registrations():\n    return {"hip_threefry2x32_ffi": "c:tf", "hip_threefry2x32": "c:legacy"}\n')
    (package / "_hybrid.py").write_text(
        'def registrations():\n    return {"hybrid_eig": "c:eig"}\n'
        'def type_registrations():\n    return {"magma_state": {"type_id": "c:magma"}}\n')
    if solver_error:
        (package / "_solver.py").write_text(f"raise ImportError({solver_error!r})\n")
    importlib.invalidate_caches()


def test_ffi_targets_and_types_are_registered_for_rocm(plugin, fake_jax, site, tmp_path, caplog):
    fake_plugin_package(site)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert sorted(fake_jax.targets) == sorted([
        ("xla_python_gpu_callback", "capsule:callback", "ROCM", 1),
        ("hip_lu_pivots_to_permutation", "c:lu", "ROCM", 1),
        ("hip_threefry2x32_ffi", "c:tf", "ROCM", 1),
        ("hip_threefry2x32", "c:legacy", "ROCM", 0),
        ("hybrid_eig", "c:eig", "ROCM", 1),
    ])
    assert sorted(fake_jax.types) == [("hip_state", {"type_id": "capsule:type"}, "ROCM"),
                                      ("magma_state", {"type_id": "c:magma"}, "ROCM")]
    # ROCM registrations reach the plugin through handlers bound to its C API.
    extension = sys.modules["jax_rocm7_plugin.rocm_plugin_extension"]
    fake_jax.call_handlers["ROCM"]("t", "fn", "ROCM", 1, 0)
    fake_jax.type_handlers["ROCM"]("ty", "id")
    assert extension.calls == [("target", C_API, "t", "ROCM", 1), ("type", C_API, "ty")]
    assert warnings_of(caplog) == []


def test_a_missing_rocm_library_is_one_line_naming_it_and_where_it_was_searched(plugin, fake_jax, site, tmp_path, caplog):
    fake_plugin_package(site, solver_error="libhipsolver.so.1: cannot open shared object file: No such file or directory")
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    [line] = warnings_of(caplog)
    assert line.startswith("jax_rocm7: ROCm library libhipsolver.so.1 (needed by jax_rocm7_plugin._solver) not found; "
                           f"searched {site.resolve()}/_rocm_sdk_core/lib, {site.resolve()}/_rocm_sdk_libraries[_<family>]/lib, "
                           f"{site.resolve()}/rocm/lib, /opt/rocm/lib, LD_LIBRARY_PATH, ")
    assert "\n" not in line
    assert len(fake_jax.targets) == 5 and len(fake_jax.plugins) == 1


def test_a_module_failing_for_another_reason_is_one_warning_of_its_own(plugin, fake_jax, site, tmp_path, caplog):
    fake_plugin_package(site, solver_error="undefined symbol: hipsolverDnCreate")
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert warnings_of(caplog) == ["jax_rocm7: cannot load jax_rocm7_plugin._solver: undefined symbol: hipsolverDnCreate"]


def test_missing_rocm_libraries_group_modules_by_library(plugin):
    errors = {"p._solver": "libamdhip64.so.7: cannot open shared object file: No such file or directory",
              "p._prng": "libamdhip64.so.7: cannot open shared object file: No such file or directory",
              "p._rnn": "libMIOpen.so.1: cannot open shared object file: No such file or directory",
              "p._x": "undefined symbol: f"}
    missing = plugin.missing_rocm_libraries(errors)
    assert missing == {"libamdhip64.so.7": ["p._solver", "p._prng"], "libMIOpen.so.1": ["p._rnn"]}
    message = plugin.missing_rocm_message("jax_rocm7", missing, ["/a", "/b"])
    assert message.startswith("jax_rocm7: ROCm library libamdhip64.so.7 (needed by p._solver, p._prng), "
                              "libMIOpen.so.1 (needed by p._rnn) not found; searched /a, /b.")


def test_the_places_searched_follow_rocm_path_type(plugin):
    site = Path("/venv/lib/python3.11/site-packages")
    link_only = plugin.rocm_search_places(site, "link_only")
    assert link_only[:4] == [f"{site}/_rocm_sdk_core/lib", f"{site}/_rocm_sdk_libraries[_<family>]/lib",
                             f"{site}/rocm/lib", "/opt/rocm/lib"]
    assert plugin.rocm_search_places(site, "system")[:2] == ["/opt/rocm/lib", "the build machine's ROCm"]
    assert all(p in plugin.rocm_search_places(site, "multiple") for p in link_only)


def test_a_missing_plugin_package_is_only_debug(plugin, fake_jax, tmp_path, caplog):
    with caplog.at_level(logging.DEBUG, logger=plugin.__name__):
        plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert warnings_of(caplog) == [] and fake_jax.targets == [] and len(fake_jax.plugins) == 1
    assert any("jax_rocm7_plugin is not installed" in r.getMessage() for r in caplog.records)


def test_the_rocm_major_comes_from_the_package_name_without_build_info(make_plugin, fake_jax, site, tmp_path, caplog):
    fake_plugin_package(site, name="jax_rocm6_plugin")
    plugin = make_plugin(name="xla_rocm6", build_info=None)
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    assert len(fake_jax.targets) == 5 and "jax_rocm7_plugin" not in sys.modules
    plugin.initialize({}, tmp_path / "empty")
    assert warnings_of(caplog)[0].startswith("jax_rocm6: no AMD GPU found")


# ----------------------------------------------------------------------------- build_info()


def test_build_info_is_the_json_plus_the_library(plugin, monkeypatch):
    monkeypatch.delenv("JAX_ROCM_PLUGIN_LIBRARY", raising=False)
    info = plugin.build_info()
    assert info == {**BUILD_INFO, "library_path": str(Path(plugin.__file__).parent / "xla_rocm_plugin.so"),
                    "module": "jax_plugins.xla_rocm7"}


def test_build_info_without_json_or_library(make_plugin, monkeypatch):
    monkeypatch.delenv("JAX_ROCM_PLUGIN_LIBRARY", raising=False)
    assert make_plugin(name="rocm", build_info=None, library=False).build_info() == {
        "library_path": None, "module": "jax_plugins.rocm"}


def test_the_major_prefers_build_info_then_the_name(plugin):
    assert plugin.rocm_major({"rocm_major": 7}, "jax_plugins.xla_rocm6") == 7
    assert plugin.rocm_major({}, "jax_plugins.xla_rocm6") == 6
    assert plugin.rocm_major({"rocm_major": "7"}, "jax_plugins.rocm") is None


def test_without_jax_it_imports_and_initialize_only_warns(make_plugin, tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` fails
    plugin = make_plugin()
    assert plugin.build_info()["rocm_version"] == "7.2.4"
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    [message] = warnings_of(caplog)
    assert message.startswith("jax_rocm7: ROCm plugin not registered, JAX will use the CPU: ModuleNotFoundError")


def test_failing_ffi_registrations_are_one_warning(plugin, fake_jax, site, tmp_path, caplog):
    fake_plugin_package(site)

    def refuse(name, fn, platform="cpu", api_version=1):
        raise RuntimeError(f"Duplicate FFI handler registration for {name}")

    fake_jax.ffi.register_ffi_target = refuse
    plugin.initialize({"JAX_ROCM_GPU_COUNT": "1"}, tmp_path)
    [message] = warnings_of(caplog)
    assert message.startswith("jax_rocm7: 5 FFI registration(s) failed, the first: ") and len(fake_jax.plugins) == 1


def test_the_loaders_module_list_is_the_builds():
    """EXTENSION_MODULES (what the installed loader imports) names exactly the modules the wheel
    rule packs (jaxlib/rocm/modules.bzl)."""
    import ast

    tree = ast.parse((CHECKOUT / "jax_plugins/rocm/__init__.py").read_text())
    loader = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", None) == "EXTENSION_MODULES" for t in node.targets))
    assert loader and sorted(loader) == sorted(plugin_modules())
