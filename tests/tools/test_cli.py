# SPDX-License-Identifier: MIT
"""The `motet` command line without a build: event-log parsing and export,
the size report, and argument handling."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOTET = ROOT / "tools" / "motet"
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import (bench_all, build, cli, eventlog, lint, setup_env, stages,  # noqa: E402
                      thread_size)

# A handmade dump: task 0x10 handles a timeout and sends to 0x11, which runs
# nested and allocates; console text and a comment are mixed in.
SAMPLE = """\
# motet event log, module 0
boot: native port, simulated clock
EV 0 CREATE 16 3
EV 0 CREATE 0x11 5
EV 125000 TIMER 16 0
EV 125000 START 16 4
EV 125010 SEND 16 0x1108
EV 125010 START 17 8
EV 125012 ALLOC 17 32
EV 125020 END 17 8
[   125.000 ms] radio: Hello World
EV 125030 END 16 4
LOST 3
EV 125040 ERROR 16 5
EV 125050 SLEEP 0 1
EV 250000 WAKE 0 0
"""


def motet(*args, stdin=None):
    return subprocess.run([sys.executable, str(MOTET), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, input=stdin, timeout=60)


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "events.txt"
    path.write_text(SAMPLE)
    return path


# ---- parsing ----

def test_parse_reads_records_and_skips_other_lines():
    recs = eventlog.parse(SAMPLE)
    events = [r for r in recs if isinstance(r, eventlog.Event)]
    assert len(events) == 13  # the TIMER stands for two
    assert events[0] == eventlog.Event(0, "CREATE", 16, 3, line=3)
    assert events[5] == eventlog.Event(125010, "SEND", 16, 0x1108, line=7)
    lost = [r for r in recs if isinstance(r, eventlog.Lost)]
    assert lost == [eventlog.Lost(3, line=13)]


@pytest.mark.parametrize("line, message", [
    ("EV 10 START 16", "expected 'EV <time_us> <TYPE> <pid> <arg>'"),
    ("EV ten START 16 4", "time 'ten' is not an integer"),
    ("EV 10 JUMP 16 4", "unknown event type 'JUMP'"),
    ("EV 10 START 300 4", "pid 300 does not fit in 8 bits"),
    ("EV 10 START 16 70000", "arg 70000 does not fit in 16 bits"),
    ("EV 10 START -1 4", "pid -1 is negative"),
    ("LOST many", "count 'many' is not an integer"),
])
def test_parse_rejects_malformed_records_with_line_number(line, message):
    with pytest.raises(eventlog.LogFormatError) as err:
        eventlog.parse("EV 0 WAKE 0 0\n" + line + "\n", "dump.txt")
    assert str(err.value).startswith("dump.txt:2: ")
    assert message in str(err.value)


def test_a_run_record_reads_as_its_send_and_its_start():
    recs = eventlog.parse("EV 7 RUN 0x11 0x1008\nEV 9 END 0x11 8\n")
    assert recs == [eventlog.Event(7, "SEND", 0x10, 0x1108, line=1),
                    eventlog.Event(7, "START", 0x11, 8, line=1),
                    eventlog.Event(9, "END", 0x11, 8, line=2)]
    trace = eventlog.to_chrome(recs)
    assert [e["ph"] for e in trace["traceEvents"]
            if e.get("tid") == 0x11 and e["ph"] != "M"] == ["B", "E"]
    assert eventlog.describe(eventlog.parse_line("EV 7 RUN 0x11 0x1008")) == "0x10 -> P0, at once"


def test_a_disagree_record_names_the_module_and_the_load():
    recs = eventlog.parse("EV 410 DISAGREE 2 0x0105\n")
    row = eventlog.format_table(recs)[1]
    # The manager's record: its pid field is the module that failed the load.
    assert row.split()[2] == "appmgr"
    assert row.endswith("load 5 of m1, committed here, failed on m2: the device disagrees")
    trace = eventlog.to_chrome(recs)
    assert [e["tid"] for e in trace["traceEvents"] if e["ph"] == "i"] == [0xF3]


def test_an_appfail_record_names_the_error_the_task_and_the_module():
    code = eventlog.ERRORS.index("MT_ERR_NO_MODULE")
    recs = eventlog.parse(f"EV 298 APPFAIL 1 {code << 8 | 7}\n")
    row = eventlog.format_table(recs)[1]
    # The manager's record: its pid field is the task's relative pid.
    assert row.split()[2] == "appmgr"
    assert row.endswith("application not loaded: MT_ERR_NO_MODULE: task 1 (relative pid) "
                        "on module 7")
    trace = eventlog.to_chrome(recs)
    assert [e["tid"] for e in trace["traceEvents"] if e["ph"] == "i"] == [0xF3]


def test_a_bad_frame_record_names_the_sender_and_the_frame_type():
    ev = eventlog.parse_line("EV 5 BAD_FRAME 0x44 0x0201")
    assert (ev.pid, ev.arg) == (0x44, 0x0201)
    assert eventlog.describe(ev) == "DATA frame from m2 dropped"


def test_lost_and_gap_records_name_the_link_and_the_count():
    lost = eventlog.parse_line("EV 5 BUS_LOST 0x24 0xff02")
    assert eventlog.describe(lost) == "MCAST frame to all given up"
    assert eventlog.describe(eventlog.parse_line("EV 5 BUS_LOST 0x24 0x0201")) == \
        "DATA frame to m2 given up"
    assert eventlog.describe(eventlog.parse_line("EV 6 BUS_GAP 0x40 0x0003")) == \
        "3 frame(s) from m0 missed"
    assert eventlog.error_name(eventlog.ERRORS.index("MT_ERR_BUS_LOST")) == "MT_ERR_BUS_LOST"


def test_an_unsent_record_names_the_load_whose_failure_never_went():
    ev = eventlog.parse_line("EV 7 UNSENT 0 0x0105")
    assert eventlog.describe(ev) == \
        "our failure of load 5 of m1 never sent: the queue was full or the bus gave it up"


def test_a_task_timer_record_reads_as_its_expiry_and_its_timeout_send():
    recs = eventlog.parse("EV 50 TIMER 0x21 3\nEV 52 START 0x21 7\n")
    assert recs == [eventlog.Event(50, "TIMER", 0x21, 3, line=1),
                    eventlog.Event(50, "SEND", 0, 0x2107, line=1),
                    eventlog.Event(52, "START", 0x21, 7, line=2)]
    assert eventlog.describe(recs[1]) == "-> 0x21 TIMEOUT3"
    assert eventlog.describe(recs[0]) == "timer 3"


def test_a_kernel_timer_record_posts_nothing():
    recs = eventlog.parse("EV 50 TIMER 0 1\n")
    assert recs == [eventlog.Event(50, "TIMER", 0, 1, line=1)]


def test_an_end_whose_start_was_overwritten_shows_no_port():
    assert eventlog.describe(eventlog.parse_line("EV 9 END 0x21 255")) == "?"
    assert eventlog.describe(eventlog.parse_line("EV 9 END 0x21 8")) == "P0"


# ---- table ----

def test_table_decodes_arguments_and_nesting():
    lines = eventlog.format_table(eventlog.parse(SAMPLE))
    text = "\n".join(lines)
    assert "-> 0x11 P0" in text             # SEND arg = dst << 8 | port 8
    assert "TIMEOUT0" in text                # START port 4
    assert "32 B" in text                    # ALLOC size
    assert "MT_ERR_NO_MEM" in text           # ERROR code 5
    assert "3 slots lost" in text
    assert lines[-1] == "13 events, 3 slots lost"
    nested = next(line for line in lines if "START" in line and "0x11" in line)
    outer = next(line for line in lines if "START" in line and "0x10" in line)
    assert nested.index("START") > outer.index("START")


# ---- Chrome trace ----

def test_chrome_export_pairs_start_and_end_per_task():
    trace = eventlog.to_chrome(eventlog.parse(SAMPLE))
    events = trace["traceEvents"]
    durations = [(e["ph"], e["tid"], e["ts"]) for e in events if e["ph"] in "BE"]
    assert durations == [("B", 16, 125000), ("B", 17, 125010), ("E", 17, 125020),
                         ("E", 16, 125030)]
    instants = [e for e in events if e["ph"] == "i"]
    assert {e["name"] for e in instants} >= {"CREATE", "TIMER", "SEND", "ALLOC", "ERROR",
                                             "SLEEP", "WAKE", "LOST 3"}
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names[16] == "task 0x10" and names[0] == "kernel"


def test_chrome_export_drops_unmatched_end():
    trace = eventlog.to_chrome(eventlog.parse("EV 5 END 16 8\nEV 6 START 16 8\n"))
    phases = [e["ph"] for e in trace["traceEvents"] if e["ph"] in "BE"]
    assert phases == ["B"]
    assert trace["otherData"]["unmatched_end_dropped"] == 1


# ---- the command line ----

def test_motet_log_prints_table(sample):
    res = motet("log", sample)
    assert res.returncode == 0, res.stderr
    assert "START" in res.stdout and "13 events, 3 slots lost" in res.stdout


def test_motet_log_reads_stdin():
    res = motet("log", "-", stdin=SAMPLE)
    assert res.returncode == 0, res.stderr
    assert "13 events" in res.stdout


def test_motet_log_exports_chrome_json(sample, tmp_path):
    out = tmp_path / "trace.json"
    res = motet("log", sample, "--chrome", out)
    assert res.returncode == 0, res.stderr
    trace = json.loads(out.read_text())
    assert sum(1 for e in trace["traceEvents"] if e["ph"] == "B") == 2
    assert "perfetto" in res.stdout


def test_motet_log_reports_bad_lines(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("EV 1 START 16 8\nEV 2 BOGUS 16 8\n")
    res = motet("log", bad)
    assert res.returncode == 1
    assert f"{bad}:2: unknown event type 'BOGUS'" in res.stderr


def test_a_log_being_written_is_read_as_its_lines_complete(tmp_path):
    """eventlog.Tail, the device host's reader of a running module's log:
    each call returns the records of the lines completed since the last,
    a line still being written waits, and line numbers run on."""
    log = tmp_path / "m1.log"
    tail = eventlog.Tail(log)
    assert tail.new() == []  # not there yet
    log.write_text("# motet event log, port native, 1000000 ticks per second\n"
                   "EV 10 START 16 8\nEV 20 END 16")
    assert [(r.time_us, r.type) for r in tail.new()] == [(10, "START")]
    with open(log, "a") as f:
        f.write(" 8\nEV 30 RUN 17 4104\n")
    got = tail.new()
    assert [(r.time_us, r.type, r.line) for r in got] == [(20, "END", 3), (30, "SEND", 4),
                                                          (30, "START", 4)]
    assert tail.new() == []
    with open(log, "a") as f:
        f.write("EV 40 BOGUS 16 8\n")
    with pytest.raises(eventlog.LogFormatError, match=r"m1.log:5: unknown event type"):
        tail.new()


@pytest.mark.parametrize("content, says", [
    (b"", "empty: no '# motet event log' header and no record"),
    (b"# motet ev", "cut off or not an event log: no '# motet event log' header"),
    (b'{"traceEvents": []}\n', "cut off or not an event log"),
    (b"EV 1 START 16 8\n# caf\xe9\n", "line 2, column 6: byte 0xe9 is not UTF-8 text"),
])
def test_motet_log_refuses_an_empty_cut_off_or_other_file_naming_it(tmp_path, content, says):
    """A file that is not a log is an error naming it, not a table of "0
    events" and status 0; a byte that is not UTF-8 is named by its line and
    column (it was replaced, and reported, if at all, as a bad number)."""
    log = tmp_path / "m0.log"
    log.write_bytes(content)
    for res in (motet("log", log), subprocess.run(
            [sys.executable, str(MOTET), "log", "-"], cwd=ROOT, capture_output=True,
            input=content, timeout=60)):
        err = res.stderr if isinstance(res.stderr, str) else res.stderr.decode()
        name = str(log) if res.args[-1] != "-" else "<stdin>"
        assert res.returncode == 1, err
        assert err.startswith(f"log: error: {name}: {says}") and err.count("\n") == 1, err


def test_motet_log_shows_a_log_with_a_header_and_no_records(tmp_path):
    """A module that logged nothing: its log is its header, 0 events."""
    log = tmp_path / "m0.log"
    log.write_text("# motet event log, port native, 1000000 ticks per second\n")
    res = motet("log", log)
    assert res.returncode == 0, res.stderr
    assert "0 events" in res.stdout


def test_motet_log_missing_file(tmp_path):
    res = motet("log", tmp_path / "nope.txt")
    assert res.returncode == 1
    assert "cannot read" in res.stderr


@pytest.mark.parametrize("command", ["build", "size", "test"])
def test_an_unknown_port_is_a_usage_error_naming_the_ports(command):
    res = motet(command, "--port", "ar")
    assert res.returncode == 2
    assert "invalid choice: 'ar'" in res.stderr and "'avr'" in res.stderr


@pytest.mark.parametrize("args, said", [
    (("run", "devices/two-module.toml", "--until", "1", "--until", "2"),
     "motet run: error: argument --until: given twice (1.0 and 2.0); give it once"),
    (("run", "devices/two-module.toml", "--seed", "3", "--seed=4"),
     "motet run: error: argument --seed: given twice (3 and 4); give it once"),
    (("build", "--port", "avr", "--port", "native"),
     "motet build: error: argument --port: given twice (avr and native); give it once"),
    (("new", "hello", "--modules", "2", "--modules", "3"),
     "motet new: error: argument --modules: given twice (2 and 3); give it once"),
    (("appc", "apps/hello/hello.toml", "-o", "{tmp}/a.bin", "-o", "{tmp}/b.bin"),
     "appc: error: argument -o: given twice ({tmp}/a.bin and {tmp}/b.bin); give it once"),
    (("soak", "--messages", "6", "--messages", "12"),
     "motet soak: error: argument --messages: given twice (6 and 12); give it once"),
    (("fuzz", "--seconds", "1", "--seconds", "2"),
     "motet fuzz: error: argument --seconds: given twice (1 and 2); give it once"),
])
def test_an_option_of_one_value_given_twice_is_a_usage_error(args, said, tmp_path):
    """argparse kept the last value silently: `--until 1 ... --until 2` ran
    for 2 s, and which one was meant is a guess. An unknown option after
    the two makes a parser without the check fail at once (a usage error
    of its own) rather than run, build or write what the command does;
    what a command would write goes under tmp_path."""
    res = motet(*(a.format(tmp=tmp_path) for a in args), "--no-such-option")
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.rstrip().endswith(said.format(tmp=tmp_path)), res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize("module", ["bench_device", "bench_energy", "bench_energy_load",
                                    "bench_migrate", "bench_mixed", "bench_ssl", "bench_ssl_avr",
                                    "bench_ssl_ports", "bench_xmigrate", "ssl_demo"])
def test_the_benchmarks_and_the_demo_refuse_an_option_given_twice(module, tmp_path):
    """They parse the options users give them (motet bench, motet demo,
    python3 -m motetlib.M) with the same parser as motet's commands; they
    kept the last value silently. The unknown option makes a parser
    without the check fail at once."""
    res = subprocess.run([sys.executable, "-m", f"motetlib.{module}", "--build-dir",
                          tmp_path / "a", "--build-dir", tmp_path / "b", "--no-such-option"],
                         cwd=ROOT / "tools", capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.rstrip().endswith(f"error: argument --build-dir: given twice ({tmp_path}/a "
                                        f"and {tmp_path}/b); give it once"), res.stderr


def test_a_flag_or_a_repeatable_option_given_twice_is_no_error():
    """A flag given twice loses nothing; --target collects its values."""
    args = cli.parser().parse_args(["build", "--target", "a", "--target", "b"])
    assert args.target == ["a", "b"]
    args = cli.parser().parse_args(["demo", "--drift", "--drift", "--out", "o"])
    assert args.drift and args.out == "o"
    from motetlib import run_device
    p = run_device.cmdline.ArgumentParser()
    run_device.add_arguments(p)
    args = p.parse_args(["d.toml", "--no-build", "--no-build", "--fault", "a", "--fault", "b"])
    assert args.no_build and args.fault == ["a", "b"]


def test_build_and_size_for_another_port_default_to_its_own_tree(monkeypatch):
    """`motet build --port avr` built in the native tree (build), which it
    reconfigured for the AVR (and back at the next plain build); it builds
    in the port's tree beside it, where motet run and motet test build that
    port. A --build-dir given is taken as it is."""
    built = []
    monkeypatch.setattr(build, "build", lambda bdir, port, **kw: built.append((bdir, port)) or 0)
    monkeypatch.setattr(build, "size_check", lambda bdir, port: built.append(("size", bdir, port))
                        or 0)
    monkeypatch.setattr(thread_size, "check", lambda bdir, port: built.append(
        ("threads", bdir, port)) or 0)
    assert cli.main(["build", "--port", "avr", "--target", "hello"]) == 0
    assert cli.main(["size", "--port", "cortex-m"]) == 0
    assert cli.main(["build"]) == 0
    assert cli.main(["build", "--port", "avr", "--build-dir", "mine"]) == 0
    cortex_m = build.port_build_dir(None, "cortex-m")
    assert built == [(build.port_build_dir(None, "avr"), "avr"), (cortex_m, "cortex-m"),
                     ("size", cortex_m, "cortex-m"), ("threads", cortex_m, "cortex-m"),
                     (build.port_build_dir(None, "native"), "native"), ("mine", "avr")]
    assert built[0][0].name.endswith("-avr")


def test_motet_size_builds_the_kernels_both_checks_compare_first(monkeypatch):
    """One build of the kernels the size check and the threads check read,
    then the two checks, in the tree of the port; a build that fails stops
    it before either check."""
    calls = []
    status = [0]
    monkeypatch.setattr(build, "build", lambda bdir, port, targets=(), **kw: calls.append(
        ("build", port, list(targets))) or status[0])
    monkeypatch.setattr(build, "size_check", lambda bdir, port: calls.append("size") or 0)
    monkeypatch.setattr(thread_size, "check", lambda bdir, port: calls.append("threads") or 0)
    assert cli.main(["size", "--port", "avr"]) == 0
    assert calls == [("build", "avr", ["motet_kernel", "motet_kernel_nolog", "motet_kernel_core",
                                       "motet_kernel_nothreads"]), "size", "threads"]
    calls.clear()
    status[0] = 1
    assert cli.main(["size"]) == 1
    assert calls == [("build", "native", [*build.KERNEL_TARGETS, "motet_kernel_nothreads"])]


@pytest.mark.parametrize("command", ["run-hello", "demo"])
def test_a_firmware_port_for_run_hello_or_the_demo_is_a_usage_error(command, monkeypatch,
                                                                     capsys):
    """Both run native programs: run-hello built hello for the port and then
    failed with a traceback executing the image; the demo built and ran its
    native device with --port ignored, in the tree --build-dir named (with
    --build-dir build-avr, it made the AVR tree a native one)."""
    def never(*args, **kwargs):
        raise AssertionError("nothing is built or run")
    monkeypatch.setattr(build, "build", never)
    monkeypatch.setattr(cli, "DEMO", never)
    monkeypatch.setattr(setup_env, "setup", lambda *a, **k: 0)
    assert cli.main([command, "--port", "avr", "--build-dir", "b"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{command}: error: --port avr: "), err
    assert ("ctest --test-dir " if command == "run-hello" else "devices/ssl-mixed.toml") in err


def test_test_for_another_port_builds_and_tests_its_own_tree(monkeypatch):
    """`motet test --port avr` built and tested the native tree (build),
    which it reconfigured for the AVR, where `motet build --port avr` builds
    in build-avr: the stages of one port (build, unit, size) take the
    port's tree as motet build does."""
    used = []
    monkeypatch.setattr(setup_env, "setup", lambda *a, **k: 0)
    monkeypatch.setattr(build, "build", lambda bdir, port, **kw: used.append(("build", bdir,
                                                                              port)) or 0)
    monkeypatch.setattr(stages, "unit_tests",
                        lambda bdir: (used.append(("unit", bdir)), (0, ""))[1])
    monkeypatch.setattr(build, "size_check", lambda bdir, port: used.append(
        ("size", bdir, port)) or 0)
    monkeypatch.setattr(thread_size, "check", lambda bdir, port: 0)
    assert cli.main(["test", "--port", "avr", "--only", "unit,size"]) == 0
    avr = build.port_build_dir(None, "avr")
    assert used == [("build", avr, "avr"), ("unit", avr), ("size", avr, "avr")]


