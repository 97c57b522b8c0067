# SPDX-License-Identifier: MIT
"""`motet demo`: sound localisation and fire detection on a simulated
five-module device (apps/ssl, devices/ssl-device.toml; `--device
devices/ssl-mixed.toml` runs it on a Cortex-M3 and four ATmega128s).

Builds the module program, runs the device in simulated time with a
scenario (default apps/ssl/scenarios/demo.toml: a few talkers and noise
bursts round the array, one fire) through the same hub as `motet run`, and
prints what a person wants to know: each direction found against the true
one, each fire alert with its latency, and per module how busy it was, how
long it slept, the messages it sent and handled, its bus frames and its
energy. It writes the modules' event logs as one Chrome trace
(out/ssl-demo-trace.json: a process per module, a track per task) that
opens in https://ui.perfetto.dev.

    ./motet demo [--device FILE] [--scenario FILE] [--out DIR]
    python3 -m motetlib.ssl_demo [--device FILE] [--scenario FILE] [--build-dir DIR] [--out DIR]

A scenario is checked once, by the module program's own reader
(`ssl_device --check`, and the emulated modules' board program's,
`ssl_board --check`), before the five modules start: a file that is
missing or wrong gets one message naming its line, not five.

What the radio task prints (apps/ssl/tasks_radio.c) is the source of the
detections and alerts; the hub's report gives busy, sleep, frames and
energy; the event logs give message counts and whether an FFT was running
on the temperature module when a fire was sampled.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from . import (build, cmdline, device as devmod, eventlog, module_kinds as kinds, run_device,
               ssl_replan, ssl_scenario)

ROOT = build.ROOT
DEVICE = ROOT / "devices" / "ssl-device.toml"
SCENARIO = ROOT / "apps" / "ssl" / "scenarios" / "demo.toml"
DESCRIPTION = ROOT / "apps" / "ssl" / "ssl_device.toml"
OUT_DIR = ROOT / "out"
TRACE_NAME = "ssl-demo-trace.json"
TARGET = "ssl_device"

BLOCK_PERIOD_S = 0.25  # the microphones' period in ssl_device.toml
BLOCK_SAMPLES = 512    # SSL_N
FIRST_APP_PID = 0x10  # MT_PID_FIRST_APP: pids follow the description's order
APP_PORT_0 = 8        # PORT_0: input ports below it are system ports
MULTICAST_PID = 0xF0  # MT_PID_MULTICAST

MODULE_LINE = re.compile(r"^m(\d+)\| \[\s*(\d+\.\d{3}) ms\] radio: (.*)$")
DETECTION = re.compile(r"ssl block=(\d+) t_ms=([\d.]+) angle=([\d.]+) true=([\d.]+|-) "
                       r"latency_ms=([\d.]+)")
ALERT = re.compile(r"fire alert sample_ms=([\d.]+) latency_us=(\d+) temp=(-?[\d.]+)")


def angle_error(a, b):
    return abs((a - b + 180.0) % 360.0 - 180.0)


def task_names(description=DESCRIPTION):
    """[(pid, name, module)] of the description's tasks, in its order."""
    doc = tomllib.loads(Path(description).read_text())
    return [(FIRST_APP_PID + i, t["name"], t.get("module", 0))
            for i, t in enumerate(doc["task"])]


def parse_radio(lines):
    """(detections, alerts) from the device's output lines: detections as
    dicts with t (capture end, s), angle, truth (None: no single source),
    latency (s); alerts with t (sampling instant, s), latency (s), temp."""
    found, alerts = [], []
    for line in lines:
        m = MODULE_LINE.match(line)
        if not m:
            continue
        d = DETECTION.search(m.group(3))
        if d:
            truth = None if d.group(4) == "-" else float(d.group(4))
            found.append({"block": int(d.group(1)), "t": float(d.group(2)) / 1e3,
                          "angle": float(d.group(3)), "truth": truth,
                          "latency": float(d.group(5)) / 1e3})
        a = ALERT.search(m.group(3))
        if a:
            alerts.append({"t": float(a.group(1)) / 1e3, "latency": int(a.group(2)) / 1e6,
                           "temp": float(a.group(3))})
    return found, alerts


