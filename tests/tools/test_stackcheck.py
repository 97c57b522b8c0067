# SPDX-License-Identifier: MIT
"""The stack analyser (tools/motetlib/stackcheck.py, `motet stack`) on small
programs built here: its figure for x86-64 matches the high-water mark that
stack painting measures when the program runs (within two words); for AVR
and ARM Thumb it walks the same call graphs from their disassembly; it
refuses recursion and unresolved indirect calls, loudly, and accepts an
indirect call once annotated."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import stackcheck  # noqa: E402

GCC = {
    "x86-64": ["gcc", "-O2", "-mno-red-zone", "-fno-jump-tables"],
    "avr": ["avr-gcc", "-mmcu=atmega128", "-Os", "-fno-jump-tables"],
    "arm": ["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-O2", "-fno-jump-tables",
            "-nostdlib", "-Wl,-e,main"],
}
WORD = {"x86-64": 8, "avr": 2, "arm": 4}

# main -> middle -> leaf is the deepest path; shallow is a side branch.
CHAIN = r"""
__attribute__((noinline)) static int leaf(int x)
{
    volatile char buf[40];
    for (int i = 0; i < 40; i++) buf[i] = (char) (x + i);
    return buf[x % 40];
}
__attribute__((noinline)) static int middle(int x)
{
    volatile char pad[16];
    for (int i = 0; i < 16; i++) pad[i] = (char) i;
    return leaf(x) + pad[x % 16];
}
__attribute__((noinline)) static int shallow(int x)
{
    volatile int a = x;
    return a + 1;
}
volatile int sink;
int main(void)
{
    sink = middle(3) + shallow(4);
    for (;;) {
    }
}
"""

RECURSIVE = r"""
volatile int sink;
__attribute__((noinline)) static int down(int n)
{
    volatile int keep = n;
    return n > 0 ? down(n - 1) + keep : 0;
}
int main(void)
{
    sink = down(5);
    for (;;) {
    }
}
"""

INDIRECT = r"""
volatile int sink;
__attribute__((noinline)) static int one(int x) { volatile char b[24]; b[0] = (char) x; return b[0]; }
__attribute__((noinline)) static int two(int x) { volatile char b[8]; b[0] = (char) x; return b[0]; }
int (*volatile handler)(int) = one;
int main(void)
{
    sink = handler(3) + two(1);
    handler = two;
    sink += handler(4);
    for (;;) {
    }
}
"""


def have(arch):
    return shutil.which(GCC[arch][0]) is not None


def build(tmp_path, name, source, arch, extra=()):
    """Compile `source` to tmp_path/<arch>/<name>.elf with .su files beside."""
    d = tmp_path / arch
    d.mkdir(exist_ok=True)
    src = d / f"{name}.c"
    src.write_text(source)
    elf = d / f"{name}.elf"
    cmd = GCC[arch] + ["-fstack-usage", "-o", str(elf), str(src), *extra]
    res = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return elf


def su_frames(elf):
    """{function: frame} from the .su files, by source name (a clone such
    as leaf.constprop.2 counts as leaf)."""
    frames = {}
    for su in elf.parent.glob("*.su"):
        for name, (size, _) in stackcheck.parse_su(su.read_text()).items():
            base = name.split(".")[0]
            frames[base] = max(size, frames.get(base, 0))
    return frames


def motet_stack(*args):
    return subprocess.run([sys.executable, str(ROOT / "tools" / "motetlib" / "stackcheck.py"),
                           *map(str, args)], capture_output=True, text=True, timeout=60)


# ---- the figure against the .su files and the call graph ----

@pytest.mark.parametrize("arch", ["x86-64", "avr", "arm"])
def test_chain_is_the_sum_of_the_frames_on_the_deepest_path(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build(tmp_path, "chain", CHAIN, arch)
    out = stackcheck.analyse(elf, ["main"], red_zone=False)
    r = out["roots"]["main"]
    assert not r.problems, r.problems
    su = su_frames(elf)
    assert r.depth == su["main"] + su["middle"] + su["leaf"]
    assert [p.split(".")[0] for p in r.path] == ["main", "middle", "leaf"]


@pytest.mark.parametrize("arch", ["x86-64", "avr", "arm"])
def test_recursion_is_refused_loudly(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build(tmp_path, "recursive", RECURSIVE, arch)
    res = motet_stack(elf, "--root", "main", "--no-red-zone", "--header", tmp_path / "s.h")
    assert res.returncode == 1
    assert "REFUSED" in res.stdout and "REFUSED" in res.stderr
    assert re.search(r"recursion: down -> down", res.stdout)
    # The thread it would size falls back to the run-time guard.
    assert "#define MOTET_STACK_main 0" in (tmp_path / "s.h").read_text()


@pytest.mark.parametrize("arch", ["x86-64", "avr", "arm"])
def test_indirect_call_is_refused_until_annotated(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build(tmp_path, "indirect", INDIRECT, arch)
    res = motet_stack(elf, "--root", "main", "--no-red-zone")
    assert res.returncode == 1
    assert "main: indirect call or jump it cannot resolve" in res.stdout
    ann = tmp_path / "indirect.annot"
    ann.write_text("# handler may hold either\nindirect main -> one two\n")
    res = motet_stack(elf, "--root", "main", "--no-red-zone", "--annotations", ann,
                      "--header", tmp_path / "s.h")
    assert res.returncode == 0, res.stdout + res.stderr
    su = su_frames(elf)
    figure = int(re.search(r"#define MOTET_STACK_main (\d+)", (tmp_path / "s.h").read_text())[1])
    assert figure == su["main"] + max(su["one"], su["two"])


def test_bad_annotation_names_its_line(tmp_path):
    ann = tmp_path / "bad.annot"
    ann.write_text("root main\nindirect main one\n")
    with pytest.raises(stackcheck.StackError, match=r"bad.annot:2"):
        stackcheck.parse_annotations(ann.read_text(), str(ann))


def test_kernel_stack_adds_the_deepest_interrupt(tmp_path):
    if not have("arm"):
        pytest.skip("arm-none-eabi-gcc not installed")
    src = CHAIN.replace("int main(void)", """
