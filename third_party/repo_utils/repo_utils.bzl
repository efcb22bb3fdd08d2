"""How this module's repository rules run programs: every result checked in one place.

    load("//third_party/repo_utils:repo_utils.bzl", "run_checked", "run_for_answer")

    result = run_checked(rctx, [python, finder, "--rocm-path", path], "rocm_configure: no usable ROCm:\\n{output}")

run_checked fails the rule unless the program exits 0, with the caller's message, in which
{output} becomes what the program said (its stderr, else its stdout) and {code} its exit status.
run_for_answer is for the programs whose failure is an answer the caller reads (a host that does
not resolve, the version a compiler prints): its result, which the caller must judge.
"""

def _said(result):
    return result.stderr.strip() or result.stdout.strip() or "(no output)"

def run_checked(rctx, argv, message, environment = {}, timeout = 600):
    """Runs argv; fails with `message` ({output}, {code} filled in) unless it exits 0. Returns its result."""
    result = rctx.execute(argv, environment = environment, timeout = timeout)
    if result.return_code != 0:
        fail(message.replace("{output}", _said(result)).replace("{code}", str(result.return_code)))
    return result

def run_for_answer(rctx, argv, environment = {}, timeout = 60):
    """Runs argv and returns its result unchecked: the caller reads its exit status as an answer."""
    return rctx.execute(argv, environment = environment, timeout = timeout)
