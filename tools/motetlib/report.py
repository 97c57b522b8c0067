# SPDX-License-Identifier: MIT
"""docs/benchmarks.md: one document, one section per benchmark.

Every benchmark command regenerates only its own section, kept between
`<!-- section: NAME -->` and `<!-- end: NAME -->` markers, so that running
one benchmark never erases another's figures. Sections appear in the
order of SECTION_ORDER; unknown ones go last, in the order they arrived.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "benchmarks.md"

# "summary" is the table of current figures against the targets and the
# peers, written by hand: no command writes it, and write_section() keeps it
# like any other section.
SECTION_ORDER = ["summary", "native", "cortex-m", "avr", "device", "migration", "migration-avr",
                 "ssl", "ssl-ports", "ssl-avr", "ssl-device", "mixed", "planner",
                 "threads",
                 "energy", "energy-load", "reliability", "soak"]

HEADER = """<!-- SPDX-License-Identifier: MIT -->
# Motet benchmarks

Measured figures only: instructions (callgrind on native, QEMU `-icount` on
Cortex-M), cycles (simavr on the ATmega128) and bytes. Each section is
written by the command named in it; do not edit between the markers by hand.
"""

_SECTION = re.compile(r"<!-- section: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- end: (?P=name) -->\n",
                      re.S)


def read_sections(path=REPORT):
    """{name: body} of the sections in the report (empty if it does not exist)."""
    if not path.exists():
        return {}
    return {m["name"]: m["body"] for m in _SECTION.finditer(path.read_text())}


def write_section(name, body, path=REPORT):
    """Replace (or add) section `name` with the markdown `body`; keep the others."""
    sections = read_sections(path)
    sections[name] = body.rstrip("\n") + "\n"
    known = [n for n in SECTION_ORDER if n in sections]
    others = [n for n in sections if n not in SECTION_ORDER]
    parts = [HEADER]
    for n in known + others:
        parts.append(f"<!-- section: {n} -->\n{sections[n]}<!-- end: {n} -->\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path