@pytest.mark.parametrize("build_dir", [None, "mine"])
def test_the_ports_stage_takes_another_port_and_tests_it_in_its_tree(build_dir, monkeypatch):
    """The ports stage tests every port, --port's among them, yet `motet
    test --port X --only ports` was refused; it runs, and --port's tree is
    the one the build, unit and size stages use (--build-dir, or
    build-X), the other ports' trees beside the native tree."""
    used = []
    monkeypatch.setattr(setup_env, "setup", lambda *a, **k: 0)
    monkeypatch.setattr(build, "build", lambda bdir, port, **kw: used.append((port, bdir)) or 0)
    monkeypatch.setattr(build, "run", lambda cmd, **kw: used.append(("ctest", cmd[2])) or
                        subprocess.CompletedProcess(cmd, 0, "", ""))
    given = ["--build-dir", build_dir] if build_dir else []
    assert cli.main(["test", "--port", "avr", *given, "--only", "ports"]) == 0
    avr_tree = build_dir or build.port_build_dir(None, "avr")
    cortex_m_tree = build.port_build_dir(None, "cortex-m")
    assert used[0] == ("avr", avr_tree)  # the build stage
    assert sorted(used[1:], key=str) == sorted(
        [("avr", avr_tree), ("cortex-m", cortex_m_tree),
         ("template", build.port_build_dir(None, "template")),
         ("ctest", avr_tree), ("ctest", cortex_m_tree)], key=str)


