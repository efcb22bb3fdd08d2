"""The wheels of a build: their version flags, where Bazel says it left them (their
descriptions, wheel/private/wheel.bzl's RocmWheelInfo), what each holds, the manylinux audit
and tag, and their way into --output-dir."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from tools.digest import sha256_of
from tools.modules import module_environment
from tools.venvs import ensure_venv

from . import manylinux, sandbox, sources
from .inputs import InputError
from .paths import CHECKOUT, OURS
from .request import Request

WHEEL_AUDIT = "ci_build_cli.wheel_audit"  # a module of the checkout, run in the tools venv
TOOLS_REQUIREMENTS = CHECKOUT / "requirements-tools.txt"


# The wheel's build settings (wheel/BUILD.bazel) and the ci_build flag that sets each: what
# wheel_flags passes, and how a message of Bazel's naming a setting is said in ci_build's words.
SETTING_FLAGS = {"version": "--wheel-version", "kind": "--wheel-kind", "date": "--wheel-date",
                 "commit": "--wheel-commit", "post_release": "--wheel-post-release",
                 "rocm_version_extra": "--no-rocm-version-extra"}


def in_ci_build_words(output: str) -> list[str]:
    """For each wheel setting Bazel's output names (the wheel action's errors name the Bazel
    flag, for a plain `bazel build`), the ci_build flag that sets it."""
    return [f"--{OURS}wheel:{setting} is ci_build's {flag}" for setting, flag in SETTING_FLAGS.items()
            if re.search(rf"--{re.escape(OURS)}wheel:{setting}\b", output)]


def wheel_flags(request: Request) -> list[str]:
    flags = [f"--{OURS}wheel:kind={request.wheel_kind}"]
    version = request.wheel_version or sources.jax_tree_identity(request.source_dirs.get("jax"))[0]
    if version:
        flags.append(f"--{OURS}wheel:version={version}")
    if request.wheel_kind != "release":
        flags.append(f"--{OURS}wheel:date={request.wheel_date or time.strftime('%Y%m%d', time.gmtime())}")
    if request.wheel_kind == "dev":
        flags.append(f"--{OURS}wheel:commit={request.wheel_commit or sources.git_commit(request.source_dirs.get('jax'))}")
    if request.wheel_post_release:
        flags.append(f"--{OURS}wheel:post_release={request.wheel_post_release}")
    if request.no_rocm_version_extra:
        flags.append(f"--{OURS}wheel:rocm_version_extra=false")
    overridden = sorted(request.source_dirs)
    if overridden:
        flags.append(f"--{OURS}wheel:source_overrides={','.join(overridden)}")
    return flags


# wheel/private/wheel.bzl's WHEEL_INFO_GROUP: each wheel's description (the wheel's path,
# version, tags, build_info.json), which Bazel names on request (a unit test ties the two).
WHEEL_INFO_GROUP = "rocm_wheel_info"


@dataclasses.dataclass(frozen=True)
class BuiltWheel:
    """A wheel, with its build_info.json ({} if none): as its description says, or as read_wheel reads it."""
    path: Path
    build_info: dict

    @property
    def stand_ins(self) -> list[str]:
        """The artifacts its build_info.json says were built from examples/ stand-ins."""
        return sorted(name for name, a in self.build_info.get("artifacts", {}).items() if a.get("origin") == "examples")


def read_wheel(path: Path) -> BuiltWheel:
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.endswith("/build_info.json")]
        return BuiltWheel(path, json.loads(z.read(names[0])) if names else {})


def _bazel_says(bazel: list[str], command: list[str]) -> str | None:
    """The standard output of a Bazel query or info command run as the build runs Bazel; None,
    with Bazel's own words, where it failed."""
    cmd = bazel + command
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    result = sandbox.spawn(cmd, cwd=CHECKOUT, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-2000:])
        return None
    return result.stdout


@dataclasses.dataclass(frozen=True)
class QueriedFiles:
    """Files Bazel named (by their paths from its execution root), and where that root and the
    output base are."""
    execution_root: Path
    output_base: Path
    files: tuple[str, ...]

    @property
    def paths(self) -> list[Path]:
        """Absolute paths: an external repository's file (external/<repository>/...) from the output
        base, where Bazel keeps the repository (the execution root links to it only once it ran actions)."""
        return [(self.output_base if f.startswith("external/") else self.execution_root) / f for f in self.files]


