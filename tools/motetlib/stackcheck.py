# SPDX-License-Identifier: MIT
"""stackcheck: worst-case stack depth of a built ELF, from its call graph.

For AVR (avr-objdump), ARM Thumb (arm-none-eabi-objdump) and x86-64
(objdump), after RETOS's stack-size analysis: disassemble the linked
program, build the call graph (direct calls, and tail jumps into another
function), give every function its frame, and take the deepest path from
each root. The figures size thread stacks (thread.h, THREAD_STACK_BYTES)
and the kernel stack.

Frames. GCC's -fstack-usage writes one .su file per object: the bytes each
function's frame takes, return address included (on all three targets).
Those are used first: by default the .su files of the objects the ELF's
link used (its Ninja build tree lists them: `ninja -t inputs`), else those
in the ELF's directory; --su DIR instead searches DIR recursively. A static
function is matched with the entries of its own source file (the image's
symbol table names it). A frame is never taken below what the image's own
prologue pushes, and a function with a dynamic entry among its candidates
is refused. A function without one (assembly, libgcc, libc, an object
built without -fstack-usage) gets an estimate from its prologue: pushes
and stack-pointer subtraction, plus the return address (x86-64 8, AVR 2, ARM 0: `bl` leaves it in lr). On x86-64 a
leaf function may also use the 128-byte red zone below the stack pointer,
which .su files do not count: it is added to leaves unless the program was
built with -mno-red-zone (--no-red-zone). A frame of dynamic size (alloca,
variable-length arrays) is refused unless annotated.

Refusals. The analysis fails, loudly, on recursion (a cycle in the call
graph: the depth has no bound) and on an indirect call or jump it cannot
resolve (a call through a pointer leaves a hole in the graph). Each refusal
names the functions involved; the exit status is 1 and the figure of every
root that reaches the problem is 0 in the --header output, so the kernel
falls back to its run-time guard for those threads (thread.h). Calls that
never return (abort) and the jumps of switch tables can be accepted by
annotation.

Annotations (--annotations FILE), one per line, `#` comments:
    indirect FUNC -> T1 T2 ...   the indirect calls and jumps in FUNC reach
                                 only T1, T2... (fnmatch patterns allowed,
                                 e.g. `indirect run_handler -> *_handler`);
                                 `-` alone: they have no target here
    indirect FUNC -> T... if S   the same, but only if function S (the one
                                 that sets the pointer) is in the image;
                                 without S the pointer is never set
    jumptable FUNC               FUNC's indirect jumps are switch tables
                                 inside it (x86-64 `jmp *%reg`, AVR ijmp)
    frame FUNC BYTES             FUNC's frame, overriding .su and estimate
    noreturn FUNC                calls into FUNC are not followed
    cut CALLER -> CALLEE         that call never happens on the stacks analysed
                                 (e.g. a kernel path taken only on the kernel
                                 stack, analysed for a thread entry)
    root FUNC                    analyse FUNC (as --root)
    isr FUNC                     FUNC is an interrupt entry (as --isr)
    isr-frame BYTES              what the hardware pushes per interrupt
    isr-nesting N                interrupts that may nest (default: 1; with
                                 `dispatch`, the number of interrupt entries)
    isr-reentry levels           with `dispatch`: an interrupt entry may be
                                 on the stack again, once per priority level
                                 of the task set, below the `isr-nesting`
                                 bodies on top (the port's exit dispatch
                                 turns interrupts on only to run a task above
                                 the interrupted frame: sched_isr_exit)
    isr-exit FUNC                the port runs every interrupt body on the
                                 kernel stack and then FUNC, its exit
                                 dispatch, on the interrupted stack, in the
                                 bytes the body used (Cortex-M: PendSV's
                                 trampoline, below the hardware frame)
    thread-isr-nesting N         interrupt levels on a thread's stack
                                 (default: isr-nesting)
    hook FUNC set-by S1 S2 ...   FUNC calls through a pointer that only S1,
                                 S2... set: with none of them in the image
                                 the call has no target; with one, the
                                 image must name the targets (`indirect`)

    dispatch FUNC ...            FUNC's indirect calls are task-handler calls
                                 (the kernel's stack preemption, below)
    bounded FUNC N|tasks         FUNC starts an activation at most N times
                                 (or once per task) on the stack
    programs SYMBOL / appdesc SYMBOL / task HANDLER [PRIO]
                                 the task set (stack_tasks.py)
    no-dispatch FUNC ...         no handler starts under FUNC: its paths into
                                 dispatch, bounded and preempt functions are
                                 not taken
    preempt FUNC ...             FUNC hands the CPU to another context (a
                                 thread switch, or K for a handler): never
                                 called under a no-dispatch function
    k-only CALLER -> CALLEE      cut only for what lands on a thread's stack
    include FILE                 read FILE too (relative to this file)
    include-for MACHINE FILE     read FILE too if the image is for MACHINE
                                 (avr, arm, x86-64): one application file
                                 serves every port's image, each port's
                                 file listing its interrupts and its C
                                 library's indirect calls
A file is read once, however many times it is named (on the command line
or by `include`): a task or a description named twice would count twice.

Kernel stack. With --isr and no `dispatch` lines, the report adds "kernel
stack": the deepest root named by --kernel (default: the first root) plus,
per nesting level, the deepest interrupt entry and its hardware frame. With
`dispatch` lines (a Motet image, whose handlers preempt by nesting on the
one stack), the kernel stack is the bound of stack_preempt.py over the
image's task set instead, and "interrupts on a thread" is what interrupts
add to a thread's stack (PORT_THREAD_STACK_EXTRA). docs/threads.md gives
the argument.

Usage:
    stackcheck ELF --root FUNC [--root ...] [--isr FUNC ...] [--kernel FUNC]
               [--annotations FILE] [--su DIR ...] [--no-red-zone]
               [--header OUT.h] [--objdump CMD] [-v]
Exit status: 0 every root analysed, 1 a refusal, 2 a usage or tool error.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

try:
    from . import cmdline, stack_preempt, stack_tasks
except ImportError:  # run as a script: tools/motetlib/stackcheck.py
    import cmdline  # type: ignore[no-redef]
    import stack_preempt  # type: ignore[no-redef]
    import stack_tasks  # type: ignore[no-redef]

# ELF e_machine values of the supported targets.
EM_ARM, EM_X86_64, EM_AVR = 40, 62, 83
ARCHES = {EM_ARM: "arm", EM_X86_64: "x86-64", EM_AVR: "avr"}
OBJDUMP = {"arm": "arm-none-eabi-objdump", "x86-64": "objdump", "avr": "avr-objdump"}
RETURN_ADDRESS = {"arm": 0, "x86-64": 8, "avr": 2}
RED_ZONE = 128  # x86-64 System V
WORD = {"arm": 4, "x86-64": 8, "avr": 2}


class StackError(Exception):
    """A usage or tool problem (not a refusal)."""


@dataclass
class Insn:
    addr: int
    mnemonic: str
    operands: str
    target: str | None  # symbol of a direct branch target ("foo" or "foo+0x10")


@dataclass
class Function:
    name: str
    addr: int
    insns: list[Insn] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)       # pushes a return address
    tails: set[str] = field(default_factory=set)       # jumps in: reuses the frame
    indirect_calls: list[int] = field(default_factory=list)
    indirect_jumps: list[int] = field(default_factory=list)


@dataclass
class Annotations:
    indirect: dict[str, list[str]] = field(default_factory=dict)
    jumptable: set[str] = field(default_factory=set)
    frame: dict[str, int] = field(default_factory=dict)
    noreturn: set[str] = field(default_factory=set)
    cuts: set[tuple[str, str]] = field(default_factory=set)
    roots: list[str] = field(default_factory=list)
    isrs: list[str] = field(default_factory=list)
    isr_frame: int | None = None
    isr_nesting: int | None = None
    isr_exit: str | None = None
    thread_isr_nesting: int | None = None
    isr_reentry_levels: bool = False
    # The kernel stack (stack_preempt.py): handler-call sites, functions a
    # cycle may pass only a bounded number of times, the task set.
    dispatch: set[str] = field(default_factory=set)
    bounded: dict[str, str] = field(default_factory=dict)
    tasks: list[tuple[str, int | None]] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)
    appdescs: list[str] = field(default_factory=list)
    k_only: set[tuple[str, str]] = field(default_factory=set)
    no_dispatch: set[str] = field(default_factory=set)
    preempt: set[str] = field(default_factory=set)
    hooks: dict[str, list[str]] = field(default_factory=dict)  # FUNC -> setters
    machine: str | None = None  # the image's, for `include-for`
    files: set[Path] = field(default_factory=set)  # read already


@dataclass
class Result:
    depth: int = 0
    path: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Deepest point at which a new handler activation can begin (a handler
    # call, or a call into a bounded function), None if none can.
    reach: int | None = None
    reach_path: list[str] = field(default_factory=list)


# ---- input ------------------------------------------------------------------

def elf_arch(path: Path) -> str:
    """Target of an ELF file from its header."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError as e:
        raise StackError(f"{path}: {e.strerror}") from None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        raise StackError(f"{path}: not an ELF file")
    order = "little" if head[5] == 1 else "big"
    machine = int.from_bytes(head[18:20], order)
    if machine not in ARCHES:
        raise StackError(f"{path}: unsupported machine {machine} (AVR, ARM, x86-64 only)")
    return ARCHES[machine]


