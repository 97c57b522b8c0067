# SPDX-License-Identifier: MIT
"""motet-simavr's profiles (docs/simavr-harness.md): the flat profile per
function and, with --profile-pc, cycles and executions per instruction
address, both gated on a marker pin. A small AVR program runs a loop of a
known count inside the gate and another outside it; the per-address file
must count the gated loop's instructions exactly that often, never the
other one's, and add up to the flat profile."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import port_avr  # noqa: E402

GATED_TURNS = 37
PROGRAM = r"""
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/interrupt.h>

volatile unsigned char sink;

__attribute__((noinline)) void gated_loop(unsigned char n)
{
    for (unsigned char i = 0; i < n; i++) sink += i;
}

__attribute__((noinline)) void outside_loop(unsigned char n)
{
    for (unsigned char i = 0; i < n; i++) sink ^= i;
}

int main(void)
{
    DDRA = 0xFF;
    outside_loop(11);
    PORTA |= 1 << 1;
    gated_loop(%d);
    PORTA &= (unsigned char) ~(1 << 1);
    outside_loop(13);
    /* port_halt()'s marker (ports/avr/port_avr_boot.c): status 0. */
    cli();
    set_sleep_mode(SLEEP_MODE_PWR_DOWN);
    sleep_enable();
    register unsigned st __asm__("r24") = 0;
    register unsigned used __asm__("r22") = 0;
    register unsigned magic __asm__("r20") = 0x4D54;
    for (;;) __asm__ volatile("sleep" ::"r"(st), "r"(used), "r"(magic));
}
""" % GATED_TURNS


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    if not shutil.which("avr-gcc"):
        pytest.skip("avr-gcc not installed")
    harness = port_avr.find_harness()
    if harness is None:
        pytest.skip("motet-simavr not built (needs libsimavr)")
    work = tmp_path_factory.mktemp("simavr-profile")
    src, elf = work / "prog.c", work / "prog.elf"
    src.write_text(PROGRAM)
    subprocess.run(["avr-gcc", "-mmcu=atmega128", "-Os", "-o", str(elf), str(src)], check=True)
    return harness, elf, work


def run(harness, elf, *args):
    return subprocess.run([harness, "-q", "--timeout", "30", *args, str(elf)],
                          capture_output=True, text=True)


def test_per_address_profile_counts_the_gated_loop_exactly(image):
    harness, elf, work = image
    prof, pcs = work / "flat.txt", work / "pcs.txt"
    r = run(harness, elf, "--profile", str(prof), "--profile-pc", str(pcs), "--profile-gate",
            "A1")
    assert r.returncode == 0, r.stderr
    rows = port_avr.read_profile_pcs(pcs)
    assert [a for a, *_ in rows] == sorted(a for a, *_ in rows), "not in address order"
    assert not any(func == "outside_loop" for *_, func in rows), "counted outside the gate"
    loop = [runs for _, _, runs, func in rows if func == "gated_loop"]
    # Entry and exit once, the body once per turn, the loop's test once
    # more (where the compiler puts it); nothing else.
    assert GATED_TURNS in loop and set(loop) <= {1, GATED_TURNS, GATED_TURNS + 1}, loop
    # The same cycles as the flat profile, function by function.
    by_func = {}
    for _, cycles, _, func in rows:
        by_func[func] = by_func.get(func, 0) + cycles
    assert by_func == port_avr.read_profile(prof)


@pytest.mark.parametrize("option, value", [("--profile-pc", "alone.txt"), ("--profile-gate", "A1")])
def test_profile_options_need_the_flat_profile(image, option, value):
    """Without --profile there is no profile to gate or to break down: the
    harness refuses the option before it runs anything."""
    harness, elf, work = image
    arg = str(work / value) if value.endswith(".txt") else value
    r = run(harness, elf, option, arg)
    assert r.returncode == 125, r.stderr  # a usage error
    assert "need --profile" in r.stderr
    assert not (work / "alone.txt").exists()
