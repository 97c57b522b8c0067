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


# ---- stack preemption: handler calls bounded by the task set ----

# A miniature of Motet's dispatch: handlers are called through a program
# table, and a handler's send runs the next handler nested (recursion in the
# static call graph). The image holds the table and a binary application
# description (appc) naming the tasks by program id.
PREEMPT = r"""
typedef int (*handler_t)(void *state, void *msg);
typedef struct program {
    unsigned char id;
    const char *name;
    handler_t handler;
    unsigned short state_size;
    const void *layout;
} program_t;
volatile int sink;
static int handler_a(void *state, void *msg);
static int handler_b(void *state, void *msg);
__attribute__((used)) const program_t programs[] = {
    {1, "a", handler_a, 0, 0},
    {2, "b", handler_b, 4, 0},
};
__attribute__((used)) const unsigned char desc[] = {DESC};
const program_t *volatile table = programs; /* keeps the calls indirect */

__attribute__((noinline)) int dispatch(int id)
{
    volatile char frame[6];
    frame[0] = (char) id;
    for (unsigned i = 0; i < sizeof programs / sizeof programs[0]; i++)
        if (table[i].id == id) sink += table[i].handler((void *) frame, 0);
    return frame[0];
}
__attribute__((noinline)) int send(int id)
{
    volatile char copy[10];
    copy[0] = (char) id;
    return dispatch(copy[0]) + copy[1];
}
static int handler_a(void *state, void *msg)
{
    (void) state;
    (void) msg;
    volatile char buf[12];
    buf[0] = 2;
    return send(buf[0]) + buf[3];
}
static int handler_b(void *state, void *msg)
{
    (void) state;
    (void) msg;
    volatile char buf[30];
    for (int i = 0; i < 30; i++) buf[i] = (char) i;
    RECURSE
    return buf[sink % 30];
}
/* An interrupt's post: it reaches the dispatch in the call graph, but the
 * rules say no handler starts under it (`no-dispatch`). */
__attribute__((noinline)) int poster(void)
{
    volatile char b[4];
    b[0] = 2;
    return send(b[0]) + b[1];
}
int main(void)
{
    sink = desc[0] + dispatch(1) + poster();
    for (;;) {
    }
}
"""

PREEMPT_APP = """
[app]
name = "mini"
[programs]
a = 1
b = 2
[[task]]
name = "a"
program = "a"
priority = 1
[[task]]
name = "b"
program = "b"
priority = 2
"""

PREEMPT_ANNOTATIONS = "root main\ndispatch dispatch\nprograms programs\nappdesc desc\n"


def build_preempt(tmp_path, arch, recurse=False):
    from motetlib import appc_text

    desc = ", ".join(str(b) for b in appc_text.compile_text(PREEMPT_APP))
    src = PREEMPT.replace("DESC", desc)
    src = src.replace("RECURSE", "if (sink == 12345) buf[2] = (char) handler_b(state, msg);"
                      if recurse else "")
    return build(tmp_path, "preempt_r" if recurse else "preempt", src, arch)


@pytest.mark.parametrize("arch", ["avr", "arm"])
def test_stack_preemption_is_refused_without_the_dispatch_table(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build_preempt(tmp_path, arch)
    out = stackcheck.analyse(elf, ["main"])
    assert any("dispatch: indirect call" in p for p in out["roots"]["main"].problems)


@pytest.mark.parametrize("arch", ["avr", "arm"])
def test_kernel_stack_is_the_deepest_nesting_of_the_image_tasks(tmp_path, arch):
    """The tasks come from the image (program table + description); the
    bound is main's deepest path to a handler call (through poster), a's
    path to the next one, and b whole: the deepest stack this program can
    build."""
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build_preempt(tmp_path, arch)
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS)
    out = stackcheck.analyse(elf, [], ann=ann)
    k = out["kernel"]
    assert not k.problems, k.problems
    su = su_frames(elf)
    b = stackcheck.analyse(elf, ["handler_b"])["roots"]["handler_b"]  # with its libgcc calls
    to_call = su["main"] + su["poster"] + su["send"] + su["dispatch"]
    deepest = to_call + su["handler_a"] + su["send"] + su["dispatch"] + b.depth
    assert k.depth == deepest, (k.path, su)
    assert any("handler_b [desc task 1, prio 2]" in t for t in k.path)