def test_the_template_port_is_tested_as_the_refusal_says(monkeypatch, capsys):
    """The refusal of the native stages suggested the unit stage for the
    template, which fails on a tree with no tests. What a refusal suggests
    for each port is refused for none; the unit stage of the template says
    it has no tests. (Its tree is configured without tests whoever builds
    it: test_a_fresh_template_tree_configures.)"""
    used = []
    monkeypatch.setattr(setup_env, "setup", lambda *a, **k: 0)
    monkeypatch.setattr(build, "build", lambda bdir, port, extra=(), **kw: used.append(
        (port, bdir, list(extra))) or 0)
    monkeypatch.setattr(build, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0, "",
                                                                                    ""))
    monkeypatch.setattr(build, "size_check", lambda bdir, port: 0)
    monkeypatch.setattr(thread_size, "check", lambda bdir, port: 0)
    template = build.port_build_dir(None, "template")
    assert cli.main(["test", "--port", "template", "--only", "ports"]) == 0
    assert used[0] == ("template", template, [])  # the build stage
    assert ("template", template, []) in used[1:]  # the ports stage
    capsys.readouterr()

    for port in [*stages.EMULATED_PORTS, *stages.BUILD_ONLY_PORTS]:
        used.clear()
        assert cli.main(["test", "--port", port]) == 2
        err = capsys.readouterr().err
        suggested = re.search(rf"`motet test --port {port} --only ([a-z,]+)` builds and tests ",
                              err)
        assert suggested, err
        stages_named = suggested.group(1).split(",")
        assert ("unit" in stages_named) == (port not in stages.BUILD_ONLY_PORTS), err
        assert cli.main(["test", "--port", port, "--only", suggested.group(1)]) == 0, \
            capsys.readouterr().err
        assert used and all(extra == [] for _, _, extra in used)
    capsys.readouterr()
    assert cli.main(["test", "--port", "template", "--only", "unit"]) == 2
    assert capsys.readouterr().err == (
        "test: error: --port template: stage unit: the template port is only compiled, it has "
        f"no tests; `motet test --port template --only size,ports` builds and tests {template}\n")