def handler_at(records, t_us, pids):
    """(pid, start, end) of a handler of one of `pids` that was running at
    t_us, from START/END records; None if none was."""
    open_at = {}
    for r in records:
        if not isinstance(r, eventlog.Event) or r.pid not in pids:
            continue
        if r.type == "START":
            open_at[r.pid] = r.time_us
        elif r.type == "END" and r.pid in open_at:
            start = open_at.pop(r.pid)
            if start <= t_us < r.time_us:
                return r.pid, start, r.time_us
    return None


def message_counts(records):
    """(messages the module's tasks sent, messages its tasks handled on
    their application ports). A message to a local task is a SEND record; one
    to another module (or a multicast) is a frame, logged as BUS when it
    goes out (pid: its destination). Timer expiries and INIT are not
    counted."""
    def app(pid):
        return FIRST_APP_PID <= pid < 0xF0

    sent = handled = 0
    for r in records:
        if not isinstance(r, eventlog.Event):
            continue
        if r.type == "SEND" and app(r.pid):
            sent += 1
        elif r.type == "BUS" and not r.arg & 0x8000 and (app(r.pid) or r.pid == MULTICAST_PID):
            sent += 1
        elif r.type == "START" and app(r.pid) and r.arg >= APP_PORT_0:
            handled += 1
    return sent, handled


# ---- the printed report ------------------------------------------------------

def scenario_lines(scenario):
    doc = ssl_scenario.read(scenario)
    out = [f"scenario {rel(scenario)}: {doc.get('duration', 10):g} s, seed "
           f"{doc.get('seed', 1)}, noise {doc.get('noise', {}).get('snr_db', 20):g} dB below "
           f"the reference level"]
    for s in doc.get("source", []):
        start = s.get("start", 0)
        out.append(f"  {s.get('kind', 'speech'):<6} at {s.get('angle', 0):5.1f}\u00b0, "
                   f"{start:g} - {start + s.get('duration', 1):g} s")
    for f in doc.get("fire", []):
        out.append(f"  fire   from {f.get('time', 0):g} s (+{f.get('rise', 20):g} C, "
                   f"tau {f.get('tau', 10):g} s)")
    return out


def rel(path):
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def heard_blocks(scenario):
    """Capture-window ends (s) of the blocks that lie wholly inside one
    source's sound: the blocks there is something to locate in."""
    doc = ssl_scenario.read(scenario)
    block = BLOCK_SAMPLES / doc.get("array", {}).get("sample_rate", 16000)
    ends = set()
    for s in doc.get("source", []):
        start = s.get("start", 0)
        stop = start + s.get("duration", 1)
        k = math.ceil((start + block) / BLOCK_PERIOD_S - 1e-9)
        while k * BLOCK_PERIOD_S <= stop + 1e-9:
            ends.add(round(k * BLOCK_PERIOD_S, 6))
            k += 1
    return ends


def detection_lines(found, heard):
    out = [f"Directions found ({len(found)} blocks; angles counter-clockwise from +x):"]
    errors = []
    for d in found:
        if d["truth"] is None:
            out.append(f"  t={d['t']:7.3f} s  direction {d['angle']:5.1f}\u00b0  "
                       f"(no single source was sounding)")
            continue
        err = angle_error(d["angle"], d["truth"])
        errors.append(err)
        out.append(f"  t={d['t']:7.3f} s  direction {d['angle']:5.1f}\u00b0  (true "
                   f"{d['truth']:5.1f}\u00b0, error {err:.1f}\u00b0)  on the radio "
                   f"{d['latency'] * 1e3:.0f} ms later")
    if not found:
        out.append("  none")
    if errors:
        rms = math.sqrt(sum(e * e for e in errors) / len(errors))
        out.append(f"  error: RMS {rms:.2f}\u00b0, largest {max(errors):.1f}\u00b0")
    located = sum(1 for d in found if round(d["t"], 6) in heard)
    out.append(f"  located {located} of the {len(heard)} blocks lying wholly within a source; "
               f"{len(found) - len(errors)} detections while no single source was sounding")
    return out


