"""The ROCm toolkit of a build: which one, the Bazel flags and mounts that give it to the build,
and what the finder says of it before anything runs.

Precedence: --rocm-path, --therock-path, then the ROCM_PATH of the environment (AMD's install
guides export it), then XLA's other names of a toolkit in the environment (TF_ROCM_MULTIPLE_PATHS,
ROCM_DISTRO_URL, ROCM_DISTRO_VERSION and their qualifiers: forwarded to the repository rule,
which decides among them in XLA's order, third_party/gpus/toolkit_sources.py), then the sandbox's
own search (what the repository rule does given none).
Toolkit facts (a TheRock tarball's family and release, JAX's default targets, the toolkit's
version) come from third_party/gpus/find_rocm_config.py, the one source of them, never from a
parse of ci_build's own.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from third_party.gpus import extract_archive, find_rocm_config as finder, toolkit_sources
from tools.digest import sha256_of

from . import inputs, sources
from .paths import OURS
from .request import Request, RocmSource

# The sandbox root's own system folders (sandbox/environment.py): a toolkit under
# one of them is the sandbox's (--rocm-path=/usr: Debian's ROCm inside), never mounted.
SANDBOX_OWN_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/var/lib", "/proc", "/sys", "/dev", "/run")


def is_sandbox_own(path: Path) -> bool:
    return path == Path("/") or any(path == Path(d) or Path(d) in path.parents for d in SANDBOX_OWN_DIRS)


def toolkit_binds(path: Path) -> tuple[str, ...]:
    """A toolkit folder as given (a link such as /opt/rocm stays /opt/rocm inside) and, if
    it is a link, where it leads."""
    return () if is_sandbox_own(path) else tuple(dict.fromkeys([str(path), str(path.resolve())]))


# XLA's names of a toolkit other than ROCM_PATH, with their qualifiers, in XLA's order: passed
# on to the repository rule as --repo_env (the sandbox passes no arbitrary environment).
XLA_NAMES = tuple(n for s in toolkit_sources.XLA_PRECEDENCE if s.name != "ROCM_PATH" for n in (s.name, *s.qualifiers))


def rocm_source(rocm_path: str | None, therock_path: str | None, therock_sha256: str | None,
                ambient: str | None, host: bool = False, environ: Mapping[str, str] | None = None) -> RocmSource:
    """The toolkit of this build; precedence: --rocm-path, --therock-path, then the ROCM_PATH
    of the environment (AMD's install guides export it), then XLA's other names in `environ`
    (xla_source), then the sandbox's own search (in host mode, `host`: the search on this
    machine). An explicit flag wins over the environment with a note, and so does ROCM_PATH over
    XLA's other names (XLA's order): those are then cleared for Bazel. An ambient ROCM_PATH that
    does not exist is an error naming the variable (InputError)."""
    xla = {n: environ[n].strip() for n in XLA_NAMES if (environ or {}).get(n, "").strip()}
    ambient = (ambient or "").strip()
    own = _own_source(rocm_path, therock_path, therock_sha256, ambient, host)
    if not xla:
        return own
    if not own.variables:
        return xla_source(xla, host)
    decider = (f"--rocm-path={rocm_path}" if rocm_path else f"--therock-path={therock_path}" if therock_path
               else f"ROCM_PATH={ambient}")
    cleared = ", ".join(f"{n}={v}" for n, v in xla.items())
    note = (f"{own.note or f'ci_build: using ROCm from {decider}'}; not used: {cleared} (XLA's order puts ROCM_PATH first, "
            "and ci_build's flags win over the environment: cleared for Bazel)")
    return RocmSource(own.variables + tuple((n, "") for n in xla), own.binds, note)


def _host_dir(name: str, value: str, given: str, host: bool) -> Path:
    """A folder one of XLA's names gives, made absolute; one that is not there is an InputError
    naming the variable (the sandbox's own folders are the sandbox's, unless in host mode)."""
    path = Path(os.path.abspath(Path(given).expanduser()))
    if (host or not is_sandbox_own(path)) and not path.is_dir():
        raise inputs.InputError(f"{name}={value} (from the environment): {given} is not a directory on this machine; "
                                f"point it at an existing folder, or unset it (`env -u {name} python3 build/ci_build "
                                "...`)")
    return path


def xla_source(xla: Mapping[str, str], host: bool = False) -> RocmSource:
    """XLA's names from the environment (no ROCM_PATH, no ci_build flag): all passed on as
    --repo_env, the repository rule deciding among them in XLA's order (toolkit_sources.choose);
    the host folders of the one that decides mounted at their own paths, and checked here first:
    each TF_ROCM_MULTIPLE_PATHS entry and LLVM_PATH; a file:// (or path) ROCM_DISTRO_URL's folder,
    its ROCM_DISTRO_HASH and ROCM_DISTRO_LINKS. ROCM_DISTRO_VERSION is checked against the XLA
    tree in check_inputs (distro_of)."""
    values = dict(xla)
    choice = toolkit_sources.choose(values)
    binds: list[str] = []
    if choice.winner == "TF_ROCM_MULTIPLE_PATHS":
        entries = choice.value.split(":")
        if "" in entries:
            raise inputs.InputError(f"TF_ROCM_MULTIPLE_PATHS={choice.value} (from the environment) has an empty entry: "
                                    "separate the installations' folders with single colons")
        paths = [_host_dir("TF_ROCM_MULTIPLE_PATHS", choice.value, e, host) for e in entries]
        values["TF_ROCM_MULTIPLE_PATHS"] = ":".join(map(str, paths))  # the rule links them from its own folder
        if "LLVM_PATH" in values:
            paths.append(_host_dir("LLVM_PATH", values["LLVM_PATH"], values["LLVM_PATH"], host))
            values["LLVM_PATH"] = str(paths[-1])
        binds = [b for p in paths for b in toolkit_binds(p)]
    elif choice.winner == "ROCM_DISTRO_URL":
        url, sha256 = choice.value, values.get("ROCM_DISTRO_HASH", "")
        if not sha256:
            raise inputs.InputError(f"ROCM_DISTRO_URL={url} (from the environment) needs ROCM_DISTRO_HASH, the "
                                    "tarball's sha256 (XLA requires it; an unverified toolkit is refused): export "
                                    "ROCM_DISTRO_HASH=$(sha256sum TARBALL | cut -d' ' -f1), or use --therock-path")
        inputs.sha256(sha256, "ROCM_DISTRO_HASH", " (from the environment)")
        try:
            toolkit_sources.parse_links(values.get("ROCM_DISTRO_LINKS", ""))
        except toolkit_sources.SourceError as e:
            raise inputs.InputError(f"{e} (from the environment)") from None
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("", "file"):  # a tarball on this machine: the rule reads it in the sandbox
            file = Path(urllib.parse.unquote(parts.path)).expanduser()
            if parts.netloc not in ("", "localhost") or not file.is_file():
                raise inputs.InputError(f"ROCM_DISTRO_URL={url} (from the environment): {file} is not a file on this "
                                        "machine; give a file:// URL of a tarball here, or an https:// URL")
            file = file.absolute()
            values["ROCM_DISTRO_URL"] = f"file://{file}"
            binds = list(dict.fromkeys([str(file.parent), str(file.resolve().parent)]))
    if choice.winner:
        mounted = f"; mounted into the sandbox at the same path{'s' if len(binds) > 1 else ''}" if binds and not host else ""
        note = (f"ci_build: using ROCm from {choice.winner}={choice.value} (the environment, XLA's name; passed to Bazel "
                f"with --repo_env{mounted})")
        unused = choice.not_used()
        note += f"; not used, by XLA's order ({toolkit_sources.XLA_ORDER}): {unused}" if unused else ""
    else:
        note = f"ci_build: not used: {choice.not_used()} (from the environment)"
    return RocmSource(tuple(values.items()), tuple(dict.fromkeys(binds)), note, choice.winner)


def _own_source(rocm_path: str | None, therock_path: str | None, therock_sha256: str | None,
                ambient: str, host: bool) -> RocmSource:
    """The toolkit ci_build's flags or the ambient ROCM_PATH name (RocmSource() for none)."""
    if rocm_path and therock_path:
        raise inputs.InputError(f"--rocm-path={rocm_path} and --therock-path={therock_path} name two toolkits; give one")
    over = f" (over ROCM_PATH={ambient} from the environment)" if ambient else ""
    if rocm_path:
        path = Path(os.path.abspath(Path(rocm_path).expanduser()))
        if (host or not is_sandbox_own(path)) and not path.is_dir():
            raise inputs.InputError(f"--rocm-path={rocm_path}: {path} is not a directory on this machine; give the "
                                    "toolkit's root (e.g. /opt/rocm-7.2.4, an extracted TheRock tarball, what `rocm-sdk "
                                    "path --root` prints), or leave it out to use the sandbox's ROCm")
        note = f"ci_build: using ROCm from --rocm-path={path}{over}" if ambient and Path(ambient) != path else None
        return RocmSource((("ROCM_PATH", str(path)),), toolkit_binds(path), note)
    if therock_path:
        variables, binds = therock_variables(therock_path, therock_sha256)
        if ambient and "ROCM_PATH" not in variables:
            variables["ROCM_PATH"] = ""  # the sandbox passes ROCM_PATH on: clear it for Bazel
        note = f"ci_build: using ROCm from --therock-path={therock_path}{over}" if ambient else None
        return RocmSource(tuple(variables.items()), tuple(binds), note)
    if ambient:
        path = Path(os.path.abspath(Path(ambient).expanduser()))
        if not path.is_dir():
            raise inputs.InputError(f"ROCM_PATH={ambient} (from the environment) does not exist on this machine; "
                                    "unset it (`unset ROCM_PATH`, or `env -u ROCM_PATH python3 build/ci_build ...`) to "
                                    "build against the sandbox's ROCm, point it at a ROCm toolkit, or pass "
                                    "--rocm-path/--therock-path")
        where = ("this machine's: host mode" if host else
                 "the sandbox's own" if is_sandbox_own(path) else "mounted into the sandbox at the same path")
        return RocmSource((("ROCM_PATH", str(path)),), toolkit_binds(path),
                          f"ci_build: using ROCm from ROCM_PATH={ambient} (the environment; {where}); "
                          "--rocm-path or --therock-path choose another")
    return RocmSource()


