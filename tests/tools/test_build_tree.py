# SPDX-License-Identifier: MIT
"""A build tree configured before a CMake file it read changed (a toolchain
file, a port's or the top CMakeLists' cache defaults) is configured afresh
by `motet build` (tools/motetlib/build_tree.py), with the options it was
configured with: CMake reads those defaults only at a tree's first
configure, so such a tree kept its old flags for ever. An untouched tree is
not configured again. The builds run in a copy of the repository, as a
user types them."""

import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from motetlib import build, build_tree  # noqa: E402
from repo_copy import clone, user_env  # noqa: E402

BUILD_TIMEOUT_S = 600
TARGET = "motet_kernel_core"  # a few seconds of avr-gcc


def motet(repo, *args):
    return subprocess.run(["./motet", *args], cwd=repo, env=user_env(), capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT_S)


def build_avr(repo, bdir):
    res = motet(repo, "build", "--port", "avr", "--build-dir", str(bdir), "--target", TARGET)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout


def configured(out):
    return re.search(r"^\$ cmake -G Ninja ", out, re.M) is not None


def compile_flags(bdir):
    """The flags of the tree's cache and of one kernel object's compile."""
    cache = (bdir / "CMakeCache.txt").read_text()
    cached = re.search(r"^CMAKE_C_FLAGS:STRING=(.*)$", cache, re.M).group(1)
    commands = subprocess.run(["ninja", "-C", str(bdir), "-t", "commands", TARGET],
                              capture_output=True, text=True, check=True).stdout
    send = next(line for line in commands.splitlines() if line.endswith("/src/send.c"))
    return cached, send


def build_call(repo, bdir, *options):
    """build.build() of the AVR tree `bdir` with configure options, as the
    benchmarks call it."""
    return subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'tools'); "
                          "from motetlib import build; sys.exit(build.build(sys.argv[1], 'avr', "
                          f"targets=['{TARGET}'], extra=sys.argv[2:]))", str(bdir), *options],
                         cwd=repo, env=user_env(), capture_output=True, text=True,
                         timeout=BUILD_TIMEOUT_S)


def build_with_options(repo, bdir, *options):
    """build_call() that succeeds; its output."""
    res = build_call(repo, bdir, *options)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout


@pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="avr-gcc not installed")
def test_a_tree_configured_before_its_toolchain_file_changed_is_configured_afresh(tmp_path):
    repo = clone(tmp_path / "motet")
    bdir = repo / "build-avr"  # where motet puts it: what CMake writes there is no source
    toolchain = repo / "cmake" / "toolchain-avr.cmake"
    out = build_avr(repo, bdir)
    assert configured(out) and "afresh" not in out
    cached, send = compile_flags(bdir)
    assert "-mrelax" in cached and "-mrelax" in send and "-DMOTET_STALE" not in send

    # Untouched, or touched without a change of what it says: no configure.
    out = build_avr(repo, bdir)
    assert not configured(out) and "afresh" not in out, out
    toolchain.touch()
    (repo / "ports" / "avr" / "port.cmake").touch()
    out = build_avr(repo, bdir)
    assert not configured(out) and "afresh" not in out, out

    # An application added, whose CMakeLists.txt has an option, then removed:
    # Ninja's re-runs of CMake read it and forget it; nothing first-read changed.
    (repo / "apps" / "extra").mkdir()
    (repo / "apps" / "extra" / "CMakeLists.txt").write_text('option(EXTRA_X "x" ON)\n')
    out = build_avr(repo, bdir)
    assert "Re-running CMake" in out and "afresh" not in out, out
    shutil.rmtree(repo / "apps" / "extra")
    out = build_avr(repo, bdir)
    assert "Re-running CMake" in out and "afresh" not in out, out

    # A flag added: the tree is configured afresh, says why, and compiles with it
    # (before, the cache kept the first flags and nothing was recompiled).
    text = toolchain.read_text()
    toolchain.write_text(text.replace("-mrelax -ffunction-sections",
                                      "-mrelax -DMOTET_STALE_TREE -ffunction-sections"))
    out = build_avr(repo, bdir)
    assert out.startswith(f"motet: configuring {bdir} afresh: cmake/toolchain-avr.cmake "
                          "changed since it was configured\n"), out
    assert configured(out) and re.search(r"Building C object .*/src/send\.c", out), out
    cached, send = compile_flags(bdir)
    assert "-DMOTET_STALE_TREE" in cached and "-DMOTET_STALE_TREE" in send
    out = build_avr(repo, bdir)
    assert not configured(out) and "ninja: no work to do" in out, out

    # An option's default changed in the top CMakeLists.txt: the same.
    top = repo / "CMakeLists.txt"
    top.write_text(top.read_text().replace('option(MOTET_BUILD_TESTS "Build the unit tests" ON)',
                                           'option(MOTET_BUILD_TESTS "Build the unit tests" OFF)'))
    out = build_avr(repo, bdir)
    assert "afresh: CMakeLists.txt changed since it was configured" in out, out
    assert "MOTET_BUILD_TESTS:BOOL=OFF" in (bdir / "CMakeCache.txt").read_text()

    # A tree configured by an earlier motet, which kept no record: configured
    # afresh if a CMake input is newer than its first configure, else kept.
    (bdir / build_tree.RECORD).unlink()
    out = build_avr(repo, bdir)
    assert not configured(out) and (bdir / build_tree.RECORD).exists(), out
    (bdir / build_tree.RECORD).unlink()
    toolchain.write_text(text)  # -DMOTET_STALE_TREE gone, as from a pull
    out = build_avr(repo, bdir)
    assert "afresh: cmake/toolchain-avr.cmake changed after its first configure" in out, out
    cached, send = compile_flags(bdir)
    assert "-DMOTET_STALE_TREE" not in cached and "-DMOTET_STALE_TREE" not in send

    # Options this build gives that the tree was not configured with (as the
    # 4 MHz tree of the energy benchmarks and the sanitized tree are given).
    out = build_with_options(repo, bdir, "-DMOTET_AVR_F_CPU=4000000")
    assert "afresh: it was configured with options none, not -DMOTET_AVR_F_CPU=4000000" in out
    assert "MOTET_AVR_F_CPU:STRING=4000000" in (bdir / "CMakeCache.txt").read_text()
    assert not configured(build_with_options(repo, bdir, "-DMOTET_AVR_F_CPU=4000000"))
    (bdir / build_tree.RECORD).unlink()
    out = build_with_options(repo, bdir, "-DMOTET_AVR_F_CPU=8000000")
    assert "afresh: its cache has MOTET_AVR_F_CPU=4000000, not the 8000000 this build gives" in out

    # Configured afresh with no options from the command (motet build after a
    # CMake file changed), a tree keeps those it was configured with.
    build_with_options(repo, bdir, "-DMOTET_AVR_F_CPU=4000000")
    toolchain.write_text(text.replace("-mrelax -ffunction-sections",
                                      "-mrelax -DMOTET_CARRIED -ffunction-sections"))
    out = build_avr(repo, bdir)
    assert ("afresh: cmake/toolchain-avr.cmake changed since it was configured; with the "
            "options it was configured with: -DMOTET_AVR_F_CPU=4000000\n") in out, out
    cache = (bdir / "CMakeCache.txt").read_text()
    assert "MOTET_AVR_F_CPU:STRING=4000000" in cache and "-DMOTET_CARRIED" in cache
    toolchain.write_text(text)

    # A cache entry's default taken from a variable, which a plain set()
    # gives: what a change of it would do is CMake's to say, so it counts.
    port = repo / "ports" / "avr" / "port.cmake"
    port_text = port.read_text()
    port.write_text(port_text + 'set(STALE_VALUE one)\nset(MOTET_STALE ${STALE_VALUE} CACHE '
                    'STRING "")\n')
    build_avr(repo, bdir)
    port.write_text(port_text + 'set(STALE_VALUE two)\nset(MOTET_STALE ${STALE_VALUE} CACHE '
                    'STRING "")\n')
    out = build_avr(repo, bdir)
    assert "afresh: ports/avr/port.cmake changed since it was configured" in out, out
    assert "MOTET_STALE:STRING=two" in (bdir / "CMakeCache.txt").read_text()
    port.write_text(port_text)

    # A first configure that failed (a port.cmake with an error), then the
    # error fixed: what the failed one cached is not kept, its options are.
    other = repo / "build-avr-other"
    port.write_text(port_text + 'set(MOTET_STALE one CACHE STRING "")\n'
                    'message(FATAL_ERROR "broken on purpose")\n')
    res = build_call(repo, other, "-DMOTET_AVR_F_CPU=4000000")
    assert res.returncode != 0 and "broken on purpose" in res.stdout + res.stderr
    port.write_text(port_text + 'set(MOTET_STALE two CACHE STRING "")\n')
    out = build_avr(repo, other)
    assert (f"motet: configuring {other} afresh: its last configure did not finish (no "
            "build.ninja); with the options it was configured with: "
            "-DMOTET_AVR_F_CPU=4000000\n") in out, out
    cache = (other / "CMakeCache.txt").read_text()
    assert "MOTET_STALE:STRING=two" in cache and "MOTET_AVR_F_CPU:STRING=4000000" in cache
    port.write_text(port_text)

    # A target the tree does not have is bad input (status 2), not a build
    # that failed (1); Ninja says what it may have meant.
    res = motet(repo, "build", "--port", "avr", "--build-dir", str(bdir), "--target", "kernel_cor")
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert "ninja: error: unknown target 'kernel_cor'" in res.stdout + res.stderr
    assert res.stderr.rstrip().endswith(f"error: no target 'kernel_cor' in {bdir} (above: what "
                                        "Ninja suggests)"), res.stderr

    # Another port in the same tree: its toolchain is not the tree's.
    res = motet(repo, "build", "--port", "native", "--build-dir", str(bdir), "--target", TARGET)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "afresh: it was configured for port avr (its files removed)" in res.stdout, res.stdout
    cached, send = compile_flags(bdir)
    assert "-mmcu" not in cached and "avr-gcc" not in send, send
    # The AVR objects went (a stack analyser reading the tree's .su files
    # took the other port's for its own), the compiler cache stayed.
    assert not list(bdir.rglob("*.c.obj")) and (bdir / "ccache").is_dir()


