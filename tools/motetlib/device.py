# SPDX-License-Identifier: MIT
"""Device descriptions: which modules a device has and how its bus behaves.

A device file (TOML, e.g. devices/two-module.toml) describes the hardware a
`motet run` simulates. Its format, every field with its default, the rules
between fields and the bounds of every number (LIMITS below) are in
docs/device-format.md; parse() and load() check all of it, with the file and
field named in the error, before any process starts. What is valid but
partly ignored is named in Device.warnings, which load() prints.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import tomllib
from pathlib import Path

from . import energy, fields
from .textfile import toml_text

KINDS = ("native", "cortex-m", "avr")
RUNNABLE_KINDS = ("native", "avr", "cortex-m")  # how each runs: module_kinds.py
# The clock of an AVR module is its image's: the AVR build's F_CPU
# (ports/avr/port.cmake).
FIXED_CPU_MHZ = {"avr": 8}
# A Cortex-M module's core runs under QEMU -icount shift=n: one instruction
# per 2^n ns of virtual time, so its clock is 1000 / 2^n MHz at one
# instruction a clock (its timers keep mps2-an385's 25 MHz either way). The
# default, shift 0, is the fastest to simulate; a device file modelling a
# chip states the clock (devices/ssl-mixed.toml).
CORTEX_M_MHZ = 1000.0
MAX_ICOUNT_SHIFT = 10
DEFAULT_CPU_MHZ = {"avr": 8.0, "cortex-m": CORTEX_M_MHZ}
# Simulated microseconds charged for a handler run on a native module when a
# device file says nothing: never zero, so that preemption and latency show
# (the native port does not measure code; an emulated module runs its own).
DEFAULT_HANDLER_US = 20
MAX_MODULES = 16  # MOTET_BUS_MODULES: ids 0 .. 15


class DeviceError(Exception):
    """A device description that cannot be used; the message says where."""


@dataclasses.dataclass(frozen=True)
class Power:
    active_mw: float = 10.0
    sleep_mw: float = 0.1
    off_uw: float = 1.0
    wake_us: float = 500.0


@dataclasses.dataclass(frozen=True)
class Module:
    id: int
    name: str
    kind: str
    program: str
    args: tuple[str, ...]
    cpu_mhz: float
    bus_cycles_per_frame: float
    bus_cycles_per_byte: float
    ppm: float | None  # None: drawn from the seed
    stamp_hz: int
    counter_start: int
    power: Power
    sensors: tuple[str, ...]
    processor: energy.Processor | None = None  # its energy model (motet plan)
    handler_us: float = DEFAULT_HANDLER_US
    task_us: tuple[tuple[str, float], ...] = ()
    board: str = ""  # the program serving an emulated module's sensors; "": none

    @property
    def frame_ns(self) -> int:
        """CPU time per frame sent or received, ns."""
        return round(self.bus_cycles_per_frame * 1000 / self.cpu_mhz)

    @property
    def byte_ns(self) -> int:
        """CPU time per byte copied to or from the bus, ns."""
        return round(self.bus_cycles_per_byte * 1000 / self.cpu_mhz)


@dataclasses.dataclass(frozen=True)
class Bus:
    bandwidth: int = 8_000_000
    slot_us: float = 10.0
    ack_timeout_us: float = 20_000.0
    nj_per_byte: float = energy.BUS_NJ_PER_BYTE    # the wire's energy (motet plan)
    nj_per_frame: float = energy.BUS_NJ_PER_FRAME


@dataclasses.dataclass(frozen=True)
class Device:
    name: str
    path: str
    modules: tuple[Module, ...]
    bus: Bus
    loader: int
    max_ppm: float
    radio_nj_per_byte: float = energy.RADIO_NJ_PER_BYTE  # energy per byte sent
    warnings: tuple[str, ...] = ()  # what the file says that some modules ignore

    def module(self, mid: int) -> Module:
        for m in self.modules:
            if m.id == mid:
                return m
        raise KeyError(mid)

    def clock_ppm(self, seed: int) -> dict[int, float]:
        """Each module's frequency error: its own, or drawn from the seed
        uniformly within +/-max_ppm (the same seed, the same clocks)."""
        rng = random.Random(f"clocks/{seed}")
        out = {}
        for m in self.modules:
            drawn = rng.uniform(-self.max_ppm, self.max_ppm)
            out[m.id] = m.ppm if m.ppm is not None else round(drawn, 3)
        return out


def _get(table, key, types, where, default=None, required=False):
    if key not in table:
        if required:
            raise DeviceError(f"{where}: missing '{key}'")
        return default
    value = table[key]
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise DeviceError(f"{where}: '{key}' must be {_type_name(types)}, not a boolean")
    if not isinstance(value, types):
        raise DeviceError(f"{where}: '{key}' must be {_type_name(types)}, got {value!r}")
    return value


def _type_name(types):
    names = {int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "a table", bool: "true or false"}
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(names.get(t, t.__name__) for t in types)


# Physical bounds of every number (key: (lowest, highest, unit));
# docs/device-format.md lists them too.
LIMITS = {
    "cpu_mhz": (0.01, 10_000, "MHz"),
    "bus_cycles_per_frame": (0, 1_000_000, "cycles"),
    "bus_cycles_per_byte": (0, 10_000, "cycles"),
    "ppm": (-500, 500, "ppm"),
    "max_ppm": (0, 500, "ppm"),
    "hz": (1, 1_000_000, "Hz"),
    "start": (0, 2**32 - 1, ""),
    "active_mw": (0, 100_000, "mW"),
    "sleep_mw": (0, 100_000, "mW"),
    "off_uw": (0, 1_000_000, "uW"),
    "wake_us": (0, 10_000_000, "us"),
    "handler_us": (0, 10_000_000, "us"),
    "bandwidth": (1000, 10_000_000_000, "bytes/s"),
    "slot_us": (0.001, 1_000_000, "us"),
    "ack_timeout_us": (1, 60_000_000, "us"),
}


def _number(table, key, where, default, types=None, limits=None):
    """A number field within LIMITS[limits or key]: finite (TOML has inf
    and nan)."""
    types = types or (int, float)
    value = _get(table, key, types, where, default)
    if value is None:
        return None
    return fields.bounded(value, key, where, *LIMITS[limits or key], DeviceError)


def _unknown(table, known, where):
    fields.unknown(table, known, where, DeviceError)


def _strings(table, key, where):
    items = _get(table, key, list, where, [])
    for item in items:
        if not isinstance(item, str):
            raise DeviceError(f"{where}: '{key}' must be a list of strings, got {item!r}")
    return tuple(items)


def icount_shift(cpu_mhz: float) -> int | None:
    """The QEMU -icount shift that runs a Cortex-M core at `cpu_mhz`, or
    None if no shift does (docs/device-format.md, "Kinds")."""
    for n in range(MAX_ICOUNT_SHIFT + 1):
        if cpu_mhz == CORTEX_M_MHZ / (1 << n):
            return n
    return None


def _power(table, where):
    _unknown(table, ("active_mw", "sleep_mw", "off_uw", "wake_us"), where)
    d = Power()
    return Power(active_mw=_number(table, "active_mw", where, d.active_mw),
                 sleep_mw=_number(table, "sleep_mw", where, d.sleep_mw),
                 off_uw=_number(table, "off_uw", where, d.off_uw),
                 wake_us=_number(table, "wake_us", where, d.wake_us))


def _task_us(table, where):
    """[device] task_us: {task name: microseconds}, each within LIMITS."""
    costs = _get(table, "task_us", dict, where, {})
    return tuple((name, _number(costs, name, f"{where} task_us", 0, limits="handler_us"))
                 for name in sorted(costs))


def _native_costs_ignored(modules, dev_table, where) -> tuple[str, ...]:
    """[device] handler_us and task_us are charged on native modules only:
    an emulated one runs the code and is timed by it. With no native module
    such an entry changes nothing, a mistake (DeviceError), as a module's
    own handler_us on an emulated module is; with some, it is theirs, and
    each emulated module is named once per entry in a warning."""
    emulated = [m for m in modules if m.kind != "native"]
    given = [key for key in ("handler_us", "task_us") if dev_table.get(key, None) not in (None, {})]
    if not given or not emulated:
        return ()
    names = ", ".join(f"module {m.id} {m.name!r} ({m.kind})" for m in emulated)
    why = "emulated modules run the code and are timed by it"
    if len(emulated) == len(modules):
        raise DeviceError(f"{where}: '{given[0]}' is charged on native modules only, and this "
                          f"device has none ({names}): {why}")
    instead = {"handler_us": "; set it in the native modules' [[module]] tables instead",
               "task_us": ""}
    return tuple(f"{where}: '{key}' does not apply to module {m.id} {m.name!r} ({m.kind}): "
                 f"{why}; it is charged on the native modules only{instead[key]}"
                 for key in given for m in emulated)


def _module(table, where, device_program, device_args, processors,
            device_handler_us=DEFAULT_HANDLER_US, task_us=(), device_board=""):
    _unknown(table, ("id", "name", "kind", "program", "args", "cpu_mhz", "bus_cycles_per_frame",
                     "bus_cycles_per_byte", "clock", "power", "sensors", "processor",
                     "handler_us", "board"), where)
    mid = _get(table, "id", int, where, required=True)
    if not 0 <= mid < MAX_MODULES:
        raise DeviceError(f"{where}: id {mid} is not a bus address 0..{MAX_MODULES - 1}")
    kind = _get(table, "kind", str, where, "native")
    if kind not in KINDS:
        raise DeviceError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    fixed = FIXED_CPU_MHZ.get(kind)
    if fixed is not None and table.get("cpu_mhz", fixed) != fixed:
        article = "an" if kind[0] in "aeiou" else "a"
        raise DeviceError(f"{where}: {article} {kind} module runs at {fixed} MHz (the clock its "
                          f"image is built for), not {table['cpu_mhz']!r}")
    cpu_mhz = _number(table, "cpu_mhz", where, DEFAULT_CPU_MHZ.get(kind, 8.0))
    if kind == "cortex-m" and icount_shift(cpu_mhz) is None:
        clocks = ", ".join(f"{CORTEX_M_MHZ / (1 << n):g}" for n in range(MAX_ICOUNT_SHIFT + 1))
        raise DeviceError(f"{where}: a cortex-m module's cpu_mhz is 1000 / 2^n (QEMU -icount "
                          f"shift=n, one instruction per 2^n ns): one of {clocks}; not "
                          f"{table['cpu_mhz']!r}")
    if kind != "native" and "handler_us" in table:
        raise DeviceError(f"{where}: 'handler_us' on a {kind} module: an emulated module runs "
                          "the code and is timed by it (handler_us is the cost charged on a "
                          "native module)")
    board = _get(table, "board", str, where, device_board)
    if kind != "native" and "args" in table and not (kind == "avr" and board):
        # An image has its descriptions built in and takes no options.
        raise DeviceError(f"{where}: 'args' on a {kind} module that has no board program: no "
                          "program of it takes them (its image has its descriptions built in; "
                          "an avr module's board program takes them)")
    sensors = _strings(table, "sensors", where)
    if kind == "cortex-m" and sensors:
        raise DeviceError(f"{where}: a cortex-m module's sensors cannot be served by a board "
                          f"program yet (only avr modules have the board interface), so it "
                          f"cannot have sensors {', '.join(sensors)}")
    if kind == "avr" and sensors and not board:
        raise DeviceError(f"{where}: an avr module's sensors ({', '.join(sensors)}) are served "
                          "by a board program, and it has none (set [device] board or the "
                          "module's; docs/bus.md, \"Sensors of emulated modules\")")
    program = _get(table, "program", str, where, device_program)
    if not program:
        raise DeviceError(f"{where}: no program (set [device] program or the module's)")
    clock = _get(table, "clock", dict, where, {})
    _unknown(clock, ("ppm", "hz", "start"), f"{where}.clock")
    ppm = _number(clock, "ppm", f"{where}.clock", None)
    hz = _get(clock, "hz", int, f"{where}.clock", 1_000_000)
    if hz > 1_000_000:
        raise DeviceError(f"{where}.clock: hz {hz} is finer than the 1 MHz counter")
    hz = _number(clock, "hz", f"{where}.clock", 1_000_000, int)
    start = _number(clock, "start", f"{where}.clock", 0, int)
    try:
        # An emulated core's clock is its own (DEFAULT_CPU_MHZ), a native
        # module's its processor kind's unless it gives one.
        processor = energy.module_processor(
            processors, table.get("processor"), kind,
            cpu_mhz if kind in DEFAULT_CPU_MHZ else _number(table, "cpu_mhz", where, None),
            where)
    except energy.EnergyError as e:
        raise DeviceError(str(e)) from None
    # One set of figures for the hub and the planner: a module without its
    # own `power` is charged its processor's.
    power = (_power(_get(table, "power", dict, where), f"{where}.power") if "power" in table else
             Power(active_mw=processor.active_mw, sleep_mw=processor.standby_mw,
                   wake_us=processor.transition_us))
    return Module(
        id=mid, name=_get(table, "name", str, where, f"m{mid}"), kind=kind, program=program,
        args=device_args + _strings(table, "args", where),
        cpu_mhz=cpu_mhz,
        bus_cycles_per_frame=_number(table, "bus_cycles_per_frame", where, 0),
        bus_cycles_per_byte=_number(table, "bus_cycles_per_byte", where, 0),
        ppm=ppm, stamp_hz=hz, counter_start=start,
        power=power,
        sensors=sensors, processor=processor,
        handler_us=_number(table, "handler_us", where, device_handler_us), task_us=task_us,
        board=board if kind == "avr" else "")


def _bus(table, where):
    _unknown(table, ("bandwidth", "slot_us", "ack_timeout_us", "nj_per_byte", "nj_per_frame"),
             where)
    d = Bus()
    try:
        wire = {k: energy.number(table, k, where, getattr(d, k))
                for k in ("nj_per_byte", "nj_per_frame")}
    except energy.EnergyError as e:
        raise DeviceError(str(e)) from None
    return Bus(bandwidth=_number(table, "bandwidth", where, d.bandwidth, int),
               slot_us=_number(table, "slot_us", where, d.slot_us),
               ack_timeout_us=_number(table, "ack_timeout_us", where, d.ack_timeout_us), **wire)


def _radio(table, where):
    _unknown(table, ("nj_per_byte",), where)
    try:
        return energy.number(table, "nj_per_byte", where, energy.RADIO_NJ_PER_BYTE)
    except energy.EnergyError as e:
        raise DeviceError(str(e)) from None


def parse(text: str, path: str = "<device>") -> Device:
    """A validated Device from TOML text."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise DeviceError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise DeviceError(f"{path}: not valid TOML: nested too deeply") from None
    _unknown(doc, ("device", "bus", "module", "processor", "radio"), path)
    try:
        processors = energy.catalogue(_get(doc, "processor", dict, path, {}), path)
    except energy.EnergyError as e:
        raise DeviceError(str(e)) from None
    dev = _get(doc, "device", dict, path, {})
    _unknown(dev, ("name", "program", "args", "loader", "max_ppm", "handler_us", "task_us",
                   "board"), f"{path} [device]")
    handler_us = _number(dev, "handler_us", f"{path} [device]", DEFAULT_HANDLER_US)
    task_us = _task_us(dev, f"{path} [device]")
    program = _get(dev, "program", str, f"{path} [device]", "")
    args = _strings(dev, "args", f"{path} [device]")
    tables = _get(doc, "module", list, path, [])
    if not tables:
        raise DeviceError(f"{path}: no [[module]]")
    board = _get(dev, "board", str, f"{path} [device]", "")
    modules = tuple(_module(t, f"{path} module #{i + 1}", program, args, processors, handler_us,
                            task_us, board)
                    for i, t in enumerate(tables))
    warnings = _native_costs_ignored(modules, dev, f"{path} [device]")
    for key in ("id", "name"):  # a name names the module in every report and trace
        values = [getattr(m, key) for m in modules]
        dup = next((v for v in values if values.count(v) > 1), None)
        if dup is not None:
            raise DeviceError(f"{path}: module {key} {dup!r} is used twice")
    ids = [m.id for m in modules]
    loader = _get(dev, "loader", int, f"{path} [device]", min(ids))
    if loader not in ids:
        raise DeviceError(f"{path} [device]: loader {loader} is not a module of the device")
    max_ppm = _number(dev, "max_ppm", f"{path} [device]", 20)
    return Device(name=_get(dev, "name", str, f"{path} [device]", Path(path).stem), path=path,
                  modules=tuple(sorted(modules, key=lambda m: m.id)),
                  bus=_bus(_get(doc, "bus", dict, path, {}), f"{path} [bus]"),
                  loader=loader, max_ppm=max_ppm,
                  radio_nj_per_byte=_radio(_get(doc, "radio", dict, path, {}), f"{path} [radio]"),
                  warnings=warnings)


def load(path, warn=None) -> Device:
    """The validated Device of the file at `path`, each of its warnings
    written by `warn` (default: a line on stderr)."""
    try:
        text = toml_text(path, "a device file")
    except ValueError as e:
        raise DeviceError(str(e)) from None
    dev = parse(text, str(path))
    for line in dev.warnings:
        (warn or _stderr)(f"warning: {line}")
    return dev


def _stderr(line):
    print(line, file=sys.stderr)


def exact_clocks(dev: Device) -> Device:
    """The same device with every clock exact and starting at 0, so that
    times printed by different modules can be compared directly."""
    mods = tuple(dataclasses.replace(m, ppm=0.0, counter_start=0) for m in dev.modules)
    return dataclasses.replace(dev, modules=mods)
