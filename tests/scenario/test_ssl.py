# SPDX-License-Identifier: MIT
"""The sound-localisation + fire-detection application (apps/ssl) end to end.

Two programs read the same scenario file (format: apps/ssl/README.md):
`apps/ssl/ssl` is the application on one native Motet module in simulated
time, `apps/ssl/ssl_standalone` the same signal chain as one plain C
program. Each detection is a line

    ssl block=20 t_ms=5250.000 angle=44.9 true=45.0 ...

(true=- when no single source sounds during the whole block), each fire
alert a line `fire alert sample_ms=... temp=...`; the Motet build prefixes
its lines with the module time and adds latencies.

Direction tolerance: TOLERANCE_DEG = 4.3 degrees, from the array and the
sample rate, not from the results. The longest baseline of the square is
its diagonal, sqrt(2) * 0.20 m = 0.283 m; one sample of time difference at
16 kHz is c / fs = 2.14 cm of path, which near broadside moves the azimuth
by (c / fs) / (sqrt(2) * side) = 0.0758 rad = 4.3 degrees. That is the
resolution of a time-domain correlator that picks the best whole sample.
SRP-PHAT steers every bin's phase, so it resolves a fraction of a sample
when the bins it uses are well above the noise: at the 10 dB SNR used here
SC keeps only bins 6 dB over the noise estimate, and two of the six pairs
(the diagonals) are always within 45 degrees of broadside. So every
estimate must be within one sample's worth of azimuth; the 1-degree grid
(refined by a parabola) adds at most half a degree and is inside it.
(Observed for this scenario: see docs/benchmarks-ssl.md.)
"""

import math
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, RUN_TIMEOUT_S

sys.path.insert(0, str(ROOT / "tools"))
from motetlib import eventlog  # noqa: E402

SSL = "apps/ssl/ssl"
STANDALONE = "apps/ssl/ssl_standalone"

SIDE_M = 0.20
SAMPLE_RATE = 16000.0
SPEED_OF_SOUND = 343.0
TOLERANCE_DEG = math.degrees((SPEED_OF_SOUND / SAMPLE_RATE) / (math.sqrt(2) * SIDE_M))
SNR_DB = 10.0
BLOCK_PERIOD_S = 0.25  # ssl_single.toml and SSL_BLOCK_PERIOD_US
BLOCK_S = 512 / SAMPLE_RATE
ALERT_DEADLINE_US = 10_000  # the paper's bound for the FBD chain

# Eight angles 45 degrees apart and four off the grid, alternating kinds.
ANGLES = [0, 45, 90, 135, 180, 225, 270, 315, 17.3, 128.8, 241.6, 333.3]
SOURCE_S, GAP_S, FIRST_S = 2.0, 0.5, 1.5

DETECTION = re.compile(rb"ssl block=(\d+) t_ms=([\d.]+) angle=([\d.]+) true=([\d.]+|-)")
ALERT = re.compile(rb"fire alert sample_ms=([\d.]+)(?: latency_us=(\d+))? temp=(-?[\d.]+)")


