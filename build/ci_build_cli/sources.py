"""The source trees a build compiles: XLA's and JAX's, from their pins, examples/ or local trees."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from third_party.gpus import extract_archive
from third_party.private import source_tree

from . import inputs
from .paths import CHECKOUT
from .request import Request

# The source trees this build compiles, and their stand-ins for offline builds.
SOURCE_REPOSITORIES = ("xla", "jax")
# --sources=examples: the stand-in trees of this project's writing, laid out like XLA's
# and JAX's (examples/*/README.md). examples/jax has the JAX_ROCM_STAND_IN marker, so the
# modules built from it are labelled stand-ins (third_party/private/source_tree.py).
EXAMPLE_TREES = {"xla": CHECKOUT / "examples" / "xla", "jax": CHECKOUT / "examples" / "jax"}


def source_dirs(sources: str, xla_source_dir: str | None, jax_source_dir: str | None) -> dict[str, Path]:
    """Repository -> local tree overriding its pin (--sources=examples: the stand-ins in
    examples/xla and examples/jax; --xla-source-dir; --jax-source-dir, a JAX checkout or an
    archive of one, which take precedence)."""
    dirs = dict(EXAMPLE_TREES) if sources == "examples" else {}
    for name, given in (("xla", xla_source_dir), ("jax", jax_source_dir)):
        if given:
            dirs[name] = Path(given).expanduser().resolve()
    return dirs


def real_xla(dirs: Mapping[str, Path]) -> bool:
    """The PJRT plugin is built from a real XLA: the pin, --xla-source-dir (for preflight also
    $JAXCI_XLA_GIT_DIR and JAXCI_CLONE_MAIN_XLA=1, preflight.py), anything but examples/xla."""
    return dirs.get("xla") != EXAMPLE_TREES["xla"]


# Which graph builds: `kernels`, this project's own (MODULE.bazel), or `full`, upstream's (full/).
MODES = ("kernels", "full")


def decide_mode(asked: str | None, xla_is_real: bool) -> str:
    """The mode follows the sources: XLA's real PJRT plugin can only be built in XLA's own module
    graph (kernels mode does not declare it: loading @xla//xla/stream_executor stops at
    @rules_ml_toolchain), so a real XLA means full mode; the examples/xla stand-in, kernels mode
    (the offline demo, and work on JAX's FFI modules that needs no XLA graph). A --mode that
    contradicts the sources is an InputError naming the alternatives."""
    if asked is None:
        return "full" if xla_is_real else "kernels"
    if asked == "kernels" and xla_is_real:
        raise inputs.InputError("--mode=kernels cannot build XLA's PJRT plugin from a real XLA (the pin or "
                                "--xla-source-dir): only upstream's graph declares what it needs. Drop --mode (a real "
                                "XLA builds in full mode), or add --sources=examples for the examples/xla stand-in "
                                "(e.g. to work on JAX's FFI modules with --jax-source-dir)")
    if asked == "full" and not xla_is_real:
        raise inputs.InputError("--mode=full builds XLA's real PJRT plugin in upstream's graph, not the examples/xla "
                                "stand-in: drop --mode for the demo (kernels mode), or name a real XLA (the pin: drop "
                                "--sources=examples; or --xla-source-dir=DIR)")
    return asked


def unreachable_pins(request: Request, timeout: float = 10) -> list[str]:
    """Pinned source archives this build needs that cannot be reached (no network)."""
    missing = []
    overridden = request.source_dirs
    for name in SOURCE_REPOSITORIES:
        if name in overridden:
            continue
        pin = json.loads((CHECKOUT / "third_party" / name / "pin.json").read_text())
        url = pin["urls"][0].replace("{commit}", pin.get("commit", ""))
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
        except (urllib.error.URLError, OSError):
            missing.append(f"{name} ({url})")
    return missing


def check_local_sources(request: Request) -> None:
    """The source trees given on the command line (or by upstream CI's JAXCI_XLA_GIT_DIR) exist
    and are of the right kind (InputError); not preflight's clone of XLA's main, made later. Then
    --python-versions names only Pythons the JAX tree builds for (jax_pythons)."""
    for name, path in request.source_dirs.items():
        if name == "xla" and request.clone_xla:
            continue
        given = request.given.get(name, f"--{name}-source-dir={path}")  # examples/: --sources=examples
        if not path.exists():
            raise inputs.InputError(f"{given} does not exist (relative paths are taken from the current directory, "
                                    f"{Path.cwd()})")
        if name == "jax":
            check_jax_tree(given, path)
        elif not path.is_dir():
            raise inputs.InputError(f"{given} is a file, not an XLA checkout: name the folder of a clone of openxla/xla "
                                    "or ROCm/xla")
        elif not (path / "xla").is_dir():
            raise inputs.InputError(f"{given} is not an XLA checkout: it has no xla/ folder (a clone of openxla/xla or "
                                    "ROCm/xla is)")
    if request.python_versions:
        tree = jax_pythons(request.source_dirs.get("jax"))
        inputs.pythons_of_the_tree(request.python_versions, tree.pythons, str(tree))


# The JAX releases this project builds, named here alone: the oldest (the pin's) and the newest
# series the gated tier has built (JAX 0.11.0, and JAX main at 0.11.1). Another tree's BUILD files
# and pins are not the ones jaxlib/rocm/ and full/ transcribe: it is refused before the build.
OLDEST_JAX, NEWEST_JAX_SERIES = (0, 10, 2), (0, 11)


def _dotted(release: tuple[int, ...]) -> str:
    return ".".join(map(str, release))


def supported_jax() -> str:
    """The JAX releases this project builds, as --help and the refusals say them."""
    return f"{_dotted(OLDEST_JAX)} to {_dotted(NEWEST_JAX_SERIES)}.x"


def check_jax_tree(given: str, path: Path) -> None:
    """A JAX tree (a checkout or an archive of one) is what it claims: a complete archive under
    the one archive policy, JAX's jax/version.py, a release this project builds (InputError)."""
    if not (path.is_dir() or extract_archive.is_archive(path)):
        raise inputs.InputError(f"{given} is neither a JAX checkout (a directory) nor an archive of one "
                                f"({', '.join(extract_archive.ARCHIVE_SUFFIXES)})")
    if path.is_file():
        inputs.complete_archive(given.split("=", 1)[0], path)
    release = jax_tree_identity(path)[0]
    if release is None:
        raise inputs.InputError(f"{given} is not a JAX tree: it has no jax/version.py naming a release (a clone of "
                                "jax-ml/jax, or GitHub's archive of one of its tags, has)")
    numbers = tuple(int(n) for n in re.findall(r"\d+", release)[:3])
    if numbers < OLDEST_JAX or numbers[:2] > NEWEST_JAX_SERIES:
        raise inputs.InputError(f"{given} is JAX {release}, and this project builds JAX {supported_jax()}: check out a "
                                f"release in that range (e.g. the pin's, jax-v{_dotted(OLDEST_JAX)}), or leave the flag "
                                "out for the pin")


def check_pins_reachable(request: Request) -> None:
    """Every pinned source the build needs can be downloaded (InputError naming the local trees
    that replace them); not asked in a dry run, which downloads nothing."""
    if request.dry_run:
        return
    missing = unreachable_pins(request)
    if missing:
        raise inputs.InputError(f"the pinned sources cannot be downloaded from here: {', '.join(missing)}. Build from "
                                "local trees instead: --jax-source-dir=PATH (a JAX checkout or archive of the pinned "
                                "tag), --xla-source-dir=DIR (an XLA checkout), or --sources=examples for the offline "
                                "stand-ins in examples/xla and examples/jax (labelled as such).")


XLA_PIN = CHECKOUT / "third_party" / "xla" / "pin.json"


def pinned_xla_distros() -> tuple[str, ...]:
    """The entries of the pinned XLA's table of ROCm redistributions (ROCM_DISTRO_VERSION's
    names), as third_party/xla/pin.json records them (tools/update_pins.py reads them from the
    archive it pins): known before the archive is downloaded."""
    return tuple(json.loads(XLA_PIN.read_text()).get("rocm_distros", ()))


@functools.cache
def jax_tree_identity(tree: Path | None) -> tuple[str | None, str | None]:
    """(release in jax/version.py, commit) of a JAX checkout or archive; (None, None) for the
    pin. Cached: an archive is scanned once however many flags ask about it."""
    return source_tree.identify(tree) if tree else (None, None)


JAX_PIN = CHECKOUT / "third_party" / "jax" / "pin.json"


@dataclasses.dataclass(frozen=True)
class JaxPythons:
    """The Pythons the JAX tree a build compiles makes jaxlib for, which are the ones a plugin
    wheel built from it can go with: "3.NN", oldest first (source_tree.pythons_of: one per
    build/requirements_lock_3_NN.txt of the tree). `tree` names the tree as the command line
    gave it, for messages."""
    pythons: tuple[str, ...]
    release: str | None  # its jax/version.py
    tree: str

    def __str__(self) -> str:
        return f"JAX {self.release or '(release unknown)'} ({self.tree})"


def pinned_pythons() -> JaxPythons:
    """The pinned tree's, as third_party/jax/pin.json records them (tools/update_pins.py reads
    them from the archive it pins): known before the archive is downloaded."""
    pin = json.loads(JAX_PIN.read_text())
    return JaxPythons(tuple(pin["pythons"]), pin["release"], "the pin, third_party/jax/pin.json")


@functools.cache
def jax_pythons(tree: Path | None) -> JaxPythons:
    """The Pythons of the JAX tree a build compiles: a checkout's or archive's own
    (--jax-source-dir; examples/jax, the stand-in, records those of the release it stands in
    for), else the pin's. A tree that records none, or cannot be read (its check says why), has
    the pin's, and says so. Cached: an archive is read once."""
    pinned = pinned_pythons()
    if tree is None:
        return pinned
    name = "examples/jax, the stand-in" if tree == EXAMPLE_TREES["jax"] else f"--jax-source-dir={tree}"
    try:
        found, release = source_tree.tree_pythons(tree), jax_tree_identity(tree)[0]
    except (OSError, extract_archive.UnsafeArchive):
        found, release = (), None
    if found:
        return JaxPythons(found, release, name)
    return JaxPythons(pinned.pythons, release, f"{name}, which records no build/requirements_lock_3_NN.txt: the pin's "
                                               "Pythons, third_party/jax/pin.json")


def git_commit(tree: Path | None) -> str:
    """The commit a dev wheel names: a JAX checkout's HEAD or the commit a `git archive` records;
    for examples/jax, this project's (the stand-ins are its files), else JAX's pin's."""
    if tree == EXAMPLE_TREES["jax"]:
        commit = source_tree.git_commit(CHECKOUT)
    else:
        commit = jax_tree_identity(tree)[1]
    return commit or json.loads((CHECKOUT / "third_party/jax/pin.json").read_text())["commit"]


# The modules kernels mode always builds from examples/jax: they need XLA's internals, which
# this project's graph does not declare (full mode builds JAX's own: docs/full-mode.md).
KERNELS_MODE_STAND_INS = "_triton and rocm_plugin_extension (kernels mode; a real XLA builds JAX's own, in full mode)"


def expected_stand_ins(request: Request) -> list[str]:
    """What of the wheels will be built from stand-ins, known from the flags before anything is
    built (the wheels' build_info.json says it again after the build, and ci_build checks that)."""
    dirs = request.source_dirs
    stand_ins = []
    if dirs.get("xla") == EXAMPLE_TREES["xla"]:
        stand_ins.append("the PJRT plugin (examples/xla)")
    jax = dirs.get("jax")
    if jax and jax.is_dir() and (jax / source_tree.STAND_IN_MARKER).is_file():
        stand_ins.append(f"JAX's ROCm modules ({'examples/jax' if jax == EXAMPLE_TREES['jax'] else jax})")
    if request.mode == "kernels":
        stand_ins.append(KERNELS_MODE_STAND_INS)
    return stand_ins
