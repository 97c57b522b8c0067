# SPDX-License-Identifier: MIT
"""The task set of a built image, for the kernel-stack bound of stackcheck.

Task handlers are called through a pointer (`t->handler(...)`), so the
call graph alone cannot say which functions a dispatch reaches. The image
itself can: an application is a program table (program id -> handler,
kernel/include/motet/program.h) plus the binary application description it
loads (program id and priority of every task, docs/app-format.md). Both are
linked in; this module reads them from the ELF's symbol table and data, so
the analysis follows the image that will run, not a hand-kept list.

Annotations name where they are (stackcheck's annotation file):
    programs SYMBOL        a program_t table in the image
    appdesc SYMBOL         a binary application description in the image
                           (either SYMBOL may be FILE:SYMBOL, the static
                           SYMBOL of source file FILE, when several files
                           have one of that name; FILE is matched by its
                           base name, the one the compiler records, so
                           apps/x/x.c:programs is x.c:programs)
    task HANDLER [PRIO]    a task the code creates itself (kernel system
                           tasks, benchmarks); without PRIO its priority is
                           unknown and the bound places it anywhere
Every task of the description counts, whatever module it is placed on: a
movable task may migrate here. A description task whose program is not in
the table, or a symbol that is missing or of the wrong size, is an error,
never skipped.

Standard library only (ELF32/ELF64, little-endian: AVR, ARM, x86-64).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

try:
    from . import appdesc
except ImportError:  # run as a script beside it
    import appdesc  # type: ignore[no-redef]


class ImageError(Exception):
    """The image does not hold what an annotation says it holds."""


@dataclass(frozen=True)
class Task:
    handler: str          # function name
    prio: int | None      # None: unknown, unconstrained
    origin: str           # where it came from, for the report


STB_LOCAL, STT_FILE = 0, 4  # a symbol's binding and type (st_info)


@dataclass
class Symbol:
    value: int
    size: int
    section: int
    file: str | None = None  # the source file of a local (static) symbol


class Elf:
    """Sections and symbols of an ELF file, enough to read initialised data."""

    def __init__(self, path: Path):
        self.path = path
        self.data = Path(path).read_bytes()
        d = self.data
        if d[:4] != b"\x7fELF" or d[5] != 1:
            raise ImageError(f"{path}: not a little-endian ELF file")
        self.is64 = d[4] == 2
        if self.is64:
            shoff, = struct.unpack_from("<Q", d, 0x28)
            shentsize, shnum = struct.unpack_from("<HH", d, 0x3A)
        else:
            shoff, = struct.unpack_from("<I", d, 0x20)
            shentsize, shnum = struct.unpack_from("<HH", d, 0x2E)
        self.sections = [self._section(shoff + i * shentsize) for i in range(shnum)]
        self.symbols = self._symbols()

    def _section(self, at: int) -> tuple[int, int, int, int, int, int]:
        """(type, addr, offset, size, link, entsize)."""
        if self.is64:
            _, typ, _, addr, off, size, link, _, _, ent = struct.unpack_from("<IIQQQQIIQQ",
                                                                            self.data, at)
        else:
            _, typ, _, addr, off, size, link, _, _, ent = struct.unpack_from("<IIIIIIIIII",
                                                                            self.data, at)
        return typ, addr, off, size, link, ent

    def _symbols(self) -> dict[str, list[Symbol]]:
        """Every symbol by name. The linker keeps each object's local
        symbols after an STT_FILE symbol naming its source, so a static is
        known by its file too."""
        out: dict[str, list[Symbol]] = {}
        for typ, _, off, size, link, ent in self.sections:
            if typ != 2:  # SHT_SYMTAB
                continue
            strtab = self.sections[link]
            source = None
            for at in range(off, off + size, ent):
                if self.is64:
                    name, info, _, shndx, value, sz = struct.unpack_from("<IBBHQQ", self.data,
                                                                         at)
                else:
                    name, value, sz, info, _, shndx = struct.unpack_from("<IIIBBH", self.data,
                                                                         at)
                start = strtab[2] + name
                end = self.data.index(b"\0", start)
                text = self.data[start:end].decode(errors="replace")
                if info & 0xF == STT_FILE:
                    source = text
                    continue
                local = info >> 4 == STB_LOCAL
                out.setdefault(text, []).append(Symbol(value, sz, shndx,
                                                       source if local else None))
        return out

    def symbol_bytes(self, name: str) -> bytes:
        """The initial contents of the data object `name` (one definition),
        or of FILE:NAME, the static NAME of source file FILE."""
        source, _, bare = name.rpartition(":")
        source = source.replace("\\", "/").rsplit("/", 1)[-1]  # the base name it records
        named = [s for s in self.symbols.get(bare, []) if 0 < s.section < len(self.sections)]
        defs = [s for s in named if not source or s.file == source]
        if not defs:
            files = sorted({s.file or "a global" for s in named})
            there = f" (there is one named {bare!r} in {', '.join(files)})" if files else ""
            raise ImageError(f"{self.path.name}: no data symbol {name!r}{there}")
        if len(defs) > 1:
            files = ", ".join(s.file or "a global" for s in defs)
            raise ImageError(f"{self.path.name}: {len(defs)} symbols named {name!r} (in {files}): "
                             f"name the one meant by its file, `FILE:{bare}`, or give it a name "
                             "of its own")
        s = defs[0]
        typ, addr, off, size, _, _ = self.sections[s.section]
        if typ == 8:  # SHT_NOBITS: .bss has no initial contents
            raise ImageError(f"{self.path.name}: {name!r} is not initialised data")
        if s.size == 0 or not addr <= s.value and s.value + s.size <= addr + size:
            raise ImageError(f"{self.path.name}: {name!r} has no size or lies outside its section")
        return self.data[off + s.value - addr:off + s.value - addr + s.size]


# program_t {uint8_t id; const char *name; task_handler_t handler;
# uint16_t state_size; const state_layout_t *layout;} with each target's
# pointer size and alignment.
POINTER = {"avr": (2, 1), "arm": (4, 4), "x86-64": (8, 8)}
U16_ALIGN = {"avr": 1, "arm": 2, "x86-64": 2}


def program_layout(arch: str) -> tuple[int, int, int]:
    """(offset of handler, its size, size of one program_t) on `arch`."""
    psize, palign = POINTER[arch]

    def up(n: int, a: int) -> int:
        return (n + a - 1) // a * a
    name = up(1, palign)
    handler = name + psize
    state = up(handler + psize, U16_ALIGN[arch])
    layout = up(state + 2, palign)
    align = max(palign, U16_ALIGN[arch])
    return handler, psize, up(layout + psize, align)


def code_address(arch: str, pointer: int) -> int:
    """Byte address of the code a function pointer designates."""
    if arch == "avr":
        return pointer * 2  # avr-gcc function pointers are word addresses
    if arch == "arm":
        return pointer & ~1  # the Thumb bit
    return pointer


def program_table(elf: Elf, arch: str, symbol: str, by_addr: dict[int, str]) -> dict[int, str]:
    """{program id: handler function} of the program_t table `symbol`."""
    raw = elf.symbol_bytes(symbol)
    at, psize, size = program_layout(arch)
    if len(raw) % size:
        raise ImageError(f"{symbol}: {len(raw)} bytes is not a whole number of "
                         f"{size}-byte program_t entries ({arch})")
    out = {}
    for i in range(0, len(raw), size):
        pid = raw[i]
        ptr = int.from_bytes(raw[i + at:i + at + psize], "little")
        fn = by_addr.get(code_address(arch, ptr))
        if fn is None:
            raise ImageError(f"{symbol}[{i // size}]: handler {ptr:#x} is no function entry")
        if pid in out:
            raise ImageError(f"{symbol}: program id {pid} twice")
        out[pid] = fn
    return out


def description_tasks(elf: Elf, symbol: str) -> list[tuple[int, int]]:
    """[(program id, priority)] of the binary description `symbol`."""
    raw = elf.symbol_bytes(symbol)
    try:
        model = appdesc.decode(raw)
    except appdesc.AppcError as e:  # DescError derives from it
        raise ImageError(f"{symbol}: not a valid application description: {e}") from None
    return [(t["prog_id"], t["priority"]) for t in model["tasks"]]


def task_set(elf_path: Path, arch: str, programs: list[str], appdescs: list[str],
             declared: list[tuple[str, int | None]], by_addr: dict[int, str]) -> list[Task]:
    """Every task that may run on the kernel stack of the image."""
    tasks = [Task(h, p, "annotation") for h, p in declared]
    if not programs and not appdescs:
        return tasks
    elf = Elf(elf_path)
    table: dict[int, str] = {}
    for sym in programs:
        for pid, fn in program_table(elf, arch, sym, by_addr).items():
            if table.get(pid, fn) != fn:
                raise ImageError(f"program id {pid} is {table[pid]} and {fn}")
            table[pid] = fn
    for sym in appdescs:
        for n, (pid, prio) in enumerate(description_tasks(elf, sym)):
            if pid not in table:
                raise ImageError(f"{sym}: task {n} runs program {pid}, which no program "
                                 f"table ({' '.join(programs) or 'none named'}) holds")
            tasks.append(Task(table[pid], prio, f"{sym} task {n}"))
    return tasks
