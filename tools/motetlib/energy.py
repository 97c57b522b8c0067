# SPDX-License-Identifier: MIT
"""The energy model of a device: processors, the bus wire and the radio.

What `motet plan` (tools/motetlib/planner.py) charges a placement with. A
processor is described by the quantities of the CoMOS paper's appendix:

    mhz            core clock
    cpi            average clock cycles per instruction: the instruction
                   throughput N (MIPS) is mhz / cpi
    active_mw      power while running (P_A); or, instead, nj_per_instruction,
                   the energy per instruction (1/M, M in MIPJ): active_mw =
                   nj_per_instruction * N
    idle_mw        power with the clock running and nothing to do (P_I: the
                   core halted or spinning, ready at once)
    standby_mw     power with the clock stopped (P_S), woken by an interrupt
    transition_us  time to go to standby and wake up again (T_W)
    transition_uj  energy of that round trip (E_W = P_W * T_W)
    ram_bytes      RAM the application's tasks may use (the kernel's and the
                   firmware's own share left out)

Derived: MIPS N, MIPJ M = N / P_A (million instructions per joule) and the
breakeven time T_be = (E_W - P_S * T_W) / (P_I - P_S), the idle time above
which standby saves energy.

Built-in kinds (PROCESSORS, each figure's source in SOURCES): "native" (the
native port's stand-in for an ARM7-class compute module), "arm7" and
"msp430" (the paper's compute and sensing modules), "cortex-m3" and
"atmega128" (the emulated ports). A device file may change any figure of a
kind, or add a kind, with a [processor.NAME] table (NAME an existing kind:
the figures not given are kept; a new NAME: every figure is required), and
a module may change figures of its own processor only:

    [processor.msp430]
    standby_mw = 0.02

    [[module]]
    id = 2
    processor = "msp430"                      # or a table:
    processor = { kind = "msp430", ram_bytes = 8192 }

A module's `cpu_mhz`, when its table gives one, is its clock; active and
idle power then scale with clock / mhz of the kind (dynamic power at a fixed
supply voltage). Without `processor` a module is of the kind its port kind
implies (DEFAULT_FOR_PORT).

The bus wire ([bus] nj_per_byte, nj_per_frame: the bus logic's energy per
byte and per frame, the modules' own CPU cost of a frame being their
bus_cycles_per_frame/byte at their active power) and the radio ([radio]
nj_per_byte: energy per byte sent) complete the model.

Every figure must be finite and within LIMITS; an error names the file and
the field.
"""

from __future__ import annotations

import dataclasses
import math

from . import fields


class EnergyError(ValueError):
    """A bad figure of the energy model; the message names file and field."""


@dataclasses.dataclass(frozen=True)
class Processor:
    name: str
    mhz: float
    cpi: float
    active_mw: float
    idle_mw: float
    standby_mw: float
    transition_us: float
    transition_uj: float
    ram_bytes: int

    @property
    def mips(self) -> float:
        """Instruction throughput N, million instructions per second."""
        return self.mhz / self.cpi

    @property
    def mipj(self) -> float:
        """Energy throughput M, million instructions per joule."""
        return self.mips * 1000.0 / self.active_mw if self.active_mw else math.inf

    @property
    def breakeven_s(self) -> float:
        """T_be: idle time above which going to standby saves energy."""
        gap_mw = self.idle_mw - self.standby_mw
        if gap_mw <= 0:
            return math.inf
        return max(0.0, (self.transition_uj * 1e-6 - self.standby_mw * 1e-3 *
                         self.transition_us * 1e-6) / (gap_mw * 1e-3))

    def standby_uj(self, rest_us: float, wakes: bool = True) -> float | None:
        """Energy of resting `rest_us` in standby. With a wake-up (the module
        has work) the appendix's charge: E_W for the round trip and P_S for
        the rest of the time, which is what makes T_be the break-even point;
        None when the round trip does not fit in `rest_us`."""
        if not wakes:
            return self.standby_mw * rest_us * 1e-3
        if rest_us < self.transition_us:
            return None
        return self.standby_mw * (rest_us - self.transition_us) * 1e-3 + self.transition_uj

    def at_clock(self, mhz: float) -> Processor:
        """The same processor clocked at `mhz`: active and idle power scale."""
        if mhz == self.mhz:
            return self
        k = mhz / self.mhz
        return dataclasses.replace(self, mhz=mhz, active_mw=self.active_mw * k,
                                   idle_mw=self.idle_mw * k)