@pytest.mark.parametrize("arch", ["avr", "arm"])
def test_application_recursion_is_still_refused(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build_preempt(tmp_path, arch, recurse=True)
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS)
    out = stackcheck.analyse(elf, [], ann=ann)
    assert any("recursion: handler_b -> handler_b" in p for p in out["kernel"].problems)


@pytest.mark.parametrize("arch", ["avr", "arm"])
def test_no_dispatch_takes_no_path_into_a_handler_call(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build_preempt(tmp_path, arch)
    su = su_frames(elf)
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS)
    loud = stackcheck.analyse(elf, ["poster"], ann=ann)["roots"]["poster"]
    assert loud.reach == su["poster"] + su["send"] + su["dispatch"]
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "no-dispatch poster\n")
    quiet = stackcheck.analyse(elf, ["poster"], ann=ann)["roots"]["poster"]
    assert quiet.reach is None
    assert quiet.depth == su["poster"] + su["send"]
    # A `preempt` function (a context switch) is not called there either.
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "no-dispatch poster\npreempt send\n")
    switch_free = stackcheck.analyse(elf, ["poster"], ann=ann)["roots"]["poster"]
    assert switch_free.depth == su["poster"]
    assert stackcheck.analyse(elf, ["handler_a"], ann=ann)["roots"]["handler_a"].reach is not None


def test_a_description_task_without_its_program_is_an_error(tmp_path):
    if not have("avr"):
        pytest.skip("avr-gcc not installed")
    elf = build_preempt(tmp_path, "avr")
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS.replace("programs programs\n", ""))
    out = stackcheck.analyse(elf, [], ann=ann)
    assert out["kernel"].problems == [
        "task set: desc: task 0 runs program 1, which no program table (none named) holds"]


def test_bound_sums_distinct_elements_and_interrupts():
    from motetlib.stack_preempt import Element, bound

    root = Element("main", 40, 30)
    a, b = Element("a", 50, 20), Element("b", 60, None)
    # No interrupt: b can only be the top (it starts nothing).
    assert bound(root, [a, b], [], 0)[0] == 30 + 20 + 60
    # One interrupt: it may land anywhere; best at the top of b, or inside
    # a (a's full instead of its reach) with b above.
    isr = Element("isr", 25, 10)
    assert bound(root, [a, b], [isr], 1)[0] == 30 + 20 + 60 + 30 + 25
    # A root that starts nothing needs an interrupt before any task runs.
    idle = Element("main", 40, None)
    assert bound(idle, [a, b], [], 0)[0] == 40
    assert bound(idle, [a, b], [isr], 1)[0] == 40 + 20 + 60 + 25


def test_priority_levels_count_an_unknown_priority_as_a_level_of_its_own():
    from motetlib.stack_preempt import priority_levels

    assert priority_levels([1, 2, 2, 1]) == 2
    assert priority_levels([3, None, None]) == 3
    assert priority_levels([]) == 0


@pytest.mark.parametrize("arch", ["avr", "arm"])
def test_an_interrupt_that_may_come_again_is_charged_once_per_level_and_on_top(tmp_path, arch):
    """`isr-reentry levels`: the port turns interrupts on in an exit
    dispatch only to run a task above the interrupted frame, so the same
    entry may be on the stack again, once per priority level of the task set
    (two here: a at 1, b at 2), each where its exit starts a task, with one
    more on top. Without it, each entry counts once, which such a port would
    break. (poster stands for an interrupt whose exit dispatches.)"""
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build_preempt(tmp_path, arch)
    once = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "isr poster\n")
    again = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "isr poster\nisr-reentry levels\n")
    k_once = stackcheck.analyse(elf, [], ann=once)["kernel"]
    k_again = stackcheck.analyse(elf, [], ann=again)["kernel"]
    assert not k_once.problems and not k_again.problems
    poster = stackcheck.analyse(elf, ["poster"], ann=once)["roots"]["poster"]
    hw = stackcheck.ISR_FRAME[arch]
    # Two more interrupts, each its frame and its path to the dispatch, and
    # each the gain of starting the next activation anywhere in an element.
    assert k_again.depth >= k_once.depth + 2 * (poster.reach + hw)
    assert "3 nested interrupt(s) of 1 (one per priority level, 2, and 1 on top)" in k_again.path[0]
    # An entry whose exit cannot start a task is never below another one.
    quiet = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "isr poster\nno-dispatch poster\n"
                                         "isr-reentry levels\n")
    assert "1 nested interrupt(s) of 1" in stackcheck.analyse(elf, [], ann=quiet)["kernel"].path[0]