void isr_small(void) { sink = 1; }
void isr_big(void) { sink = middle(1); }
int main(void)""")
    elf = build(tmp_path, "isr", src, "arm")
    ann = stackcheck.Annotations(isr_nesting=2)
    out = stackcheck.analyse(elf, ["main"], ["isr_small", "isr_big"], ann=ann)
    su = su_frames(elf)
    isr = su["isr_big"] + su["middle"] + su["leaf"] + stackcheck.ISR_FRAME["arm"]
    assert out["kernel"].depth == out["roots"]["main"].depth + 2 * isr


# ---- the figure against a measured high-water mark ----

MEASURED = r"""
#include <stdio.h>
#include <string.h>
#include "motet/port.h"

#define STACK 8192
static unsigned char stack[STACK] __attribute__((aligned(16)));
static port_context_t main_ctx, thread_ctx;
volatile int sink;
""" + CHAIN.split("volatile int sink;")[0] + r"""
/* The thread's entry: its worst case is what the analyser sizes. */
void work(void *arg)
{
    (void) arg;
    sink = middle(3) + shallow(4);
    port_context_switch(&thread_ctx, &main_ctx);
}

int main(void)
{
    memset(stack, 0xA5, sizeof stack);
    port_context_init(&thread_ctx, stack, sizeof stack, work, NULL);
    port_context_switch(&main_ctx, &thread_ctx);
    size_t untouched = 0;
    while (untouched < STACK && stack[untouched] == 0xA5) untouched++;
    printf("%zu\n", (size_t) STACK - untouched);
    return 0;
}
"""


def test_figure_matches_stack_painting_within_two_words(tmp_path):
    """Run `work` on a painted stack with the native port's context switch
    and compare the deepest byte it touched with the analyser's figure."""
    if not have("x86-64"):
        pytest.skip("gcc not installed")
    ctx = ROOT / "ports" / "native" / "context_native.c"
    elf = build(tmp_path, "measured", MEASURED, "x86-64",
                extra=[str(ctx), "-DMOTET_THREADS=1", "-I", str(ROOT / "kernel" / "include"),
                       "-I", str(ROOT / "ports" / "native")])
    run = subprocess.run([str(elf)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    measured = int(run.stdout)
    res = motet_stack(elf, "--root", "work", "--no-red-zone", "-v")
    assert res.returncode == 0, res.stdout + res.stderr
    figure = int(re.search(r"^\s+work\s+(\d+)", res.stdout, re.M)[1])
    assert figure >= measured  # never below what really happened
    assert figure - measured <= 2 * WORD["x86-64"], (figure, measured, res.stdout)


def test_cut_removes_a_call_that_never_happens_on_that_stack(tmp_path):
    if not have("x86-64"):
        pytest.skip("gcc not installed")
    elf = build(tmp_path, "chain", CHAIN, "x86-64")
    full = stackcheck.analyse(elf, ["main"], red_zone=False)["roots"]["main"]
    cut = stackcheck.parse_annotations("cut main -> middle.constprop.0\ncut main -> middle\n")
    part = stackcheck.analyse(elf, ["main"], ann=cut, red_zone=False)["roots"]["main"]
    su = su_frames(elf)
    assert full.depth == su["main"] + su["middle"] + su["leaf"]
    assert part.depth == su["main"] + su["shallow"]
