"""The module graph a networked user gets (MODULE.bazel against the Bazel Central Registry).

Every other build here resolves offline: Debian's Bazel overrides eight rule sets with its own
copies and tools/offline stands in for four more. Gated on JAX_ROCM_TEST_REGISTRY (a checkout of
the registry) and JAX_ROCM_TEST_MODULES (a folder of NAME-VERSION trees of the versions it
selects, made what the registry makes of them: tests/infra/real_trees.py --graph-module), skipped
otherwise naming them, these resolve MODULE.bazel with no override (system rc and offline
overlay left out), check that the versions selected are the ones docs/registry.md lists, load and
analyse //:jax_rocm_wheels and build and run tests/smoke with those versions' own sources: a
registry put in front of the checkout gives each laid-out version as a local_path, so that the
resolution is the registry's and nothing is downloaded (tests/infra/registry_graph.py). Without the gate, the table's offline column
is checked against the sandbox's Debian packages and tools/offline's stand-ins.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import pytest

from sandbox.cache import Paths
from tests.conftest import CHECKOUT, sandbox, sandbox_binds
from tests.infra import registry_graph

pytestmark = pytest.mark.bazel

DOC = CHECKOUT / "docs" / "registry.md"
GATE = ("JAX_ROCM_TEST_REGISTRY", "JAX_ROCM_TEST_MODULES")
# Debian's Bazel without its system rc: the startup options that rc gives (full/debian.bazelrc).
STARTUP = ("--nosystem_rc", "--nohome_rc", "--install_base=/usr/share/bazel", "--trust_install_base",
           "--host_jvm_args=-Djava.io.tmpdir=/run/jax-rocm-build/bazel-jvm-tmp")
# No convenience links: the checkout's bazel-bin stays the shared output base's; actions sandboxed
# in the run's tmpfs, as the system rc left out would have them.
OUTPUTS = ("--symlink_prefix=/", "--sandbox_base=/run/jax-rocm-build/bazel-sandbox")
# The modules whose rules and toolchains the wheels' analysis takes (it fails without their trees).
ANALYSED = ("platforms", "rules_cc", "rules_python", "bazel_skylib", "rules_java", "bazel_features", "rules_license",
            "apple_support")


def gated() -> tuple[Path, Path]:
    missing = [v for v in GATE if not os.environ.get(v)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not set: the networked graph needs a registry checkout and the trees of "
                    "the versions it selects (tests/infra/real_trees.py --graph-module; docs/registry.md)")
    registry, modules = (Path(os.environ[v]).expanduser().resolve() for v in GATE)
    for variable, path in zip(GATE, (registry / "modules", modules)):
        if not path.is_dir():
            pytest.fail(f"{variable}: {path} is not a directory")
    return registry, modules


@pytest.fixture(scope="module")
def networked_bazel(sandbox_root, tmp_path_factory):
    """Runs Debian's Bazel in the checkout with the registry's resolution and no offline
    override, in an output base of its own (a server of other startup options would stop the
    shared one's)."""
    registry, modules = gated()
    scratch = tmp_path_factory.mktemp("registry_graph")
    front = scratch / "front"
    for relative, text in registry_graph.local_sources(registry, modules).items():
        (front / relative).parent.mkdir(parents=True, exist_ok=True)
        (front / relative).write_text(text)
    flags = [f"--registry=file://{front}", f"--registry=file://{registry}", "--lockfile_mode=off"]
    binds = sandbox_binds(registry, modules)

    def run(command: str, *args: str, check: bool = True):
        start = time.monotonic()
        result = sandbox("run", *binds, "--", "bazel", *STARTUP, f"--output_user_root={scratch / 'bazel'}", command,
                         *flags, *args, cwd=CHECKOUT, check=False)
        print(f"bazel {command} {' '.join(args)}: {time.monotonic() - start:.1f} s, exit {result.returncode}")
        if check and result.returncode != 0:
            unfetched = sorted(set(re.findall(r"fetch of repository '([\w.-]+)~'", result.stderr)))
            hint = (f"\nno tree in {modules} for {', '.join(unfetched)} at the version selected: lay it out with "
                    "tests/infra/real_trees.py --graph-module NAME@VERSION=GIT@REV") if unfetched else ""
            pytest.fail(f"bazel {command} exited {result.returncode}:{hint}\n{result.stderr[-6000:]}")
        return result

    run.modules = modules
    run.distdir = Paths.default().distdir
    return run


def test_the_registry_selects_the_versions_docs_registry_md_lists(networked_bazel):
    selected = registry_graph.selected_versions(networked_bazel("mod", "graph", "--include_builtin").stdout)
    table = registry_graph.documented(DOC.read_text())
    print("\n".join(f"{name} {version} (offline: {table.get(name, ('', 'undocumented'))[1]})"
                    for name, version in sorted(selected.items())))
    assert selected == {name: row[0] for name, row in table.items()}
    # What this project asks for directly is what a networked user gets: nothing raises it.
    wanted = registry_graph.root_deps((CHECKOUT / "MODULE.bazel").read_text())
    assert {name: selected[name] for name in wanted} == wanted


def test_the_wheels_load_and_analyse_with_the_registrys_modules(networked_bazel):
    networked_bazel("build", *OUTPUTS, "--nobuild", "//:jax_rocm_wheels", "--config=rocm", f"--distdir={networked_bazel.distdir}",
                    f"--override_repository=xla={CHECKOUT / 'examples' / 'xla'}",
                    f"--override_repository=jax={CHECKOUT / 'examples' / 'jax'}")
    # Each rule set analysed was the registry's version from its own tree, not Debian's copy.
    shown = networked_bazel("mod", "show_repo", *ANALYSED).stdout
    paths = dict(re.findall(r'name = "([\w.-]+?)~?",\s*path = "([^"]+)"', shown))
    selected = registry_graph.documented(DOC.read_text())
    assert paths == {m: str(networked_bazel.modules / f"{m}-{selected[m][0]}") for m in ANALYSED}, shown


def test_each_kind_of_target_builds_and_runs_with_the_registrys_rule_sets(networked_bazel):
    """tests/smoke (a C++ binary and shared library, a Python binary and test): compiled, linked and
    run with the networked rule sets' own sources, not only analysed."""
    result = networked_bazel("test", *OUTPUTS, "//tests/smoke:smoke_test")
    assert re.search(r"//tests/smoke:smoke_test\s+PASSED", result.stdout + result.stderr), result.stderr[-3000:]


def wheels(links: Path, files: str) -> dict[str, str]:
    """The wheels of `cquery --output=files` (bazel-out/<config>/bin/...), read under a
    --symlink_prefix's bin link: name -> sha256. (Their folders also keep other versions' wheels.)"""
    found = [links.parent / f"{links.name}bin" / f.split("/bin/", 1)[1] for f in files.split() if f.endswith(".whl")]
    return {w.name: hashlib.sha256(w.read_bytes()).hexdigest() for w in found}


def test_the_wheels_are_the_offline_graphs_byte_for_byte(networked_bazel, in_sandbox, tmp_path):
    """Built with the networked rule sets (no action cache: every action runs with their files;
    2-4 minutes on two cores) and with Debian's stand-ins (the shared action cache), the wheels
    are the same bytes: the stand-ins stand in for these versions as far as this project goes."""
    sources = (f"--override_repository=xla={CHECKOUT / 'examples' / 'xla'}",
               f"--override_repository=jax={CHECKOUT / 'examples' / 'jax'}")
    networked_flags = (OUTPUTS[1], f"--distdir={networked_bazel.distdir}", "//:jax_rocm_wheels", "--config=rocm", *sources)
    networked_bazel("build", f"--symlink_prefix={tmp_path}/networked-", *networked_flags)
    networked_files = networked_bazel("cquery", "--output=files", *networked_flags).stdout
    in_sandbox("bazel", "build", f"--symlink_prefix={tmp_path}/offline-", "//:jax_rocm_wheels", "--config=rocm", *sources)
    offline_files = in_sandbox("bazel", "cquery", "--output=files", "//:jax_rocm_wheels", "--config=rocm", *sources).stdout
    networked, offline = wheels(tmp_path / "networked-", networked_files), wheels(tmp_path / "offline-", offline_files)
    print("\n".join(f"{sha} {name}" for name, sha in sorted(networked.items())))
    assert len(networked) == 2 and networked == offline


def test_the_offline_column_is_what_the_sandbox_and_tools_offline_hold(in_sandbox):
    debian = registry_graph.debian_stand_ins(in_sandbox("dpkg-query", "-W", "--showformat=${Package} ${Version}\\n",
                                                        *registry_graph.DEBIAN_PACKAGES).stdout)
    offline = {p.name: registry_graph.module_version((p / "MODULE.bazel").read_text())
               for p in (CHECKOUT / "tools" / "offline" / "modules").iterdir()}
    measured = {**{m: f"Debian {v}" for m, v in debian.items()}, **{m: f"tools/offline {v}" for m, v in offline.items()}}
    table = {name: row[1] for name, row in registry_graph.documented(DOC.read_text()).items()}
    assert {m: measured.get(m, "none") for m in table} == table
    assert set(measured) <= set(table), f"stand-ins of modules the networked graph does not select: {set(measured) - set(table)}"