def test_stack_paint_fails_a_bound_below_the_paint_or_a_short_thread_allowance():
    """The checks of tools/motetlib/stack_paint.py: a bound below the painted
    mark (the AVR tests stack_hello_avr, stack_bench_avr) and a thread
    allowance below its analysed figure (stack_thread_<policy>_avr)."""
    from motetlib import stack_paint

    assert stack_paint.failures(1027, 344, 135, 135) == []
    assert stack_paint.failures(300, 344) == ["the bound 300 B is below the measured 344 B"]
    assert stack_paint.failures(1027, 344, 134, 135, "ports/avr/port_config.h") == [
        "PORT_THREAD_STACK_EXTRA (134 B) is below the analysed 135 B: raise it in "
        "ports/avr/port_config.h"]
    config = ROOT / "ports" / "avr" / "port_config.h"
    assert stack_paint.port_thread_extra(config) > 0


def test_recorded_high_water_mark_is_read_from_its_table_row(tmp_path):
    from motetlib import stack_paint

    report = tmp_path / "benchmarks.md"
    report.write_text("| image | stack bytes used |\n|---|---:|\n| hello.elf | 344 |\n"
                      "| bench_avr.elf | 382 |\n")
    assert stack_paint.recorded_high_water(Path("x/bench_avr.elf"), report) == 382
    with pytest.raises(stackcheck_errors(stack_paint), match="0 stack rows for other.elf"):
        stack_paint.recorded_high_water(Path("other.elf"), report)


def stackcheck_errors(stack_paint):
    """StackError as stack_paint sees it (it imports stackcheck as a script)."""
    return stack_paint.stackcheck.StackError


@pytest.mark.parametrize("arch", ["avr", "arm"])
def test_hook_has_no_target_without_its_setter_and_must_be_named_with_it(tmp_path, arch):
    if not have(arch):
        pytest.skip(f"{GCC[arch][0]} not installed")
    elf = build(tmp_path, "indirect", INDIRECT, arch)
    su = su_frames(elf)
    unset = stackcheck.parse_annotations("hook main set-by install_handler\n")
    r = stackcheck.analyse(elf, ["main"], ann=unset)["roots"]["main"]
    assert not r.problems, r.problems
    assert r.depth == su["main"] + su["two"]
    # A setter in the image: the call is refused until its targets are named.
    setter = stackcheck.parse_annotations("hook main set-by install_handler two\n")
    r = stackcheck.analyse(elf, ["main"], ann=setter)["roots"]["main"]
    assert any("main: indirect call or jump it cannot resolve" in p for p in r.problems)
    named = stackcheck.parse_annotations("hook main set-by two\nindirect main -> one two\n")
    r = stackcheck.analyse(elf, ["main"], ann=named)["roots"]["main"]
    assert not r.problems and r.depth == su["main"] + max(su["one"], su["two"])


def test_isr_exit_puts_only_the_exit_dispatch_on_a_thread_stack(tmp_path):
    """Cortex-M: bodies run on MSP; a thread's PSP takes, per level, the
    hardware frame and the exit dispatch below it (stack.annot)."""
    if not have("arm"):
        pytest.skip("arm-none-eabi-gcc not installed")
    elf = build_preempt(tmp_path, "arm")
    su = su_frames(elf)
    ann = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "isr poster\nisr-frame 36\n"
                                       "isr-exit send\nthread-isr-nesting 2\n")
    out = stackcheck.analyse(elf, [], ann=ann)
    assert not out["kernel"].problems, out["kernel"].problems
    exit_dispatch = su["send"] + su["dispatch"]
    assert out["thread_extra"].depth == 2 * (36 + max(exit_dispatch, 32))
    # On the kernel stack the interrupt costs the larger of body and exit.
    body_only = stackcheck.parse_annotations(PREEMPT_ANNOTATIONS + "isr poster\nisr-frame 36\n")
    plain = stackcheck.analyse(elf, [], ann=body_only)["kernel"]
    assert out["kernel"].depth >= plain.depth


