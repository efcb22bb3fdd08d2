"""A wheel's PEP 440 version and file name, made at analysis so the rule declares its `.whl`.

wheel_version() puts the version together from its pieces (//wheel:* and JAX's ML_WHEEL_*,
which wheel.bzl's wheel_identity has reconciled) and answers (version, problem): the version
in PEP 440's canonical form, or "" and one line naming the flag or variable to fix. The
canonical form is checked by canonical_version_problem(), a recognizer of what
packaging's `str(Version(text))` prints; wheel_builder.py checks the string again with
packaging itself, and wheel/private/tests/version_cases.bzl holds the cases both languages
are tested on (tests/unit/test_wheel_version_cases.py asks packaging about each).
"""

# The build settings of the wheel's version (wheel/BUILD.bazel), as a flag names them from any
# root module; build/ci_build_cli/wheels.py translates them into its own flags in Bazel's output.
FLAGS = "@jax_rocm_build//wheel:"

# This project's kinds, then JAX's two more (XLA's python_wheel.bzl: --repo_env=ML_WHEEL_TYPE).
KINDS = ["release", "nightly", "dev", "custom", "snapshot"]

_DIGITS = "0123456789"
_HEX = "0123456789abcdef"
_LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_PRE_RELEASE = ["rc", "a", "b"]  # rc first: "rc" must not be read as a pre-release "r..."

def _only(text, chars):
    return all([c in chars for c in text.elems()])

def is_git_commit(text):
    """Whether text names a git commit as JAX's CI and ci_build pass one: 7 to 40 hex digits, either case."""
    return len(text) >= 7 and len(text) <= 40 and _only(text.lower(), _HEX)

def _canonical_number(text):
    """Whether text is digits as PEP 440's normal form writes a number: no leading zero."""
    return text != "" and _only(text, _DIGITS) and (text == "0" or text[0] != "0")

def _local_problem(local):
    """Why a local version (what follows '+') is not canonical ('' if it is)."""
    for part in local.split("."):
        if part == "" or not _only(part, _LOWER_ALNUM):
            return "its parts are lower-case letters and digits between dots"
        if _only(part, _DIGITS) and not _canonical_number(part):
            return "a number in it has a leading zero"
    return ""

def _public_problem(public):
    """Why a public version (N!N.N...[{a|b|rc}N][.postN][.devN]) is not canonical ('' if it is)."""
    if "!" in public:
        epoch, public = public.split("!", 1)
        if not _canonical_number(epoch):
            return "its epoch is not a number without leading zeros"
    parts = public.split(".")
    release = 0
    for part in parts:
        if not _only(part, _DIGITS):
            break
        if not _canonical_number(part):
            return "a number in it has a leading zero"
        release += 1
    if release == 0:
        return "it does not start with a release number"
    rest = parts[release:]

    # A pre-release is written onto the release's last number's part: 1.0rc1, 1.0.0a2.
    if rest and rest[0] and rest[0][0] in _DIGITS:
        number = ""
        for i in range(len(rest[0])):
            if rest[0][i] not in _DIGITS:
                number = rest[0][:i]
                break
        pre = rest[0][len(number):]
        if not _canonical_number(number):
            return "a number in it has a leading zero"
        letters = [p for p in _PRE_RELEASE if pre.startswith(p)]
        if not letters or not _canonical_number(pre[len(letters[0]):]):
            return "%r is not a pre-release as PEP 440 writes one (a, b or rc, then a number)" % pre
        rest = rest[1:]
    for label in ["post", "dev"]:
        if rest and rest[0].startswith(label):
            if not _canonical_number(rest[0][len(label):]):
                return ".%s is not followed by a number without leading zeros" % label
            rest = rest[1:]
    if rest:
        return "%r has no place in a version (after the release: a, b or rc, then .postN, then .devN)" % ".".join(rest)
    return ""

def canonical_version_problem(text):
    """Why text is not a PEP 440 version in its canonical form ('' if it is): the form
    packaging's str(Version(text)) gives, so that a wheel's file name, METADATA and what pip
    shows are the same string."""
    public, plus, local = text.partition("+")
    problem = _public_problem(public)
    if not problem and plus:
        problem = _local_problem(local)
    return problem

def _how_to_set(piece, ml_wheel):
    """The flag (or JAX's variable, where ML_WHEEL_TYPE chose the kind) that sets a piece."""
    if ml_wheel:
        return {"date": "--repo_env=ML_WHEEL_BUILD_DATE=YYYYMMDD", "commit": "--repo_env=ML_WHEEL_GIT_HASH=SHA"}[piece]
    return {"date": "--%sdate=YYYYMMDD" % FLAGS, "commit": "--%scommit=SHA" % FLAGS}[piece]

def _suffixed(version, suffix, where):
    """(version with ML_WHEEL_VERSION_SUFFIX appended, '-' dropped as JAX drops it, or None;
    the problem naming the variable)."""
    text = version + suffix.replace("-", "")
    if not canonical_version_problem(text):
        return text, ""
    hint = ""
    for candidate in [suffix.lower().replace("-", ""), suffix.lower().replace("-", "").lstrip("._")]:
        if not canonical_version_problem(version + candidate):
            hint = " (as %s it would be: %s)" % (candidate, version + candidate)
            break
    return None, ("ML_WHEEL_VERSION_SUFFIX %r goes %s and makes %r, which is not a canonical PEP 440 version%s: " +
                  "give a suffix that is, e.g. rc1 (--repo_env=ML_WHEEL_VERSION_SUFFIX=rc1), or unset it") % (suffix, where, text, hint)