def query_files(bazel: list[str], flags: list[str], target: str) -> QueriedFiles | None:
    """The files Bazel says `target` has: `cquery --output=files` with the build's own flags (the
    same configuration). Each sandbox run starts a new Bazel server, so this costs a fresh
    analysis of `target`: kept for a small target (rocm_config.json), never for the wheels.
    None where Bazel could not answer (it said why)."""
    listed = _bazel_says(bazel, ["cquery", *flags, "--output=files", target])
    info = _bazel_says(bazel, ["info", *flags, "execution_root", "output_base"]) if listed is not None else None
    where = dict(line.split(": ", 1) for line in (info or "").splitlines() if ": " in line)
    if "execution_root" not in where or "output_base" not in where:
        return None
    return QueriedFiles(Path(where["execution_root"]), Path(where["output_base"]), tuple(listed.split()))


def events_file() -> Path:
    """Where a wheel build writes its build events (Bazel's --build_event_json_file): a folder of
    this user's for this checkout and this ci_build process under /tmp, which the sandbox mounts
    at the same path. The process is in the name because another ci_build of the same checkout
    that holds no lock of this one's (another XDG_CACHE_HOME, the unit tests' in-process runs)
    would otherwise empty and remove the folder under a running build."""
    digest = hashlib.sha256(str(CHECKOUT).encode()).hexdigest()[:12]
    return Path("/tmp") / f"ci_build-{os.getuid()}-{digest}-{os.getpid()}" / "wheel-events.json"


def event_flags(events: Path) -> list[str]:
    """What a wheel build adds to its flags so that its build events name the wheels: their
    descriptions' output group, and the events' file."""
    return [f"--output_groups=+{WHEEL_INFO_GROUP}", f"--build_event_json_file={events}"]


def prepare_events_file(events: Path) -> None:
    """The events' folder made, this user's alone (InputError where another user's or a link is
    in its place), and no earlier build's events left in it."""
    events.parent.mkdir(mode=0o700, exist_ok=True)
    status = events.parent.lstat()
    if not events.parent.is_dir() or events.parent.is_symlink() or status.st_uid != os.getuid():
        raise InputError(f"{events.parent} is not a folder of this user's (where ci_build keeps a build's events): "
                         "remove it and run again")
    events.unlink(missing_ok=True)


def remove_events_folder(events: Path) -> None:
    """The events' folder gone once the run has read them: one per checkout would otherwise stay
    in /tmp (a test run's scratch checkouts left dozens)."""
    shutil.rmtree(events.parent, ignore_errors=True)


def execution_root(events: list[dict]) -> Path:
    """The execution root a build's events name (StopIteration if they name none)."""
    return next(Path(e["workspaceInfo"]["localExecRoot"]) for e in events if "workspaceInfo" in e)


def group_files(events: list[dict], group: str) -> list[Path]:
    """The files of output group `group` of the targets a build completed, by its build events:
    each as Bazel placed it, under the execution root."""
    root = execution_root(events)
    sets = {e["id"]["namedSet"]["id"]: e["namedSetOfFiles"] for e in events if "namedSetOfFiles" in e}
    pending = [fs["id"] for e in events if e.get("completed", {}).get("success")
               for g in e["completed"].get("outputGroup", []) if g["name"] == group for fs in g.get("fileSets", [])]
    files, seen = [], set()
    while pending:
        ident = pending.pop(0)
        if ident in seen:
            continue
        seen.add(ident)
        files += [root.joinpath(*f.get("pathPrefix", []), f["name"]) for f in sets[ident].get("files", [])]
        pending += [fs["id"] for fs in sets[ident].get("fileSets", [])]
    return files