def test_thread_allowance_may_be_an_expression_of_the_port_config(tmp_path):
    from motetlib import stack_paint

    config = tmp_path / "port_config.h"
    config.write_text("#define LEVELS 2u\n#define FRAME 36u\n#define EXTRA_PATH (160u)\n"
                      "#define PORT_THREAD_STACK_EXTRA \\\n    (LEVELS * (FRAME + EXTRA_PATH))\n")
    assert stack_paint.port_thread_extra(config) == 392
    config.write_text("#define PORT_THREAD_STACK_EXTRA (LEVELS * 4)\n")
    with pytest.raises(stackcheck_errors(stack_paint), match="uses LEVELS, not a #define"):
        stack_paint.port_thread_extra(config)
    cm = ROOT / "ports" / "cortex-m" / "port_config.h"
    assert stack_paint.port_thread_extra(cm) > 0


@pytest.mark.parametrize("case", ["missing", "not an ELF", "missing annotations"])
def test_a_file_stack_cannot_read_is_named_first(tmp_path, capsys, case):
    """A missing ELF was reported as "no root" (with no --root) or in
    Python's words ("[Errno 2] No such file or directory: '...'"); now the
    file and what is wrong with it, before anything else."""
    missing = tmp_path / "none.elf"
    text = tmp_path / "app.toml"
    text.write_text("[app]\n")
    elf = Path(sys.executable).resolve()  # an ELF on every machine the tests run on
    argv, says = {
        "missing": ([missing], f"{missing}: No such file or directory"),
        "not an ELF": ([text], f"{text}: not an ELF file"),
        "missing annotations": ([elf, "--annotations", missing],
                                f"{missing}: No such file or directory"),
    }[case]
    assert stackcheck.main([str(a) for a in argv]) == 2
    assert capsys.readouterr().err == f"stack: error: {says}\n"


# ---- what an application's file needs: its port's, once; its tables ----

def test_include_for_reads_the_file_of_the_image_machine_alone(tmp_path):
    """An application's file names both ports' annotations; an AVR image
    reads the AVR port's (its interrupt entry, its libc's indirect call),
    an ARM image the Cortex-M port's, and neither file is read twice when
    the command line names it as well."""
    (tmp_path / "avr.annot").write_text("isr __vector_12\nindirect fputc -> -\n")
    (tmp_path / "arm.annot").write_text("isr cm_compare_isr\n")
    (tmp_path / "kernel.annot").write_text("task appmgr_handler\n")
    app = tmp_path / "app.stack"
    app.write_text("include kernel.annot\ninclude-for avr avr.annot\n"
                   "include-for arm arm.annot\nroot main\n")
    avr = stackcheck.read_annotations([app, tmp_path / "avr.annot", tmp_path / "kernel.annot"],
                                      "avr")
    assert avr.isrs == ["__vector_12"] and avr.indirect == {"fputc": ["-"]}
    assert avr.tasks == [("appmgr_handler", None)]  # once, not once per naming
    arm = stackcheck.read_annotations([app], "arm")
    assert arm.isrs == ["cm_compare_isr"] and arm.indirect == {} and arm.roots == ["main"]
    with pytest.raises(stackcheck.StackError, match=r"app.stack:2: `include-for` needs the "
                                                    r"image's machine"):
        stackcheck.read_annotations([app])
    (tmp_path / "typo.stack").write_text("include-for cortex-m arm.annot\n")
    with pytest.raises(stackcheck.StackError, match=r"typo.stack:1: `include-for` names no "
                                                    r"machine 'cortex-m': it is one of arm, avr, "
                                                    r"x86-64"):
        stackcheck.read_annotations([tmp_path / "typo.stack"], "avr")


def test_no_root_says_where_a_new_application_has_its_roots(tmp_path, capsys):
    """A newcomer running `motet stack` on a new application's image was
    told only to name a root: `motet new` writes the file that names them."""
    elf = tmp_path / "app.elf"
    elf.write_bytes(b"\x7fELF\x01\x01\x01" + bytes(11) + (83).to_bytes(2, "little") + bytes(32))
    assert stackcheck.main([str(elf)]) == 2
    err = capsys.readouterr().err
    assert "stack: error: no root: name at least one with --root or `root` annotations" in err
    assert "--annotations apps/NAME/NAME.stack" in err, err