# Datasheet-class figures. Each is a typical value of the part's class at
# the stated clock and supply, rounded; where a device file of this
# repository already states a board figure (devices/ssl-device.toml:
# 100 mW / 9 mW active, 2 ms / 6 us wake-up) the same figure is used so
# that the planner and the simulated device charge alike.
PROCESSORS = {
    "arm7": Processor("arm7", mhz=60, cpi=1.9, active_mw=100.0, idle_mw=35.0, standby_mw=1.0,
                      transition_us=2000, transition_uj=100.0, ram_bytes=32768),
    "native": Processor("native", mhz=60, cpi=1.9, active_mw=100.0, idle_mw=35.0,
                        standby_mw=1.0, transition_us=2000, transition_uj=100.0,
                        ram_bytes=28672),
    "msp430": Processor("msp430", mhz=6, cpi=2.5, active_mw=9.0, idle_mw=1.8, standby_mw=0.02,
                        transition_us=6, transition_uj=0.05, ram_bytes=10240),
    "cortex-m3": Processor("cortex-m3", mhz=48, cpi=1.25, active_mw=80.0, idle_mw=30.0,
                           standby_mw=0.08, transition_us=6, transition_uj=0.5,
                           ram_bytes=65536),
    "atmega128": Processor("atmega128", mhz=8, cpi=1.1, active_mw=33.0, idle_mw=15.0,
                           standby_mw=0.03, transition_us=130, transition_uj=2.0,
                           ram_bytes=4096),
}

SOURCES = {
    "arm7": "ARM7TDMI microcontroller class (the paper's OKI ML67Q5003 compute module, "
            "60 MHz, 3.3 V): about 30 mA running (100 mW, the board figure of "
            "devices/ssl-device.toml), a third of that with the core clock halted, about "
            "0.3 mA in stop mode with the RTC running; restarting the oscillator and the "
            "PLL takes about 2 ms at about 50 mW (100 uJ); CPI 1.9 from the ARM7TDMI's "
            "3-stage pipeline (loads 3 cycles, taken branches 3)",
    "native": "the native port's stand-in for an ARM7-class compute module: the arm7 "
              "figures, with the 28 KB heap of the native SSL build "
              "(apps/ssl/ssl_kernel_config.h) as its RAM",
    "msp430": "MSP430F1611 datasheet class (the paper's sensing modules, 6 MHz, 3 V): "
              "about 500 uA per MHz active (9 mW, the board figure of "
              "devices/ssl-device.toml), LPM0 (CPU off, clocks on) about a fifth of that, "
              "LPM3 a few uA (20 uW, as the board figure), wake-up from LPM3 within 6 us; "
              "10 KB of RAM; CPI 2.5 from the instruction timings (register operations 1 "
              "cycle, memory operands 3 to 6)",
    "cortex-m3": "Cortex-M3 microcontroller class (STM32F103-like at 48 MHz, 3.3 V): about "
                 "24 mA running, 9 mA in sleep mode, about 25 uA in stop mode, wake-up "
                 "from stop in about 6 us; CPI 1.25 from the instruction timings (most "
                 "Thumb-2 instructions 1 cycle, loads 2, taken branches 2 to 4: a pipeline "
                 "refill), not from the DMIPS/MHz rating, which counts Dhrystones, not "
                 "instructions",
    "atmega128": "ATmega128 datasheet class (8 MHz, 3.3 V): about 10 mA active, 4.5 mA "
                 "idle, about 10 uA in power-save with the 32 kHz timer running, wake-up "
                 "after a 1K-cycle oscillator start (130 us); 4 KB of internal SRAM; "
                 "CPI 1.1 (most instructions single-cycle)",
}

# The processor kind of a module that does not name one, by port kind.
DEFAULT_FOR_PORT = {"native": "native", "cortex-m": "cortex-m3", "avr": "atmega128"}

# The bus wire and the radio, defaults and sources.
BUS_NJ_PER_BYTE = 0.6
BUS_NJ_PER_FRAME = 10.0
BUS_SOURCE = ("a CPLD of the CoolRunner-II class driving an 8-bit parallel bus at 8 MHz, "
              "about 5 mW while transferring: 0.6 nJ per byte; arbitration and the 10-byte "
              "header's handshake about 10 nJ per frame")
RADIO_NJ_PER_BYTE = 1700.0
RADIO_SOURCE = ("an IEEE 802.15.4 transceiver of the CC2420 class: 250 kbit/s (32 us per "
                "byte) at about 52 mW transmitting (17.4 mA at 3 V): 1.7 uJ per byte")

FIELDS = ("mhz", "cpi", "active_mw", "nj_per_instruction", "idle_mw", "standby_mw",
          "transition_us", "transition_uj", "ram_bytes")

