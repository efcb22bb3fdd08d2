"""@zig_sdk: Zig's compiler from its pinned PyPI wheel, as a C/C++ toolchain for glibc 2.28.

    zig = use_extension("//toolchains/manylinux:extensions.bzl", "zig")
    use_repo(zig, "zig_sdk")

The wheel (third_party/zig/pin.json) is fetched by URL and sha256, so Bazel takes it
from --distdir when tools/prefetch.py put it there with pip (the only client some
networks allow), and from the repository cache after the first time. Nothing is
fetched unless a build selects the toolchain (--config=manylinux_2_28): the
`toolchain()` targets live in //toolchains/manylinux and only name @zig_sdk.

The repository holds:
  sdk/                 the wheel's Zig and lib/
  bin/cc, bin/ar ...   wrappers that run `zig c++ -target x86_64-linux-gnu.2.28` / `zig ar`
                       from sdk/ beside them
  :runtime             Zig's runtime (libc++, libunwind, glibc stubs, crt) built once per
                       compilation mode by an action: the cache every link action starts from
  :cc_toolchain        a cc_toolchain over them (//toolchains/manylinux:cc_toolchain_config.bzl)
  :hip_libc            the same glibc and libc++ headers and defines for ROCm's clang
                       (rocm_library), read from `zig c++ -###` so that they cannot drift

Hermetic: Zig, the part of its lib/ this target reads and the runtime are declared inputs
of every action that runs Zig, named by exec-root-relative paths; Zig's cache lives in the
action's own TMPDIR. Nothing outside the action's input root is read but the OS's /bin/sh,
mktemp, cp, chmod and rm (tests/bazel/test_hermetic.py replays every such action in a root
holding only its inputs and the OS).
"""

load("//third_party/repo_utils:repo_utils.bzl", "run_checked", "run_for_answer")

_TARGET_CPU = "x86_64"

def _quoted_args(line):
    """The arguments of one `-###` line: every "..." token, unescaped."""
    args = []
    for token in line.strip().split('" "'):
        token = token.strip().strip('"')
        args.append(token.replace('\\"', '"').replace("\\\\", "\\"))
    return args

def _cc1_args(rctx, zig, target, env):
    rctx.file("probe/probe.cc", "#include <cstdio>\nint main() { return 0; }\n")
    result = run_for_answer(
        # what it printed is the answer, read below, whatever its exit status
        rctx,
        [zig, "c++", "-target", target, "-###", "-c", "probe/probe.cc", "-o", "probe/probe.o"],
        environment = env,
    )
    for line in (result.stderr + "\n" + result.stdout).splitlines():
        if '"-cc1"' in line:
            return _quoted_args(line)
    fail("@zig_sdk: `zig c++ -target %s -###` printed no compiler command (exit %d): %s\n" % (target, result.return_code, result.stderr) +
         "The wheel of third_party/zig/pin.json may be damaged: remove it from the distdir and re-run tools/prefetch.py.")

def _hip_libc_dirs(cc1, glibc):
    """Zig's libc++ and glibc header directories (relative to this repository, as zig names
    them below its working directory) and defines, in clang's own order, for ROCm's clang."""
    stdlibxx, libc, defines = [], [], []
    for i in range(len(cc1) - 1):
        flag, value = cc1[i], cc1[i + 1]
        if flag == "-isystem":
            if value.startswith("/"):
                fail("@zig_sdk: `zig c++ -###` named the header directory %s by an absolute path; " % value +
                     "it must lie under sdk/lib of this repository (ZIG_LIB_DIR=sdk/lib). Is third_party/zig/pin.json a Zig this rule knows (0.17)?")
            if "/libcxx/include" in value or "/libcxxabi/include" in value:
                stdlibxx.append(value)
            elif "/libc/include/" in value or "/libunwind/include" in value:
                libc.append(value)
        elif flag == "-D":
            defines.append(value)
    if len(stdlibxx) != 2 or not libc or ("__GLIBC_MINOR__=" + glibc.split(".")[1]) not in defines:
        fail("@zig_sdk: could not read zig's header directories and defines for glibc %s from `zig c++ -###`: " % glibc +
             "libc++ %s, libc %s, defines %s. Is third_party/zig/pin.json a Zig whose command line this rule knows (0.17)?" % (stdlibxx, libc, defines))
    return stdlibxx, libc, defines