@pytest.mark.parametrize("args, says", [
    (["test", "--port", "avr"], "test: error: --port avr: stages scenario, sanitize, fuzz "
                                "test the native port, not avr; `motet test --port avr --only "
                                "unit,size,ports` builds and tests "),
    (["test", "--port", "cortex-m", "--only", "fuzz"], "test: error: --port cortex-m: stage "
                                                       "fuzz tests the native port"),
    (["bench", "--port", "avr", "--only", "avr"], "bench: error: --port avr: each benchmark "
                                                  "runs on the ports it measures"),
])
def test_test_and_bench_say_which_stages_or_benchmarks_take_no_port(args, says, monkeypatch,
                                                                    capsys):
    """A stage of the native port (scenario, sanitize, fuzz), and every
    benchmark, take no --port: they ran on the
    native tree (reconfigured for the port by the build stage, or by the
    ssl benchmark) as if it were given; they are refused, status 2, before
    anything is set up or built."""
    def never(*a, **k):
        raise AssertionError("nothing is set up, built or run")
    monkeypatch.setattr(setup_env, "setup", never)
    monkeypatch.setattr(build, "build", never)
    monkeypatch.setattr(bench_all, "run", never)
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(says), err


def test_unknown_command_fails():
    res = motet("frobnicate")
    assert res.returncode == 2
    assert "invalid choice" in res.stderr


