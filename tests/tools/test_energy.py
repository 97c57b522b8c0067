# SPDX-License-Identifier: MIT
"""The energy model of device files (tools/motetlib/energy.py, device.py)."""

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import device, energy  # noqa: E402

HEAD = """
[device]
program = "apps/pingpong/pingpong"
"""


def parse(text):
    return device.parse(HEAD + text, "x.toml")


def test_shipped_ssl_device_has_the_papers_processors():
    dev = device.load(ROOT / "devices" / "ssl-device.toml")
    assert dev.module(1).processor.name == "arm7"
    assert [dev.module(m).processor.name for m in (2, 3, 4, 5)] == ["msp430"] * 4
    # the board figures the hub charges are the model's active and standby power
    for m in dev.modules:
        assert m.processor.active_mw == m.power.active_mw
        assert m.processor.transition_us == m.power.wake_us


def test_every_builtin_kind_has_a_source_and_derived_figures():
    assert set(energy.SOURCES) == set(energy.PROCESSORS)
    for name, p in energy.PROCESSORS.items():  # each passes the checks a device's would
        assert energy.override(p, name, {}, "built-in") == p
    arm7 = energy.PROCESSORS["arm7"]
    assert arm7.mips == pytest.approx(60 / 1.9)
    assert arm7.mipj == pytest.approx(arm7.mips * 1000 / 100.0)
    # T_be = (E_W - P_S T_W) / (P_I - P_S) = (100 uJ - 1 mW * 2 ms) / 34 mW
    assert arm7.breakeven_s == pytest.approx((100e-6 - 1e-3 * 2e-3) / 34e-3)


def test_default_kind_follows_the_port_kind():
    dev = parse("[[module]]\nid = 0\n")
    assert dev.module(0).processor == energy.PROCESSORS["native"]
    assert dev.bus.nj_per_byte == energy.BUS_NJ_PER_BYTE
    assert dev.radio_nj_per_byte == energy.RADIO_NJ_PER_BYTE


DSP = """[processor.dsp]
mhz = 100
cpi = 1
nj_per_instruction = 0.5
idle_mw = 10
standby_mw = 1
transition_us = 50
transition_uj = 3
ram_bytes = 65536
"""


def test_device_and_module_overrides():
    dev = parse("""
[processor.msp430]
standby_mw = 0.01
""" + DSP + """[bus]
nj_per_byte = 2
[radio]
nj_per_byte = 900
[[module]]
id = 0
processor = "msp430"
[[module]]
id = 1
cpu_mhz = 3
processor = { kind = "msp430", ram_bytes = 4096 }
[[module]]
id = 2
processor = "dsp"
""")
    m0, m1, m2 = (dev.module(i).processor for i in range(3))
    assert m0.standby_mw == 0.01 and m0.active_mw == 9.0
    assert m1.ram_bytes == 4096 and m1.standby_mw == 0.01
    assert m1.mhz == 3 and m1.active_mw == pytest.approx(4.5)  # half the clock
    assert m2.active_mw == pytest.approx(50.0)  # 0.5 nJ x 100 MIPS
    assert dev.bus.nj_per_byte == 2 and dev.bus.nj_per_frame == energy.BUS_NJ_PER_FRAME
    assert dev.radio_nj_per_byte == 900


