# SPDX-License-Identifier: MIT
"""The multi-module tools without a build: device descriptions, scenario files,
fault specifications, the hub's clock arithmetic and its view of bus frames."""

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import device, hub, run_device  # noqa: E402

TWO = ROOT / "devices" / "two-module.toml"

MINIMAL = """
[device]
program = "apps/pingpong/pingpong"
[[module]]
id = 0
[[module]]
id = 3
cpu_mhz = 6
bus_cycles_per_byte = 20
bus_cycles_per_frame = 300
clock = { ppm = -7.5, hz = 32768, start = 42 }
"""


@pytest.mark.parametrize("name", ["two-module.toml", "five-module.toml"])
def test_shipped_devices_parse(name):
    dev = device.load(ROOT / "devices" / name)
    assert dev.loader == 0
    assert [m.id for m in dev.modules] == list(range(len(dev.modules)))
    assert all(m.kind == "native" for m in dev.modules)
    assert all(m.stamp_hz == 32768 for m in dev.modules)


def test_defaults_and_costs():
    dev = device.parse(MINIMAL, "x.toml")
    assert dev.name == "x" and dev.loader == 0 and dev.max_ppm == 20
    assert dev.bus == device.Bus()
    m = dev.module(3)
    assert (m.name, m.kind, m.counter_start, m.stamp_hz, m.ppm) == ("m3", "native", 42, 32768,
                                                                    -7.5)
    assert m.byte_ns == 3333 and m.frame_ns == 50000  # 20 and 300 cycles at 6 MHz
    assert dev.module(0).byte_ns == 0


def test_clocks_are_drawn_from_the_seed_within_max_ppm():
    dev = device.parse(MINIMAL, "x.toml")
    a, b = dev.clock_ppm(1), dev.clock_ppm(1)
    assert a == b and a[3] == -7.5 and abs(a[0]) <= 20
    assert dev.clock_ppm(2)[0] != a[0]
    exact = device.exact_clocks(dev)
    assert exact.clock_ppm(1) == {0: 0.0, 3: 0.0}
    assert exact.module(3).counter_start == 0


@pytest.mark.parametrize("text, message", [
    ("[[module]]\nid = 0\n", "no program"),
    ("[device]\nprogram='p'\n", "no [[module]]"),
    ("[device]\nprogram='p'\n[[module]]\nid = 0\n[[module]]\nid = 0\n", "module id 0 is used twice"),
    # Two modules reported, traced and planned under one name: was accepted.
    ("[device]\nprogram='p'\n[[module]]\nid = 0\nname = 'm1'\n[[module]]\nid = 1\n",
     "module name 'm1' is used twice"),
    ("[device]\nprogram='p'\n[[module]]\nid = 16\n", "id 16 is not a bus address"),
    ("[device]\nprogram='p'\n[[module]]\nid = 0\nkind = 'z80'\n", "kind 'z80' is not one of"),
    ("[device]\nprogram='p'\n[[module]]\nid = 0\ncolour = 1\n", "unknown field colour"),
    ("[device]\nprogram='p'\nloader = 4\n[[module]]\nid = 0\n", "loader 4 is not a module"),
    ("[device]\nprogram='p'\n[bus]\nslot_us = 0\n[[module]]\nid = 0\n",
     "'slot_us' = 0 is outside 0.001 .. 1000000 us"),
    ("[device]\nprogram='p'\n[[module]]\nid = 0\nclock = { hz = 2000000 }\n", "finer than"),
    ("[device]\nprogram='p'\n[[module]]\nid = 0\ncpu_mhz = true\n", "not a boolean"),
    ("[device\n", "not valid TOML"),
])
def test_bad_descriptions_name_the_problem(text, message):
    with pytest.raises(device.DeviceError) as err:
        device.parse(text, "bad.toml")
    assert message in str(err.value)
    assert str(err.value).startswith("bad.toml")


MODULE0 = "[device]\nprogram='p'\n[[module]]\nid = 0\n"


@pytest.mark.parametrize("field, message", [
    ("cpu_mhz = 1e308", "module #1: 'cpu_mhz' = 1e+308 is outside 0.01 .. 10000 MHz"),
    ("cpu_mhz = inf", "'cpu_mhz' = inf is outside"),
    ("cpu_mhz = nan", "'cpu_mhz' = nan is outside"),
    ("cpu_mhz = 0", "'cpu_mhz' = 0 is outside"),
    ("bus_cycles_per_frame = -1", "'bus_cycles_per_frame' = -1 is outside 0 .. 1000000 cycles"),
    ("bus_cycles_per_byte = 1e6", "'bus_cycles_per_byte' = 1000000.0 is outside 0 .. 10000"),
    ("clock = { ppm = nan }", "module #1.clock: 'ppm' = nan is outside -500 .. 500 ppm"),
    ("clock = { ppm = 501 }", "'ppm' = 501 is outside"),
    ("clock = { start = -1 }", "'start' = -1 is outside 0 .. 4294967295"),
    ("power = { wake_us = 1e9 }", "module #1.power: 'wake_us' = 1000000000.0 is outside 0 .. "
                                  "10000000 us"),
    ("power = { active_mw = inf }", "'active_mw' = inf is outside 0 .. 100000 mW"),
    ("power = { off_uw = -0.5 }", "'off_uw' = -0.5 is outside"),
])
def test_module_numbers_outside_physical_bounds_are_refused(field, message):
    with pytest.raises(device.DeviceError) as err:
        device.parse(MODULE0 + field + "\n", "bad.toml")
    assert str(err.value).startswith("bad.toml module #1")
    assert message in str(err.value)