# ---- size report and setup plan (no build needed) ----

SIZE_OUTPUT = """\
   text\t   data\t    bss\t    dec\t    hex\tfilename
    400\t      0\t    520\t    920\t    398\tlog.c.o (ex build/kernel/libmotet_kernel.a)
   2000\t      8\t    100\t   2108\t    83c\tsched.c.o (ex build/kernel/libmotet_kernel.a)
"""


def test_size_report_passes_when_log_compiles_out():
    logged = build.parse_size_output(SIZE_OUTPUT)
    assert logged["log.c.o"] == (400, 0, 520)
    nolog = {"log.c.o": (0, 0, 0), "sched.c.o": (1900, 8, 100)}
    lines, failures = build.size_report(logged, nolog)
    assert failures == []
    assert any(line.startswith("total") and "-1020" in line for line in lines)


def test_size_report_fails_when_log_code_remains():
    logged = build.parse_size_output(SIZE_OUTPUT)
    nolog = {"log.c.o": (12, 0, 0), "sched.c.o": (2000, 8, 100)}
    _, failures = build.size_report(logged, nolog)
    assert any("log.c.o still has 12 B of text" in f for f in failures)


def test_size_report_finds_the_log_object_as_a_cross_toolchain_names_it():
    """The cross ports' objects are log.c.obj: the check compared names
    with log.c.o, and never fired on them."""
    logged = {"log.c.obj": (400, 0, 520), "sched.c.obj": (2000, 8, 100)}
    nolog = {"log.c.obj": (12, 0, 0), "sched.c.obj": (1900, 8, 100)}
    _, failures = build.size_report(logged, nolog)
    assert failures == ["log.c.obj still has 12 B of text in the no-log build"], failures
    core = {"log.c.obj": (0, 0, 0), "sched.c.obj": (1500, 8, 90), "mcast.c.obj": (30, 0, 0)}
    _, failures = build.size_report(logged, dict(nolog, **{"log.c.obj": (0, 0, 0)}), core, {})
    assert failures == ["mcast.c.obj, an optional subsystem, still has 30 B in the kernel core"]