def test_a_cmake_tree_of_no_motet_port_is_left_alone(tmp_path, capsys):
    """A directory named by mistake (MOTET_BUILD_DIR, --build-dir) whose
    cache is no Motet tree's is refused, not emptied as a tree of another
    port would be, and left exactly as it was: the lock file motet created
    before it refused stayed in it."""
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    (foreign / "CMakeCache.txt").write_text("CMAKE_GENERATOR:INTERNAL=Ninja\n")
    (foreign / "main.o").write_text("someone's object\n")
    assert build.build(foreign, "native") == 2
    assert sorted(p.name for p in foreign.iterdir()) == ["CMakeCache.txt", "main.o"]
    assert (foreign / "main.o").read_text() == "someone's object\n"
    err = capsys.readouterr().err
    assert (f"error: {foreign} is a CMake tree of no Motet port (its cache has "
            "MOTET_PORT=(nothing)); remove it or pick another --build-dir") in err, err
    (foreign / "CMakeCache.txt").write_text("CMAKE_GENERATOR:INTERNAL=Ninja\n"
                                            "MOTET_PORT:STRING=vax\n")
    assert build.build(foreign, "native") == 2
    assert sorted(p.name for p in foreign.iterdir()) == ["CMakeCache.txt", "main.o"]
    assert "its cache has MOTET_PORT=vax)" in capsys.readouterr().err