@pytest.mark.parametrize("text, message", [
    ("[device]\nprogram='p'\nmax_ppm = nan\n", "[device]: 'max_ppm' = nan is outside 0 .. 500"),
    ("[bus]\nbandwidth = 10\n", "[bus]: 'bandwidth' = 10 is outside 1000 .. 10000000000 bytes/s"),
    ("[bus]\nslot_us = inf\n", "[bus]: 'slot_us' = inf is outside"),
    ("[bus]\nack_timeout_us = 1e12\n", "[bus]: 'ack_timeout_us' = 1000000000000.0 is outside"),
])
def test_device_and_bus_numbers_outside_physical_bounds_are_refused(text, message):
    with pytest.raises(device.DeviceError) as err:
        device.parse(("" if text.startswith("[device]") else "[device]\nprogram='p'\n") + text
                     + "[[module]]\nid = 0\n", "bad.toml")
    assert message in str(err.value)


def test_the_shipped_devices_are_within_bounds():
    for path in sorted((ROOT / "devices").glob("*.toml")):
        device.load(path)


RANDOM_BYTES = bytes.fromhex("5b 64 65 76 69 63 65 5d 0a 9f 3c 88 ff 00 17 e2 80")


def test_a_device_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "noise.toml"
    path.write_bytes(RANDOM_BYTES)
    with pytest.raises(device.DeviceError) as err:
        device.load(path)
    assert str(err.value) == (f"{path}: line 2, column 1: byte 0x9f is not UTF-8 text; a device "
                              "file is TOML, which is UTF-8")


def run_main(capsys, *args):
    status = run_device.main([str(a) for a in args])
    err = capsys.readouterr().err
    return status, err


def test_motet_run_on_random_bytes_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "noise.toml"
    path.write_bytes(RANDOM_BYTES)
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "run", str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [f"run: error: {path}: line 2, column 1: byte 0x9f is not "
                                       "UTF-8 text; a device file is TOML, which is UTF-8"]
    assert "Traceback" not in res.stdout + res.stderr


@pytest.mark.parametrize("args, message", [
    (["--until", "1", "--fault", "kill:7@0.5"],
     "--fault kill:7@0.5: module 7 is not a module of"),
    (["--until", "0.2", "--fault", "corrupt:5@0.1:2"],
     "--fault corrupt:5@0.1:2: module 5 is not a module of"),
    (["--until", "0.2", "--fault", "kill:9@frame:0xf2:15"],
     "--fault kill:9@frame:0xf2:15: module 9 is not a module of"),
    (["--until", "1", "--fault", "kill:1@2.5"],
     "--fault kill:1@2.5: at 2.5 s, after --until 1 s: it would never happen"),
    (["--until", "nan"], "--until nan: expected a finite number of seconds > 0"),
    (["--until", "inf"], "--until inf: expected a finite number of seconds > 0"),
    (["--until", "-1"], "--until -1: expected"),
    (["--until", "0.2", "--probe", "0"], "--probe 0: expected"),
    (["--until", "0.2", "--fault", "kill:1@inf"],
     "bad fault 'kill:1@inf': time 'inf' is not a finite number"),
    (["--until", "0.2", "--fault", "delay:1@0.1:-5"],
     "bad fault 'delay:1@0.1:-5': delay '-5' is not a finite"),
    # The report is written at the run's end: it was a traceback there.
    (["--until", "0.2", "--report", "/nonexistent/r.json"],
     "--report /nonexistent/r.json: no directory /nonexistent"),
    (["--until", "0.2", "--report", "/"], "--report /: a directory, not a file"),
    # Each module's program refused it, naming only seed * 1000 + its id.
    (["--until", "0.2", "--seed", "-5"], "--seed -5: expected a whole number 0 .. "),
    (["--until", "0.2", "--seed", str(2**64)], f"--seed {2**64}: expected a whole number 0 .. "),
])
def test_faults_and_times_that_could_never_happen_are_refused(capsys, args, message):
    # --until bounds the run should the check ever let one through.
    status, err = run_main(capsys, TWO, "--no-build", *args)
    assert status == 2
    assert err.startswith("run: error: ") and message in err, err
    assert len(err.splitlines()) == 1


def test_a_log_dir_that_cannot_be_made_is_one_line_before_any_module_starts(tmp_path):
    """--log-dir naming a file (or a place no directory can be made) was a
    FileExistsError traceback; now one line and status 2."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("")
    lines = []
    status, report = run_device.run(device.load(TWO), tmp_path / "build", until=0.1,
                                    log_dir=a_file, out=lines.append)
    assert (status, report) == (2, None)
    assert lines == [f"run: error: cannot make the log directory {a_file}: File exists"]


def test_a_program_not_built_names_the_device_file_and_the_module(tmp_path):
    """A device file naming a program never built (a typo in its program,
    or --no-build) said only the program's path."""
    lines = []
    status, _ = run_device.run(device.load(TWO), tmp_path / "build", until=0.1, out=lines.append)
    exe = tmp_path / "build" / "apps" / "pingpong" / "pingpong"
    assert status == 1
    assert lines == [f"run: error: {TWO}: module 0's {exe} was not built"]


