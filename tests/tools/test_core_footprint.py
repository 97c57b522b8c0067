# SPDX-License-Identifier: MIT
"""The AVR footprint table (tools/motetlib/port_avr.py): the linker map's
sections by component, COMMON blocks split by symbol so that the pools in
them count as pools, and the core image's totals."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import port_avr  # noqa: E402

MAP = """\
Archive member included to satisfy reference by file (symbol)

Linker script and memory map

 .text.sched_send
                0x0000000000000100       0x4e lib/libk.a(send.c.obj)
 .text.mem_alloc
                0x0000000000000150       0x40 lib/libk.a(mem_heap.c.obj)
 .data.task_cache
                0x0000000000800100       0x10 lib/libk.a(task.c.obj)
 .bss.task_cache_storage
                0x0000000000800110       0x98 lib/libk.a(task.c.obj)
 COMMON         0x00000000008001a8       0x17 lib/libk.a(dispatch.c.obj)
                0x00000000008001a8                sched
 COMMON         0x00000000008001bf      0x410 lib/libk.a(mem_heap.c.obj)
                0x00000000008001bf                mem_free_head
                0x00000000008001c1                heap
                0x00000000008005c1                mem_counters
 COMMON         0x00000000008005cf       0x24 lib/libk.a(queue.c.obj)
                0x00000000008005cf                queue_free_blocks
                0x00000000008005d1                queue_levels
                0x00000000008005d2                queue_top
                0x00000000008005d3                queue_level
                0x00000000008005f3                PROVIDE (__bss_end, .)
"""


def test_common_blocks_are_split_by_symbol(tmp_path):
    path = tmp_path / "image.elf.map"
    path.write_text(MAP)
    common = {s: n for s, n, _ in port_avr.map_sections(path) if s.startswith("COMMON")}
    assert common == {"COMMON.sched": 0x17, "COMMON.mem_free_head": 2, "COMMON.heap": 0x400,
                      "COMMON.mem_counters": 0x0e, "COMMON.queue_free_blocks": 2,
                      "COMMON.queue_levels": 1, "COMMON.queue_top": 1, "COMMON.queue_level": 0x20}


def test_footprint_counts_pools_in_common_blocks(tmp_path):
    path = tmp_path / "image.elf.map"
    path.write_text(MAP)
    sizes = port_avr.footprint(path)
    # The scheduler: sched_send's text; the task cache (ROM and RAM) and its
    # storage (a pool); sched; the queue's words and its levels (a pool).
    assert sizes["scheduler"] == {"rom": 0x4e + 0x10, "ram": 0x10 + 0x98 + 0x17 + 0x24,
                                  "pools": 0x98 + 0x20}
    assert sizes["heap"] == {"rom": 0x40, "ram": 0x410, "pools": 0x400}


def test_core_footprint_totals_each_image():
    configs = [c for c, _ in port_avr.CORE_IMAGES]
    core = {"scheduler": {"rom": 100, "ram": 30, "pools": 10}, "heap": {"rom": 50, "ram": 5,
                                                                        "pools": 0}}
    full = dict(core, multicast={"rom": 40, "ram": 2, "pools": 1})
    sizes = dict(zip(configs, (core, full, full)))
    rows, totals = port_avr.core_footprint(sizes)
    assert [r[0] for r in rows] == ["scheduler", "heap", "multicast"]
    assert totals["all"] == ([150, 190, 190], [25, 26, 26], [10, 11, 11])
    assert totals["old"] == ([100, 100, 100], [20, 20, 20], [10, 10, 10])