def built_wheels(events_path: Path) -> list[BuiltWheel]:
    """The wheels a build made, from their descriptions, which its build events name (the
    rocm_wheel_info output group): no folder name, no glob of bazel-bin, no second Bazel
    command. Each description gives its wheel's path from the execution root and its
    build_info.json. [] where there are no events (the build did not run) or they name none."""
    try:
        events = [json.loads(line) for line in events_path.read_text().splitlines() if line.strip()]
        root, descriptions = execution_root(events), group_files(events, WHEEL_INFO_GROUP)
    except (OSError, ValueError, KeyError, StopIteration) as e:
        print(f"ci_build dist_wheels: cannot read the build's events ({events_path}: {e!r})", file=sys.stderr)
        return []
    wheels = []
    for path in descriptions:
        description = json.loads(path.read_text())
        wheels.append(BuiltWheel(root / description["wheel"], description.get("build_info") or {}))
    return wheels


def audit_wheels(wheels: list[Path], manylinux: str | None) -> dict | None:
    """build/ci_build_cli/wheel_audit.py's verdict per wheel name (None when it could not run)."""
    python = ensure_venv("tools", TOOLS_REQUIREMENTS, "ci_build")
    cmd = [str(python), "-m", WHEEL_AUDIT, "--json", *(["--manylinux", manylinux] if manylinux else []), *map(str, wheels)]
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd, capture_output=True, text=True, env=module_environment())
    sys.stderr.write(result.stderr)
    if result.returncode not in (0, 1) or not result.stdout.strip():
        return None
    return json.loads(result.stdout)


def required_policy(request: Request) -> str | None:
    """The manylinux policy the wheels must meet: --manylinux, else the host toolchain's own
    (manylinux_2_28 for --host-toolchain=manylinux_2_28), else none (the sandbox's compiler, or
    full mode's rules_ml_toolchain: tag them with the best policy certified)."""
    if request.manylinux:
        return request.manylinux
    return "manylinux_2_28" if request.host_toolchain == "manylinux_2_28" else None


def policy_name(value: str) -> str:
    """--manylinux's policy by build/ci_build_cli/manylinux.py (build/ci_build_cli/wheel_audit.py's parser too); a value
    it refuses is an InputError, which ci_build reports in one line with exit status 2."""
    try:
        return manylinux.policy_name(value)
    except ValueError as e:
        raise InputError(f"--manylinux={value}: {e}") from None


def least_compatible(tags: list[str]) -> str:
    """Of manylinux_2_A_x86_64 tags, the one with the newest glibc: true for every wheel."""
    return max(tags, key=lambda tag: tuple(int(n) for n in tag.split("_")[1:3]) if tag.startswith("manylinux_") else (99, 99))


@dataclasses.dataclass(frozen=True)
class CollectedWheel:
    """A wheel in --output-dir, with its size and sha256 (of the file there, the one shipped)."""
    path: Path
    size: int
    sha256: str


def collect_wheels(wheels: list[Path], output_dir: Path) -> list[CollectedWheel]:
    """Copies the wheels into output_dir (replacing files of the same name): into a folder
    beside them first, then renamed into place, so that an interrupted copy leaves no
    partial wheel there; a folder made for them and left empty by a failed copy (a full disk)
    is removed again. Each built wheel is read once, by the copy; the sha256 is the copy's."""
    made = [d for d in (output_dir, *output_dir.parents) if not d.exists()]
    output_dir.mkdir(parents=True, exist_ok=True)
    try:
        staging = Path(tempfile.mkdtemp(prefix=".ci_build-", dir=output_dir))
        try:
            staged = []
            for wheel in wheels:
                shutil.copyfile(wheel, staging / wheel.name)
                staged.append(CollectedWheel(output_dir / wheel.name, (staging / wheel.name).stat().st_size,
                                             sha256_of(staging / wheel.name)))
            for wheel in wheels:
                os.replace(staging / wheel.name, output_dir / wheel.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        for folder in made:  # innermost first; only the empty ones this call made
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return staged


def summary_table(wheels: list[CollectedWheel]) -> str:
    rows = [(w.path.name, f"{w.size / 1e6:.1f} MB", w.sha256) for w in wheels]
    widths = [max(len(r[i]) for r in rows + [("wheel", "size", "sha256")]) for i in range(3)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(("wheel", "size", "sha256")), line(tuple("-" * w for w in widths))] + [line(r) for r in rows])
