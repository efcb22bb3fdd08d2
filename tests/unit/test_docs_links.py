"""Every relative link in the repository's Markdown reaches a file, and every #anchor a heading of it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT

pytestmark = pytest.mark.unit

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def markdown_files() -> list[Path]:
    names = subprocess.run(["git", "-C", str(CHECKOUT), "ls-files", "--cached", "--others", "--exclude-standard",
                            "*.md"], capture_output=True, text=True, check=True).stdout.split()
    return [CHECKOUT / n for n in names if (CHECKOUT / n).is_file()]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    text = FENCE.sub("", markdown)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE)}


def broken_links(page: Path) -> list[str]:
    """The links of `page` that reach no file, or no heading of the page they name."""
    text = FENCE.sub("", page.read_text())
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        linked = page.parent / path if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no such heading")
    return broken


def test_the_slug_is_githubs():
    assert slug("Wheels: `build/ci_build` flags") == "wheels-buildci_build-flags"
    assert slug("Where the wheels look for ROCm at run time (`rocm_path_type`)") == \
        "where-the-wheels-look-for-rocm-at-run-time-rocm_path_type"


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Real heading\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#real-heading) [b](other.md#gone) [c](missing.md) [d](#here) [e](#nowhere)\n"
                    "```\n[f](in-a-fence.md)\n```\n## Here\n")
    assert broken_links(page) == ["other.md#gone: no such heading", "missing.md: no such file",
                                  "#nowhere: no such heading"]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: str(p.relative_to(CHECKOUT)))
def test_every_link_reaches_its_file_and_heading(page):
    assert not broken_links(page)