def parse_annotations(text: str, origin: str = "<annotations>",
                      ann: Annotations | None = None) -> Annotations:
    ann = ann if ann is not None else Annotations()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        kind, args = words[0], words[1:]
        try:
            if kind == "indirect" and len(args) >= 5 and args[1] == "->" and args[-2] == "if":
                ann.indirect.setdefault(args[0], []).extend(args[2:-2])
                ann.hooks.setdefault(args[0], []).append(args[-1])
            elif kind == "hook" and len(args) >= 3 and args[1] == "set-by":
                ann.hooks.setdefault(args[0], []).extend(args[2:])
            elif kind == "isr-exit" and len(args) == 1:
                ann.isr_exit = args[0]
            elif kind == "isr-reentry" and args == ["levels"]:
                ann.isr_reentry_levels = True
            elif kind == "thread-isr-nesting" and len(args) == 1:
                ann.thread_isr_nesting = int(args[0], 0)
            elif kind == "indirect" and len(args) >= 3 and args[1] == "->":
                ann.indirect.setdefault(args[0], []).extend(args[2:])
            elif kind == "jumptable" and len(args) == 1:
                ann.jumptable.add(args[0])
            elif kind == "frame" and len(args) == 2:
                ann.frame[args[0]] = int(args[1], 0)
            elif kind == "noreturn" and len(args) == 1:
                ann.noreturn.add(args[0])
            elif kind in ("cut", "k-only") and len(args) == 3 and args[1] == "->":
                (ann.cuts if kind == "cut" else ann.k_only).add((args[0], args[2]))
            elif kind == "root" and len(args) == 1:
                ann.roots.append(args[0])
            elif kind == "isr" and len(args) == 1:
                ann.isrs.append(args[0])
            elif kind == "isr-frame" and len(args) == 1:
                ann.isr_frame = int(args[0], 0)
            elif kind == "isr-nesting" and len(args) == 1:
                ann.isr_nesting = int(args[0], 0)
            elif kind == "dispatch" and args:
                ann.dispatch.update(args)
            elif kind == "no-dispatch" and args:
                ann.no_dispatch.update(args)
            elif kind == "preempt" and args:
                ann.preempt.update(args)
            elif kind == "bounded" and len(args) == 2 and (args[1] == "tasks"
                                                          or args[1].isdigit()):
                ann.bounded[args[0]] = args[1]
            elif kind == "task" and len(args) in (1, 2):
                ann.tasks.append((args[0], int(args[1], 0) if len(args) == 2 else None))
            elif kind == "programs" and len(args) == 1:
                ann.programs.append(args[0])
            elif kind == "appdesc" and len(args) == 1:
                ann.appdescs.append(args[0])
            elif kind == "include" and len(args) == 1:
                include(Path(origin).parent / args[0], f"{origin}:{n}", ann)
            elif kind == "include-for" and len(args) == 2 and args[0] not in OBJDUMP:
                raise StackError(f"{origin}:{n}: `include-for` names no machine "
                                 f"{args[0]!r}: it is one of {', '.join(sorted(OBJDUMP))}")
            elif kind == "include-for" and len(args) == 2:
                if ann.machine is None:
                    raise StackError(f"{origin}:{n}: `include-for` needs the image's machine, "
                                     "which this reader was not given")
                if args[0] == ann.machine:
                    include(Path(origin).parent / args[1], f"{origin}:{n}", ann)
            else:
                raise ValueError
        except ValueError:
            raise StackError(f"{origin}:{n}: cannot read annotation {raw.strip()!r}") from None
    return ann


