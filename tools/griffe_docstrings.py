"""A griffe extension for the API reference: pfaff's one-line docstring entries.

pfaff's docstrings write a NumPy-style entry as ``name : what it is`` on one line
(continued on indented lines), with the types in the signature's annotations. The
NumPy parser would read the text after the colon as a type; this extension turns
such an entry into ``name`` followed by the text as its description, and keeps a
real type (``x : float``, ``q : np.ndarray``, ``n : int, optional``) as it is.
Sphinx cross-reference roles become Markdown code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

SECTIONS = ("Parameters", "Other Parameters", "Attributes", "Keyword Arguments")
_TYPE_WORD = (
    r"(?:int|float|str|bool|None|complex|bytes|callable|optional|array_like|"
    r"np\.ndarray|ndarray|list|tuple|dict|set|[A-Z][\w.]*(?:\[[^\]]*\])?)"
)
TYPE_ONLY = re.compile(rf"^{_TYPE_WORD}(?:\s*(?:\||,|or)\s*{_TYPE_WORD})*$")
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|obj|exc):`~?([^`]+)`")
ENTRY = re.compile(r"^([A-Za-z_*][\w*]*(?:\s*,\s*[A-Za-z_*][\w*]*)*)\s+:\s+(.+)$")


def rst_roles(text: str) -> str:
    """Sphinx roles (``:class:`~pfaff.x.Y```) as Markdown code (`` `Y` ``), a literal
    block's ``::`` as ``:``, and no pointer to the design notes, which are not
    published (``(design.md Sec. 2)``)."""
    text = ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    text = re.sub(r"\s*\(design\.md(?: Sec\. [\d.]+)?\)", "", text)
    return re.sub(r"(?<=\S)::$", ":", text, flags=re.M)


def split_entries(text: str) -> str:
    """The docstring with each ``name : description`` entry of the sections above
    written as ``name`` and an indented description; a paragraph of prose after the
    entries (no entry, not indented) goes under a ``Notes`` heading, where the NumPy
    style puts it, instead of being read as more entries."""
    lines = text.splitlines()
    out: list[str] = []
    section = None
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        prev = lines[i - 1] if i else ""
        if line.strip() and nxt.strip() and set(nxt.strip()) == {"-"}:
            section = line.strip()
        elif (
            section in SECTIONS
            and line.strip()
            and not prev.strip()
            and not line.startswith(" ")
            and not ENTRY.match(line)
            and not re.match(r"^[A-Za-z_*][\w*]*(?:\s*,\s*[A-Za-z_*][\w*]*)*$", line)
        ):
            out += ["Notes", "-----"]
            section = "Notes"
        m = ENTRY.match(line)
        if section in SECTIONS and m and not line.startswith(" "):
            name, rest = m.groups()
            if not TYPE_ONLY.match(rest.strip()):
                out += [name, "    " + rest]
                continue
        out.append(line)
    return "\n".join(out)


class OneLineEntries(griffe.Extension):
    """Rewrite the one-line entries of every docstring before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = split_entries(rst_roles(obj.docstring.value))
