# SPDX-License-Identifier: MIT
"""Faults injected by the hub on command, and what each one did. The
device must keep working: messages that can still be delivered are all
delivered, once and in order; whatever could not be is reported.
"""

import os
import re
import signal
import subprocess

from conftest import ROOT, RUN_TIMEOUT_S
from device_run import (CAST, DEVICES, MEMBER, PING, PONG, env, events, motet_run_cmd,
                        run_device)

TWO = DEVICES / "two-module.toml"
FIVE = DEVICES / "five-module.toml"
ERR_BUS_CORRUPT = 20  # index of MT_ERR_BUS_CORRUPT in types.h (eventlog.ERRORS)


def pong_seqs(run):
    return [int(m.group(1)) for _, _, m in run.module_lines(PONG)]


def test_corrupt_frames_are_detected_counted_logged_retransmitted_never_delivered(
        build_dir, tmp_path):
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.5, "--fault", "corrupt:1@0.1:3",
                     "--fault", "corrupt:0@0.2:2", log_dir=logs)
    # What the faults did: 5 frames damaged on the wire, each rejected by
    # its receiver and sent again by its sender.
    assert len(run.hub_notes("corrupted on its way to m1")) == 3
    assert len(run.hub_notes("corrupted on its way to m0")) == 2
    assert len(run.hub_notes("rejected frame")) == 5
    assert run.report["bus"]["corrupted"] == 5 and run.report["bus"]["rejected"] == 5
    assert run.kernel(1)["rx_corrupt"] == 3 and run.kernel(0)["tx_retransmits"] == 3
    assert run.kernel(0)["rx_corrupt"] == 2 and run.kernel(1)["tx_retransmits"] == 2
    assert run.kernel(0)["tx_given_up"] == run.kernel(1)["tx_given_up"] == 0
    # Logged by the receiving kernel as MT_ERR_BUS_CORRUPT.
    for mod, n in ((1, 3), (0, 2)):
        errors = [e for e in events(logs, mod) if e.type == "ERROR" and e.arg == ERR_BUS_CORRUPT]
        assert len(errors) == n, (mod, errors)
    # Never delivered: every message once, in order, none missing.
    seqs = pong_seqs(run)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) == 49
    assert "OUT OF ORDER" not in run.stdout
    pings = [int(m.group(1)) for _, _, m in run.module_lines(PING)]
    assert pings == list(range(1, len(pings) + 1))


def hub_note_time_s(note):
    return float(re.search(r"\[\s*([0-9.]+) s\]", note).group(1))


def test_dropped_frames_are_reported_and_sent_again_never_lost(build_dir, tmp_path):
    """drop:M@S:N loses the next N frames M receives on the wire: the hub
    says so for each, the receiver never sees them (nothing corrupt, no
    duplicate), the sender sends each again in its next slot, and every
    message still arrives once and in order."""
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.5, "--fault", "drop:1@0.1:2",
                     "--fault", "drop:0@0.3")
    to1 = run.hub_notes("dropped on its way to m1")
    to0 = run.hub_notes("dropped on its way to m0")
    assert len(to1) == 2 and len(to0) == 1, run.stdout
    assert all("m0 sends it again in its next slot" in n for n in to1), to1
    assert "m1 sends it again" in to0[0]
    assert run.report["bus"]["dropped"] == 3 and run.report["bus"]["corrupted"] == 0
    assert run.kernel(0)["tx_retransmits"] == 2 and run.kernel(1)["tx_retransmits"] == 1
    for mod in (0, 1):
        k = run.kernel(mod)
        assert k["rx_corrupt"] == k["rx_duplicates"] == k["tx_given_up"] == k["rx_missed"] == 0
    assert "3 dropped" in run.stdout
    seqs = pong_seqs(run)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 45, seqs
    assert "OUT OF ORDER" not in run.stdout


def test_a_frame_dropped_twice_is_sent_again_at_once_each_time(build_dir, tmp_path):
    """The same ping lost on the wire twice in a row: the sender's interface
    sees no acknowledgement at the end of each try and sends it again in
    its next TDMA slot. Neither loss waits for the 20 ms ack timeout (the
    wait for a receiver that has a frame and does not answer): the bus
    queue behind the ping stalled 40 ms before, and every ping queued
    meanwhile came 10, 20 and 30 ms late."""
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.3, "--fault", "drop:1@0.2:2")
    notes = run.hub_notes("dropped on its way to m1")
    assert len(notes) == 2, run.stdout
    first, second = (hub_note_time_s(n) for n in notes)
    assert 0 < second - first < 100e-6, notes  # the next slot, not the ack timeout
    assert run.kernel(0)["tx_retransmits"] == 2 and run.kernel(1)["rx_missed"] == 0
    # Every round trip of the run (10 ms apart) stays under a millisecond,
    # the one with the lost tries included.
    rtts = [int(m.group(2)) for _, _, m in run.module_lines(PING)]
    assert len(rtts) >= 28 and max(rtts) < 1000, rtts
    seqs = pong_seqs(run)
    assert seqs == list(range(1, len(seqs) + 1))