def rocm_flags(request: Request, configs: tuple[str, ...] = ("rocm",)) -> list[str]:
    """The flags that configure ROCm: the configs of rocm/rocm.bazelrc, exactly one of which
    includes --config=rocm (rocm, rocm_release, rocm_rbe ...: Bazel warns of a config expanded
    twice), then @local_config_rocm's toolkit and the device-code targets."""
    flags = [f"--config={c}" for c in configs]
    if request.amdgpu_targets:
        flags.append(f"--{OURS}rocm:amdgpu_targets={inputs.listed_targets(request.amdgpu_targets)}")
    return flags + list(request.rocm_source.flags)


def announce_rocm_source(request: Request) -> None:
    """Says which toolkit the build uses when the environment or a flag decided it (rocm_source's
    note; what cannot be a toolkit stopped ci_build before anything ran, cli.parse_args)."""
    note = request.rocm_source.note
    if note:
        print(note, file=sys.stderr)


@functools.cache
def _tarball_sha256(path: Path, size: int, mtime_ns: int) -> str:
    return sha256_of(path)


def tarball_sha256(path: Path) -> str:
    """A local tarball's sha256, computed once per run however many command lines name it."""
    stat = path.stat()
    return _tarball_sha256(path, stat.st_size, stat.st_mtime_ns)