def test_programs_that_do_not_build_name_the_device_file(capsys, monkeypatch):
    """The build's own error names a CMake target ("unknown target
    'pingpon'"), not the device file whose program it is."""
    monkeypatch.setattr(run_device.build, "build", lambda *a, **k: 1)
    status, err = run_main(capsys, TWO, "--until", "0.1")
    assert status == 1
    assert err == f"run: error: the programs {TWO} names did not build (above)\n"


def test_a_description_appc_refuses_in_the_build_is_the_last_thing_run_says(capsys,
                                                                             monkeypatch):
    """A build that stops at a refused description (status 2, appc's
    message last, build.build()) was followed by 'the programs D names did
    not build (above)', which buried the refusal; run adds nothing to it."""
    refusal = ("error: the build in build stopped at an application description appc refused:\n"
               "appc: error: apps/pingpong/pingpong.toml: task 'ping': unknown program 'pyng'\n")

    def refused(*args, **kwargs):
        print(refusal, end="", file=sys.stderr)
        return 2
    monkeypatch.setattr(run_device.build, "build", refused)
    monkeypatch.setattr(run_device.build, "configured_targets", lambda bdir: None)
    status, err = run_main(capsys, TWO, "--until", "0.1")
    assert status == 2
    assert err == refusal


@pytest.mark.parametrize("spec, fault", [
    ("kill:2@1.5", hub.Fault("kill", 2, 1_500_000_000)),
    ("corrupt:1@0.1:3", hub.Fault("corrupt", 1, 100_000_000, count=3)),
    ("corrupt:*@0", hub.Fault("corrupt", None, 0)),
    ("drop:1@0.5", hub.Fault("drop", 1, 500_000_000)),
    ("drop:*@1:4", hub.Fault("drop", None, 1_000_000_000, count=4)),
    ("delay:0@2:250", hub.Fault("delay", 0, 2_000_000_000, delay_ns=250_000)),
    ("off:4@0.25", hub.Fault("off", 4, 250_000_000)),
    ("freeze:3@1", hub.Fault("freeze", 3, 1_000_000_000)),
    ("pause:2@0.1:40", hub.Fault("pause", 2, 100_000_000, delay_ns=40_000_000)),
    ("stall:3@0.0235:276.5", hub.Fault("stall", 3, 23_500_000, delay_ns=276_500_000)),
    ("resume:2@0.3", hub.Fault("resume", 2, 300_000_000)),
    ("kill:2@frame:0xf2:15", hub.Fault("kill", 2, 0, frame=(0xF2, 15))),
    ("freeze:4@frame:16:8:3", hub.Fault("freeze", 4, 0, count=3, frame=(16, 8))),
])
def test_fault_specs(spec, fault):
    assert hub.parse_fault(spec) == fault


@pytest.mark.parametrize("spec", ["explode:1@1", "kill:*@1", "kill:1", "delay:1@1", "kill:1@inf",
                                  "kill:1@nan", "delay:1@1:-5", "delay:1@1:inf",
                                  "kill:1@1:2", "corrupt:1@1:0", "drop:1@1:0", "drop:1@1:x", "kill:x@1", "kill:1@-1",
                                  "pause:1@1", "pause:*@1:5", "pause:1@1:-5", "pause:1@1:inf",
                                  "stall:1@1", "stall:*@1:5", "stall:1@frame:1:2",
                                  "resume:1@1:2", "resume:*@1", "pause:1@frame:1:2",
                                  "off:1@frame:1:2", "kill:1@frame:1", "kill:1@frame:256:1",
                                  "kill:1@frame:1:1:0", "kill:*@frame:1:1"])
def test_bad_fault_specs(spec):
    with pytest.raises(ValueError, match="bad fault"):
        hub.parse_fault(spec)


@pytest.mark.parametrize("spec, message", [
    ("kill:1", "kill needs a module and a time: kill:MODULE@SECONDS"),
    ("kil:1@0.1", "unknown fault 'kil' (known: kill,"),
    ("kill:1@0.1x", "time '0.1x' is not a finite number >= 0 (seconds)"),
    ("delay:1@0.1:abc", "delay 'abc' is not a finite number >= 0 (microseconds)"),
    ("pause:1@0.1:x", "pause 'x' is not a finite number >= 0 (milliseconds)"),
    ("drop:*@0.1:2x", "count '2x' is not a whole number"),
    ("corrupt:x@0.1", "module 'x' is not a whole number"),
    ("corrupt:1@0.1:-3", "count -3: corrupt needs a count >= 1"),
    ("off:1@0.1:5", "off takes no :N (only corrupt and drop take a count)"),
    ("kill:1@frame:zz:0", "PID 'zz' is not a whole number"),
    ("kill:*@frame:1:2", "kill needs a module number, not *"),
])
def test_a_bad_fault_spec_names_the_part_at_fault_in_words(spec, message):
    """A typo in --fault says which part is wrong and what it should be,
    never a Python message ("could not convert string to float")."""
    with pytest.raises(ValueError) as err:
        hub.parse_fault(spec)
    assert str(err.value).startswith(f"bad fault {spec!r}: {message}"), err.value