def alert_lines(alerts, fft_checks):
    out = [f"Fire alerts ({len(alerts)}):"]
    for a, fft in zip(alerts, fft_checks):
        out.append(f"  fire alert at t={a['t']:.3f} s, latency {a['latency'] * 1e3:.2f} ms "
                   f"(sampling to radio; {a['temp']:.2f} C)")
        if fft:
            module, name, start, end = fft
            into, length = a["t"] * 1e3 - start / 1e3, (end - start) / 1e3
            out.append(f"    m{module} sampled it {into:.0f} ms into {name}'s {length:.0f} ms FFT, "
                       f"which the FBD chain preempted")
    if not alerts:
        out.append("  none")
    return out


def module_lines(dev, report, counts):
    end = report["end_s"] or 1.0
    head = (f"  {'module':<16} {'cpu':<7} {'busy':>7} {'asleep':>7} {'msgs out':>9} "
            f"{'msgs in':>8} {'frames out/in':>13} {'energy':>10}")
    out = ["Modules (busy, asleep: of the simulated time; msgs: sent and handled by its "
           "tasks; frames: bus)", head]
    for spec in dev.modules:
        m = report["modules"][str(spec.id)]
        cpu = module_cpu(spec)
        sent, handled = counts.get(spec.id, ("-", "-"))  # "-": no event log
        frames = f"{m['frames_sent']}/{m['frames_received']}"
        out.append(f"  m{spec.id} {spec.name:<13} {cpu:<7} {100 * m['busy_s'] / end:6.2f}% "
                   f"{100 * m['sleep_s'] / end:6.2f}% {sent:>9} {handled:>8} {frames:>13} "
                   f"{m['energy_mj']:7.1f} mJ")
    b = report["bus"]
    out.append(f"  bus: {b['frames']} frames, {b['bytes']} bytes, "
               f"{100 * b['utilisation']:.2f} % of its time busy, "
               f"{b['retransmissions']} retransmitted")
    return out


# ---- the run -----------------------------------------------------------------

def places(names):
    """{module: [task names]} of the description."""
    out = {}
    for _, name, module in names:
        out.setdefault(module, []).append(name)
    return out


# The processor of an emulated module: its time is the chip's own.
CHIPS = {"avr": "avr", "cortex-m": "cm3"}


def module_cpu(spec):
    """The cost model a native module runs with (its --cpu argument), or
    an emulated module's chip."""
    if spec.kind in CHIPS:
        return CHIPS[spec.kind]
    args = list(spec.args)
    return next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--cpu"), "arm7")


def module_name(spec, where):
    tasks = ", ".join(where.get(spec.id, [])) or "no tasks"
    return f"m{spec.id} {spec.name}: {tasks}"


def device_lines(dev, names):
    where = places(names)
    out = [f"device {rel(dev.path)}, tasks placed by {rel(DESCRIPTION)} (the paper's figure 8):"]
    for spec in dev.modules:
        sensors = ", ".join(spec.sensors) or "no sensors"
        out.append(f"  m{spec.id} {spec.name:<8} {module_cpu(spec):<6} {spec.cpu_mhz:>3g} MHz, "
                   f"{sensors:<25} tasks: {', '.join(where.get(spec.id, [])) or '-'}")
    return out