def write_scenario(path, *, seed, duration, sources=(), fires=(), snr_db=SNR_DB):
    lines = [f"seed = {seed}", f"duration = {duration}", "[array]", f"side = {SIDE_M}",
             f"sample_rate = {SAMPLE_RATE}", "[noise]", f"snr_db = {snr_db}"]
    for angle, start, length, kind in sources:
        lines += ["[[source]]", f"angle = {angle}", f"start = {start}",
                  f"duration = {length}", f'kind = "{kind}"']
    for time, rise, tau in fires:
        lines += ["[[fire]]", f"time = {time}", f"rise = {rise}", f"tau = {tau}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def detections(stdout):
    """[(block, t_ms, angle, true angle or None)] in output order."""
    found = []
    for m in DETECTION.finditer(stdout):
        truth = None if m.group(4) == b"-" else float(m.group(4))
        found.append((int(m.group(1)), float(m.group(2)), float(m.group(3)), truth))
    return found


def alerts(stdout):
    """[(sample_ms, latency_us or None, temp)]."""
    return [(float(m.group(1)), int(m.group(2)) if m.group(2) else None, float(m.group(3)))
            for m in ALERT.finditer(stdout)]


def angle_error(a, b):
    return abs((a - b + 180.0) % 360.0 - 180.0)


def sources_schedule():
    """(angle, start, duration, kind) of the twelve sources, one after the other."""
    return [(a, FIRST_S + i * (SOURCE_S + GAP_S), SOURCE_S, "speech" if i % 2 == 0 else "noise")
            for i, a in enumerate(ANGLES)]


def full_blocks(start, length, until):
    """Block numbers whose capture window lies inside [start, start + length)."""
    blocks, k = [], 0
    while (k + 1) * BLOCK_PERIOD_S <= until:
        end = (k + 1) * BLOCK_PERIOD_S
        if end - BLOCK_S >= start and end <= start + length:
            blocks.append(k)
        k += 1
    return blocks


@pytest.fixture(scope="module")
def angles_scenario(tmp_path_factory):
    duration = FIRST_S + len(ANGLES) * (SOURCE_S + GAP_S)
    path = tmp_path_factory.mktemp("ssl") / "angles.toml"
    fires = [(6.1, 20.0, 3.0), (21.2, 20.0, 3.0)]
    return write_scenario(path, seed=3, duration=duration, sources=sources_schedule(), fires=fires)


@pytest.fixture(scope="module")
def angles_runs(run_program, angles_scenario):
    """Both programs on the twelve-angle scenario: (motet stdout, standalone
    stdout, motet event log path)."""
    log = angles_scenario.with_suffix(".log")
    motet = run_program(SSL, "--scenario", angles_scenario, "--log", log).stdout
    alone = run_program(STANDALONE, "--scenario", angles_scenario).stdout
    return motet, alone, log


def test_sources_at_twelve_angles_are_located(angles_runs):
    """Every source is found in at least half of its full blocks, every
    estimate within TOLERANCE_DEG (module docstring), nothing between them."""
    found = detections(angles_runs[0])
    assert found, angles_runs[0].decode(errors="replace")
    report = "\n".join(f"block {b} angle {a} true {t}" for b, _, a, t in found)
    stray = [d for d in found if d[3] is None]
    assert not stray, f"detections with no single source sounding:\n{report}"
    bad = [d for d in found if angle_error(d[2], d[3]) > TOLERANCE_DEG]
    assert not bad, f"outside {TOLERANCE_DEG:.2f} degrees: {bad}\n{report}"
    by_block = {b: a for b, _, a, _ in found}
    duration = FIRST_S + len(ANGLES) * (SOURCE_S + GAP_S)
    for angle, start, length, kind in sources_schedule():
        blocks = full_blocks(start, length, duration)
        hits = [b for b in blocks if b in by_block]
        assert 2 * len(hits) >= len(blocks), (
            f"{kind} at {angle} degrees found in {len(hits)} of {len(blocks)} blocks\n{report}")


def test_standalone_and_motet_agree(angles_runs):
    """Same scenario, same detections (block, angle, truth) and alerts."""
    motet, alone, _ = angles_runs
    strip = [(b, t, a, tr) for b, t, a, tr in detections(motet)]
    assert strip == detections(alone)
    assert [(s, t) for s, _, t in alerts(motet)] == [(s, t) for s, _, t in alerts(alone)]
    assert len(alerts(motet)) == 2


def test_alerts_beat_the_ssl_traffic(angles_runs):
    """With sound being located (default arm7 model), each alert preempts
    the SSL task that is running when the temperature is sampled and
    reaches the radio within the deadline."""
    found = alerts(angles_runs[0])
    assert found and all(lat is not None and lat < ALERT_DEADLINE_US for _, lat, _ in found), found
    events = read_log(angles_runs[2])
    ssl_tasks = {pid for pid, prio in created_tasks(events) if prio == 1}
    for sample_ms, _, _ in found:
        assert running_at(events, round(sample_ms * 1000), ssl_tasks), sample_ms


@pytest.mark.parametrize("snr_db, reference", [(0.0, -20.0), (40.0, -20.0)])
def test_noise_only_gives_no_detection(run_program, tmp_path, snr_db, reference):
    """Background noise alone, loud (-20 dBFS) or faint (-60 dBFS): no block
    is ever reported as a sound, by either program."""
    path = write_scenario(tmp_path / "noise.toml", seed=5, duration=30.0, snr_db=snr_db)
    text = path.read_text().replace("[noise]", f"[noise]\nreference_dbfs = {reference}")
    path.write_text(text)
    for program in (SSL, STANDALONE):
        out = run_program(program, "--scenario", path).stdout
        assert detections(out) == [], f"{program}:\n{out.decode(errors='replace')}"


def read_log(path):
    """[(time_us, type, pid, arg)] from an event-log dump (a RUN record
    read as its SEND and START)."""
    events = []
    for rec in eventlog.read(path):
        assert isinstance(rec, eventlog.Event), "the event log lost records"
        events.append((rec.time_us, rec.type, rec.pid, rec.arg))
    return events


def created_tasks(events):
    """(pid, priority) of the application's tasks from the CREATE records,
    in the description's order (ssl_single.toml), which is the order the
    manager creates them in."""
    created = [(pid, prio) for _, kind, pid, prio in events if kind == "CREATE" and pid < 0xF0]
    assert len(created) == 18, created
    return created


def task_pids(events):
    """Pids of fft0..3, temp and radio."""
    created = created_tasks(events)
    return [p for p, _ in created[4:8]], created[15][0], created[14][0]


def running_at(events, t_us, pids):
    """The handler of one of `pids` that was on the stack at t_us, as
    (start, end) times, or None."""
    open_at = {}
    for time, kind, pid, _ in events:
        if pid not in pids:
            continue
        if kind == "START":
            open_at[pid] = time
        elif kind == "END" and pid in open_at:
            start = open_at.pop(pid)
            if start <= t_us < time:
                return start, time
    return None


def test_fire_alert_preempts_a_busy_fft(run_program, tmp_path):
    """On the sensing module's processor (msp430 model, 6 MHz) an FFT takes
    about 50 ms. The temperature is sampled 10 ms into each block, so each
    reading arrives while an fft task is in its FFT; the alert must
    reach the radio within 10 ms, nested on the stack above that FFT."""
    fires = [(3.0, 20.0, 3.0), (15.0, 20.0, 3.0), (27.0, 20.0, 3.0)]
    path = write_scenario(tmp_path / "fire.toml", seed=11, duration=36.0, snr_db=20.0,
                          fires=fires)
    log = tmp_path / "fire.log"
    out = run_program(SSL, "--scenario", path, "--cpu", "msp430", "--log", log).stdout
    found = alerts(out)
    assert len(found) == len(fires), out.decode(errors="replace")
    events = read_log(log)
    ffts, temp, radio = task_pids(events)
    for sample_ms, latency_us, _ in found:
        assert latency_us < ALERT_DEADLINE_US, found
        t = round(sample_ms * 1000)
        fft = running_at(events, t, set(ffts))
        assert fft is not None, f"no FFT running at the alert's sample ({sample_ms} ms)"
        assert fft[1] - fft[0] > ALERT_DEADLINE_US, f"the FFT at {fft} is not a long one"
        alert_print = running_at(events, t + latency_us - 1, {radio})
        assert alert_print is not None and fft[0] < alert_print[1] < fft[1], (
            f"the alert did not reach the radio inside the FFT {fft}: {alert_print}")


def test_same_scenario_same_output(run_program, tmp_path):
    path = write_scenario(tmp_path / "repeat.toml", seed=2, duration=6.0,
                          sources=[(60.0, 1.5, 3.0, "speech")], fires=[(2.0, 20.0, 3.0)])
    first = run_program(SSL, "--scenario", path).stdout
    assert first == run_program(SSL, "--scenario", path).stdout
    assert len(detections(first)) >= 6 and len(alerts(first)) == 1


def test_scenario_errors_name_the_line(build_dir, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("seed = 1\n[[source]]\nangel = 45\n")
    res = subprocess.run([str(build_dir / SSL), "--scenario", str(path)], capture_output=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2
    assert b"bad.toml:3: unknown key 'angel'" in res.stderr, res.stderr


@pytest.mark.parametrize("content", ["", "# sources to come\n\n"])
def test_a_scenario_that_defines_nothing_is_refused(build_dir, tmp_path, content):
    """The modules' reader refuses a file with no key and no table (it ran
    10 s of silence on every default), as the host's does."""
    path = tmp_path / "empty.toml"
    path.write_text(content)
    res = subprocess.run([str(build_dir / SSL), "--scenario", str(path)], capture_output=True,
                         text=True, timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout
    assert f"scenario file {path} defines nothing: no key and no table" in res.stderr, res.stderr


SMALL_MODULE_DSP = ("trig.c", "fft.c", "sc.c", "vote.c", "fbd.c")


@pytest.mark.parametrize("compiler, flags", [
    ("avr-gcc", ["-mmcu=atmega128"]),
    ("arm-none-eabi-gcc", ["-mcpu=cortex-m3", "-mthumb"]),
])
def test_small_module_dsp_cross_compiles(tmp_path, compiler, flags):
    """FFT, SC, vote and FBD are meant for the small modules: they must
    compile for the AVR (16-bit int) and Cortex-M, C11, warnings as errors."""
    cc = shutil.which(compiler)
    if cc is None:
        pytest.skip(f"{compiler} is not installed (`./motet setup --all`)")
    for name in SMALL_MODULE_DSP:
        src = ROOT / "apps" / "ssl" / "dsp" / name
        res = subprocess.run([cc, *flags, "-std=c11", "-Os", "-Wall", "-Wextra", "-Werror",
                              "-Wshadow", "-c", str(src), "-o", str(tmp_path / "x.o")],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        assert res.returncode == 0, f"{compiler}: {name}:\n{res.stderr}"