def test_clock_ticks_and_their_global_instants():
    for ppm in (0.0, 20.0, -20.0, 13.37):
        c = hub.Clock(ppm, 0, 1_000_000)
        for tick in (1, 999_999, 10**9 + 7):
            g = c.at(tick)  # the first nanosecond at which the counter shows `tick`
            assert c.floor(g) == tick
            assert c.floor(g - 1) == tick - 1
            assert c.ceil(g - 1) == tick
    fast = hub.Clock(20.0, 0, 1_000_000)
    assert fast.floor(10**9) == 1_000_020  # one second: 20 us ahead
    assert fast.exact(10**9) == Fraction(1_000_020)


def test_stamp_resolution_and_wrap():
    rtc = hub.Clock(0.0, 0, 32768)
    assert rtc.stamp(1_000_000) == 977  # 1000 us: the 32nd edge at 976.56 us
    assert rtc.stamp(10**9) == 1_000_000  # edge 32768 is exactly 1 s
    near_wrap = hub.Clock(0.0, 2**32 - 10, 1_000_000)
    assert near_wrap.stamp(20_000) == 10  # 20 us later the counter wrapped


def test_frame_layout_matches_the_kernel():
    """The bytes test_bus_frame.c checks: DATA from 1 to 2, seq 7, pid 0x12,
    port 9, src pid 0x10, prio 3, payload "hello"."""
    body = bytes([1, 1, 2, 7, 0x12, 9, 0x10, 3, 5, 0]) + b"hello"
    frame = bytearray(body + b"\0\0")
    hub.reseal(frame)
    assert hub.frame_ok(frame)
    assert hub.crc16(b"123456789") == 0x29B1
    frame[12] ^= 0x04
    assert not hub.frame_ok(frame)


def test_sync_stamp_is_written_and_resealed():
    frame = bytearray([3, 0, 0xFF, 0, 0xF1, 8, 0x10, 7, 4, 0, 0, 0, 0, 0, 0, 0])
    hub.reseal(frame)
    hub.stamp_sync(frame, 0xDEADBEEF)
    assert frame[10:14] == bytes([0xEF, 0xBE, 0xAD, 0xDE])
    assert hub.frame_ok(frame)


def test_interactive_commands_are_faults_now():
    assert hub.parse_command("corrupt 1 3", 5) == hub.Fault("corrupt", 1, 5, count=3)
    assert hub.parse_command("  kill 2 ", 7) == hub.Fault("kill", 2, 7)
    assert hub.parse_command("delay * 250", 0) == hub.Fault("delay", None, 0, delay_ns=250_000)
    assert hub.parse_command("pause 2 40", 9) == hub.Fault("pause", 2, 9, delay_ns=40_000_000)
    assert hub.parse_command("resume 2", 11) == hub.Fault("resume", 2, 11)
    for bad in ("kill", "explode 1", "kill 1 2 3"):
        with pytest.raises(ValueError):
            hub.parse_command(bad, 0)


def test_a_board_serves_the_sensors_of_avr_modules_only(tmp_path):
    """`board`: the program an emulated module's harness asks for its
    sensors (docs/bus.md, "Sensors of emulated modules"); it gets the
    module's args, a --sensor per sensor and the options after `--`."""
    from motetlib import module_kinds
    dev = device.load(ROOT / "devices" / "ssl-mixed.toml")
    compute, sense = dev.modules[0], dev.modules[2]
    assert compute.kind == "cortex-m" and compute.board == ""  # no sensors, no board
    assert sense.kind == "avr" and sense.board == "apps/ssl/ssl_board"
    argv = module_kinds.of(sense).argv(tmp_path, dev, sense, "S", 1, None, ["--x"])
    board_args = [a.split("=", 1)[1] for a in argv if a.startswith("--board-arg=")]
    assert board_args == ["--scenario", "apps/ssl/scenarios/demo.toml", "--sensor",
                          "microphone:1", "--sensor", "temperature", "--x"]
    assert argv[argv.index("--board") + 1] == str(tmp_path / "apps/ssl/ssl_board")
    assert argv[-1].endswith("ssl_device.elf")
    text = """
[device]
program = "p"
board = "b"
[[module]]
id = 0
kind = "cortex-m"
sensors = ["microphone:0"]
"""
    with pytest.raises(device.DeviceError) as err:
        device.parse(text, "d.toml")
    assert "a cortex-m module's sensors cannot be served by a board program yet" in str(err.value)


def test_a_cortex_m_module_runs_at_its_stated_clock(tmp_path):
    """QEMU -icount shift=n runs one instruction per 2^n ns: the module's
    cpu_mhz picks n, and the hub's grants stop short by what an
    instruction begun in the granted tick may run past it: nothing while
    it takes no longer than the 40 ns tick (n <= 5), the ticks it spans
    less one beyond."""
    from motetlib import module_kinds
    dev = device.load(ROOT / "devices" / "ssl-mixed.toml")
    compute = dev.module(1)
    assert compute.cpu_mhz == 62.5 and device.icount_shift(62.5) == 4
    kind = module_kinds.of(compute)
    argv = kind.argv(tmp_path, dev, compute, "S", 1, None, [])
    assert argv[argv.index("--icount-shift") + 1] == "4"
    assert kind.overshoot_ticks(compute) == 0
    plain = device.parse(MODULE0.replace("id = 0", "id = 0\nkind = 'cortex-m'"), "d.toml")
    assert plain.module(0).cpu_mhz == 1000 and device.icount_shift(1000) == 0
    assert kind.overshoot_ticks(plain.module(0)) == 0
    slow = device.parse(MODULE0.replace("id = 0", "id = 0\nkind = 'cortex-m'\ncpu_mhz = 31.25"),
                        "d.toml")
    assert device.icount_shift(31.25) == 5 and kind.overshoot_ticks(slow.module(0)) == 0
    slowest = device.parse(MODULE0.replace(
        "id = 0", f"id = 0\nkind = 'cortex-m'\ncpu_mhz = {1000 / 1024}"), "d.toml")
    assert kind.overshoot_ticks(slowest.module(0)) == 25  # 1,024 ns: 26 ticks
    assert device.icount_shift(48) is None and device.icount_shift(1000 / 1024) == 10