def test_size_report_fails_when_nolog_not_smaller():
    sizes = build.parse_size_output(SIZE_OUTPUT)
    _, failures = build.size_report(sizes, dict(sizes, **{"log.c.o": (0, 0, 920)}))
    assert any("not smaller" in f for f in failures)


def _core_sizes():
    logged = build.parse_size_output(SIZE_OUTPUT)
    nolog = {"log.c.o": (0, 0, 0), "sched.c.o": (1900, 8, 100), "mcast.c.o": (300, 0, 24)}
    core = {"log.c.o": (0, 0, 0), "sched.c.o": (1500, 8, 90), "mcast.c.o": (0, 0, 0)}
    return logged, nolog, core


def test_size_report_shows_the_core_and_passes_when_subsystems_compile_out():
    logged, nolog, core = _core_sizes()
    lines, failures = build.size_report(logged, nolog, core, {"sched.c.o": {"sched_send"}})
    assert failures == []
    assert any(line.startswith("total") and line.split()[-1] == "1598" for line in lines)


def test_size_report_fails_when_an_optional_subsystem_has_code_in_the_core():
    logged, nolog, core = _core_sizes()
    core["mcast.c.o"] = (40, 0, 0)
    _, failures = build.size_report(logged, nolog, core, {})
    assert any("mcast.c.o, an optional subsystem, still has 40 B" in f for f in failures)


def test_size_report_fails_when_the_core_names_an_optional_symbol():
    logged, nolog, core = _core_sizes()
    symbols = {"sched.c.o": {"sched_send", "mcast_deliver"}, "timer.c.o": {"timer_interrupt_count"}}
    _, failures = build.size_report(logged, nolog, core, symbols)
    assert any("sched.c.o in the kernel core still names mcast_deliver" in f for f in failures)
    assert any("timer.c.o in the kernel core still names timer_interrupt_count" in f
               for f in failures)


def test_size_report_fails_when_the_core_is_not_smaller():
    logged, nolog, _ = _core_sizes()
    _, failures = build.size_report(logged, nolog, dict(nolog), {})
    assert any("the kernel core" in f and "not smaller" in f for f in failures)


def test_setup_package_groups_are_known_and_unique():
    pkgs = setup_env.packages_for(setup_env.all_groups())
    assert len(pkgs) == len(set(pkgs))
    assert {"cmake", "ninja-build", "libcmocka-dev", "valgrind"} <= set(pkgs)
    with pytest.raises(ValueError):
        setup_env.packages_for(["no-such-group"])