TWO_TABLES = {
    "kernel.c": "static const unsigned char programs[3] = {1, 2, 3};\n"
                "const unsigned char *kernel_table(void) { return programs; }\n",
    "app.c": "const unsigned char *kernel_table(void);\n"
             "static const unsigned char programs[2] = {7, 8};\n"
             "int main(void) { return kernel_table()[0] + programs[1]; }\n",
}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_two_statics_of_one_name_are_told_apart_by_their_file(tmp_path):
    """A new application's table named `programs`, as the kernel's own
    static, was refused with "2 symbols named 'programs'" and no way out
    but renaming: the message now names the files, and FILE:SYMBOL picks
    one."""
    from motetlib import stack_tasks

    for name, text in TWO_TABLES.items():
        (tmp_path / name).write_text(text)
    elf = tmp_path / "two.elf"
    subprocess.run(["gcc", "-O0", "-o", str(elf), *TWO_TABLES], cwd=tmp_path, check=True)
    image = stack_tasks.Elf(elf)
    with pytest.raises(stack_tasks.ImageError) as refused:
        image.symbol_bytes("programs")
    assert re.fullmatch(r"two\.elf: 2 symbols named 'programs' \(in (kernel\.c, app\.c|app\.c, "
                        r"kernel\.c)\): name the one meant by its file, `FILE:programs`, or give "
                        r"it a name of its own", str(refused.value)), refused.value
    assert image.symbol_bytes("app.c:programs") == bytes([7, 8])
    assert image.symbol_bytes("kernel.c:programs") == bytes([1, 2, 3])
    with pytest.raises(stack_tasks.ImageError, match=r"no data symbol 'main.c:programs' \(there "
                                                     r"is one named 'programs' in app\.c, "
                                                     r"kernel\.c\)"):
        image.symbol_bytes("main.c:programs")
    # A path names the file the compiler records by its base name.
    assert image.symbol_bytes("apps/x/app.c:programs") == bytes([7, 8])


# ---- which .su files: the link's own objects, matched by file ----

WORK = r"""
__attribute__((noinline)) int work(int x)
{
    volatile char buf[PAD];
    buf[0] = (char) x;
    return buf[x % PAD];
}
"""

MAIN_OF_WORK = r"""
int work(int x);
volatile int sink;
int main(void)
{
    sink = work(3);
    return 0;
}
"""