# Every wrapper finds Zig beside itself (sdk/ next to bin/), by the exec-root-relative path
# Bazel runs it with: Zig, its lib/ and the headers are action inputs, nothing is read from
# the output base. ZIG_LIB_DIR is relative too, so Zig names headers relatively (.d files,
# debug info). Zig's cache is private to the action, under its own TMPDIR (Bazel's sandbox
# and remote workers give each action a private /tmp), and removed afterwards. Link actions
# start from :zig_runtime (libc++, libc++abi, libunwind, glibc stubs, crt built once as an
# action output; ZIG_RUNTIME_CACHE, set by the toolchain): a copy, as Zig adds entries, of the
# files themselves (-L): Bazel's sandbox gives the tree as symlinks to its read-only outputs, and
# Zig opens manifests read-write even on a hit: through a link, a user other than root got
# "manifest_create AccessDenied" (ci_build --host, tests/bazel/test_host_mode.py), and root wrote
# into Bazel's output. The copy's lib/ stamps are then made this location's (restamp,
# zig_cache_restamp.c): Zig 0.17 takes a runtime from another output base, cache or worker for
# a miss and rebuilt it in every link (about 110 s each on two cores).
_WRAPPER = """#!/bin/sh
# Generated by //toolchains/manylinux:extensions.bzl: {what}
# Zig {version} (wheel sha256 {sha256}), target {target}.
sdk="${{0%/bin/*}}/sdk"
cache=$(mktemp -d "${{TMPDIR:-/tmp}}/zig-cache.XXXXXX") || exit 1
trap 'rm -rf "$cache"' EXIT
trap 'exit 143' HUP INT TERM
if [ -n "$ZIG_RUNTIME_CACHE" ]; then
  cp -RL "$ZIG_RUNTIME_CACHE/." "$cache/" && chmod -R u+w "$cache" || exit 1
  "$cache/restamp" "$cache" "$sdk/lib" || exit 1
fi
export ZIG_LIB_DIR="$sdk/lib" ZIG_GLOBAL_CACHE_DIR="$cache" ZIG_LOCAL_CACHE_DIR="$cache"
{run}"""

_RUN = """"$sdk/zig" {command} "$@"
"""

# The compiler's: as _RUN, but for a compile to LLVM bitcode (XLA's cc_ir_header passes
# -emit-llvm to a cc_library), for which Zig 0.17's driver writes no output file at all when
# Bazel also asks for a dependency file (-MD -MF): that compile runs without them, and a
# preprocessing pass (-M) writes the dependency file Bazel reads.
_CC_RUN = """case " $* " in
*" -emit-llvm "*)
  deps="" out="" next=""
  for arg do
    shift
    case "$next" in MF) deps=$arg; next=""; continue ;; o) out=$arg; next="" ;; esac
    case "$arg" in -MD) continue ;; -MF) next=MF; continue ;; -o) next=o ;; esac
    set -- "$@" "$arg"
  done
  "$sdk/zig" {command} "$@" || exit
  [ -z "$deps" ] && exit 0
  for arg do
    shift
    case "$next" in o) next=""; continue ;; esac
    case "$arg" in -o) next=o; continue ;; -c|-emit-llvm) continue ;; esac
    set -- "$@" "$arg"
  done
  "$sdk/zig" {command} "$@" -M -MF "$deps" -MT "$out"
  exit
  ;;
esac
"$sdk/zig" {command} "$@"
"""