def test_format_reformats_a_file_in_place_as_lint_wants_it(tmp_path):
    """`motet format FILE` leaves FILE as the lint stage's clang-format check
    accepts it, and says that it changed it."""
    ugly = tmp_path / "ugly.c"
    ugly.write_text("int  f( int a ){return a+1;}\n")
    shutil.copy(ROOT / ".clang-format", tmp_path / ".clang-format")
    res = subprocess.run([sys.executable, str(MOTET), "format", str(ugly)], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert "1 C files, 1 reformatted" in res.stdout
    assert ugly.read_text() == "int f(int a)\n{\n    return a + 1;\n}\n"
    check = subprocess.run(["clang-format", "--dry-run", "--Werror", str(ugly)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_lint_names_each_python_problem_by_file_and_line(tmp_path, monkeypatch, capsys):
    """The lint stage's pyflakes check fails on an unused import and an
    undefined name, naming each file and line, and passes a clean tree."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "clean.py").write_text("import os\n\nprint(os.sep)\n")
    monkeypatch.setattr(lint, "ROOT", tmp_path)
    monkeypatch.setattr(lint, "PY_LINT_DIRS", ("tools",))
    assert lint.lint_python() == (0, "pyflakes clean")
    (tools / "bad.py").write_text("import re\n\nprint(undefined_name)\n")
    status, detail = lint.lint_python()
    err = capsys.readouterr().err
    assert (status, detail) == (1, "2 pyflakes problems")
    assert "tools/bad.py:1:1: 're' imported but unused" in err
    assert "tools/bad.py:3:7: undefined name 'undefined_name'" in err


@pytest.mark.parametrize("system, want_apt, want_pip", [
    (True, ["python3-matplotlib"], []),
    (False, [], ["matplotlib"]),
])
def test_setup_brings_a_missing_python_module_from_apt_or_pip(monkeypatch, system, want_apt,
                                                               want_pip):
    """matplotlib (the benchmark plots) missing: Debian's package for the
    system Python, pip for any other interpreter; pytest present: nothing."""
    monkeypatch.setattr(setup_env, "deb_installed", lambda pkg: True)
    monkeypatch.setattr(setup_env, "importable", lambda m: m != "matplotlib")
    monkeypatch.setattr(setup_env, "is_system_python", lambda: system)
    assert setup_env.plan(setup_env.DEFAULT_GROUPS) == (want_apt, want_pip)


@pytest.mark.parametrize("only, chosen", [
    (None, stages.STAGES),
    ("lint", ("setup", "lint")),
    ("setup", ("setup",)),
    ("scenario", ("setup", "build", "scenario")),
    ("ports,unit", ("setup", "build", "unit", "ports")),
])
def test_test_only_runs_the_chosen_stages_and_those_they_need(only, chosen):
    """`motet test --only A,B`: the stages named, in the usual order, with
    setup and build before any stage that needs them."""
    assert stages._chosen_stages(only) == (chosen, None)


@pytest.mark.parametrize("only", ["bogus", "lint,bogus", ","])
def test_test_only_refuses_an_unknown_or_empty_stage_list(only):
    got, error = stages._chosen_stages(only)
    assert got is None and error


def test_each_stage_prints_its_time_and_a_failed_build_skips_the_rest(monkeypatch, capsys):
    """A line with each stage's wall and CPU seconds at its end; the build
    failing skips the later stages, and the summary names the failed one."""
    ran = []

    def test_stages(args):
        def stage(name, status):
            return name, lambda: (ran.append(name), (status, name))[1]
        return [stage(name, 1 if name == "build" else 0) for name in stages.STAGES]

    monkeypatch.setattr(stages, "_test_stages", test_stages)
    status = cli.main(["test"])
    out = capsys.readouterr().out
    assert status == 1
    assert ran == ["setup", "lint", "build"]
    for name in ran:
        assert re.search(rf"^== stage {name}: \d+ s \(cpu \d+ s\)$", out, re.M), out
    assert re.search(r"^  unit +skip +skipped: stage build failed$", out, re.M), out
    assert "motet test: FAILED (build)" in out


def test_a_variant_tree_has_the_plain_trees_ports(tmp_path):
    """The sanitized tree's devices run the AVR and Cortex-M images of the
    plain tree's port trees (built once, by whichever stage comes first);
    its own native programs stay its own."""
    plain = tmp_path / "build"
    asan = build.variant_build_dir(plain, "asan")
    assert asan == tmp_path / "build-asan"
    assert build.port_build_dir(asan, "avr") == tmp_path / "build-avr"
    assert build.port_build_dir(asan, "cortex-m") == build.port_build_dir(plain, "cortex-m")
    assert build.port_build_dir(asan, "native") == asan


def test_the_ports_ctest_runs_at_once_and_a_failed_port_is_named(monkeypatch, capsys, tmp_path):
    """The ports stage builds every port tree first, then runs the emulated
    ports' ctest side by side (each started before either ends), prints
    each one's output whole, and names the port whose tests failed."""
    import threading
    started = threading.Barrier(len(stages.EMULATED_PORTS), timeout=10)
    built = []
    monkeypatch.setattr(build, "build", lambda pdir, port, **kw: built.append(port) or 0)

    def run(cmd, quiet=False, **kw):
        started.wait()  # raises BrokenBarrierError unless all run at once
        pdir = Path(cmd[cmd.index("--test-dir") + 1])
        status = 8 if pdir.name.endswith("-avr") else 0
        return subprocess.CompletedProcess(cmd, status, f"tests of {pdir.name}\n", "")

    monkeypatch.setattr(build, "run", run)
    status, detail = stages.port_tests(tmp_path / "build")
    out = capsys.readouterr().out
    assert built == [*stages.EMULATED_PORTS, *stages.BUILD_ONLY_PORTS]
    assert (status, detail) == (1, "failed: avr (status 8, no report: see its output)")
    for port in stages.EMULATED_PORTS:
        assert f"ports: {port} tests\n$ ctest --test-dir {tmp_path}/build-{port} " in out
        assert f"tests of build-{port}\n" in out


def test_scenarios_sharing_a_module_run_stay_on_one_worker():
    """pytest-xdist runs a module-scoped fixture once per worker that gets
    one of its tests: the test command groups such a module's tests
    (--dist loadgroup and tests/scenario/conftest.py), so its run is made once."""
    cmd = stages.pytest_command(["tests/scenario"])
    assert cmd[cmd.index("--dist") + 1] == "loadgroup"
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                          "--collect-only", "-q", "-m", "xdist_group",
                          "tests/scenario/test_device_migration.py",
                          "tests/scenario/test_device_timesync.py"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    grouped = {line.split("::")[0] for line in res.stdout.splitlines() if "::" in line}
    # The migration scenarios share module runs; the time sync ones run
    # a device per test.
    assert grouped == {"tests/scenario/test_device_migration.py"}, res.stdout + res.stderr


def test_the_sanitize_stage_leaves_out_only_the_scenarios_marked_as_repeats(monkeypatch, tmp_path):
    """The sanitized scenarios are tests/scenario less those marked
    sanitize_repeat (README.md, "sanitize"); the scenario stage runs all."""
    monkeypatch.setattr(build, "build_sanitized", lambda bdir: 0)
    commands = []

    def run(cmd, **kw):
        commands.append([str(c) for c in cmd])
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(build, "run", run)
    monkeypatch.setattr(stages, "run_ctest", lambda bdir, **kw: (subprocess.CompletedProcess([], 0), ""))
    assert stages.sanitizer_tests(tmp_path / "build")[0] == 0
    cmd = commands[-1]
    options = cmd[cmd.index("pytest"):]  # after python's own -m
    assert options[options.index("-m") + 1] == "not sanitize_repeat"
    assert cmd[-1] == "tests/scenario"
    scenario = [str(c) for c in stages.pytest_command(stages.PYTEST_DIRS)]
    assert "-m" not in scenario[scenario.index("pytest"):]

    def collected(*args):
        res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                              "--collect-only", "-q", *args, "tests/scenario"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        return {line for line in res.stdout.splitlines() if "::" in line}

    every, sanitized = collected(), collected("-m", stages.SANITIZE_PYTEST_MARKERS)
    repeats = collected("-m", "sanitize_repeat")
    assert repeats and sanitized and sanitized == every - repeats
    # Each file keeps a sanitized test but the planner's (its runs are the
    # SSL device's): a new scenario file is sanitized unless marked.
    files = {t.split("::")[0] for t in every}
    assert {t.split("::")[0] for t in sanitized} == files - {
        "tests/scenario/test_planner_device.py"}


FAKE_TESTS = """\
import pytest

def test_passes():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_odd(n):
    assert n % 2

class TestSetup:
    @pytest.fixture
    def broken(self):
        raise RuntimeError("no build")

    def test_errs(self, broken):
        pass
"""


def test_a_failed_scenario_stage_names_its_failed_tests_in_the_summary(monkeypatch, capsys,
                                                                        tmp_path):
    """CI shows only the tail of `motet test`'s output: the scenario stage's
    line of the summary names each test that failed or errored, as pytest
    names it (from its JUnit XML report in the build tree), sorted: the
    workers finish them in no fixed order."""
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "test_fake.py").write_text(FAKE_TESTS)
    monkeypatch.setattr(stages, "ROOT", tmp_path)
    monkeypatch.setattr(stages, "PYTEST_DIRS", ("fake",))
    status, detail = stages.scenario_tests(tmp_path / "build")
    assert status == 1
    assert detail == ("pytest failed: 2 tests: fake/test_fake.py::TestSetup::test_errs, "
                      "fake/test_fake.py::test_odd[2]"), detail
    assert (tmp_path / "build" / "pytest-scenario.xml").is_file()
    capsys.readouterr()
    assert stages._summary([("scenario", status, detail)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == f"  scenario  FAIL  {detail}" and out[-1] == "motet test: FAILED (scenario)"


def test_the_sanitize_stage_names_the_failed_tests_after_its_other_findings(monkeypatch,
                                                                           tmp_path):
    """The sanitized scenarios' failed tests come last on the stage's line,
    after the unit tests (each failed one named) and the sanitizer reports."""
    monkeypatch.setattr(build, "build_sanitized", lambda bdir: 0)

    def run(cmd, **kw):
        cmd = [str(c) for c in cmd]
        if cmd[0] == "ctest":
            failed_log = Path(cmd[cmd.index("--test-dir") + 1], "Testing", "Temporary",
                              "LastTestsFailed.log")
            failed_log.parent.mkdir(parents=True)
            failed_log.write_text("12:test_appmgr\n")
            return subprocess.CompletedProcess(cmd, 8)
        report = Path(next(c for c in cmd if c.startswith("--junitxml="))[len("--junitxml="):])
        report.write_text('<testsuites><testsuite><testcase classname="tests.scenario.test_hello" '
                          'name="test_hello_same_seed_same_output"><failure message="x"/>'
                          '</testcase></testsuite></testsuites>')
        Path(kw["env"]["ASAN_OPTIONS"].split("=", 1)[1].split("/asan")[0], "asan.1").write_text(
            "ERROR: AddressSanitizer: heap-use-after-free\n")
        return subprocess.CompletedProcess(cmd, 1)

    monkeypatch.setattr(build, "run", run)
    status, detail = stages.sanitizer_tests(tmp_path / "build")
    assert (status, detail) == (1, "failed: ctest: 1 test: test_appmgr, 1 reports, pytest: 1 test: "
                                   "tests/scenario/test_hello.py::test_hello_same_seed_same_output")


def test_a_unit_stage_whose_tree_has_no_test_fails(tmp_path):
    # a tree configured without tests (the template port's, -DMOTET_BUILD_TESTS=OFF)
    # must not pass the unit stage having run nothing
    (tmp_path / "CTestTestfile.cmake").write_text("# no tests\n")
    status, detail = stages.unit_tests(tmp_path)
    assert status != 0
    assert detail.startswith("ctest failed")