def include(path: Path, where: str, ann: Annotations) -> None:
    """Read the annotation file `path` into ann unless it was read already."""
    try:
        body = path.read_text()
    except OSError as e:
        raise StackError(f"{where}: cannot include {path}: {e}") from None
    read_once(body, path, ann)


def read_once(body: str, path: Path, ann: Annotations) -> None:
    key = path.resolve()
    if key not in ann.files:
        ann.files.add(key)
        parse_annotations(body, str(path), ann)


def read_annotations(paths: list[Path], machine: str | None = None) -> Annotations:
    """The annotations of every file of `paths` (and of what they include),
    each file once, for an image of `machine`."""
    ann = Annotations(machine=machine)
    for path in paths:
        read_once(Path(path).read_text(), Path(path), ann)
    return ann


SU_LINE = re.compile(r"^(?P<loc>.*):(?P<name>[^:\s]+)\s+(?P<bytes>\d+)\s+(?P<kind>[a-z,]+)\s*$")


def parse_su(text: str) -> dict[str, tuple[int, str]]:
    """A .su file: {function: (bytes, qualifier)}; clones keep their suffix."""
    out: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        m = SU_LINE.match(line.strip())
        if m:
            out[m["name"]] = (int(m["bytes"]), m["kind"])
    return out


def su_name(symbol: str) -> str:
    """The .su name of a symbol: GCC's clones (foo.constprop.0, foo.isra.1,
    foo.part.0) appear there without their number."""
    return re.sub(r"\.\d+$", "", symbol)


def build_tree(elf: Path) -> Path | None:
    """The CMake build tree `elf` is in: the nearest directory above it with
    a CMakeCache.txt, or None."""
    for d in Path(elf).resolve().parents:
        if (d / "CMakeCache.txt").is_file():
            return d
    return None


OBJECT_SUFFIXES = (".obj", ".o")