def write_trace(dev, log_dir, names, path):
    """The modules' event logs as one Chrome trace at `path`; {module:
    records} of the modules that wrote a log."""
    where = places(names)
    by_pid = {pid: name for pid, name, _ in names}
    logs = [(spec, Path(log_dir) / f"m{spec.id}.log") for spec in dev.modules]
    mods = [(spec.id, module_name(spec, where), eventlog.read(log), by_pid)
            for spec, log in logs if log.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(eventlog.to_chrome_device(mods), f)
        f.write("\n")
    return {mid: recs for mid, _, recs, _ in mods}


def check_ffts(alerts, records, names):
    """For each alert, the fft task that was in its FFT on the temperature
    module when the temperature was sampled, or None (none was, or every
    fft task had moved off that module)."""
    temp_module = next(m for _, n, m in names if n == "temp")
    ffts = {pid: n for pid, n, _ in names if n.startswith("fft")}
    out = []
    for a in alerts:
        hit = handler_at(records.get(temp_module, []), round(a["t"] * 1e6), set(ffts))
        out.append((temp_module, ffts[hit[0]], hit[1], hit[2]) if hit else None)
    return out


def scenario_readers(dev, bdir):
    """The programs of the device that read the scenario: the native
    modules' program, the emulated modules' board program."""
    exes = []
    for spec in dev.modules:
        kind = kinds.of(spec)
        if spec.kind == "native":
            exes.append(kind.program(bdir, spec))
        elif spec.board:
            exes.append(kind.board(bdir, spec))
    return list(dict.fromkeys(exes))


def check_scenario(dev, bdir, scenario):
    """What the host's reader (ssl_scenario.read) or the device's programs
    (`ssl_device --check`, `ssl_board --check`) say is wrong with
    `scenario`, or None if it would run."""
    try:
        ssl_scenario.read(scenario)
    except ssl_scenario.ScenarioError as e:
        return str(e)
    for exe in scenario_readers(dev, bdir):
        if not exe.is_file():
            return f"{exe} is not built (`./motet build --target {exe.name}`)"
        try:
            r = subprocess.run([str(exe), "--scenario", str(Path(scenario).resolve()), "--check"],
                               capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return f"{exe.name} --check did not finish reading the scenario within 60 s"
        if r.returncode != 0:
            return (r.stderr.strip() or r.stdout.strip()
                    or f"{exe.name} --check exited with status {r.returncode}")
    return None


# After the scenario's end the last block's direction is on the radio within
# a fraction of this (the native device falls idle sooner and stops there;
# an emulated Cortex-M3 never looks idle: docs/bus.md, "Emulated modules").
LAST_REPORT_S = 1.0


def run_until(scenario):
    """Simulated seconds to run the device for `scenario`."""
    return ssl_scenario.read(scenario).get("duration", 10) + LAST_REPORT_S


def _left_to_run_demo(line):
    """Drops a device file's warning from the loads before run_demo(),
    which loads the file again and prints each warning once, with its
    report."""
    del line


def run_demo(bdir, scenario=SCENARIO, out_dir=OUT_DIR, seed=1, print_=print, device=DEVICE,
             drift=False, profile=ssl_replan.PROFILE):
    """Run the device on `scenario` and print the report; returns (status,
    summary dict) with the detections, alerts and the trace's path. A
    scenario the modules would refuse is reported once, with status 2.
    `drift`: the device's host checks the costs against `profile` while the
    device runs (ssl_replan.Host)."""
    dev = devmod.load(device, warn=print_)
    problem = check_scenario(dev, bdir, scenario)
    if problem:
        print_(f"demo: {problem}")
        print_(f"demo: scenario {scenario} refused, no module started (the format: "
               "apps/ssl/README.md, \"Scenario files\")")
        return 2, None
    names = task_names()
    scenario_arg = ["--scenario", str(Path(scenario).resolve())]
    lines = []
    log_dir = Path(out_dir) / "ssl-demo-logs"
    shutil.rmtree(log_dir, ignore_errors=True)
    host, replan_report = ssl_replan.run(dev, bdir, scenario, scenario_arg,
                                         log_dir if drift else None, lines, profile)
    t0 = time.monotonic()
    status, report = run_device.run(dev, bdir, seed=seed, until=run_until(scenario),
                                    log_dir=log_dir, extra=scenario_arg, host=host,
                                    out=lines.append, progress=False)
    wall = time.monotonic() - t0
    if status != 0 or report is None:
        for line in lines[-40:]:
            print_(line)
        print_(f"demo: the device run failed (status {status})")
        return status or 1, None
    found, alerts = parse_radio(lines)
    trace = Path(out_dir) / TRACE_NAME
    records = write_trace(dev, log_dir, names, trace)
    counts = {mid: message_counts(recs) for mid, recs in records.items()}
    print_("")
    for line in scenario_lines(scenario):
        print_(line)
    for line in device_lines(dev, names):
        print_(line)
    print_("")
    blocks = [detection_lines(found, heard_blocks(scenario)),
              alert_lines(alerts, check_ffts(alerts, records, names)),
              module_lines(dev, report, counts)]
    if replan_report:
        blocks.append(replan_report(records, report["end_s"], lines))
    for block in blocks:
        for line in block:
            print_(line)
        print_("")
    print_(f"Trace: {rel(trace)} (open it in https://ui.perfetto.dev); event logs in "
           f"{rel(log_dir)}/")
    print_(f"{report['end_s']:.2f} s of simulated time in {wall:.1f} s")
    return 0, {"detections": found, "alerts": alerts, "trace": trace, "report": report}


NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def build_device(build_dir_arg, dev):
    """Build the device's programs (each port in its tree) and the native
    module program, whose reader checks a scenario."""
    status = run_device.build_programs(build_dir_arg, dev)
    if status == 0:
        status = build.build(build_dir_arg, build.DEFAULT_PORT, targets=[TARGET])
    return status


def demo(build_dir_arg, port, scenario=SCENARIO, out_dir=OUT_DIR, device=DEVICE, drift=True):
    """`motet demo`: build the module programs, run the device, report."""
    try:
        dev = devmod.load(device, warn=_left_to_run_demo)
    except devmod.DeviceError as e:
        print(f"demo: error: {e}", file=sys.stderr)
        return 2
    status = build_device(build_dir_arg, dev)
    if status != 0:
        return status
    chips = sorted({CHIPS[s.kind] for s in dev.modules if s.kind in CHIPS})
    n = NUMBERS.get(len(dev.modules), str(len(dev.modules)))
    what = (f"a {n}-module device of emulated chips ({', '.join(chips)})" if chips
            else f"a simulated {n}-module device")
    print(f"demo: sound localisation and fire detection on {what}", flush=True)
    return run_demo(build.build_dir(build_dir_arg), scenario, out_dir, device=device,
                    drift=drift)[0]


def main(argv=None):
    p = cmdline.ArgumentParser(prog="python3 -m motetlib.ssl_demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default=str(SCENARIO), help="scenario file (apps/ssl/README.md)")
    p.add_argument("--device", default=str(DEVICE), help="device file (default: "
                   "devices/ssl-device.toml)")
    p.add_argument("--build-dir", default=None, help="default: $MOTET_BUILD_DIR or build")
    p.add_argument("--out", default=str(OUT_DIR), help="where the trace and logs go")
    p.add_argument("--seed", type=int, default=1, help="the hub's seed (default 1)")
    p.add_argument("--no-build", action="store_true", help="do not build first")
    p.add_argument("--drift", action=argparse.BooleanOptionalAction, default=True,
                   help="the host checks the costs while the device runs (docs/planner.md; on "
                   "unless --no-drift)")
    args = p.parse_args(argv)
    if not args.no_build:
        status = build_device(args.build_dir, devmod.load(args.device, warn=_left_to_run_demo))
        if status != 0:
            return status
    return run_demo(build.build_dir(args.build_dir), args.scenario, args.out, args.seed,
                    device=args.device, drift=args.drift)[0]


if __name__ == "__main__":
    sys.exit(main())