def test_a_module_without_power_is_charged_its_processors_figures():
    """One set of power figures for the hub and the planner."""
    dev = device.load(ROOT / "devices" / "ssl-mixed.toml")
    for m in dev.modules:
        assert (m.power.active_mw, m.power.sleep_mw, m.power.wake_us) == (
            m.processor.active_mw, m.processor.standby_mw, m.processor.transition_us)
    cm3 = dev.module(1).processor
    assert cm3.mhz == 62.5 and cm3.cpi == 1.0 and cm3.active_mw == pytest.approx(80 * 62.5 / 48)
    own = device.parse(MODULE0 + "power = { active_mw = 5.0 }\n", "d.toml").module(0).power
    assert own.active_mw == 5.0 and own.sleep_mw == device.Power().sleep_mw


# A native module and an emulated one; [device] task_us is the native's.
MIXED = """
[device]
program = "p"
task_us = { filter = 300 }
[[module]]
id = 0
[[module]]
id = 1
name = "chip"
kind = "avr"
[[module]]
id = 2
name = "core"
kind = "cortex-m"
"""
WHY = "emulated modules run the code and are timed by it"


def test_task_us_on_a_device_of_emulated_modules_only_is_refused():
    """An emulated module runs the code and is charged its cycles, so a
    task_us on a device with no native module would change nothing: it was
    accepted and silently ignored."""
    text = MIXED.replace("[[module]]\nid = 0\n", "", 1)
    with pytest.raises(device.DeviceError) as err:
        device.parse(text, "d.toml")
    said = str(err.value)
    assert said.startswith("d.toml [device]: 'task_us' is charged on native modules only"), said
    assert "module 1 'chip' (avr), module 2 'core' (cortex-m)" in said and WHY in said, said


def test_task_us_on_a_mixed_device_is_a_warning_per_emulated_module(tmp_path):
    """[device] task_us is the only way to give the native modules their
    costs, so a mixed device may have it; each emulated module it does not
    apply to is named once (it was silent)."""
    dev = device.parse(MIXED, "d.toml")
    assert [w.split(":")[1].strip() for w in dev.warnings] == [
        "'task_us' does not apply to module 1 'chip' (avr)",
        "'task_us' does not apply to module 2 'core' (cortex-m)"], dev.warnings
    assert all(WHY in w for w in dev.warnings)
    path = tmp_path / "d.toml"
    path.write_text(MIXED)
    said = []
    loaded = device.load(path, warn=said.append)
    assert said == [f"warning: {w}" for w in loaded.warnings] and len(said) == 2
    # Without task_us, or with native modules only, there is nothing to say.
    assert device.parse(MIXED.replace("task_us = { filter = 300 }\n", ""), "d").warnings == ()
    assert device.parse(MINIMAL.replace('program = "apps/pingpong/pingpong"',
                                        'program = "p"\ntask_us = { f = 1 }'), "d").warnings == ()


@pytest.mark.parametrize("costs, said", [
    ('{ filter = "300" }', "d.toml [device] task_us: 'filter' must be an integer or a number, "
                           "got '300'"),
    ("{ filter = -1 }", "d.toml [device] task_us: 'filter' = -1 is outside 0 .. 10000000 us"),
    ("{ filter = nan }", "d.toml [device] task_us: 'filter' = nan is outside 0 .. 10000000 us"),
])
def test_a_bad_task_cost_names_the_task(costs, said):
    """A task_us entry that is no cost was said to be a bad 'handler_us',
    a key the file may not even have, under the task's name."""
    with pytest.raises(device.DeviceError) as err:
        device.parse(MINIMAL.replace('program = "apps/pingpong/pingpong"',
                                     f'program = "p"\ntask_us = {costs}'), "d.toml")
    assert str(err.value) == said


@pytest.mark.parametrize("kind", ["cortex-m", "avr"])
def test_args_on_an_emulated_module_no_program_takes_are_refused(kind):
    """A module's own args go to its native program or, on an avr module,
    to its board program; on an emulated module without one they went
    nowhere, silently."""
    with pytest.raises(device.DeviceError) as err:
        device.parse(f"{MODULE0}kind = '{kind}'\nargs = ['--app', 'x']\n", "d.toml")
    assert str(err.value).startswith(f"d.toml module #1: 'args' on a {kind} module that has no "
                                     "board program: no program of it takes them"), err.value
    # An avr module's board takes them.
    dev = device.parse(f"{MODULE0}kind = 'avr'\nboard = 'b'\nargs = ['--scenario', 's']\n",
                       "d.toml")
    assert dev.module(0).args == ("--scenario", "s")


