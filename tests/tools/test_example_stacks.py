# SPDX-License-Identifier: MIT
"""The ATmega128 image of every example the README and the guide name fits
the stack `motet stack` bounds for it: the image is built as a user builds
it (`./motet build --port avr --target T`, in the AVR tree that `motet
test --only ports` makes, so only what changed is compiled), then bounded
with its own annotation file, exactly as the guide's command does it, and
its static RAM plus that bound must fit the RAM it runs with (from the data's
start to its stack's top, external SRAM included where the image uses it:
tools/motetlib/avr_ram.py). hello's image went over its own bound (1,681 B
against the 1,360 B the port's default kernel left it) without any test
noticing.
The port's own functions must have the compiler's frames, not estimates
from their prologues, which miss what a function pushes after them.
Skipped where this tree has no AVR build tree or no avr-gcc."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "motetlib"))

import avr_ram  # noqa: E402
import port_avr  # noqa: E402
from motetlib import build  # noqa: E402
from repo_copy import user_env  # noqa: E402

# An incremental build of one image in a built tree takes seconds; from a
# tree that has not built it yet, its kernel and port too.
BUILD_TIMEOUT_S = 900

# (target, image in the AVR tree, annotation file)
EXAMPLES = {
    "hello": ("apps/hello/hello.elf", "apps/hello/hello.stack"),
    "pingpong": ("apps/pingpong/pingpong.elf", "apps/pingpong/pingpong.stack"),
    "ssl_device": ("apps/ssl/ssl_device.elf", "apps/ssl/ssl_device_avr.stack"),
}
# Over what it has: the bus in 4 KB of internal SRAM.
OVER = {"pingpong": ("a bound of about 2.5 KB against under 600 B left (as docs/guide.md says "
                     "of the monitor with the bus); open until the image runs with external "
                     "SRAM, as ssl_device does")}


def analysed(target):
    """(image, `motet stack -v` output) of example `target`, built as a user
    builds it; once per test process."""
    if target in _ANALYSED:
        return _ANALYSED[target]
    if shutil.which("avr-gcc") is None:
        pytest.skip("avr-gcc not installed")
    tree = build.port_build_dir(None, "avr")
    if not (tree / "CMakeCache.txt").exists():
        pytest.skip(f"no AVR build tree here ({tree.name}: ./motet test --only ports makes it)")
    image, annotations = EXAMPLES[target]
    res = subprocess.run(["./motet", "build", "--port", "avr", "--target", target], cwd=ROOT,
                         env=user_env(), capture_output=True, text=True,
                         timeout=BUILD_TIMEOUT_S)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    elf = tree / image
    res = subprocess.run(["./motet", "stack", str(elf), "--annotations", annotations, "-v"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "REFUSED" not in res.stdout, res.stdout + res.stderr
    _ANALYSED[target] = elf, res.stdout
    return _ANALYSED[target]


_ANALYSED: dict = {}


@pytest.mark.parametrize("target", [
    pytest.param(t, marks=pytest.mark.xfail(strict=True, reason=OVER[t])) if t in OVER else t
    for t in EXAMPLES])
def test_example_avr_image_fits_its_stack_bound(target):
    elf, out = analysed(target)
    kernel = re.search(r"^  kernel stack\s+(\d+)   (.*)$", out, re.M)
    assert kernel, out
    bound = int(kernel[1])
    # The bound counts the image's own tasks, read from the image.
    assert re.search(r"\[\w+_desc task \d", kernel[2]), kernel[2]
    static = port_avr.static_ram(port_avr.section_sizes(elf))
    ram = avr_ram.ram_bytes(elf)
    assert static > 0 and bound > 0
    assert static + bound <= ram, (
        f"{elf.name}: static RAM {static} B + kernel stack bound {bound} B = "
        f"{static + bound} B, more than the {ram} B it runs with "
        f"({static + bound - ram} B over)")


@pytest.mark.parametrize("target", sorted(EXAMPLES))
def test_example_avr_image_has_the_compilers_port_frames(target):
    """The port's frames are the compiler's (its .su files), not estimates
    from prologues: all but the start-up file's, whose naked functions
    avr-gcc cannot size (ports/avr/port.cmake, motet_avr_port_frames())."""
    _, out = analysed(target)
    estimated = {n.split(".")[0] for n in re.findall(r"note: ([\w.]+): no \.su entry", out)}
    sized = c_functions(p for p in sorted((ROOT / "ports" / "avr").glob("*.c"))
                        if p.name != "port_avr_startup.c")
    assert {"port_init", "port_halt", "port_console_write", "port_sleep"} <= sized
    assert not estimated & sized, sorted(estimated & sized)


def c_functions(paths):
    """The names of the functions the C files `paths` define (the project's
    style: a definition's first line starts in column 0 and ends with `)`)."""
    names = set()
    for path in paths:
        names |= set(re.findall(r"^[A-Za-z_][\w \*]*?\b(\w+)\([^;{]*\)\s*$",
                                path.read_text(), re.M))
    return names