# :zig_runtime's action: links a shared library and an executable with the toolchain's link
# flags of this compilation mode into the output directory, which is then Zig's warm cache.
_RUNTIME = """#!/bin/sh
# Generated by //toolchains/manylinux:extensions.bzl: builds Zig's runtime into a cache ($1).
# Zig {version} (wheel sha256 {sha256}), target {target}.
set -e
sdk="${{0%/bin/*}}/sdk"
out="$1"; shift
work=$(mktemp -d "${{TMPDIR:-/tmp}}/zig-runtime.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 143' HUP INT TERM
mkdir -p "$out"
export ZIG_LIB_DIR="$sdk/lib" ZIG_GLOBAL_CACHE_DIR="$out" ZIG_LOCAL_CACHE_DIR="$work/local"
printf '#include <string>\\nstd::string f() {{ return "f"; }}\\nint main() {{ return (int) f().size() - 1; }}\\n' > "$work/probe.cc"
# As the toolchain compiles (cc_toolchain_config.bzl): without -O, zig c++ turns UBSan on.
"$sdk/zig" c++ -target {target} -fno-sanitize=undefined -fPIC -c "$work/probe.cc" -o "$work/probe.o"
"$sdk/zig" c++ -target {target} -shared "$@" -o "$work/probe.so" "$work/probe.o"
"$sdk/zig" c++ -target {target} "$@" -o "$work/probe" "$work/probe.o"
# The program each link runs on its copy of this cache (zig_cache_restamp.c), beside it.
"$sdk/zig" cc -target {target} -O2 -fno-sanitize=undefined "${{0%/bin/*}}/bin/zig_cache_restamp.c" -o "$out/restamp"
rm -rf "$out/tmp"
"""

_UNSUPPORTED = """#!/bin/sh
echo "@zig_sdk: the manylinux_2_28 toolchain has no $(basename "$0"); build this target without --config=manylinux_2_28" >&2
exit 1
"""

# Zig's lib/ as inputs: everything but other targets' C libraries (lib/libc/include/<target>
# beyond those `-###` names, musl, mingw, wasi, the BSDs, darwin) and libtsan.
_OTHER_LIBCS = ["darwin", "freebsd", "mingw", "musl", "netbsd", "openbsd", "wasi"]

# Not even unpacked (extract_zig.py): three quarters of the wheel's files, which took 12-18 s
# to unpack at the start of every cold build. Other systems' libc sources and headers.
_UNUSED = ["lib/libc/%s/*" % d for d in _OTHER_LIBCS] + ["lib/libtsan/*"] + [
    "lib/libc/include/*%s*/*" % system
    for system in ("darwin", "windows", "freebsd", "netbsd", "openbsd", "musl", "wasi", "wasm")
]

def _unpack_zig(rctx):
    """Downloads the pinned wheel (sha256-checked) and unpacks Zig into sdk/: the pin, and Zig's path."""
    pin = json.decode(rctx.read(rctx.attr.pin))
    missing = [k for k in ("sha256", "urls", "version") if not pin.get(k)]
    if missing:
        fail("%s: the pin has no %s; rewrite it with python3 -m tools.update_pins zig" % (rctx.attr.pin, ", ".join(missing)))
    if pin.get("type", "zip") != "zip":
        fail("%s: type %r; @zig_sdk unpacks Zig's PyPI wheel, a zip: rewrite the pin with python3 -m tools.update_pins zig" % (rctx.attr.pin, pin["type"]))
    rctx.download(url = pin["urls"], sha256 = pin["sha256"], output = "zig.whl")
    python = rctx.which("python3")
    if not python:
        fail("@zig_sdk: no python3 on PATH to unpack Zig's wheel with; install python3 (the ROCm finder needs it too)")
    prefix = pin.get("strip_prefix", "")
    run_checked(
        rctx,
        [python, rctx.path(rctx.attr._extract), "zig.whl", "--into", "sdk", "--prefix", prefix + "/" if prefix else ""] +
        [a for glob in _UNUSED for a in ("--skip", glob)],
        "@zig_sdk: could not unpack %s: {output}\nThe wheel in the distdir may be damaged: remove it and re-run tools/prefetch.py." % pin["urls"][0],
    )
    rctx.delete("zig.whl")
    zig = rctx.path("sdk/zig")
    if not zig.exists:
        fail("@zig_sdk: %s (sha256 %s) has no %s/zig; the pin's strip_prefix must name the folder holding Zig's executable" % (pin["urls"][0], pin["sha256"], pin.get("strip_prefix", "")))
    run_checked(rctx, ["chmod", "0755", str(zig)], "@zig_sdk: cannot make %s executable: {output}" % zig)
    version = run_for_answer(rctx, [str(zig), "version"])  # judged below, with the pin's version
    if version.return_code != 0 or version.stdout.strip() != pin["version"]:
        fail("@zig_sdk: %s version says %r (exit %d: %s), but %s pins %s" % (zig, version.stdout.strip(), version.return_code, version.stderr.strip(), rctx.attr.pin, pin["version"]))
    return pin, zig