@pytest.mark.parametrize("value", ["0", "50"])
def test_device_handler_us_on_a_device_of_emulated_modules_only_is_refused(value):
    """[device] handler_us is charged on native modules only, as a module's
    own is: on a device with none it changed nothing and was accepted
    silently, where the same entry in a module's table is refused."""
    text = MIXED.replace("[[module]]\nid = 0\n", "", 1).replace(
        "task_us = { filter = 300 }", f"handler_us = {value}")
    with pytest.raises(device.DeviceError) as err:
        device.parse(text, "d.toml")
    said = str(err.value)
    assert said.startswith("d.toml [device]: 'handler_us' is charged on native modules only, "
                           "and this device has none (module 1 'chip' (avr), module 2 'core' "
                           "(cortex-m))"), said
    assert WHY in said, said


def test_device_handler_us_on_a_mixed_device_is_a_warning_per_emulated_module():
    """On a mixed device [device] handler_us is the native modules' cost and
    no emulated module's, as task_us is: each emulated module is named once
    per entry (it was silent), with where to put the cost instead; in the
    native modules' own tables it draws no warning."""
    text = MIXED.replace("task_us = { filter = 300 }", "handler_us = 40\ntask_us = { f = 3 }")
    dev = device.parse(text, "d.toml")
    assert [w.split(":")[1].strip() for w in dev.warnings] == [
        "'handler_us' does not apply to module 1 'chip' (avr)",
        "'handler_us' does not apply to module 2 'core' (cortex-m)",
        "'task_us' does not apply to module 1 'chip' (avr)",
        "'task_us' does not apply to module 2 'core' (cortex-m)"], dev.warnings
    assert all(WHY in w for w in dev.warnings)
    assert dev.warnings[0].endswith("set it in the native modules' [[module]] tables instead")
    assert dev.module(0).handler_us == 40
    own = MIXED.replace("task_us = { filter = 300 }\n", "").replace(
        "[[module]]\nid = 0\n", "[[module]]\nid = 0\nhandler_us = 40\n")
    dev = device.parse(own, "d.toml")
    assert dev.warnings == () and dev.module(0).handler_us == 40


def test_the_shipped_mixed_devices_load_without_warnings():
    """Every device file of the repository with an emulated module gives
    the native modules' costs where they apply."""
    for path in sorted(ROOT.glob("devices/*.toml")) + sorted(ROOT.glob("tests/scenario/*.toml")):
        if "[device]" in path.read_text():
            said = []
            device.load(path, warn=said.append)
            assert said == [], (path, said)


@pytest.mark.parametrize("kind", ["avr", "cortex-m"])
def test_handler_us_on_an_emulated_module_is_refused(kind):
    """A module's own handler_us is charged on a native module only; on an
    emulated one it was silently ignored."""
    with pytest.raises(device.DeviceError) as err:
        device.parse(f"{MODULE0}kind = '{kind}'\nhandler_us = 50\n", "d.toml")
    assert str(err.value) == (f"d.toml module #1: 'handler_us' on a {kind} module: an emulated "
                              "module runs the code and is timed by it (handler_us is the cost "
                              "charged on a native module)")


@pytest.mark.parametrize("kind, says", [
    ("avr", "an avr module's sensors (microphone:0, radio) are served by a board program, and "
            "it has none"),
    ("cortex-m", "a cortex-m module's sensors cannot be served by a board program yet (only avr "
                 "modules have the board interface), so it cannot have sensors microphone:0, "
                 "radio"),
])
def test_sensors_no_program_serves_are_refused(kind, says):
    """An emulated module's sensors are served by its board program: named
    on one that has none, they were passed to nothing, silently."""
    with pytest.raises(device.DeviceError) as err:
        device.parse(f"{MODULE0}kind = '{kind}'\nsensors = ['microphone:0', 'radio']\n", "d.toml")
    assert str(err.value).startswith(f"d.toml module #1: {says}"), str(err.value)


@pytest.mark.parametrize("content", ["", "\n", "# my scenario\n\n  # to do: the sources\n"])
def test_a_scenario_file_that_defines_nothing_is_refused(tmp_path, content):
    """Every scenario key has a default, but a file with no key and no
    table is a wrong path or an unsaved file: it ran 10 s of silence."""
    from motetlib import ssl_scenario
    path = tmp_path / "empty.toml"
    path.write_text(content)
    with pytest.raises(ssl_scenario.ScenarioError) as err:
        ssl_scenario.read(path)
    assert str(err.value) == (f"scenario file {path} defines nothing: no key and no table (an "
                              "empty file, or only comments); every default would run 10 s "
                              "with no source and no fire")
    path.write_text(content + "[array]\n")  # a table, every key its default: something
    assert ssl_scenario.read(path) == {"array": {}}


