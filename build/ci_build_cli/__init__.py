"""ci_build's code: build/ci_build runs this package, these modules.

    cli         the command line: the subcommands, parsing, main() (exit codes, lock, Ctrl-C)
    options     the option table: every flag once, accepted before or after its subcommand
    request     the Request: every option's value and what ci_build decides from them (the mode,
                the source trees, the toolkit ...), made once by cli.parse_args and frozen
    inputs      flag values and input files checked as they are parsed (InputError, exit 2)
    sources     the XLA and JAX trees: --sources, --xla/--jax-source-dir, the pins
    toolkit     the ROCm toolkit: --rocm-path, --therock-path, ROCM_PATH, their Bazel flags and
                mounts, and the finder's facts (third_party/gpus/find_rocm_config.py), checked
                against each other before anything runs
    sandbox     how commands run: spawn (nothing outlives ci_build), `sandbox.py run` with the
                right mounts or, in host mode (--host), the user's own Bazel on this machine
                (wrap, bazel), the shared Bazel flags, one build per checkout at a time
    pythons     the interpreters wheels are built for
    full        full mode: upstream's module graph in full/
    jax_patches JAX's patches of the modules full mode overrides, written into full/jax_patches
    full_closure  the source closure full mode needs and the trees lack (--keep_going's events)
    wheels      the built wheels: version flags, each wheel read once, audit, tag, collect
    wheel_audit the manylinux audit of the wheels (auditwheel, in the tools venv); manylinux: the
                policy names it and --manylinux take
    commands    doctor and native;  preflight (with preflight_names, preflight_xla_targets);
    dist_wheels the release build

Imports: this package's root is build/ (build/ is a folder, not a package: PyPA's `build` stays
importable); it imports the checkout's packages by name (sandbox, tools.venvs, tools.digest,
third_party.gpus.find_rocm_config ...) and wheel/private's runpath. build/ci_build runs
`python3 -m ci_build_cli` with the project's Python roots on PYTHONPATH (tools/modules.py).
"""
