# SPDX-License-Identifier: MIT
"""The fuzz and sanitizer stages' own logic: the checked-in seeds are what
the seed script writes, every fuzz target has seeds and is built, the run's
count of inputs is read, and a sanitizer report file fails the stage while
a suppression summary does not."""

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import fuzz, setup_env, stages  # noqa: E402

FUZZ = ROOT / "tests" / "fuzz"


def load_seed_script():
    spec = importlib.util.spec_from_file_location("make_seeds", FUZZ / "make_seeds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_checked_in_seeds_are_what_the_script_writes():
    written = load_seed_script().seeds()
    assert set(written) == set(fuzz.TARGETS)
    on_disk = {t: {p.name: p.read_bytes() for p in (FUZZ / "corpus" / t).iterdir()}
               for t in fuzz.TARGETS}
    assert on_disk == {t: {n: bytes(d) for n, d in files.items()} for t, files in written.items()}
    # a few each, a seed per kind of input a target takes (fuzz_bus_rx: nine)
    assert all(2 <= len(files) <= 12 for files in on_disk.values())


def test_every_target_is_built_and_has_its_source():
    cmake = (FUZZ / "CMakeLists.txt").read_text()
    listed = re.search(r"set\(MOTET_FUZZ_TARGETS(.*?)\)", cmake, re.S).group(1).split()
    assert tuple(listed) == fuzz.TARGETS
    for target in fuzz.TARGETS:
        assert "LLVMFuzzerTestOneInput" in (FUZZ / f"{target}.c").read_text()


def test_executed_units_are_read_from_libfuzzer_stats():
    out = "INFO: seed\nstat::number_of_executed_units: 4538\nstat::average_exec_per_sec: 907\n"
    assert fuzz.executed_units(out) == 4538
    assert fuzz.executed_units("crashed before the stats") is None


def test_clang_and_its_fuzzer_runtime_are_set_up():
    assert {"clang", "libclang-rt-14-dev"} <= set(setup_env.packages_for(setup_env.DEFAULT_GROUPS))


def test_sanitizer_report_files_fail_and_suppression_summaries_do_not(tmp_path):
    (tmp_path / "asan.101").write_text("Suppressions used:\n  count bytes template\n")
    (tmp_path / "ubsan.102").write_text("sched.c:10:5: runtime error: shift exponent 40\n")
    (tmp_path / "asan.103").write_text("==103==ERROR: AddressSanitizer: heap-use-after-free\n")
    (tmp_path / "asan.104").write_text("==104==WARNING: ASan is ignoring requested "
                                       "__asan_handle_no_return\n")
    assert [name for name, _ in stages.sanitizer_reports(tmp_path)] == ["asan.103", "asan.104",
                                                                       "ubsan.102"]
    env = stages.sanitizer_env(tmp_path, tmp_path / "b")
    assert f"log_path={tmp_path}/asan" in env["ASAN_OPTIONS"]
    assert f"log_path={tmp_path}/ubsan" in env["UBSAN_OPTIONS"]
    assert env["MOTET_BUILD_DIR"] == str(tmp_path / "b")
    assert Path(env["LSAN_OPTIONS"].split("=", 1)[1]).is_file()


def test_the_stage_fuzzes_two_targets_at_a_time_each_for_its_seconds(monkeypatch, capsys):
    """fuzz.run(jobs=2): two libFuzzer processes at once, each target given
    the full `seconds`, the results reported in the targets' order; a
    failing target fails the run and is named."""
    import threading
    import time

    lock, running, most, given = threading.Lock(), [0], [0], []

    def run_target(target, seconds, bdir=None):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            given.append(seconds)
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return (1 if target == "fuzz_appmgr" else 0), 10, "#1 DONE cov: 1 ft: 2 corp: 3"

    monkeypatch.setattr(fuzz, "build_targets", lambda bdir=None: 0)
    monkeypatch.setattr(fuzz, "run_target", run_target)
    status, detail = fuzz.run(None, 5, jobs=2)
    assert most[0] == 2 and given == [5] * len(fuzz.TARGETS)
    assert (status, detail) == (1, "failed: fuzz_appmgr")
    order = re.findall(r"^fuzz: (\w+):", capsys.readouterr().out, re.M)
    assert order == list(fuzz.TARGETS)