def test_a_build_dir_that_is_a_file_or_a_directory_of_other_files_is_refused(tmp_path):
    """--build-dir naming a file gave a traceback; a directory with files
    but no CMake cache (--build-dir docs) was taken for a new tree and
    configured. Both are bad input, status 2, and left as they were; a
    directory motet configured (its record) whose cache a user removed, or
    an empty one, is still a tree."""
    repo = clone(tmp_path / "motet")
    res = motet(repo, "build", "--build-dir", "README.md")
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stderr == (f"error: {repo / 'README.md'} is not a directory; pick another "
                          "--build-dir\n"), res.stderr
    before = {p: p.read_bytes() for p in (repo / "docs").rglob("*") if p.is_file()}
    res = motet(repo, "build", "--build-dir", "docs")
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stderr.startswith(f"error: {repo / 'docs'} is no build tree: it has no CMake "
                                 "cache, and holds app-format.md, architecture.md, "
                                 "benchmarks.md, ...; pick another --build-dir\n"), res.stderr
    assert {p: p.read_bytes() for p in (repo / "docs").rglob("*") if p.is_file()} == before

    assert build.foreign_tree(tmp_path / "none") is None
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / build.LOCK_FILE).write_text("")
    assert build.foreign_tree(tmp_path / "empty") is None
    ours = tmp_path / "ours"
    (ours / "CMakeFiles").mkdir(parents=True)
    (ours / build_tree.RECORD).write_text("{}")
    (ours / "build.ninja").write_text("")
    assert build.foreign_tree(ours) is None


def test_trees_with_no_cmake_cache_that_are_trees_are_accepted(tmp_path, monkeypatch):
    """A tree with CMake's files but no cache (plain `cmake -S . -B build`
    after its cache was removed), the fuzz tree holding only the corpus a
    CI cache restored, a directory holding only dot-files or lost+found:
    each was refused as a directory of someone's files."""
    def tree(name, *entries):
        bdir = tmp_path / name
        bdir.mkdir()
        for entry in entries:
            if entry.endswith("/"):
                (bdir / entry).mkdir()
            else:
                (bdir / entry).write_text("")
        return bdir

    for bdir in (tree("cmake-files", "CMakeFiles/", "Makefile", "cmake_install.cmake"),
                 tree("ninja-file", "build.ninja", "kernel/"),
                 tree("build-fuzz", "corpus/"), tree("b-fuzz", "artifacts/", "corpus/"),
                 tree("dots", ".gitkeep", ".cache/"), tree("mount", "lost+found/")):
        assert build.foreign_tree(bdir) is None, bdir
    # The fuzzing run's directories are the fuzz tree's only.
    plain = tree("build", "corpus/")
    assert build.foreign_tree(plain) == (f"{plain} is no build tree: it has no CMake cache, and "
                                         "holds corpus; pick another --build-dir")

    # A directory that cannot be read, or a symbolic link to nothing: a
    # clear error (they gave a traceback at iterdir() and at mkdir).
    unreadable = tree("unreadable", "x")
    listing = Path.iterdir

    def iterdir(self):
        if self == unreadable:
            raise PermissionError(13, "Permission denied", str(self))
        return listing(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert build.foreign_tree(unreadable) == (f"cannot read {unreadable}: Permission denied; "
                                              "pick another --build-dir")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    assert build.foreign_tree(dangling) == (f"{dangling} is a symbolic link to {tmp_path / 'gone'}"
                                            ", which does not exist; pick another --build-dir")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "motet"), "build", "--build-dir",
                          str(dangling)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr == f"error: {build.foreign_tree(dangling)}\n", \
        res.stderr
    assert not (tmp_path / "gone").exists()


