"""Which AMD GPUs a process can see, from sysfs, without initialising HIP.

The one home of reading the KFD topology and applying ROCR_VISIBLE_DEVICES and
HIP_VISIBLE_DEVICES, used by:
  - pytest-rocm, whose module this is (adopters install pytest_rocm/ from source), which
    hands each GPU slot one physical GPU;
  - the pjrt wheel's loader (jax_plugins/rocm/__init__.py), which counts the GPUs: the wheel
    rule packs this file beside it, as ``jax_plugins/xla_rocm<N>/gpus.py`` (//:plugin_loader).
So: stdlib only, no import of either package; functions of their arguments only (the
topology's folder is one, for tests), over frozen dataclasses.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

KFD_NODES = Path("sys/class/kfd/kfd/topology/nodes")  # relative to a root ("/" but in tests)


@dataclasses.dataclass(frozen=True)
class KfdGpu:
    """A GPU node of the KFD topology."""

    index: int  # among the GPU nodes, in node order: the ROCm runtime's device index (ROCR_VISIBLE_DEVICES=<index>)
    node: int
    unique_id: int  # 0 when the kernel does not report one

    @property
    def uuid(self) -> str:
        """What a ROCR_VISIBLE_DEVICES=GPU-... token is a prefix of; without a unique_id no token matches."""
        return f"GPU-{self.unique_id:016X}" if self.unique_id else "Invalid-UUID"


def kfd_gpus(nodes_dir: Path) -> list[KfdGpu] | None:
    """GPU nodes of a KFD topology (CPU nodes have simd_count 0), in node order; None without KFD."""
    if not nodes_dir.is_dir():
        return None
    nodes = []
    for node in nodes_dir.iterdir():
        if not node.name.isdigit():
            continue
        try:
            text = (node / "properties").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = dict(re.findall(r"^(\w+)\s+(\d+)\s*$", text, re.M))
        if int(fields.get("simd_count", "0")) > 0:
            nodes.append((int(node.name), int(fields.get("unique_id", "0"))))
    return [KfdGpu(index, node, unique_id) for index, (node, unique_id) in enumerate(sorted(nodes))]


def _strtol0(token: str) -> int | None:
    """C's strtol(token, &end, 0) with *end required to be the end ("" is 0, "010" is octal)."""
    if token == "":
        return 0
    if re.fullmatch(r"[+-]?0[0-7]+", token):
        return int(token, 8)
    try:
        return int(token, 0)
    except ValueError:
        return None


def rocr_visible(value: str, gpus: Sequence[KfdGpu]) -> list[KfdGpu]:
    """The GPUs the ROCm runtime shows under ROCR_VISIBLE_DEVICES=value (set, possibly empty),
    in the order listed.

    Mirrors ROCr's RvdFilter: tokens are indices into gpus (kfd_gpus' list) or prefixes of
    their UUIDs; the first invalid, out-of-range, ambiguous or repeated token ends the list.
    """
    if value == "":
        return []
    uuids = [g.uuid for g in gpus]
    visible: list[int] = []
    for token in (t.strip().upper() for t in value.split(",")):
        if token.startswith("G"):
            matches = [i for i, u in enumerate(uuids) if 5 <= len(token) <= 20 and u.startswith(token)]
            index = matches[0] if len(matches) == 1 else None
        else:
            index = _strtol0(token)
        if index is None or not 0 <= index < len(gpus) or index in visible:
            break
        visible.append(index)
    return [gpus[i] for i in visible]


def hip_visible_count(value: str, count: int) -> int:
    """GPUs left by HIP_VISIBLE_DEVICES=value (non-empty) out of count: the leading valid,
    distinct indices. Left unchanged when a token is not an index (e.g. a UUID)."""
    tokens = [t.strip() for t in value.split(",")]
    if not all(re.fullmatch(r"-?\d+", t) for t in tokens):
        return count
    seen: set[int] = set()
    for index in map(int, tokens):
        if not 0 <= index < count or index in seen:
            break
        seen.add(index)
    return len(seen)