def test_a_frame_rejected_on_every_try_is_given_up_and_the_last_note_says_so(build_dir,
                                                                             tmp_path):
    # The next ping is corrupted on each of its MOTET_BUS_RETRIES (8) sends.
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.2, "--fault", "corrupt:1@0.1:8",
                     log_dir=logs)
    notes = run.hub_notes("rejected frame")
    assert len(notes) == 8
    assert all(n.endswith("not delivered, m0 will send it again") for n in notes[:7]), notes
    assert notes[7].endswith("not delivered, that was m0's last try (8 of MOTET_BUS_RETRIES = "
                             "8): it gives the frame up"), notes[7]
    assert run.kernel(0)["tx_retransmits"] == 7 and run.kernel(0)["tx_given_up"] == 1
    # Nothing silent (docs/bus.md, "When a message is given up"): the
    # pinger is told by its next send, which fails and which it makes again;
    # the ponger's kernel reports the gap, naming m0, before it delivers the
    # ping after it; nothing arrives out of order but across that gap.
    refused = [m for m in run.lines if "refused: an earlier message was lost" in m]
    assert len(refused) == 1 and refused[0].startswith("m0|"), refused
    told = int(refused[0].split("ping: seq ")[1].split()[0])
    lost = [e for e in events(logs, 0) if e.type == "BUS_LOST"]
    assert [(e.arg >> 8, e.arg & 0xFF) for e in lost] == [(1, 1)]  # DATA to m1
    assert run.kernel(1)["rx_missed"] == 1 and run.kernel(0)["rx_missed"] == 0
    gaps = [e for e in events(logs, 1) if e.type == "BUS_GAP"]
    assert [(e.arg >> 8, e.arg & 0xFF) for e in gaps] == [(0, 1)]  # one frame from m0
    seqs = pong_seqs(run)
    assert seqs == sorted(set(seqs)), seqs  # never reordered nor twice
    assert [s for s in range(1, seqs[-1] + 1) if s not in seqs] == [told - 1]
    out_of_order = [m.group(1) for _, _, m in run.module_lines(PONG)
                    if m.group(3) == "OUT OF ORDER"]
    assert out_of_order == [str(told)]


def casts_in_order(run, module):
    """Each member on `module`: the sequence numbers it printed, in order."""
    got = {}
    for mod, _, m in run.module_lines(MEMBER):
        if mod == module:
            got.setdefault(m.group(1), []).append(int(m.group(3)))
    return got


def test_multicast_given_up_is_reported_by_sender_and_the_receiver_that_lacks_it(build_dir,
                                                                                 tmp_path):
    # Issue #16 defect 6: the next multicast is corrupted on its way to m2
    # on each of its 8 tries; m1, m3 and m4 took it on the first.
    logs = tmp_path / "logs"
    run = run_device(build_dir, tmp_path, FIVE, "--until", 0.3, "--fault", "corrupt:2@0.1:8",
                     log_dir=logs)
    assert run.hub_notes("it gives the frame up")
    assert run.kernel(0)["tx_given_up"] == 1
    # The caster is told by its next multicast, which fails; it sends it again.
    refused = [m for m in run.lines if "refused: an earlier message was lost" in m]
    assert len(refused) == 1 and refused[0].startswith("m0| ") and "cast: seq" in refused[0]
    lost = [e for e in events(logs, 0) if e.type == "BUS_LOST"]
    assert [(e.arg >> 8, e.arg & 0xFF) for e in lost] == [(0xFF, 2)]  # MCAST to all
    # m2 alone lacks it, and says so, naming m0, before the next one.
    assert [run.kernel(m)["rx_missed"] for m in range(5)] == [0, 0, 1, 0, 0]
    gaps = [e for e in events(logs, 2) if e.type == "BUS_GAP"]
    assert [(e.arg >> 8, e.arg & 0xFF) for e in gaps] == [(0, 1)]
    casts = sorted({int(m.group(1)) for _, _, m in run.module_lines(CAST)})
    assert casts == list(range(1, len(casts) + 1)) and len(casts) >= 14
    missing = {}
    for mod in range(5):
        for pid, seqs in casts_in_order(run, mod).items():
            assert seqs == sorted(set(seqs)), (mod, pid, seqs)  # never reordered nor twice
            if pid == "11":  # "near", the caster's local unicast: not on the bus
                continue
            missing[(mod, pid)] = [s for s in casts[:-1] if s not in seqs]
    lacking = {k: v for k, v in missing.items() if v}
    assert list(lacking) == [(2, "17")], missing  # f2 on m2, the one receiver that rejected it
    assert len(lacking[(2, "17")]) == 1
    # Every other member, the caster's own on m0 included, got every one.
    assert len(missing) == 9