def therock_variables(value: str, sha256: str | None) -> tuple[dict[str, str], list[str]]:
    """(the repository rule's variables, host paths to mount) for --therock-path=URL|TARBALL|DIR.

    A remote URL needs its sha256; a local tarball (a path or a file:// URL) has it computed
    unless given, and its folder is mounted into the sandbox. The URL keeps the tarball's
    name, which says its TheRock family."""
    if "://" in value:
        url = urllib.parse.urlsplit(value)
        if url.scheme != "file":
            if not sha256:
                raise inputs.InputError(f"--therock-path={value} is a download: add --therock-sha256=HEX (the sha256 "
                                        "AMD publishes beside it, or sha256sum of the tarball); an unverified toolkit is "
                                        "refused")
            return {"THEROCK_URL": value, "THEROCK_SHA256": sha256}, []
        path = Path(urllib.parse.unquote(url.path))
        if url.netloc not in ("", "localhost") or not path.is_file():
            raise inputs.InputError(f"--therock-path={value}: {path} is not a file on this machine; give a file:// URL "
                                    "or the path of a TheRock tarball here, or an https:// URL with --therock-sha256")
    else:
        path = Path(value).expanduser()
    if path.is_dir():
        return {"ROCM_PATH": str(path.resolve())}, [str(path.resolve())]
    if path.is_file():
        path = path.absolute()
        digest = sha256 or tarball_sha256(path)
        binds = list(dict.fromkeys([str(path.parent), str(path.resolve().parent)]))  # and a symlink's target
        return {"THEROCK_URL": f"file://{path}", "THEROCK_SHA256": digest}, binds
    raise inputs.InputError(f"--therock-path={value} is neither a URL, a tarball nor a directory; give a TheRock "
                            "tarball (path, file:// or https:// URL) or the folder of an extracted one")


