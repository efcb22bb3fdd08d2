"""manylinux policy names as our tools take them: the one parser.

wheel/wheel_audit.py (its --manylinux, in the tools venv) loads this file by its path;
build/ci_build imports it as `tools.manylinux` (its --manylinux, before anything runs). Both
then speak of the same policy, whichever of the three spellings the user gave.
"""

from __future__ import annotations

import re

_POLICY = re.compile(r"(?:manylinux_)?(\d+)_(\d+)(?:_x86_64)?")


def policy_name(value: str) -> str:
    """'2_28', 'manylinux_2_28' or 'manylinux_2_28_x86_64' -> 'manylinux_2_28'; ValueError otherwise."""
    match = _POLICY.fullmatch(value)
    if not match:
        raise ValueError(f"{value!r} is not a manylinux policy such as manylinux_2_28 or 2_28")
    return f"manylinux_{match[1]}_{match[2]}"
