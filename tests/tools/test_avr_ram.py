# SPDX-License-Identifier: MIT
"""The RAM budget of an AVR image (tools/motetlib/avr_ram.py): static data
by item from the linker map (variables by name, string literals by object
file, the kernel's variables said what they are), and the check that the
static data and the analysed kernel stack fit the RAM the image runs with,
failing with both figures when they do not."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "motetlib"))

import avr_ram  # noqa: E402
import stackcheck  # noqa: E402

MAP = """\
Linker script and memory map

 .data.sleep_limit
                0x0000000000800100        0x2 lib/libport.a(port_avr_irq.c.obj)
 .rodata.str1.1
                0x0000000000800102       0x20 app/tasks_radio.c.obj
 .rodata.str1.1
                0x0000000000800122       0x10 app/tasks_app.c.obj
 .rodata.ssl_programs
                0x0000000000800132       0x51 app/tasks_app.c.obj
 .bss.rx_frame  0x0000000000800183      0x146 lib/libport.a(port_avr_bus.c.obj)
 .text.main     0x0000000000000100       0x40 app/main.c.obj
 COMMON         0x00000000008002c9      0x810 lib/libk.a(mem_heap.c.obj)
                0x00000000008002c9                live_starts
                0x00000000008003c9                heap
"""


def test_items_by_name_strings_by_object(tmp_path):
    path = tmp_path / "image.elf.map"
    path.write_text(MAP)
    items = dict(avr_ram.items(path))
    assert items == {
        f"heap: {avr_ram.KNOWN['heap']}": 0x710,
        f"live_starts: {avr_ram.KNOWN['live_starts']}": 0x100,
        f"rx_frame: {avr_ram.KNOWN['rx_frame']}": 0x146,
        "ssl_programs": 0x51,
        "strings and constants of tasks_radio.c": 0x20,
        "strings and constants of tasks_app.c": 0x10,
        "sleep_limit": 2,
    }
    assert list(items)[0].startswith("heap:")  # largest first


def budget(monkeypatch, tmp_path, static, stack, ram):
    elf = tmp_path / "image.elf"
    Path(f"{elf}.map").write_text(MAP)
    monkeypatch.setattr(avr_ram.port_avr, "section_sizes", lambda e: {".bss": static})
    monkeypatch.setattr(avr_ram, "ram_bytes", lambda e: ram)
    monkeypatch.setattr(avr_ram, "stack_bound",
                        lambda e, a, s: stackcheck.Result(depth=stack))
    return avr_ram.report(elf, [], [])


def test_fits(monkeypatch, tmp_path, capsys):
    assert budget(monkeypatch, tmp_path, 3000, 1096, 4096) == 0
    assert "static RAM + stack 4096 B of the 4096 B the image runs with (+0 B)" in \
        capsys.readouterr().out


def test_does_not_fit(monkeypatch, tmp_path, capsys):
    assert budget(monkeypatch, tmp_path, 3000, 1097, 4096) == 1
    err = capsys.readouterr().err
    assert "its static RAM (3000 B) and its analysed stack (1097 B) need 4097 B, " \
           "more than its 4096 B" in err


def test_refused_analysis_fails(monkeypatch, tmp_path, capsys):
    elf = tmp_path / "image.elf"
    Path(f"{elf}.map").write_text(MAP)
    monkeypatch.setattr(avr_ram.port_avr, "section_sizes", lambda e: {".bss": 100})
    monkeypatch.setattr(avr_ram, "ram_bytes", lambda e: 4096)
    monkeypatch.setattr(avr_ram, "stack_bound",
                        lambda e, a, s: stackcheck.Result(problems=["recursion: f -> f"]))
    assert avr_ram.report(elf, [], []) == 1
    assert "recursion: f -> f" in capsys.readouterr().err


def linked(monkeypatch, tmp_path, objects):
    """A link of objects {relative path: (source, has a .su file)}."""
    paths, sources = [], {}
    for rel, (source, su) in objects.items():
        obj = tmp_path / rel
        obj.parent.mkdir(parents=True, exist_ok=True)
        obj.write_bytes(b"")
        if su:
            obj.with_suffix(".su").write_text("port_avr_boot.c:10:6:port_init\t4\tstatic\n")
        paths.append(obj)
        sources[obj] = [Path(source).resolve()]
    monkeypatch.setattr(avr_ram.stackcheck, "linked_objects", lambda e: paths)
    monkeypatch.setattr(avr_ram, "object_sources", lambda e, o: sources[o])


def test_sized_port_files_have_their_frames(monkeypatch, tmp_path):
    linked(monkeypatch, tmp_path, {
        "motet_port.dir/port_avr_boot.c.obj": ("ports/avr/port_avr_boot.c", True),
        "motet_port.dir/port_avr_startup.c.obj": ("ports/avr/port_avr_startup.c", False)})
    assert avr_ram.unsized(tmp_path / "image.elf", [Path("ports/avr/port_avr_boot.c")]) == []


def test_a_sized_file_built_without_frames_fails(monkeypatch, tmp_path, capsys):
    """As the port's files were built before they had -fstack-usage: every
    function of theirs, the interrupt bodies PORT_AVR_ISR generates too,
    estimated from its prologue."""
    linked(monkeypatch, tmp_path, {
        "port.dir/__/__/ports/avr/port_avr_timer.c.obj": ("ports/avr/port_avr_timer.c", False),
        "other.dir/port_avr_bus.c.obj": ("lib/port_avr_bus.c", True)})
    elf = tmp_path / "image.elf"
    Path(f"{elf}.map").write_text(MAP)
    monkeypatch.setattr(avr_ram.port_avr, "section_sizes", lambda e: {".bss": 3000})
    monkeypatch.setattr(avr_ram, "ram_bytes", lambda e: 4096)
    monkeypatch.setattr(avr_ram, "stack_bound", lambda e, a, s: stackcheck.Result(depth=100))
    sized = [Path("ports/avr/port_avr_timer.c"), Path("ports/avr/port_avr_bus.c")]
    assert avr_ram.report(elf, [], [], sized=sized) == 1
    err = capsys.readouterr().err
    assert "frames estimated, not the compiler's" in err
    assert "port_avr_timer.c: compiled without -fstack-usage (port_avr_timer.c.obj has no " \
           ".su file)" in err
    # A file of the same name from another directory is not the port's.
    assert "port_avr_bus.c: no object of the link was compiled from it" in err