def therock_targets_note(therock_path: str, amdgpu_targets: tuple[str, ...] | None) -> str | None:
    """What a TheRock tarball's family means for the amdgpu targets, as the finder reads its
    file name (None when the name says no family). Targets outside the family fail here,
    before the sandbox and the download (Bazel refuses them too, later)."""
    facts = finder.tarball_targets(therock_path, list(amdgpu_targets or ()))
    if facts is None:
        return None
    family, covered = facts.family, " ".join(facts.covered)
    if facts.uncovered:
        raise inputs.InputError(
            f"--amdgpu-targets={inputs.listed_targets(amdgpu_targets)} asks for {' '.join(facts.uncovered)}, but the "
            "TheRock tarball "
            f"{therock_path.rsplit('/', 1)[-1]} is of family {family}, with device code for {covered} only: "
            f"use --amdgpu-targets={','.join(facts.covered)} (or leave it out: the family's targets are the default), "
            f"or a tarball of a family that covers them (e.g. {finder.suggest_family(facts.uncovered)})")
    if amdgpu_targets:
        return (f"TheRock family {family} (device code for {covered}): amdgpu targets "
                f"{inputs.listed_targets(amdgpu_targets)} (--amdgpu-targets)")
    return (f"TheRock family {family}: amdgpu targets {','.join(facts.targets)} ({facts.origin}); "
            "choose others of the family with --amdgpu-targets=LIST")


def tarball_release(request: Request) -> tuple[str, str | None] | None:
    """(what the toolkit is, the release its tarball's name says, or None) when the repository
    rule makes this build's toolkit itself: a TheRock tarball (THEROCK_URL: a URL or a local
    file), ROCM_DISTRO_URL's tarball, ROCM_DISTRO_VERSION's (its URL from the XLA tree's table
    when that is on disk), or TF_ROCM_MULTIPLE_PATHS' merge. None for a toolkit folder or the
    default search, which the finder can probe before Bazel."""
    source = request.rocm_source
    url = source.repo_env.get("THEROCK_URL")
    if url:
        return f"the TheRock tarball {url.rsplit('/', 1)[-1]}", finder.therock_version_from_url(url)
    name, value = source.xla_name, source.repo_env.get(source.xla_name or "", "")
    if name == "ROCM_DISTRO_URL":
        return (f"the tarball {value.rsplit('/', 1)[-1]} (ROCM_DISTRO_URL)",
                finder.therock_version_from_url(value))
    if name == "ROCM_DISTRO_VERSION":
        found = distro_of(request, value)
        if found is None:
            return f"the tarball of ROCM_DISTRO_VERSION={value}", None
        return (f"the tarball {found.url.rsplit('/', 1)[-1]} (ROCM_DISTRO_VERSION={value})",
                finder.therock_version_from_url(found.url))
    if name == "TF_ROCM_MULTIPLE_PATHS":
        return f"the merge of TF_ROCM_MULTIPLE_PATHS={value}", None
    return None


def wheel_names_note(request: Request) -> str | None:
    """The wheels a tarball's release makes, as its name says it (jax_rocm10_* for ROCm 10):
    the rule takes the major from the toolkit's own files, which this name only foretells."""
    tarball = tarball_release(request)
    version = finder.parse_rocm_version(tarball[1]) if tarball and tarball[1] else None
    if version is None:
        return None
    major = version.release[0]
    return (f"{tarball[0]} is ROCm {version.text} ({version.kind}), by its name: wheels jax_rocm{major}_pjrt and "
            f"jax_rocm{major}_plugin")