def linked_objects(elf: Path) -> list[Path] | None:
    """The object files the link of `elf` used (archive members included,
    as `ninja -t inputs` lists them), or None if its build tree cannot say
    (not a Ninja tree)."""
    tree = build_tree(elf)
    if tree is None or not (tree / "build.ninja").is_file():
        return None
    ninja = shutil.which("ninja") or cmake_cache(tree).get("CMAKE_MAKE_PROGRAM")
    if not ninja:
        return None
    rel = Path(elf).resolve().relative_to(tree)
    res = subprocess.run([ninja, "-C", str(tree), "-t", "inputs", rel.as_posix()],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise StackError(f"{elf}: cannot list the objects of its link "
                         f"(ninja -t inputs): {res.stderr.strip() or res.stdout.strip()}; "
                         "name the directories of its .su files with --su")
    return [tree / Path(line.strip()) for line in res.stdout.splitlines()
            if Path(line.strip()).suffix in OBJECT_SUFFIXES]


def linked_su_files(elf: Path) -> list[Path] | None:
    """The .su files of the objects the link of `elf` used, or None if its
    build tree cannot say (not a Ninja tree). A tree holds other builds of
    the same sources (another kernel configuration, another image's port
    library) whose frames differ: only the link's own objects count. An
    object compiled without -fstack-usage has no .su file: its functions
    get the prologue estimate."""
    objects = linked_objects(elf)
    if objects is None:
        return None
    return [obj.with_suffix(".su") for obj in objects if obj.with_suffix(".su").is_file()]


def cmake_cache(tree: Path) -> dict[str, str]:
    """The entries of a build tree's CMakeCache.txt (NAME:TYPE=VALUE)."""
    out = {}
    for line in (tree / "CMakeCache.txt").read_text(errors="replace").splitlines():
        m = re.match(r"^([A-Za-z_][\w.-]*):\w+=(.*)$", line)
        if m:
            out[m[1]] = m[2]
    return out


@dataclass(frozen=True)
class SuEntry:
    file: str  # base name of the source file, as the symbol table has it
    size: int
    kind: str  # static, dynamic, "dynamic,bounded"


def su_files(dirs: list[Path]) -> list[Path]:
    """Every .su file under dirs."""
    return [su for d in dirs for su in sorted(Path(d).rglob("*.su"))]


def load_su(files: list[Path]) -> dict[str, list[SuEntry]]:
    """The frames of the .su files `files`: every entry of each function
    name, each with its source file (static functions of one name in
    several files are told apart by the image's symbol table)."""
    frames: dict[str, list[SuEntry]] = {}
    for su in files:
        for line in Path(su).read_text(errors="replace").splitlines():
            m = SU_LINE.match(line.strip())
            if m:
                source = Path(m["loc"].split(":", 1)[0]).name
                entry = SuEntry(source, int(m["bytes"]), m["kind"])
                if entry not in frames.setdefault(m["name"], []):
                    frames[m["name"]].append(entry)
    return frames


def default_su(elf: Path) -> list[Path]:
    """The .su files for `elf` without --su: those of its link's objects
    (linked_su_files), else those beside it."""
    linked = linked_su_files(elf)
    return linked if linked is not None else su_files([Path(elf).parent])


def function_files(elf: Path) -> dict[str, str]:
    """The source file of each local (static) function of `elf`, by name,
    for the names that have one source only."""
    files: dict[str, set] = {}
    for name, symbols in stack_tasks.Elf(elf).symbols.items():
        for s in symbols:
            if s.file is not None:
                files.setdefault(name, set()).add(s.file)
    return {name: next(iter(f)) for name, f in files.items() if len(f) == 1}


FUNC_HEADER = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
TARGET = re.compile(r"<([^>]+)>")


def parse_objdump(text: str) -> dict[str, Function]:
    """Functions of `objdump -d --no-show-raw-insn` output, by name."""
    funcs: dict[str, Function] = {}
    cur: Function | None = None
    for line in text.splitlines():
        m = FUNC_HEADER.match(line)
        if m:
            cur = Function(m[2], int(m[1], 16))
            funcs.setdefault(cur.name, cur)
            continue
        m = INSN_LINE.match(line)
        if not m or cur is None:
            continue
        mnem, rest = m[2], m[3]
        if mnem in ("notrack", "bnd", "rep", "repz", "lock", "data16", "cs"):
            parts = rest.split(None, 1)  # a prefix: the instruction follows
            if not parts:
                continue
            mnem, rest = parts[0], parts[1] if len(parts) > 1 else ""
        t = TARGET.search(rest)
        cur.insns.append(Insn(int(m[1], 16), mnem, rest, t[1] if t else None))
    return funcs


def disassemble(elf: Path, objdump: str) -> str:
    if not shutil.which(objdump):
        raise StackError(f"{objdump} not found (install the target's binutils)")
    res = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(elf)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise StackError(f"{objdump} failed: {res.stderr.strip()}")
    return res.stdout


# ---- the call graph ---------------------------------------------------------

def _callee(target: str | None, funcs: dict[str, Function], self_name: str) -> str | None:
    """The function a direct branch enters, or None if it stays inside
    (a branch to self+offset) or leaves for something unknown."""
    if not target:
        return None
    base, _, off = target.partition("+")
    if base == self_name:
        return None
    if off and int(off, 16) != 0:
        return None  # into the middle of something: not an entry
    return base if base in funcs else None


X86_CALL = ("call", "callq")
X86_JUMPS = ("jmp", "jmpq")
AVR_CALL = ("call", "rcall")
AVR_JUMPS = ("jmp", "rjmp")
ARM_CALL = ("bl", "blx")
ARM_JUMPS = ("b", "b.w", "b.n")
# Conditional branches, which may also be tail calls into another function.
X86_JCC = re.compile(r"^j(?!mp)[a-z]+$")
ARM_BCC = re.compile(r"^b(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)(\.[nw])?$")


def classify(arch: str, funcs: dict[str, Function]) -> None:
    """Fill calls, tails and indirect sites of every function."""
    for f in funcs.values():
        for i in f.insns:
            op, ops = i.mnemonic, i.operands
            if arch == "x86-64":
                if op in X86_CALL:
                    _direct_or_indirect(f, i, funcs, ops.startswith("*"), call=True)
                elif op in X86_JUMPS:
                    _direct_or_indirect(f, i, funcs, ops.startswith("*"), call=False)
                elif X86_JCC.match(op):
                    _direct_or_indirect(f, i, funcs, False, call=False)
            elif arch == "avr":
                if op in AVR_CALL:
                    _direct_or_indirect(f, i, funcs, False, call=True)
                elif op in ("icall", "eicall"):
                    f.indirect_calls.append(i.addr)
                elif op in AVR_JUMPS:
                    _direct_or_indirect(f, i, funcs, False, call=False)
                elif op in ("ijmp", "eijmp"):
                    f.indirect_jumps.append(i.addr)
            elif arch == "arm":
                reg = re.fullmatch(r"r\d+|ip|lr|sl|fp", ops.strip()) is not None
                if op in ARM_CALL:
                    _direct_or_indirect(f, i, funcs, reg, call=True)
                elif op in ARM_JUMPS or ARM_BCC.match(op):
                    _direct_or_indirect(f, i, funcs, False, call=False)
                elif op == "bx" and ops.strip() != "lr":
                    f.indirect_jumps.append(i.addr)
                elif op.startswith(("mov", "ldr")) and ops.replace(" ", "").startswith("pc,"):
                    if not ops.replace(" ", "").startswith("pc,[sp]"):  # else a return
                        f.indirect_jumps.append(i.addr)


def _direct_or_indirect(f: Function, i: Insn, funcs, indirect: bool, call: bool) -> None:
    if indirect:
        (f.indirect_calls if call else f.indirect_jumps).append(i.addr)
        return
    callee = _callee(i.target, funcs, f.name)
    if callee:
        (f.calls if call else f.tails).add(callee)
    elif call and i.target == f.name:
        f.calls.add(f.name)  # a call to its own entry: recursion (AVR's
        # `rcall .+0`, which reserves two bytes, lands mid-function instead)


def named(symbol: str, names) -> bool:
    """`symbol` is one of `names`, or a GCC clone of one (run_pushed.isra.0)."""
    return symbol in names or symbol.split(".")[0] in names


def x86_register_jump(f: Function, addr: int) -> bool:
    """`jmp *%reg`: GCC's switch tables (a pointer tail call goes through
    memory or a register too, hence only with `jumptable`)."""
    return any(i.addr == addr and i.operands.startswith("*%") for i in f.insns)


# ---- frames -----------------------------------------------------------------

def estimate_frame(arch: str, f: Function) -> int:
    """Bytes a function without a .su entry pushes in its prologue, plus
    the return address its caller pushed."""
    size = RETURN_ADDRESS[arch]
    frame_pointer = False
    for i in f.insns[:24]:
        op, ops = i.mnemonic, i.operands.replace(" ", "")
        if arch == "x86-64":
            if op in ("push", "pushq"):
                size += 8
            elif op in ("sub", "subq") and ops.endswith(",%rsp") and ops.startswith("$"):
                size += _number(ops[1:])
            elif op in X86_CALL + X86_JUMPS + ("ret", "retq"):
                break
        elif arch == "avr":
            # Y is the frame pointer only once the prologue has read SP into
            # it; before that, arithmetic on r28 is a pointer (an address's
            # low byte), not a frame.
            if op == "push":
                size += 1
            elif op == "rcall" and ops.startswith(".+0"):
                size += 2  # reserves room for a local
            elif op == "in" and ops.startswith("r28,0x3d"):
                frame_pointer = True
            elif op == "sbiw" and ops.startswith("r28,") and frame_pointer:
                size += _number(ops.split(",")[1])
            elif op == "subi" and ops.startswith("r28,") and frame_pointer:
                size += _number(ops.split(",")[1]) & 0xFF
            elif op in AVR_CALL + AVR_JUMPS + ("ret", "reti"):
                break
        elif arch == "arm":
            if op in ("push", "push.w", "stmdb") and "{" in ops:
                regs = ops[ops.index("{") + 1:ops.index("}")]
                size += 4 * _arm_reg_count(regs)
            elif op in ("vpush", "vpush.64") and "{" in ops:
                size += 8 * _arm_reg_count(ops[ops.index("{") + 1:ops.index("}")])
            elif op in ("sub", "sub.w", "subw") and ops.startswith("sp,") and "#" in ops:
                size += _number(ops[ops.index("#") + 1:])
            elif op in ARM_CALL + ARM_JUMPS + ("bx", "pop"):
                break
    return size


def _number(text: str) -> int:
    """The number at the start of an operand ("0x28", "40\t@ 0x28")."""
    m = re.match(r"\s*#?(-?(?:0x[0-9a-fA-F]+|\d+))", text)
    if not m:
        raise StackError(f"cannot read a number from {text!r}")
    return int(m[1], 0)


def _arm_reg_count(regs: str) -> int:
    n = 0
    for part in regs.split(","):
        if "-" in part:
            lo, hi = (int(re.sub(r"\D", "", x) or 0) for x in part.split("-"))
            n += hi - lo + 1
        elif part:
            n += 1
    return n


# ---- the analysis -----------------------------------------------------------

class Analyser:
    def __init__(self, arch: str, funcs: dict[str, Function], su: dict[str, list[SuEntry]],
                 ann: Annotations, red_zone: bool = True, files: dict[str, str] | None = None):
        self.arch, self.funcs, self.su, self.ann = arch, funcs, su, ann
        self.red_zone = red_zone and arch == "x86-64"
        self.files = files or {}  # a static function's source file
        self.memo: dict[tuple[str, bool], Result] = {}
        self.notes: list[str] = []

    def su_entries(self, name: str) -> list[SuEntry]:
        """The .su entries that may be `name`'s frame: those of its source
        file if the image names one and it has any, else every entry of
        its name."""
        key = name if name in self.su else su_name(name)
        entries = self.su.get(key, [])
        source = self.files.get(name)
        own = [e for e in entries if e.file == source]
        return own or entries

    def frame(self, name: str) -> tuple[int, str | None]:
        """(bytes, problem or None) of one function's own frame."""
        if name in self.ann.frame:
            return self.ann.frame[name], None
        f = self.funcs.get(name)
        leaf = f is not None and not f.calls and not f.indirect_calls
        entries = self.su_entries(name)
        if entries:
            if any("dynamic" in e.kind and "bounded" not in e.kind for e in entries):
                return 0, f"{name}: frame of dynamic size (alloca or a VLA); annotate `frame`"
            size = max(e.size for e in entries)
            if len({e.size for e in entries}) > 1:
                where = ", ".join(sorted({f"{e.file} {e.size} B" for e in entries}))
                self.notes.append(f"{name}: several frames of this name in the .su files "
                                  f"({where}); the largest is used")
            if f is not None:
                # The image's own prologue: a .su file of another build of
                # the function cannot make it smaller than what it pushes.
                pushed = estimate_frame(self.arch, f)
                if pushed > size:
                    self.notes.append(f"{name}: its prologue pushes {pushed} B, more than "
                                      f"its .su entry's {size} B: {pushed} B used")
                    size = pushed
        elif f is not None:
            size = estimate_frame(self.arch, f)
            self.notes.append(f"{name}: no .su entry, frame estimated from its prologue: {size} B")
        else:
            return 0, f"{name}: not found in the disassembly"
        if self.red_zone and leaf:
            size += RED_ZONE
        return size, None

    def targets(self, f: Function) -> tuple[list[str], list[str]]:
        """(indirect targets, problems) of f's indirect calls and jumps. The
        indirect calls of a `dispatch` function are handler calls: they end
        an activation (reach) instead of being followed."""
        problems = []
        pats = self.ann.indirect.get(f.name)
        jumps = [a for a in f.indirect_jumps
                 if not (f.name in self.ann.jumptable
                         and (self.arch != "x86-64" or x86_register_jump(f, a)))]
        calls = [] if named(f.name, self.ann.dispatch) else f.indirect_calls
        sites = calls + jumps
        if not sites:
            return [], []
        setters = self.ann.hooks.get(f.name)
        if setters is not None and not any(s in self.funcs for s in setters):
            self.notes.append(f"{f.name}: its hook is never set ({' '.join(setters)}: not in "
                              f"the image): the indirect call has no target")
            return [], []
        if pats == ["-"]:
            return [], []  # annotated: no target in this image
        if pats is None:
            where = ", ".join(hex(a) for a in sites)
            problems.append(f"{f.name}: indirect call or jump it cannot resolve (at {where}); "
                            f"annotate `indirect {f.name} -> TARGETS`")
            return [], problems
        found = sorted({n for p in pats for n in self.funcs if fnmatch.fnmatchcase(n, p)})
        missing = [p for p in pats if not any(fnmatch.fnmatchcase(n, p) for n in self.funcs)]
        if missing:
            problems.append(f"{f.name}: annotated targets not in the program: {' '.join(missing)}")
        return found, problems

    def depth(self, name: str, stack: list[str] | None = None, quiet: bool = False) -> Result:
        """Worst case from entering `name` (its return address included),
        and the deepest point where a new activation begins (`reach`).
        `quiet`: under a `no-dispatch` function, where no handler starts, so
        the calls into dispatch and bounded functions are not taken."""
        stack = stack or []
        quiet = quiet or named(name, self.ann.no_dispatch)
        if (name, quiet) in self.memo:
            return self.memo[name, quiet]
        if name in stack:
            cycle = stack[stack.index(name):] + [name]
            return Result(0, [], [f"recursion: {' -> '.join(cycle)}"])
        own, problem = self.frame(name)
        res = Result(own, [name], [problem] if problem else [])
        f = self.funcs.get(name)
        if f is None:
            self.memo[name, quiet] = res
            return res
        if named(name, self.ann.dispatch) and f.indirect_calls and not quiet:
            res.reach, res.reach_path = own, [name, "(handler call)"]
        indirect, problems = self.targets(f)
        res.problems += problems
        callees = [(c, own) for c in sorted(f.calls | set(indirect))]
        callees += [(t, 0) for t in sorted(f.tails)]
        callees = [(c, b) for c, b in callees
                   if c not in self.ann.noreturn and (name, c) not in self.ann.cuts]
        for callee, base in callees:
            activation = named(callee, self.ann.bounded)
            if quiet and (activation or named(callee, self.ann.dispatch)
                          or named(callee, self.ann.preempt)):
                continue  # never taken here
            if activation:  # a new activation: counted apart
                if res.reach is None or base > res.reach:
                    res.reach, res.reach_path = base, [name, f"({callee})"]
                continue
            sub = self.depth(callee, stack + [name], quiet)
            for p in sub.problems:
                if p not in res.problems:
                    res.problems.append(p)
            if base + sub.depth > res.depth:
                res.depth = base + sub.depth
                res.path = ([name] if base else [name + " (tail)"]) + sub.path
            if sub.reach is not None and (res.reach is None or base + sub.reach > res.reach):
                res.reach = base + sub.reach
                res.reach_path = ([name] if base else [name + " (tail)"]) + sub.reach_path
        self.memo[name, quiet] = res  # refused results stay refused: nothing is lost
        return res


# ---- the command ------------------------------------------------------------

def analyse(elf: Path, roots: list[str], isrs: list[str] = (), kernel: str | None = None,
            ann: Annotations | None = None, su_dirs: list[Path] | None = None,
            red_zone: bool = True, objdump: str | None = None) -> dict:
    """Analyse `elf`; returns {"arch", "roots": {name: Result},
    "kernel": Result or None, "notes": [...]}."""
    ann = ann or Annotations()
    arch = elf_arch(elf)
    funcs = parse_objdump(disassemble(elf, objdump or OBJDUMP[arch]))
    classify(arch, funcs)
    su = load_su(su_files(su_dirs) if su_dirs is not None else default_su(elf))
    files = function_files(elf)
    a = Analyser(arch, funcs, su, ann, red_zone, files)
    roots = list(dict.fromkeys(list(roots) + ann.roots))
    isrs = list(dict.fromkeys(list(isrs) + ann.isrs))
    out = {"arch": arch, "roots": {}, "kernel": None, "thread_extra": None, "notes": a.notes}
    for r in roots + isrs:
        if r not in funcs:
            out["roots"][r] = Result(0, [], [f"{r}: no such function in {elf.name}"])
        else:
            out["roots"][r] = a.depth(r)
    if ann.dispatch and roots:
        out["kernel"] = preempted_kernel_stack(elf, a, kernel or roots[0], isrs)
        if isrs:
            k_ann = Annotations(**{**ann.__dict__, "cuts": ann.cuts | ann.k_only})
            on_thread = Analyser(arch, funcs, su, k_ann, red_zone, files)
            out["thread_extra"] = interrupts_on_a_thread(on_thread, isrs)
    elif isrs and roots:
        out["kernel"] = kernel_stack(out["roots"], kernel or roots[0], isrs, ann, arch)
    return out


def hardware_frame(ann: Annotations, arch: str) -> int:
    return ann.isr_frame if ann.isr_frame is not None else ISR_FRAME[arch]


def preempted_kernel_stack(elf: Path, a: Analyser, kernel: str, isrs: list[str]) -> Result:
    """The kernel stack of an image whose handlers preempt on it: the
    bound of stack_preempt.py over the image's task set."""
    ann, problems, terms = a.ann, [], []

    def element(name: str, label: str, extra: int = 0) -> stack_preempt.Element:
        if name not in a.funcs:  # a missing task handler is caught above
            problems.append(f"{name}: no such function in {elf.name}")
            return stack_preempt.Element(label, 0, None)
        r = a.depth(name)
        problems.extend(p for p in r.problems if p not in problems)
        reach = None if r.reach is None else r.reach + extra
        return stack_preempt.Element(label, r.depth + extra, reach)

    by_addr = {f.addr: f.name for f in a.funcs.values()}
    linked = [(h, p) for h, p in ann.tasks if h in a.funcs]
    a.notes += [f"task {h}: not in the image, so never created" for h, _ in ann.tasks
                if h not in a.funcs]
    try:
        tasks = stack_tasks.task_set(elf, a.arch, ann.programs, ann.appdescs, linked, by_addr)
    except stack_tasks.ImageError as e:
        return Result(0, [], [f"task set: {e}"])
    if not tasks:
        problems.append("no tasks: name the image's `programs` and `appdesc`, or `task` lines")
    elements = [element(t.handler, f"{t.handler} [{t.origin}"
                        + ("" if t.prio is None else f", prio {t.prio}") + "]") for t in tasks]
    for fn in sorted(n for n in a.funcs if named(n, ann.bounded)):
        count = ann.bounded.get(fn, ann.bounded.get(fn.split(".")[0]))
        n = len(tasks) if count == "tasks" else int(count)
        elements += [element(fn, f"{fn} #{i + 1}") for i in range(n)]
    hw = hardware_frame(ann, a.arch)
    isr_elements = [element(i, i, hw) for i in isrs]
    if ann.isr_exit is not None:
        # The body returns before the exit dispatch starts, in the same bytes
        # above the interrupted code's hardware frame: the larger of the two.
        ex = element(ann.isr_exit, ann.isr_exit, hw)
        ex_full = max(ex.full, hw + EXIT_FRAMES.get(a.arch, 0))
        isr_elements = [stack_preempt.Element(f"{i.name} then {ex.name}", max(i.full, ex_full),
                                              ex.reach if i.reach is None
                                              else max(i.reach, ex.reach or 0))
                        for i in isr_elements]
    nesting = ann.isr_nesting if ann.isr_nesting is not None else len(isrs)
    note = ""
    if ann.isr_reentry_levels and isr_elements:
        # An exit dispatch that turns interrupts on runs a task above the
        # frame it interrupted, so each one below the top has a level of its
        # own, and may be any entry. It sits where it starts that task (its
        # body has returned): each is charged the deepest entry's reach, the
        # task itself being an element of its own. On top, the bodies nest as
        # before (`isr-nesting`, each entry once).
        levels = stack_preempt.priority_levels([t.prio for t in tasks])
        reaching = [i for i in isr_elements if i.reach is not None]
        worst = max(reaching, key=lambda i: i.reach) if reaching else None
        top = sorted(isr_elements, key=lambda i: i.full, reverse=True)[:nesting]
        isr_elements = [stack_preempt.Element(f"{worst.name} (level {k + 1})", worst.reach,
                                              worst.reach)
                        for k in range(levels if worst else 0)] + top
        note = f" (one per priority level, {levels}, and {len(top)} on top)"
        nesting = len(isr_elements)
    root = element(kernel, kernel)
    depth, terms = stack_preempt.bound(root, elements, isr_elements, nesting)
    terms.insert(0, f"{len(tasks)} tasks, {nesting} nested interrupt(s) of {len(isrs)}{note}")
    return Result(depth, terms, problems)


def interrupts_on_a_thread(a: Analyser, isrs: list[str]) -> Result:
    """What interrupts add to a thread's stack: each nesting level's
    interrupt, its body and its exit up to the switch away, with the paths
    that run only on the kernel stack cut (`k-only`)."""
    hw = hardware_frame(a.ann, a.arch)
    nesting = a.ann.isr_nesting if a.ann.isr_nesting is not None else len(isrs)
    if a.ann.thread_isr_nesting is not None:
        nesting = a.ann.thread_isr_nesting
    if a.ann.isr_exit is not None:
        # Bodies run on the kernel stack: a thread's stack takes, per level,
        # the hardware frame and, below it, the exit dispatch up to the switch
        # (or the exit's own exception frames, if larger).
        ex = a.depth(a.ann.isr_exit)
        per = hw + max(ex.depth, EXIT_FRAMES.get(a.arch, 0))
        # The bodies' own figures (and refusals) belong to the kernel stack.
        return Result(nesting * per, [f"{nesting} x ({hw} hardware frame + {per - hw} "
                                      f"{' > '.join(ex.path)})"], list(ex.problems))
    costs = sorted(((a.depth(i).depth + hw, i) for i in isrs), reverse=True)[:nesting]
    res = Result(sum(c for c, _ in costs), [f"{i} {c}" for c, i in costs])
    for i in isrs:
        res.problems += [p for p in a.depth(i).problems if p not in res.problems]
    return res


# What the hardware pushes when it takes an interrupt, beyond what the
# interrupt entry's frame counts: on AVR the return address, which the frame
# already counts as for a call; on Cortex-M the 8-word exception frame.
ISR_FRAME = {"arm": 32, "avr": 0, "x86-64": 0}
# What an `isr-exit` dispatch may push in its own bytes besides its calls: on
# Cortex-M, PendSV's fabricated frame (unstacked as the trampoline starts)
# and NMI's frame at its end, 32 B each.
EXIT_FRAMES = {"arm": 32}


def kernel_stack(results: dict, kernel: str, isrs: list[str], ann: Annotations,
                 arch: str) -> Result:
    base = results[kernel]
    worst = max(isrs, key=lambda n: results[n].depth)
    per = results[worst].depth + hardware_frame(ann, arch)
    nesting = ann.isr_nesting if ann.isr_nesting is not None else 1
    res = Result(base.depth + nesting * per,
                 base.path + [f"+ {nesting} x interrupt {worst} ({per} B)"],
                 list(base.problems))
    for n in isrs:
        res.problems += [p for p in results[n].problems if p not in res.problems]
    return res


def c_name(name: str) -> str:
    return re.sub(r"\W", "_", name)


def header_text(out: dict) -> str:
    lines = ["/* Generated by `motet stack` (tools/motetlib/stackcheck.py): worst-case",
             " * stack bytes per root; 0 = refused (recursion or an unresolved indirect",
             " * call): the thread then gets a guarded default stack. */",
             "#ifndef MOTET_STACK_SIZES_H", "#define MOTET_STACK_SIZES_H"]
    for name, r in out["roots"].items():
        lines.append(f"#define MOTET_STACK_{c_name(name)} {0 if r.problems else r.depth}")
    if out["kernel"] is not None:
        k = out["kernel"]
        lines.append(f"#define MOTET_STACK_KERNEL {0 if k.problems else k.depth}")
    if out.get("thread_extra") is not None:
        t = out["thread_extra"]
        lines.append(f"#define MOTET_STACK_THREAD_EXTRA {0 if t.problems else t.depth}")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def report(out: dict, verbose: bool) -> tuple[list[str], bool]:
    lines = [f"stack: worst-case depth per root ({out['arch']}, bytes)"]
    refused = False
    items = list(out["roots"].items())
    if out["kernel"] is not None:
        items.append(("kernel stack", out["kernel"]))
    if out.get("thread_extra") is not None:
        items.append(("interrupts on a thread", out["thread_extra"]))
    for name, r in items:
        if r.problems:
            refused = True
            lines.append(f"  {name:<28} REFUSED")
            lines += [f"      {p}" for p in r.problems]
        else:
            lines.append(f"  {name:<28} {r.depth:>6}   {' > '.join(r.path)}")
    if verbose:
        lines += [f"  note: {n}" for n in dict.fromkeys(out["notes"])]
    return lines, refused


def _parser() -> argparse.ArgumentParser:
    p = cmdline.ArgumentParser(prog="motet stack", description=(
        "Worst-case stack depth of each root of an ELF (AVR, ARM Thumb, x86-64) from its "
        "call graph and GCC's -fstack-usage files; refuses recursion and unresolved indirect "
        "calls."))
    p.add_argument("elf", type=Path)
    p.add_argument("--root", action="append", default=[], help="entry to analyse (repeatable)")
    p.add_argument("--isr", action="append", default=[], help="interrupt entry (repeatable)")
    p.add_argument("--kernel", help="root that runs on the kernel stack (default: first root)")
    p.add_argument("--annotations", action="append", type=Path, default=[],
                   help="annotation file (repeatable; see the module's docstring)")
    p.add_argument("--su", action="append", type=Path,
                   help="directory searched for .su files (default: those of the objects "
                        "its link used, else the ELF's directory)")
    p.add_argument("--no-red-zone", action="store_true",
                   help="x86-64: the program was built with -mno-red-zone")
    p.add_argument("--header", type=Path, help="write #define MOTET_STACK_<root> lines here")
    p.add_argument("--objdump", help="objdump to use (default: by the ELF's machine)")
    p.add_argument("-v", "--verbose", action="store_true", help="also print estimates and notes")
    return p


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    try:
        machine = elf_arch(args.elf)  # a file that is missing or not an ELF is named first
        ann = read_annotations(args.annotations, machine)
        if not args.root and not ann.roots:
            raise StackError("no root: name at least one with --root or `root` annotations "
                             "(an application made by `motet new` has its own: "
                             "--annotations apps/NAME/NAME.stack)")
        out = analyse(args.elf, args.root, args.isr, args.kernel, ann, args.su,
                      not args.no_red_zone, args.objdump)
    except (StackError, OSError) as e:
        what = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename else e
        print(f"stack: error: {what}", file=sys.stderr)
        return 2
    lines, refused = report(out, args.verbose)
    print("\n".join(lines))
    if args.header:
        args.header.write_text(header_text(out))
    if refused:
        print("stack: REFUSED: the figures above marked REFUSED have no bound; those threads "
              "need the run-time guard (stack_need 0)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
