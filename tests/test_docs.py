"""The docs hold together: every "docs/FILE.md, "Section"" a source or doc file
cites names a heading that exists, every relative Markdown link resolves, and the
README stays the short page a newcomer reads first."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [p for d in ("golden", "hw", "tb", "synth", "sim", "tests", "docs") for p in (ROOT / d).rglob("*")
           if p.suffix in (".py", ".md") and p.name != "test_docs.py"] + [ROOT / "README.md"]
CITE = re.compile(r'(?:docs/(\w+)|(CHANGELOG))\.md, "([^"]{1,80})"')
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")


def headings(doc: Path) -> list[str]:
    return [m[1].strip() for m in re.finditer(r"^#+ (.+)$", doc.read_text(), re.M)]


def cited(text: str):
    # A citation may wrap: its section is compared with whitespace collapsed.
    for m in CITE.finditer(text):
        yield m[1] or m[2], " ".join(m[3].split())


def test_every_cited_section_exists():
    missing = []
    for path in SOURCES:
        for doc, section in cited(path.read_text()):
            target = ROOT / "CHANGELOG.md" if doc == "CHANGELOG" else ROOT / "docs" / f"{doc}.md"
            if not target.exists() or not any(h.startswith(section) for h in headings(target)):
                missing.append(f"{path.relative_to(ROOT)}: docs/{doc}.md, \"{section}\"")
    assert not missing, "\n".join(missing)


def test_markdown_links_resolve():
    broken = [f"{md.relative_to(ROOT)} -> {link}"
              for md in [ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")]
              for link in LINK.findall(md.read_text()) if not (md.parent / link).exists()]
    assert not broken, "\n".join(broken)


def test_the_check_sees_a_wrong_citation():
    assert list(cited('see docs/design.md, "How the\n   PE works"')) == [("design", "How the PE works")]


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 80


def test_every_reference_doc_is_under_500_lines():
    """The reference docs describe the design as it is; the history is CHANGELOG.md's."""
    long = {p.name: n for p in (ROOT / "docs").glob("*.md") if (n := len(p.read_text().splitlines())) >= 500}
    assert not long, long


def test_cli_md_lists_what_the_commands_take():
    """The choices docs/cli.md shows for a command's options are the parser's."""
    from hw.blocks import BLOCKS
    from sim.chip.chip import CHIPS
    from synth.fpga import TWINS

    text = (ROOT / "docs" / "cli.md").read_text()
    assert f"kaleido fpga    --block {'|'.join(TWINS)} " in text
    assert f"[--chip {'|'.join(CHIPS)}|FILE]" in text
    assert set(TWINS) <= set(BLOCKS)