def distro_of(request: Request, name: str) -> toolkit_sources.Distro | None:
    """ROCM_DISTRO_VERSION=`name` in the table of the XLA tree this build uses, before the
    sandbox (InputError if that tree has no table or not the entry, or it is no tarball). The
    pinned XLA is not on disk yet: its entries' names, which its pin records, are checked, and
    the repository rule reads the entry; preflight's clone of XLA's main is not made yet: None."""
    tree = request.source_dirs.get("xla")
    if request.clone_xla:
        return None
    if tree is None:
        pinned = sources.pinned_xla_distros()
        if name not in pinned:
            raise inputs.InputError(f"ROCM_DISTRO_VERSION={name} (from the environment) is not an entry of the pinned "
                                    f"XLA's {toolkit_sources.REDIST_TABLE} (third_party/xla/pin.json records them: "
                                    f"{', '.join(pinned) or 'none'}): name one of them, or name the toolkit another "
                                    "way: --rocm-path, --therock-path, or ROCM_DISTRO_URL with ROCM_DISTRO_HASH")
        return None
    stand_in = tree.resolve() == sources.EXAMPLE_TREES["xla"].resolve()
    table = tree / toolkit_sources.REDIST_TABLE
    if stand_in or not table.is_file():
        what = "examples/xla, the stand-in" if stand_in else str(tree)
        raise inputs.InputError(f"ROCM_DISTRO_VERSION={name} (from the environment) names an entry of XLA's "
                                f"{toolkit_sources.REDIST_TABLE}, but the XLA tree in use ({what}) has no redistribution "
                                "table; ROCM_DISTRO_VERSION needs a real XLA with hermetic ROCm (--xla-source-dir=DIR, "
                                "or the pin: drop --sources=examples), or name the toolkit another way: --rocm-path, "
                                "--therock-path, or ROCM_DISTRO_URL with ROCM_DISTRO_HASH")
    try:
        return toolkit_sources.distro(toolkit_sources.redistributions(table.read_text(), str(table)), name, str(table))
    except toolkit_sources.SourceError as e:
        raise inputs.InputError(f"{e} (ROCM_DISTRO_VERSION from the environment)") from None


def version_mismatch(requested: str, toolkit: str, versions: list[str | None]) -> str:
    """The one line of a --rocm-version that is not the toolkit's release."""
    said = ", ".join(v for v in versions if v) or "no version it could read"
    return (f"--rocm-version={requested}, but {toolkit} is ROCm {said}; point the build at that release with "
            "--rocm-path or --therock-path, or drop --rocm-version")


def check_inputs(request: Request) -> Request:
    """Toolkit inputs, before the checkout lock, the sandbox and Bazel (InputError, one line each):
    two toolkits (--rocm-path and --therock-path), a path that is not there, a download without
    its sha256, an ambient ROCM_PATH that does not exist, a folder XLA's names give that is not
    there (as rocm_source says them); ROCM_DISTRO_VERSION against the XLA tree's table (distro_of);
    --therock-sha256 with no tarball to check; --amdgpu-targets outside a TheRock tarball's
    family; --rocm-version against the release a TheRock tarball's name says; and a local
    tarball itself (check_local_tarball). What only the toolkit itself can say is checked
    later, before the compile (dist_wheels). The request returned carries, as a note, what a
    TheRock tarball's family means for the targets (therock_targets_note)."""
    source = request.rocm_source
    if source.xla_name == "ROCM_DISTRO_VERSION":
        distro_of(request, source.repo_env["ROCM_DISTRO_VERSION"])
    sha256 = request.therock_sha256
    therock_path = request.therock_path
    if sha256 and "THEROCK_URL" not in source.repo_env:
        what = (f"--therock-path={therock_path} is an extracted toolkit, not a tarball" if therock_path
                else "no --therock-path names one")
        raise inputs.InputError(f"--therock-sha256={sha256} checks a TheRock tarball, but {what}: drop "
                                "--therock-sha256, or give the tarball with --therock-path=URL|TARBALL")
    note = therock_targets_note(therock_path, request.amdgpu_targets) if therock_path else None
    folder = source.repo_env.get("ROCM_PATH")
    multi_arch = finder.kernel_pack_targets_at(Path(folder)) if folder and request.amdgpu_targets else None
    if multi_arch:
        layout, held = multi_arch
        check_kernel_packs(request.amdgpu_targets, f"the toolkit at {folder}", held, layout)
    tarball = tarball_release(request)
    requested = request.rocm_version
    if requested and tarball and tarball[1] and not inputs.version_agrees(requested, [tarball[1]]):
        raise inputs.InputError(version_mismatch(requested, f"{tarball[0]}, by its name,", [tarball[1]]))
    tarball_path = local_tarball(source)
    if tarball_path:
        check_local_tarball(therock_path, tarball_path, sha256, request.amdgpu_targets)
    return dataclasses.replace(request, notes=request.notes + (note,)) if note else request