@pytest.mark.parametrize("option, instead", [
    (["--seed", "5"], "give motet run --seed N"),
    (["--until", "1"], "give motet run --until S"),
    (["--module", "3"], "the device file gives the modules' ids"),
    (["--log=m.log"], "give motet run --log-dir DIR"),
])
def test_an_option_the_hub_gives_every_module_is_refused_after_the_dashes(option, instead,
                                                                           monkeypatch, capsys):
    """The options after -- go to every module's program after the hub's
    own: `-- --seed 5` gave every module one seed in place of its own
    (silently), `-- --module 3` stopped the run with 'a module announced
    itself as 3' (status 1)."""
    def never(*args, **kwargs):
        raise AssertionError("nothing is built or run")
    monkeypatch.setattr(run_device, "build_programs", never)
    monkeypatch.setattr(run_device, "run_compiled", never)
    device = str(ROOT / "devices" / "two-module.toml")
    assert run_device.main([device, "--until", "1", "--", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"run: error: -- {option[0]}: the hub gives every module its own "
                          f"{option[0].split('=')[0]}; {instead}"), err
    # An option of the programs' own goes through.
    monkeypatch.setattr(run_device, "build_programs", lambda *a: 0)
    monkeypatch.setattr(run_device, "run_compiled", lambda args, dev, faults, extra: extra)
    assert run_device.main([device, "--", "--timesync-window", "4"]) == ["--timesync-window", "4"]


def test_the_options_after_the_dashes_go_where_a_modules_args_go(tmp_path):
    """-- ARGS are more of the device file's args: every native module's
    program and every avr module's board program gets them (so that
    `-- --scenario FILE` reaches the sensors of both), an emulated image
    none. On devices/ssl-mixed.toml, whose only programs are board
    programs, an option of the native programs goes to ssl_board, which
    refuses it (test_ssl_mixed.py runs it: status 2)."""
    from motetlib import module_kinds
    extra = ["--timesync-window", "4"]
    for name in ("two-module.toml", "ssl-mixed.toml"):
        dev = device.load(ROOT / "devices" / name)
        for spec in dev.modules:
            argv = module_kinds.of(spec).argv(tmp_path, dev, spec, "S", 1, None, extra)
            board_args = [a.split("=", 1)[1] for a in argv if a.startswith("--board-arg=")]
            if spec.kind == "native":
                assert argv[-2:] == extra, argv
            elif spec.board:
                assert board_args[-2:] == extra and "--timesync-window" not in argv, argv
            else:
                assert "--timesync-window" not in argv and not board_args, argv


def test_an_app_file_after_the_dashes_is_refused_only_with_app(monkeypatch, capsys, tmp_path):
    """`-- --app-file X.bin` gives the native modules a compiled description
    (docs/app-format.md); it was refused always, as an option the hub gives
    every module, where only motet run --app gives one too."""
    monkeypatch.setattr(run_device, "build_programs", lambda *a: 0)
    monkeypatch.setattr(run_device, "run_compiled", lambda args, dev, faults, extra: extra)
    device = str(ROOT / "devices" / "two-module.toml")
    assert run_device.main([device, "--", "--app-file", "x.bin"]) == ["--app-file", "x.bin"]
    app = str(ROOT / "apps" / "pingpong" / "pingpong.toml")
    assert run_device.main([device, "--app", app, "--", "--app-file=x.bin"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"run: error: -- --app-file=x.bin: motet run --app {app} gives every "
                          "native module its own --app-file; give one of the two"), err


def test_an_image_without_the_bus_is_told_where_the_guide_shows_the_build(tmp_path, monkeypatch):
    """An emulated module's image built with a port's default kernel has no
    bus_active(): `motet run` refuses it, and its message once sent a
    newcomer to read another application's CMakeLists.txt (pingpong's) to
    learn how to build one with the bus. It names the guide's section,
    which shows it, and the section is there; an image with the bus is
    not refused. Host objects stand in for the images, read by the host's
    nm."""
    from motetlib import module_kinds
    monkeypatch.setattr(module_kinds.AvrKind, "NM", "nm")
    images = {}
    for name, source in (("nobus", "int main(void) { return 0; }\n"),
                         ("bus", "int bus_active(void) { return 1; }\n")):
        (tmp_path / f"{name}.c").write_text(source)
        images[name] = tmp_path / f"{name}.elf"
        subprocess.run(["cc", "-c", "-o", str(images[name]), str(tmp_path / f"{name}.c")],
                       check=True)
    text = f"""
[device]
program = "{images['nobus']}"
[[module]]
id = 0
kind = "avr"
cpu_mhz = 8
[[module]]
id = 1
kind = "avr"
cpu_mhz = 8
program = "{images['bus']}"
"""
    dev = device.parse(text, "d.toml")
    without, with_bus = dev.modules
    why = module_kinds.of(without).lacks_the_bus(tmp_path, without)
    assert why is not None and f"its image {images['nobus']} has no bus" in why
    assert "build its application's avr kernel with MOTET_BUS=1" in why
    assert '(docs/guide.md, "As a module of a device", shows the CMakeLists.txt)' in why
    assert "pingpong" not in why
    assert "\n### As a module of a device\n" in (ROOT / "docs" / "guide.md").read_text()
    assert module_kinds.of(with_bus).lacks_the_bus(tmp_path, with_bus) is None


@pytest.mark.parametrize("appc_status, why", [(2, "does not compile"),
                                              (1, "could not be written")])
def test_an_app_appc_does_not_compile_ends_the_run_with_its_status(monkeypatch, capsys,
                                                                   appc_status, why):
    """`motet run --app X.toml`: a description appc refuses (2) and an
    output it cannot write (1, OUTPUT_FAILED) end the run before anything
    is built, with appc's status and a line saying which it was."""
    from motetlib import appc
    written = []

    def appc_main(argv):
        written.append(argv)
        print(f"appc: error: {'refused' if appc_status == appc.REFUSED else 'cannot write'}",
              file=sys.stderr)
        return appc_status

    def nothing_built(*args):
        raise AssertionError("built after appc failed")

    assert (appc.REFUSED, appc.OUTPUT_FAILED) == (2, 1)
    monkeypatch.setattr(appc, "main", appc_main)
    monkeypatch.setattr(run_device, "build_programs", nothing_built)
    monkeypatch.setattr(run_device, "run_compiled", nothing_built)
    app = ROOT / "apps" / "pingpong" / "pingpong.toml"
    status, err = run_main(capsys, TWO, "--app", app)
    assert status == appc_status
    assert err.splitlines()[-1] == f"run: error: --app {app}: the description {why} (above)", err
    assert len(written) == 1 and written[0][0] == str(app) and written[0][-1] == "--names"


def test_the_device_format_doc_is_a_valid_device_with_every_field_and_bound():
    """docs/device-format.md is the one description of the format (the
    module's docstring points there): its example is a device the parser
    accepts, it names every field the parser knows, and its bounds table
    every physical bound the parser applies."""
    import re

    text = (ROOT / "docs" / "device-format.md").read_text()
    example = re.search(r"^```toml\n(.*?)^```$", text, re.S | re.M)[1]
    dev = device.parse(example, "docs/device-format.md")
    assert dev.modules[0].task_us == (("filter", 500),) and dev.modules[0].ppm == 12.5
    source = (ROOT / "tools" / "motetlib" / "device.py").read_text()
    known = set()
    for listed in re.findall(r"_unknown\([^,]+, \(([^)]*)\)", source):
        known |= set(re.findall(r'"(\w+)"', listed))
    assert {"id", "board", "ppm", "wake_us", "nj_per_frame", "processor"} <= known
    shown = set(re.findall(r"^(\w+) = ", example, re.M))
    shown |= set(re.findall(r"\b(\w+) = ", example))  # the inline tables' keys
    shown |= set(re.findall(r"^\[+(\w+)", example, re.M))  # the tables
    assert known <= shown, sorted(known - shown)
    table = text[text.index("| field | bounds |"):]
    for key in device.LIMITS:
        assert re.search(rf"`(\w+\.)?{key}`", table), key
    assert doc_bounds(table) == {k: (lo, hi) for k, (lo, hi, _) in device.LIMITS.items()}
    # Each default the example's comments state is what parse() gives.
    dev = device.parse('[device]\nprogram = "x"\n[[module]]\nid = 0\n')
    owners = {"device": (dev, dev.modules[0]), "bus": (dev.bus,), "radio": (dev,),
              "module": (dev.modules[0],)}
    stated = doc_defaults(example)
    assert {("bus", "bandwidth"), ("bus", "nj_per_frame"), ("radio", "nj_per_byte"),
            ("module", "cpu_mhz"), ("device", "max_ppm")} <= set(stated)
    for (table_name, key), value in stated.items():
        field = f"radio_{key}" if table_name == "radio" else key
        owner = next(o for o in owners[table_name] if hasattr(o, field))
        assert getattr(owner, field) == value, (table_name, key)


def doc_bounds(table):
    """{LIMITS key: (lowest, highest)} of the doc's bounds table: each row's
    range for the fields of its first cell, and `(`key`: lo .. hi)` ones."""
    import re

    def number(text):
        return eval(text.replace("^", "**"), {})  # "2^32-1", "1e9"

    rng = r"(-?[\d.e^+-]+) \.\. (-?[\d.e^+-]+)"
    out = {}
    for row in table.splitlines()[2:]:
        if not row.startswith("| `"):
            break
        _, fields, bounds, _ = row.split("|")
        lo, hi = re.search(rng, bounds).groups()
        for key in re.findall(r"`(?:\w+\.)?(\w+)`", fields):
            out[key] = (number(lo), number(hi))
        for key, lo, hi in re.findall(rf"\(`(\w+)`: {rng}\)", bounds):
            out[key] = (number(lo), number(hi))
    return {k: v for k, v in out.items() if k not in ("nj_per_byte", "nj_per_frame", "task_us")}


def doc_defaults(example):
    """{(table, field): value} the example's comments give as defaults: a
    field whose comment says "(the default)" has its example value, one
    that says "default N" (or "default: N") has N."""
    import re
    import tomllib

    out, table, key, value, comment = {}, None, None, None, ""

    def done():
        if key is None:
            return
        if "the default" in " ".join(comment.split()):
            out[table, key] = value
        else:
            m = re.search(r"default:? (-?\d+(?:\.\d+)?)\b", comment)
            if m:
                out[table, key] = float(m[1]) if "." in m[1] else int(m[1])

    for line in example.splitlines():
        head = re.match(r"^\[+(\w+)", line)
        item = re.match(r"^(\w+) = ([^#]*?)\s*(#.*)?$", line)
        if line.startswith(" ") and key is not None:
            comment += " " + line.strip().lstrip("#")
            continue
        done()
        key = None
        if head:
            table = head[1]
        elif item and not item[2].startswith(("{", "[")):
            key, comment = item[1], item[3] or ""
            value = tomllib.loads(f"v = {item[2]}")["v"]
    done()
    return out