@pytest.mark.parametrize("text, message", [
    ("[processor.msp430]\nstandby_mw = -1\n[[module]]\nid = 0\n",
     "x.toml [processor.msp430]: 'standby_mw' = -1 is outside 0 .. 100000 mW"),
    ("[processor.msp430]\nidle_mw = nan\n[[module]]\nid = 0\n",
     "x.toml [processor.msp430]: 'idle_mw' = nan is outside"),
    ("[processor.msp430]\nram_bytes = 1.5\n[[module]]\nid = 0\n",
     "'ram_bytes' must be an integer, got 1.5"),
    ("[processor.msp430]\nvolts = 3\n[[module]]\nid = 0\n",
     "x.toml [processor.msp430]: unknown field volts"),
    ("[processor.msp430]\nactive_mw = 1\nnj_per_instruction = 1\n[[module]]\nid = 0\n",
     "give 'active_mw' or 'nj_per_instruction', not both"),
    ("[processor.dsp]\nmhz = 100\n[[module]]\nid = 0\n",
     "'dsp' is not a built-in processor kind"),
    ("[[module]]\nid = 0\nprocessor = \"z80\"\n",
     "x.toml module #1: processor 'z80' is not a known kind"),
    ("[[module]]\nid = 0\nprocessor = { standby_mw = 1 }\n",
     "x.toml module #1.processor: missing 'kind'"),
    ("[[module]]\nid = 0\nprocessor = { kind = \"arm7\", cpi = 0 }\n",
     "x.toml module #1.processor: 'cpi' = 0 is outside 0.1 .. 100"),
    ("[[module]]\nid = 0\nprocessor = 7\n",
     "'processor' must be a kind name or a table, got 7"),
    ("[bus]\nnj_per_frame = true\n[[module]]\nid = 0\n",
     "x.toml [bus]: 'nj_per_frame' must be a number, got True"),
    ("[radio]\nnj_per_byte = inf\n[[module]]\nid = 0\n",
     "x.toml [radio]: 'nj_per_byte' = inf is outside"),
    ("[radio]\nuj = 1\n[[module]]\nid = 0\n", "x.toml [radio]: unknown field uj"),
    # figures each within bounds but not of one processor
    ("[processor.msp430]\nstandby_mw = 5\n[[module]]\nid = 0\n",
     "x.toml [processor.msp430]: 'standby_mw' = 5 is above 'idle_mw' = 1.8"),
    ("[[module]]\nid = 0\nprocessor = { kind = \"arm7\", idle_mw = 150 }\n",
     "x.toml module #1.processor: 'idle_mw' = 150 is above 'active_mw' = 100"),
    ("[[module]]\nid = 0\nprocessor = { kind = \"arm7\", transition_uj = 1 }\n",
     "x.toml module #1.processor: 'transition_uj' = 1 is below standby_mw x transition_us "
     "= 2 uJ"),
])
def test_bad_figures_are_refused_naming_file_and_field(text, message):
    with pytest.raises(device.DeviceError) as e:
        parse(text)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_processor_that_never_idles_above_standby_has_no_breakeven():
    p = energy.Processor("x", 1, 1, 1, idle_mw=0.5, standby_mw=0.5, transition_us=1,
                         transition_uj=1, ram_bytes=1)
    assert math.isinf(p.breakeven_s)


def test_any_odd_value_in_the_energy_model_gets_a_device_error():
    # Each energy field of a device file in turn, each odd value: parsed,
    # or refused with a DeviceError naming the file, never another exception.
    lines = (DSP.replace("nj_per_instruction = 0.5", "active_mw = 50") +
             "[bus]\nnj_per_byte = 2\nnj_per_frame = 2\n[radio]\nnj_per_byte = 900\n"
             '[[module]]\nid = 0\nprocessor = { kind = "dsp", cpi = 2 }\n').splitlines()
    tried = 0
    for i, line in enumerate(lines):
        key, sep, _ = line.partition(" = ")
        if not sep or key == "id":
            continue
        for value in ("5", "-1", "0", '"x"', "[1]", "{ a = 1 }", "{}", "true", "nan", "1e300",
                      '"msp430"', '{ kind = "dsp", mhz = -1 }'):
            text = "\n".join(lines[:i] + [f"{key} = {value}"] + lines[i + 1:]) + "\n"
            try:
                parse(text)
            except device.DeviceError as e:
                assert "\n" not in str(e) and str(e).startswith("x.toml")
            tried += 1
    assert tried == 12 * 12