def local_tarball(source: RocmSource) -> Path | None:
    """The file of a TheRock tarball on this machine (a path or a file:// URL), else None."""
    url = source.repo_env.get("THEROCK_URL", "")  # therock_variables writes file://PATH, PATH as given (unquoted)
    return Path(url.removeprefix("file://")) if url.startswith("file://") else None


def check_local_tarball(flag_value: str, path: Path, sha256: str | None,
                        amdgpu_targets: tuple[str, ...] | None = None) -> None:
    """A local TheRock tarball, before Bazel: its sha256 against --therock-sha256, then the
    repository rule's own extractor (third_party/gpus/extract_archive.py check(): the whole
    archive read, every entry under the policy extraction applies, on any Python) and the finder's
    layout test on what it would extract."""
    flag = f"--therock-path={flag_value}"
    if sha256:
        actual = tarball_sha256(path)
        if actual != sha256:
            raise inputs.InputError(f"--therock-sha256={sha256} is not the sha256 of {path} (it is {actual}): give the "
                                    "tarball AMD published with that sha256, or correct --therock-sha256")
    try:
        members, _ = extract_archive.check(path, require_filter=False)
    except extract_archive.UnsafeArchive as e:
        raise inputs.InputError(f"{flag} is refused: {e}; download it again, or give another TheRock tarball") from None
    if not holds_rocm([(m.name, m.isdir()) for m in members]):
        raise inputs.InputError(f"{flag} holds no ROCm toolkit: found none of {finder.LAYOUT_MARKERS} at its root or "
                                "in its one top folder; give the TheRock tarball of a ROCm release")
    if amdgpu_targets:
        packs = [m.name for m in members if f"/{finder.KPACK_DIR}/" in f"/{m.name.removeprefix('./')}"]
        split = packs or any(m.name.removeprefix("./").rstrip("/").endswith(finder.KPACK_DIR) for m in members)
        check_kernel_packs(amdgpu_targets, f"the multi-arch TheRock tarball {path.name}",
                           finder.kernel_pack_targets(packs) if split else None, finder.THEROCK,
                           finder.therock_version_from_url(path.name) or "<version>")


def check_kernel_packs(amdgpu_targets: tuple[str, ...], what: str, held: list[str] | None, layout: str,
                       version: str = "<version>") -> None:
    """--amdgpu-targets against what a multi-arch toolkit's kernel packs hold (held: their
    targets; None: not a multi-arch toolkit), before the sandbox: one line naming the targets
    it has and the package or tarball that adds the others (the finder's words)."""
    if held is None:
        return
    lacking = finder.uncovered_targets(amdgpu_targets, held)
    if lacking:
        raise inputs.InputError(
            f"--amdgpu-targets={inputs.listed_targets(amdgpu_targets)} asks for {' '.join(lacking)}, but {what} holds "
            "kernel packs for "
            f"{' '.join(held) or 'no target'} only: name those, or, for {lacking[0]}, "
            + finder.device_code_remedy(layout, version).replace("<target>", lacking[0]))


def holds_rocm(entries: list[tuple[str, bool]]) -> bool:
    """Whether an archive's (name, is a folder) entries lay out a ROCm toolkit as the repository
    rule roots it (its one top folder, if it has one; else its root), by the finder's own test."""
    names = {name.removeprefix("./").rstrip("/"): is_dir for name, is_dir in entries}
    names.pop("", None)
    dirs = {n for n, is_dir in names.items() if is_dir} | {str(parent) for n in names for parent in Path(n).parents}
    files = {n for n, is_dir in names.items() if not is_dir}
    tops = {n.split("/", 1)[0] for n in names}
    top = tops.pop() if len(tops) == 1 else None
    root = f"{top}/" if top in dirs else ""  # the rule's rooting: a lone top-level folder is the toolkit
    name = root.rstrip("/")
    return finder.layout_kind(name, lambda p: root + p in files, lambda p: root + p in dirs,
                              lambda p: root + p in files or root + p in dirs) is not None
