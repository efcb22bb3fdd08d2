"""manylinux policy names as our tools take them: the one parser.

wheel_audit.py (its --manylinux, in the tools venv) and ci_build's own --manylinux (checked
before anything runs) both import it: they speak of the same policy, whichever of the three
spellings the user gave.
"""

from __future__ import annotations

import difflib
import re

_POLICY = re.compile(r"(?:manylinux_)?(\d+)_(\d+)(?:_x86_64)?")
# The glibc releases a policy can name (PEP 600: manylinux_2_N is glibc 2.N): 2.5, manylinux1's,
# to the newest released, 2.44 (August 2026; raise it with the next). A policy beyond them is a
# typo (2_82 for 2_28) that no glibc can certify.
GLIBC_MINORS = range(5, 45)


def policy_name(value: str) -> str:
    """'2_28', 'manylinux_2_28' or 'manylinux_2_28_x86_64' -> 'manylinux_2_28'; ValueError otherwise,
    naming the closest real policy where the value looks like a typo of one."""
    match = _POLICY.fullmatch(value)
    if not match:
        raise ValueError(f"{value!r} is not a manylinux policy such as manylinux_2_28 or 2_28")
    major, minor = int(match[1]), int(match[2])
    if major != 2 or minor not in GLIBC_MINORS:
        real = [f"manylinux_2_{n}" for n in GLIBC_MINORS]
        close = difflib.get_close_matches(f"manylinux_{match[1]}_{match[2]}", real, n=1)
        swapped = f"manylinux_2_{match[2][::-1]}" if major == 2 else ""
        guess = swapped if swapped in real else (close[0] if close else "manylinux_2_28")
        raise ValueError(f"{value!r} names glibc {major}.{minor}, which no glibc release is (2.{GLIBC_MINORS[0]} to "
                         f"2.{GLIBC_MINORS[-1]}): did you mean {guess}?")
    return f"manylinux_{major}_{minor}"