def test_powered_off_module_is_woken_by_a_message(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.3, "--fault", "off:1@0.105",
                     "--exact-clocks")
    off = run.hub_notes("m1 is powered off")
    woken = run.hub_notes("m1 is woken by frame")
    assert len(off) == 1 and len(woken) == 1
    assert "DATA m0->m1" in woken[0]  # the next ping
    assert run.report["bus"]["wakeups"] == 1
    assert 0.005 < run.module(1)["off_s"] < 0.006  # from 0.105 s to the ping at ~0.1105 s
    seqs = pong_seqs(run)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) == 29
    # The ping that woke it waited for the wake-up (6 us), then for its
    # sender's next TDMA slot: one round of 2 modules x 10 us later.
    rtts = [int(m.group(2)) for _, _, m in run.module_lines(PING)]
    usual = max(set(rtts), key=rtts.count)
    assert rtts.count(usual + 20) == 1 and rtts.count(usual) == len(rtts) - 1, rtts


def test_delayed_frame_arrives_late_in_order(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.1, "--fault", "delay:1@0.05:700",
                     "--exact-clocks")
    assert len(run.hub_notes("delayed by 700 us")) == 1
    rtts = [int(m.group(2)) for _, _, m in run.module_lines(PING)]
    usual = max(set(rtts), key=rtts.count)
    assert sorted(rtts) == [usual] * (len(rtts) - 1) + [usual + 700]
    seqs = pong_seqs(run)
    assert seqs == list(range(1, len(seqs) + 1))


def member_seqs(run, module):
    return sorted({int(m.group(3)) for mod, _, m in run.module_lines(MEMBER) if mod == module})


def test_killed_module_is_reported_and_the_device_keeps_working(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, FIVE, "--until", 0.3, "--fault", "kill:3@0.1")
    assert run.module(3)["state"] == "killed"
    assert run.hub_notes("m3 killed")
    casts = [int(m.group(1)) for _, _, m in run.module_lines(CAST)]
    for mod in (0, 1, 2, 4):  # everyone else still gets every multicast
        assert member_seqs(run, mod)[:len(casts) - 1] == casts[:len(casts) - 1], mod
    assert max(member_seqs(run, 3)) <= 5  # nothing after 0.1 s
    assert "OUT OF ORDER" not in run.stdout


def test_frozen_module_is_reported_and_skipped(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, FIVE, "--until", 0.4, "--fault", "freeze:2@0.1")
    m2 = run.module(2)
    assert m2["state"] == "frozen" and m2["unresponsive"]
    notes = run.hub_notes("m2 did not acknowledge")
    assert len(notes) == 1 and "unresponsive (frozen)" in notes[0]
    casts = [int(m.group(1)) for _, _, m in run.module_lines(CAST)]
    assert len(casts) >= 15
    for mod in (0, 1, 3, 4):  # flow control held the others up once, then went on
        assert member_seqs(run, mod)[:len(casts) - 2] == casts[:len(casts) - 2], mod
    assert max(member_seqs(run, 2)) <= 5
    assert "OUT OF ORDER" not in run.stdout


def test_unicast_to_a_killed_module_is_reported_unreachable(build_dir, tmp_path):
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.1, "--fault", "kill:1@0.05")
    assert run.kernel(0)["tx_unreachable"] >= 4  # every ping after the kill
    assert run.hub_notes("is unreachable: m0 is told so")
    assert run.module(1)["state"] == "killed"


def test_a_frame_fault_whose_frame_never_comes_is_said_at_the_end(build_dir, tmp_path):
    """A frame trigger naming a pid (or port) no frame to that module
    carries, a typo as often as not, was dropped without a word."""
    run = run_device(build_dir, tmp_path, TWO, "--until", 0.1, "--fault", "kill:1@frame:0x99:8")
    assert run.hub_notes("fault not made: kill m1 as frame 1 for pid 0x99 port 8 reaches it: "
                         "0 such frame(s) reached m1 in the run")
    assert run.module(1)["state"] == "running"


