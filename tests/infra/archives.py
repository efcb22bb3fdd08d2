"""Archives for tests, written entry by entry: (name, kind, data) with kind file (data: bytes),
dir, symlink (data: its target) or fifo; a tar.gz or a zip with the same entries."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

Entry = tuple[str, str, "bytes | str | None"]


def tar_of(path: Path, entries: Iterable[Entry]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if kind == "symlink":
                info.linkname = data
            tar.addfile(info)
    return path


def zip_of(path: Path, entries: Iterable[Entry]) -> Path:
    modes = {"file": stat.S_IFREG | 0o644, "dir": stat.S_IFDIR | 0o755, "symlink": stat.S_IFLNK | 0o777,
             "fifo": stat.S_IFIFO | 0o644}
    with zipfile.ZipFile(path, "w") as z:
        for name, kind, data in entries:
            info = zipfile.ZipInfo(name + ("/" if kind == "dir" and not name.endswith("/") else ""))
            info.external_attr = modes[kind] << 16
            z.writestr(info, data or b"")
    return path


def entries_of(tree: dict[str, bytes | str | None]) -> list[Entry]:
    """{name: file bytes, symlink target (str) or None for a folder} as entries."""
    return [(name, "dir" if data is None else "symlink" if isinstance(data, str) else "file", data)
            for name, data in tree.items()]