def test_a_tree_is_judged_again_under_its_lock(tmp_path, monkeypatch, capsys):
    """A tree another build holds and empties (for another port) can look
    foreign for a moment; it was judged outside the lock only, and refused.
    What it holds under the lock decides."""
    bdir = tmp_path / "tree"
    (bdir / "CMakeFiles").mkdir(parents=True)
    (bdir / build.LOCK_FILE).write_text("")

    def lock_held():
        with open(bdir / build.LOCK_FILE, "a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return False
            except BlockingIOError:
                return True

    def judged(path):
        return None if lock_held() else f"{path} looks emptied"

    monkeypatch.setattr(build, "foreign_tree", judged)
    monkeypatch.setattr(build, "configure", lambda *args: 1)
    assert build.build(bdir, "native") == 1
    assert capsys.readouterr().err == f"error: cmake configure failed in {bdir}\n"


def test_a_configure_failing_for_another_reason_shows_no_refusal_of_an_earlier_build(
        tmp_path, monkeypatch, capsys):
    """The refusals appc recorded in an earlier build are removed before
    the configure: a configure failing for another reason (a CMake error)
    is a failed configure, status 1, not the old refused description."""
    bdir = tmp_path / "tree"
    (bdir / "CMakeFiles").mkdir(parents=True)
    (bdir / build_tree.RECORD).write_text("{}")
    (bdir / build.APPC_REFUSALS).mkdir()
    (bdir / build.APPC_REFUSALS / "hello-hello.txt").write_text("appc: error: an old one\n")
    configured = []

    def configure(*args):
        configured.append(sorted(p.name for p in bdir.iterdir()))
        return 1

    monkeypatch.setattr(build, "configure", configure)
    assert build.build(bdir, "native") == 1
    assert capsys.readouterr().err == f"error: cmake configure failed in {bdir}\n"
    assert configured == [sorted(["CMakeFiles", build_tree.RECORD, build.LOCK_FILE])]


def test_a_tree_of_another_generator_is_bad_input_and_left_alone(tmp_path, capsys):
    """A tree CMake made with another generator than Ninja is refused as the
    other bad inputs are, status 2 (it was 1, a build's failure), and left
    as it was; the build does not add that its configure failed."""
    other = tmp_path / "make-tree"
    other.mkdir()
    (other / "CMakeCache.txt").write_text("CMAKE_GENERATOR:INTERNAL=Unix Makefiles\n"
                                          "MOTET_PORT:STRING=native\n")
    assert build.build(other, "native") == 2
    assert [p.name for p in other.iterdir()] == ["CMakeCache.txt"]
    err = capsys.readouterr().err
    assert err == (f"error: {other} was configured with the 'Unix Makefiles' generator, not "
                   "Ninja; remove it or pick another --build-dir\n"), err


def test_a_description_appc_refuses_in_a_build_is_bad_input_said_last(tmp_path):
    """An application's own description that appc refuses while the build
    compiles it was a failed build, status 1, appc's message amid Ninja's
    output; it is bad input: status 2, appc's message at the end. A C
    error is still a failed build (1), with no refusal of an earlier build
    shown again."""
    repo = clone(tmp_path / "motet")
    bdir = tmp_path / "b"
    desc = repo / "apps" / "hello" / "hello.toml"
    good = desc.read_text()
    desc.write_text(good.replace('program = "radio"', 'program = "radyo"'))
    res = motet(repo, "build", "--build-dir", str(bdir), "--target", "hello")
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stderr.endswith(
        f"error: the build in {bdir} stopped at an application description appc refused:\n"
        f"appc: error: {desc}: task 'radio': unknown program 'radyo' (known: timer, hello, "
        "radio)\n"), res.stderr[-3000:]

    desc.write_text(good)
    source = repo / "apps" / "hello" / "hello.c"
    source.write_text(source.read_text() + "\n#error a C error\n")
    res = motet(repo, "build", "--build-dir", str(bdir), "--target", "hello")
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stderr.endswith(f"error: build failed in {bdir}\n"), res.stderr[-3000:]
    assert "stopped at an application description" not in res.stderr, res.stderr[-3000:]

    # An output appc cannot write is no fault of the description: a failed
    # build (1), with appc's own words; it was a refused description (2).
    source.write_text(source.read_text().replace("\n#error a C error\n", ""))
    out = bdir / "apps" / "hello" / "hello_desc.c"
    out.unlink()
    out.mkdir()
    desc.touch()
    os.utime(desc, (out.stat().st_mtime + 10,) * 2)
    res = motet(repo, "build", "--build-dir", str(bdir), "--target", "hello")
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    assert f"appc: error: cannot write {out}: Is a directory" in res.stdout, res.stdout[-3000:]
    assert res.stderr.endswith(f"error: build failed in {bdir}\n"), res.stderr[-3000:]
    assert "stopped at an application description" not in res.stderr, res.stderr[-3000:]


@pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="avr-gcc not installed")
def test_the_size_check_finds_event_log_text_left_in_a_cross_port_no_log_kernel(tmp_path):
    """`motet size` on the AVR tree, whose objects are log.c.obj: it passes
    on the kernel as it is, and fails when the no-log kernel keeps text of
    the event log (its check looked for log.c.o, and never fired on a
    cross port)."""
    repo = clone(tmp_path / "motet")
    bdir = tmp_path / "b-avr"
    res = motet(repo, "size", "--port", "avr", "--build-dir", str(bdir))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert re.search(r"^  log\.c\.obj +[1-9][0-9]* +0 ", res.stdout, re.M), res.stdout
    log = repo / "kernel" / "src" / "log.c"
    log.write_text(log.read_text() + "\nint log_left_behind(int x);\n"
                   "int log_left_behind(int x) { return 3 * x + 1; }\n")
    res = motet(repo, "size", "--port", "avr", "--build-dir", str(bdir))
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    assert re.search(r"^size: FAIL: log\.c\.obj still has [1-9][0-9]* B of text in the no-log "
                     r"build$", res.stderr, re.M), res.stderr


@pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="avr-gcc not installed")
def test_a_description_appc_refuses_at_configure_time_is_bad_input_said_last(tmp_path):
    """The AVR tree's configure compiles apps/ssl's description for its
    size: a refused description ended the build as a failed configure,
    status 1; it is bad input, status 2, with appc's message last, as when
    the build compiles a description."""
    repo = clone(tmp_path / "motet")
    bdir = tmp_path / "b-avr"
    desc = repo / "apps" / "ssl" / "ssl_device.toml"
    desc.write_text(desc.read_text().replace('program = "mic"', 'program = "mik"', 1))
    res = motet(repo, "build", "--port", "avr", "--build-dir", str(bdir), "--target", TARGET)
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stderr.endswith(
        f"error: the build in {bdir} stopped at an application description appc refused:\n"
        f"appc: error: {desc}: task 'mic0': unknown program 'mik' (known: mic, sc, vote, ht, "
        "radio, temp, ewma, alert, fft)\n"), res.stderr[-3000:]


def test_the_benchmarks_bring_their_trees_up_to_date_under_the_tree_lock(tmp_path,
                                                                          monkeypatch):
    """The Cortex-M and ssl-avr benchmarks ran `cmake --build` on their
    tree without its lock, beside a test or a motet build of that tree;
    every build of a tree holds it (build.tree_lock())."""
    from motetlib import bench_ssl_avr, port_cortex_m

    bdir = tmp_path / "tree"
    bdir.mkdir()
    (bdir / "build.ninja").write_text("")
    held = []

    def fake_run(cmd, *args, **kwargs):
        assert [str(c) for c in cmd] == ["cmake", "--build", str(bdir)], cmd
        with open(bdir / build.LOCK_FILE, "a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held.append(False)
            except BlockingIOError:
                held.append(True)
        return subprocess.CompletedProcess(cmd, 1, "ninja: the failure\n", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(port_cortex_m.BenchError, match="ninja: the failure"):
        port_cortex_m._build(bdir)
    assert bench_ssl_avr.bench(bdir) == 1
    assert held == [True, True]


def test_a_fresh_template_tree_configures(tmp_path):
    """`motet build --port template` on a fresh tree: the template port
    runs no image (its runner is empty), so its tree has no tests, whoever
    configures it. Before, only `motet test` passed -DMOTET_BUILD_TESTS=OFF,
    and `motet build --port template` failed at configure (a test naming
    sources the template has not)."""
    repo = clone(tmp_path / "motet")
    bdir = tmp_path / "b-template"
    res = motet(repo, "build", "--port", "template", "--build-dir", str(bdir), "--target",
                "motet_kernel")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    cache = (bdir / "CMakeCache.txt").read_text()
    assert "MOTET_PORT:STRING=template" in cache, cache
    assert not (bdir / "tests").exists()