def test_interrupt_stops_every_process(build_dir, tmp_path):
    """Ctrl-C (SIGINT to the run) stops it cleanly: the modules print their
    counters and no process is left behind."""
    marker = "424242"
    cmd = motet_run_cmd(build_dir, TWO, "--seed", marker)  # runs until stopped
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env(), stdout=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:  # wait for the device to be up, not for a time
            if "pong" in line:
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=RUN_TIMEOUT_S)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "stopped: interrupted" in rest
    assert rest.count("bus: module") == 2  # both modules stopped cleanly
    leftovers = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if f"{marker}000".encode() in cmdline or f"{marker}001".encode() in cmdline:
                leftovers.append(pid)
    assert not leftovers, f"module processes left behind: {leftovers}"


REFUSED = (": its program refused the arguments it was given (the device file's args and "
           "sensors, the options after --; its message is above)")


def test_module_that_cannot_start_is_reported(build_dir, tmp_path):
    """An option the modules' program does not know, after --, is bad input:
    status 2, as for every option `motet run` itself refuses (it was 1)."""
    cmd = motet_run_cmd(build_dir, TWO, "--until", 0.1) + ["--", "--no-such-option"]
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout
    assert "exited with status 2 before joining the bus" + REFUSED in res.stdout
    assert "unknown argument '--no-such-option'" in res.stdout


def test_a_sensor_the_modules_program_does_not_simulate_is_refused(build_dir, tmp_path):
    """A device file's `sensors` go to the module's program as --sensor; a
    program that simulates none (pingpong) took any name and dropped it, so
    a sensor named for it, or misspelt, ran as if it were there."""
    device = tmp_path / "sensed.toml"
    device.write_text(TWO.read_text().replace("[[module]]\nid = 1\n",
                                              "[[module]]\nid = 1\nsensors = [\"temprature\"]\n"))
    assert 'sensors = ["temprature"]' in device.read_text()
    res = subprocess.run(motet_run_cmd(build_dir, device, "--until", 0.1), cwd=ROOT, env=env(),
                         capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    # A misspelt sensor is bad input in the device file: status 2, as for
    # what the device file's reader refuses itself (it was 1).
    assert res.returncode == 2, res.stdout
    assert "m1| pingpong: unknown sensor 'temprature' (this program's sensors: none)" in res.stdout
    assert ("run: error: module 1 (sense) exited with status 2 before joining the bus"
            + REFUSED) in res.stdout
    # The program that simulates sensors names the ones it has.
    bad = subprocess.run([str(build_dir / "apps/ssl/ssl_device"), "--scenario", "x.toml",
                          "--sensor", "microfone:0"], capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert bad.returncode == 2
    assert bad.stderr.startswith("ssl_device: unknown sensor: microfone:0\nusage: ssl_device "
                                 "--scenario FILE [--cpu NAME] [--sensor microphone:N|"
                                 "temperature|radio]..."), bad.stderr


def test_an_application_the_modules_program_does_not_have_is_refused(build_dir, tmp_path):
    """A device file's `--app NAME` naming no description of the program
    (a typo) made every module exit with status 2 after it had joined the
    bus; the run went on with no module to its time limit and `motet run`
    exited 0. The program now picks the description before it joins."""
    device = tmp_path / "typo.toml"
    device.write_text(TWO.read_text().replace('"--app", "pingpong"', '"--app", "pingpng"'))
    assert '"--app", "pingpng"' in device.read_text()
    res = subprocess.run(motet_run_cmd(build_dir, device, "--until", 0.1), cwd=ROOT, env=env(),
                         capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout
    assert re.search(r"^m[01]\| pingpong: no application 'pingpng' \(built in: pingpong ",
                     res.stdout, re.M), res.stdout
    assert re.search(r"^run: error: module [01] \(\w+\) exited with status 2 before joining the "
                     r"bus" + re.escape(REFUSED), res.stdout, re.M), res.stdout
    assert "stopped: time limit" not in res.stdout


def test_a_program_the_build_has_no_target_for_is_bad_input(build_dir, tmp_path):
    """A device file's `program` with a typo was reported as a build that
    failed (status 1); it is a name the build does not have, said so, with
    Ninja's suggestion above it, and status 2."""
    device = tmp_path / "typo.toml"
    device.write_text(TWO.read_text().replace('"apps/pingpong/pingpong"',
                                              '"apps/pingpong/pingpng"'))
    assert "pingpng" in device.read_text()
    cmd = [c for c in motet_run_cmd(build_dir, device, "--until", 0.1) if c != "--no-build"]
    res = subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    assert "ninja: error: unknown target 'pingpng'" in res.stdout + res.stderr
    assert (f"run: error: {device}: module 0 (compute) names the program 'pingpng', which the "
            "native build has no target for") in res.stderr, res.stderr
    assert "did not build" not in res.stderr