# Physical bounds (lowest, highest, unit).
LIMITS = {
    "mhz": (0.01, 10_000, "MHz"),
    "cpi": (0.1, 100, "cycles per instruction"),
    "active_mw": (0, 100_000, "mW"),
    "nj_per_instruction": (0, 1_000_000, "nJ"),
    "idle_mw": (0, 100_000, "mW"),
    "standby_mw": (0, 100_000, "mW"),
    "transition_us": (0, 10_000_000, "us"),
    "transition_uj": (0, 1_000_000_000, "uJ"),
    "ram_bytes": (0, 2**32, "bytes"),
    "nj_per_byte": (0, 1_000_000_000, "nJ"),
    "nj_per_frame": (0, 1_000_000_000, "nJ"),
}


def number(table, key, where, default=None):
    """A figure of `table` within LIMITS[key] (default when absent)."""
    if key not in table:
        return default
    value = table[key]
    integral = key == "ram_bytes"
    ok = isinstance(value, int) if integral else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok:
        kind = "an integer" if integral else "a number"
        raise EnergyError(f"{where}: '{key}' must be {kind}, got {value!r}")
    return fields.bounded(value, key, where, *LIMITS[key], EnergyError)


def _unknown(table, known, where):
    fields.unknown(table, known, where, EnergyError)


def override(base: Processor | None, name: str, table: dict, where: str) -> Processor:
    """`base` with the figures `table` gives; every figure is required
    when there is no base (a new kind)."""
    _unknown(table, FIELDS, where)
    if "active_mw" in table and "nj_per_instruction" in table:
        raise EnergyError(f"{where}: give 'active_mw' or 'nj_per_instruction', not both")
    if base is None:
        need = [f for f in FIELDS if f not in table and f not in ("active_mw",
                                                                  "nj_per_instruction")]
        if not ("active_mw" in table or "nj_per_instruction" in table):
            need.append("active_mw (or nj_per_instruction)")
        if need:
            raise EnergyError(f"{where}: '{name}' is not a built-in processor kind "
                              f"({', '.join(PROCESSORS)}), so it needs {', '.join(need)}")
        base = Processor(name, 1, 1, 0, 0, 0, 0, 0, 0)
    values = {f: number(table, f, where, getattr(base, f)) for f in FIELDS
              if f != "nj_per_instruction"}
    p = dataclasses.replace(base, name=name, **values)
    nj = number(table, "nj_per_instruction", where)
    if nj is not None:
        p = dataclasses.replace(p, active_mw=nj * p.mips)
    _consistent(p, where)
    return p


def _consistent(p: Processor, where: str):
    """Figures each within LIMITS can still not be one processor's: the
    planner would then see standby cost more than idling (never chosen,
    T_be infinite) or a round trip cheaper than staying in standby (a
    free discount for waking)."""
    for low, high in (("standby_mw", "idle_mw"), ("idle_mw", "active_mw")):
        a, b = getattr(p, low), getattr(p, high)
        if a > b:
            raise EnergyError(f"{where}: '{low}' = {fields.show(a)} is above '{high}' = "
                              f"{fields.show(b)}")
    floor_uj = p.standby_mw * p.transition_us * 1e-3
    if p.transition_uj < floor_uj:
        raise EnergyError(f"{where}: 'transition_uj' = {fields.show(p.transition_uj)} is below "
                          f"standby_mw x transition_us = {fields.show(floor_uj)} uJ")


def catalogue(tables: dict, where: str) -> dict[str, Processor]:
    """The built-in kinds with a device file's [processor.NAME] tables applied."""
    out = dict(PROCESSORS)
    if not isinstance(tables, dict):
        raise EnergyError(f"{where}: [processor] must hold tables [processor.NAME]")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise EnergyError(f"{where} [processor.{name}]: must be a table, got {table!r}")
        out[name] = override(out.get(name), name, table, f"{where} [processor.{name}]")
    return out


def module_processor(kinds: dict[str, Processor], value, port_kind: str,
                     mhz: float | None, where: str) -> Processor:
    """A module's processor from its `processor` field (None, a kind name or
    a table with `kind` and figures to change) and its own clock."""
    table = {}
    if isinstance(value, dict):
        table = dict(value)
        value = table.pop("kind", None)
        if value is None:
            raise EnergyError(f"{where}.processor: missing 'kind'")
    if value is None:
        value = DEFAULT_FOR_PORT.get(port_kind, "native")
    if not isinstance(value, str):
        raise EnergyError(f"{where}: 'processor' must be a kind name or a table, got {value!r}")
    if value not in kinds:
        raise EnergyError(f"{where}: processor {value!r} is not a known kind "
                          f"({', '.join(kinds)}; add one with [processor.{value}])")
    p = kinds[value]
    if table:
        p = override(p, value, table, f"{where}.processor")
    return p.at_clock(mhz) if mhz is not None else p