def wheel_version(base, kind = "release", date = "", commit = "", post = 0, local = "", suffix = "", ml_wheel = False):
    """(version, problem): the wheel's PEP 440 version, canonical, and "" (or "" and one line
    naming the flag or variable to fix).

    release X.Y.Z, nightly X.Y.Z.devYYYYMMDD, dev X.Y.Z.devYYYYMMDD+g<commit[:7]>, and JAX's
    custom X.Y.Z[.devYYYYMMDD][+<hash>] (the hash's first 9 digits after its leading zeros, as
    JAX strips them) and snapshot X.Y.Z.dev0+selfbuilt. `suffix` (ML_WHEEL_VERSION_SUFFIX,
    '-' dropped) goes where JAX puts it: after X.Y.Z of a release (rc1: X.Y.Zrc1), after the
    hash of a custom (or dev) version, after the date of a custom one without a hash; nightly
    and snapshot versions leave it out, as JAX's do. .postN follows the release part, and the
    local part ends with `local` (+rocm7.2.4, lower-cased). `ml_wheel`: ML_WHEEL_TYPE chose the
    kind, so a missing date or commit is named by JAX's variables.
    """
    parts = base.split(".")
    if len(parts) != 3 or not all([_canonical_number(p) for p in parts]):
        return "", "version %r is not X.Y.Z (--%sversion=X.Y.Z)" % (base, FLAGS)
    if kind not in KINDS:
        return "", "wheel kind %r is not one of %s" % (kind, ", ".join(KINDS))
    version = base
    if kind == "release" and suffix:
        version, problem = _suffixed(version, suffix, "after X.Y.Z of a release")
        if problem:
            return "", problem
    if type(post) != "int" or post < 0:
        return "", "post release %r is not a whole number (--%spost_release=N, N >= 1)" % (post, FLAGS)
    if post:  # PEP 440 order: X.Y.Z.postN.devM
        version += ".post%d" % post
    if kind in ("nightly", "dev") or (kind == "custom" and date):
        if not (len(date) == 8 and _canonical_number(date)):  # a leading zero is not canonical
            return "", "a %s wheel needs its date as YYYYMMDD, got %r (%s)" % (kind, date, _how_to_set("date", ml_wheel))
        version += ".dev" + date
    elif kind == "snapshot":
        version += ".dev0"
    local_parts = []
    if kind == "dev" or (kind == "custom" and commit):
        sha = commit.lower()
        if not is_git_commit(sha):
            return "", "a %s wheel names the git commit it was built from (7 to 40 hex digits), got %r (%s)" % (kind, commit, _how_to_set("commit", ml_wheel))

        # JAX's hash drops leading zeros: a normalizer would, and the file name would then differ.
        local_parts.append(("g" + sha[:7]) if kind == "dev" else (sha.lstrip("0")[:9] or "0"))
        if suffix:
            suffixed, problem = _suffixed(version + "+" + local_parts[-1], suffix, "after the git hash")
            if problem:
                return "", problem
            local_parts[-1] = suffixed.split("+", 1)[1]
    elif kind == "custom" and suffix:
        version, problem = _suffixed(version, suffix, "after the date of a custom version without a hash")
        if problem:
            return "", problem
    if kind == "snapshot":
        local_parts.append("selfbuilt")
    if local:
        local_parts.append(local.lower())
    if local_parts:
        version += "+" + ".".join(local_parts)
    problem = canonical_version_problem(version)
    if problem:  # every other piece was checked: the local version is at fault
        return "", ("local version %r is not dot-separated letters and digits in canonical form (PEP 440: no empty " +
                    "parts, no leading zeros): %s; wheel.bzl makes it rocm<the toolkit's version> " +
                    "(--%srocm_version_extra=false leaves it out)") % (local, problem, FLAGS)
    return version, ""

def _is_name(text):
    """A distribution's name as PEP 508 has it: letters and digits, with - _ . between them."""
    alnum = _LOWER_ALNUM + _LOWER_ALNUM.upper()
    return text != "" and text[0] in alnum and text[-1] in alnum and _only(text, alnum + "-_.")

def _is_tag(text):
    """One tag, or a set of them joined by '.' (PEP 425): a-z 0-9 _."""
    return all([part != "" and _only(part, _LOWER_ALNUM + "_") for part in text.split(".")])

def wheel_file_name(distribution, version, python_tag, abi_tag, platform_tag):
    """(the .whl's name, problem): <name>-<version>-<python>-<abi>-<platform>.whl with the name
    normalised (PEP 503) and escaped ('-' as '_', PEP 427/491), as wheel_builder.py's
    WheelSpec.filename() writes it with packaging."""
    if not _is_name(distribution):
        return "", "distribution %r is not a valid name: letters and digits, with - _ . between them" % distribution
    for tag in (python_tag, abi_tag, platform_tag):
        if not _is_tag(tag):
            return "", "wheel tag %r is not a-z 0-9 _, with '.' between the tags of a set" % tag

    # PEP 503: runs of - _ . are one '-', and the file name writes it '_'.
    stem = ""
    for c in distribution.lower().elems():
        if c in "-_.":
            if not stem.endswith("_"):
                stem += "_"
        else:
            stem += c
    return "%s-%s-%s-%s-%s.whl" % (stem, version, python_tag, abi_tag, platform_tag), ""