def _write_tools(rctx, pin, target):
    """bin/: the wrappers every action runs (they name Zig's version and the wheel's sha256, so a
    new pin reruns them all), the runtime's build script and the restamp program's source."""
    common = dict(version = pin["version"], sha256 = pin["sha256"], target = target)
    compiler = "c++ -target " + target
    rctx.file("bin/cc", _WRAPPER.format(what = "the C/C++ compiler and linker", run = _CC_RUN.format(command = compiler), **common), executable = True)
    rctx.file("bin/ar", _WRAPPER.format(what = "the archiver", run = _RUN.format(command = "ar"), **common), executable = True)
    rctx.file("bin/build_runtime", _RUNTIME.format(**common), executable = True)
    rctx.file("bin/zig_cache_restamp.c", rctx.read(rctx.attr._restamp))
    for tool in ("nm", "objdump", "strip", "gcov"):
        rctx.file("bin/" + tool, _UNSUPPORTED, executable = True)

def _zig_sdk_impl(rctx):
    pin, zig = _unpack_zig(rctx)
    glibc = rctx.attr.glibc
    target = "%s-linux-gnu.%s" % (_TARGET_CPU, glibc)

    # `-###` only prints; its cache is scratch inside this repository, deleted below.
    env = {"ZIG_LIB_DIR": "sdk/lib", "ZIG_GLOBAL_CACHE_DIR": str(rctx.path("probe/cache")), "ZIG_LOCAL_CACHE_DIR": str(rctx.path("probe/cache"))}
    cc1 = _cc1_args(rctx, str(zig), target, env)
    rctx.delete("probe")
    stdlibxx, libc, defines = _hip_libc_dirs(cc1, glibc)
    _write_tools(rctx, pin, target)

    used_libc_includes = [d.split("/libc/include/")[1] for d in libc if "/libc/include/" in d]
    other_includes = [
        "sdk/lib/libc/include/%s/**" % entry.basename
        for entry in rctx.path("sdk/lib/libc/include").readdir()
        if entry.basename not in used_libc_includes
    ]
    rctx.template("BUILD.bazel", rctx.attr._build_template, substitutions = {
        "%{pin}": str(rctx.attr.pin),
        # This module's files by canonical label: "@@//" would be the root module's, which is
        # not this one in full mode (full/MODULE.bazel).
        "%{cc_toolchain_config}": str(Label("//toolchains/manylinux:cc_toolchain_config.bzl")),
        "%{hip_libc}": str(Label("//toolchains/manylinux:hip_libc.bzl")),
        "%{version}": pin["version"],
        "%{target}": target,
        "%{glibc}": glibc,
        "%{glibc_}": glibc.replace(".", "_"),
        "%{cpu}": _TARGET_CPU,
        "%{other_includes}": repr(other_includes),
        "%{other_libcs}": repr(_OTHER_LIBCS),
        "%{stdlibxx}": repr(stdlibxx),
        "%{libc}": repr(libc),
        "%{defines}": repr(defines),
    })

zig_sdk = repository_rule(
    implementation = _zig_sdk_impl,
    doc = "Zig's compiler from its pinned PyPI wheel, as a cc_toolchain targeting one glibc.",
    attrs = {
        "_extract": attr.label(default = Label("//toolchains/manylinux:extract_zig.py"), allow_single_file = True),
        "_restamp": attr.label(default = Label("//toolchains/manylinux:zig_cache_restamp.c"), allow_single_file = True),
        "_build_template": attr.label(default = Label("//toolchains/manylinux:zig_sdk.BUILD.tpl"), allow_single_file = True),
        "pin": attr.label(mandatory = True, allow_single_file = True),
        "glibc": attr.string(default = "2.28"),
    },
)

def _zig_impl(_mctx):
    zig_sdk(name = "zig_sdk", pin = Label("//third_party/zig:pin.json"))

zig = module_extension(
    implementation = _zig_impl,
    doc = "Makes @zig_sdk: the manylinux_2_28 host toolchain (glibc 2.28, Zig's libc++).",
)