def ninja_tree(tmp_path):
    """A Ninja build tree holding two builds of work.c with different
    frames (PAD 8 and 400), app/app.elf linked with the small one and
    other/other.elf with the large one."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "CMakeCache.txt").write_text("CMAKE_GENERATOR:INTERNAL=Ninja\n")
    (tree / "work.c").write_text(WORK)
    (tree / "main.c").write_text(MAIN_OF_WORK)
    cc = " ".join(GCC["x86-64"])
    (tree / "build.ninja").write_text(
        f"rule cc\n  command = {cc} -fstack-usage $flags -c $in -o $out\n"
        f"rule link\n  command = {cc} -o $out $in\n"
        "build small/work.c.o: cc work.c\n  flags = -DPAD=8\n"
        "build big/work.c.o: cc work.c\n  flags = -DPAD=400\n"
        "build main/main.c.o: cc main.c\n"
        "build app/app.elf: link small/work.c.o main/main.c.o\n"
        "build other/other.elf: link big/work.c.o main/main.c.o\n")
    res = subprocess.run(["ninja", "-C", str(tree)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    return tree


@pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")
def test_frames_come_from_the_objects_the_link_used(tmp_path):
    tree = ninja_tree(tmp_path)
    frames = {}
    for d in ("small", "big", "main"):
        su = next((tree / d).glob("*.su"))
        frames[d] = stackcheck.parse_su(su.read_text())
    assert frames["big"]["work"][0] > frames["small"]["work"][0]
    for elf, build_of_work in ((tree / "app" / "app.elf", "small"),
                               (tree / "other" / "other.elf", "big")):
        out = stackcheck.analyse(elf, ["main"], red_zone=False)
        r = out["roots"]["main"]
        assert not r.problems
        assert r.depth == frames["main"]["main"][0] + frames[build_of_work]["work"][0], r.path
        # Both frames from the .su files (not estimated), and no other build's.
        assert not [n for n in out["notes"] if "no .su entry" in n or "several" in n], out["notes"]
    # An image the tree did not link has no objects to name: said, not guessed.
    copy = tree / "app" / "copy.elf"
    shutil.copy(tree / "app" / "app.elf", copy)
    with pytest.raises(stackcheck.StackError, match=r"cannot list the objects of its link .*"
                                                    r"unknown target.*--su"):
        stackcheck.analyse(copy, ["main"], red_zone=False)


FILTER = r"""
__attribute__((noinline)) int filter(int x)
{
    volatile char buf[48];
    buf[0] = (char) x;
    return buf[x % 48];
}
volatile int sink;
int main(void)
{
    sink = filter(3);
    return 0;
}
"""


def su_dir(tmp_path, files):
    d = tmp_path / "su"
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d


def test_a_dynamic_frame_is_refused_though_a_larger_static_one_has_its_name(tmp_path):
    elf = build(tmp_path, "filter", FILTER, "x86-64")
    d = su_dir(tmp_path, {"a/app.c.su": "app.c:3:12:filter\t20\tdynamic\n",
                          "b/other.c.su": "other.c:3:12:filter\t4000\tstatic\n"})
    r = stackcheck.analyse(elf, ["main"], su_dirs=[d], red_zone=False)["roots"]["main"]
    assert any("filter: frame of dynamic size" in p for p in r.problems), r.problems


def test_a_frame_is_never_below_what_the_image_prologue_pushes(tmp_path):
    elf = build(tmp_path, "filter", FILTER, "x86-64")
    funcs = stackcheck.parse_objdump(stackcheck.disassemble(elf, "objdump"))
    pushed = stackcheck.estimate_frame("x86-64", funcs["filter"])
    assert pushed > 8
    d = su_dir(tmp_path, {"a/filter.c.su": "filter.c:3:12:filter\t8\tstatic\n"})
    out = stackcheck.analyse(elf, ["filter"], su_dirs=[d], red_zone=False)
    assert out["roots"]["filter"].depth == pushed
    assert any("prologue pushes" in n for n in out["notes"]), out["notes"]


STATIC_HELPER = r"""
__attribute__((noinline)) static int helper(int x)
{
    volatile char buf[24];
    buf[0] = (char) x;
    return buf[x % 24];
}
volatile int sink;
int main(void)
{
    sink = helper(3);
    return 0;
}
"""


def test_a_static_function_takes_the_frame_of_its_own_file(tmp_path):
    elf = build(tmp_path, "mine", STATIC_HELPER, "x86-64")
    own = su_frames(elf)
    entries = stackcheck.parse_su(next(elf.parent.glob("*.su")).read_text())
    helper = next(n for n in entries if n.startswith("helper"))  # or its clone
    other = tmp_path / "other"
    other.mkdir()
    (other / "theirs.c.su").write_text(f"theirs.c:2:12:{helper}\t4000\tstatic\n")
    out = stackcheck.analyse(elf, ["main"], su_dirs=[elf.parent, other], red_zone=False)
    r = out["roots"]["main"]
    assert r.depth == own["main"] + own["helper"], r.path
    assert not [n for n in out["notes"] if "several" in n], out["notes"]


def test_the_avr_interrupt_entries_frame_is_annotated_as_its_assembly_fixes_it():
    """PORT_AVR_ISR's entry is assembly (ports/avr/avr.h), which has no .su
    entry: ports/avr/stack.annot gives the port's entries the frame its
    instructions fix (every push before the call, on the ATmega128 RAMPZ's
    too, and the interrupt's return address), not the prologue estimate,
    which reads 24 instructions and so would miss a push past them."""
    header = (ROOT / "ports" / "avr" / "avr.h").read_text()
    entry = re.search(r"#define PORT_AVR_ENTRY_EXIT\(run\)(.*?)\"call \" run", header, re.S)
    assert entry
    rampz = re.search(r"#define PORT_AVR_SAVE_RAMPZ +\"([^\n]*)\"\n", header)
    pushes = entry[1].count("push ") + rampz[1].count("push ")
    assert entry[1].count("PORT_AVR_SAVE_RAMPZ") == 1
    frame = pushes + WORD["avr"]
    assert frame == 18
    ann = stackcheck.read_annotations([ROOT / "ports" / "avr" / "stack.annot"], "avr")
    assert {v: ann.frame.get(v) for v in ("__vector_12", "__vector_8")} == {
        "__vector_12": frame, "__vector_8": frame}
    # And every entry an AVR image's annotation file names (all are
    # PORT_AVR_ISR entries), the bench's own too.
    files = [p for p in sorted(ROOT.glob("*/*/*.stack")) if "avr" in p.read_text()]
    assert len(files) >= 5, files
    for path in files:
        ann = stackcheck.read_annotations([path], "avr")
        assert ann.isrs and {isr: ann.frame.get(isr) for isr in ann.isrs} == {
            isr: frame for isr in ann.isrs}, path
