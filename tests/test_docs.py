"""The documentation a clone carries: every link resolves inside the repository (file and heading) or is a public URL.

A link to `../shared/...` (this project's machines only) or to a heading that was renamed is the defect this
finds; the last test shows it finds them in a deliberately broken page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.shared import REPO

# Markdown inline links `[text](target)`; autolinks `<https://...>` are public by construction.
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)


def pages(repo: Path = REPO) -> list[Path]:
    top = [repo / name for name in ("README.md", "CONTRIBUTING.md", "SECURITY.md") if (repo / name).is_file()]
    return top + sorted((repo / "docs").glob("*.md"))


def slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken_links(page: Path, repo: Path = REPO) -> list[str]:
    """Each link of `page` that leaves the repository or points to a missing file or heading, as one line."""
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    problems: list[str] = []
    for target in _LINK.findall(text):
        if target.startswith(("https://", "http://", "mailto:")):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(repo)}: link {target!r}"
        if not resolved.is_relative_to(repo.resolve()):
            problems.append(f"{where} points outside the repository; link a file of the repository or a public URL")
        elif not resolved.exists():
            problems.append(f"{where}: {path_part} does not exist")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{where}: {resolved.relative_to(repo.resolve())} has no heading #{anchor}")
    return problems


def test_every_documentation_link_resolves_inside_the_repository() -> None:
    assert len(pages()) > 10
    assert [problem for page in pages() for problem in broken_links(page)] == []


def test_the_docs_index_links_every_page() -> None:
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    linked = set(_LINK.findall(index))
    missing = [page.name for page in pages() if page.parent.name == "docs" and page.name != "README.md"
               and page.name not in linked]
    assert missing == []


def test_a_broken_link_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Real heading\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "# Title\n\n[ok](docs/a.md#real-heading) [gone](docs/b.md) [anchor](docs/a.md#renamed)"
        " [out](../shared/CONFIG.md) [web](https://example.com/x)\n\n```\n[in a fence](nowhere.md)\n```\n",
        encoding="utf-8")
    problems = broken_links(tmp_path / "README.md", tmp_path)
    assert problems == [
        "README.md: link 'docs/b.md': docs/b.md does not exist",
        "README.md: link 'docs/a.md#renamed': docs/a.md has no heading #renamed",
        "README.md: link '../shared/CONFIG.md' points outside the repository; link a file of the repository "
        "or a public URL",
    ]


def test_heading_anchors_follow_github() -> None:
    assert slug("Offline preview: `python -m tools.preview`") == "offline-preview-python--m-toolspreview"
    assert slug("Environments, secrets and the AWS role") == "environments-secrets-and-the-aws-role"


def test_the_readme_is_short_and_its_first_screen_holds_the_quick_start() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    first = "\n".join(lines[:40])
    for needed in ("Prerequisites", "Python 3.11", "`make`", "What a `pulumi up` of the dev stack creates",
                   "make preview", "make test", "verdict: PASS", "docs/README.md"):
        assert needed in first, needed
    # PHASE=up is the offline emulation of an update, never "a real `pulumi up`" that could touch AWS.
    assert not any("runs" in line and "a real `pulumi up`" in line for line in lines)


def test_license_contributing_and_security_exist() -> None:
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    for name in ("CONTRIBUTING.md", "SECURITY.md"):
        assert (REPO / name).stat().st_size > 1000, name


def test_the_readme_diagram_is_what_the_dev_stack_creates(run_preview: Any) -> None:
    """Issue 56: the README's picture of `pulumi up` is generated from the dev stack's recorded resources
    (`python -m tools.readme_diagram` rewrites it); a change of the stack or the components shows here."""
    from tests.conftest import shipped_args  # noqa: PLC0415
    from tools import readme_diagram  # noqa: PLC0415

    doc = run_preview(*shipped_args("dev")).json()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme_diagram.with_diagram(readme, readme_diagram.mermaid(doc)) == readme, (
        "README.md's dev stack diagram is not current: run .venv/bin/python -m tools.readme_diagram")
    assert "[picture](#what-pulumi-up-of-the-dev-stack-creates)" in "\n".join(readme.splitlines()[:40])
