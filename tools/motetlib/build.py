# SPDX-License-Identifier: MIT
"""Build helpers: where things are, CMake configure and build, the size check.

The build tree defaults to `build/` at the repository root; a relative
--build-dir is taken relative to the root too, so the commands work from
any directory. The generator is always Ninja.
"""

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from . import build_tree

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_BUILD_DIR = "build"
DEFAULT_PORT = "native"


def build_dir(path=None):
    """Absolute build directory for a --build-dir value (None: the default)."""
    p = Path(path or os.environ.get("MOTET_BUILD_DIR") or DEFAULT_BUILD_DIR)
    return p if p.is_absolute() else ROOT / p


def run(cmd, cwd=None, quiet=False, **kw):
    """Run a command, echoing it; returns the CompletedProcess."""
    if not quiet:
        print("$ " + " ".join(str(c) for c in cmd), flush=True)
    try:
        return subprocess.run([str(c) for c in cmd], cwd=cwd, **kw)
    except FileNotFoundError:
        print(f"error: command not found: {cmd[0]} (run `./motet setup`)", file=sys.stderr)
        return subprocess.CompletedProcess(cmd, 127, "", "")


# A tree's own compiler cache (compiler_launcher()) and the lock of
# tree_lock(), each a name inside the tree.
CCACHE_DIR = "ccache"
LOCK_FILE = ".motet-build.lock"


def compiler_launcher(bdir):
    """CMake arguments that compile through ccache, its cache inside the
    tree `bdir`, or none without ccache. The kernel's configurations
    compile many sources to the same object (a file no option of the
    configuration reaches), about 40 % of a tree's compiles; the tree's
    own cache serves those repeats within one build, and a fresh tree
    starts empty, so a build's time never depends on another's."""
    ccache = shutil.which("ccache")
    if not ccache:
        return []
    cache = Path(bdir).resolve() / CCACHE_DIR
    return [f"-DCMAKE_C_COMPILER_LAUNCHER=env;CCACHE_DIR={cache};{ccache}"]


# What a tree keeps when it is configured for another port: its compiler
# cache (compiler_launcher()) and the lock of tree_lock(), which is held.
KEPT_ACROSS_PORTS = (CCACHE_DIR, LOCK_FILE)


def _empty_for_another_port(bdir):
    """Remove what the tree `bdir` holds but for KEPT_ACROSS_PORTS: another
    port's objects and images are of no use here, and what reads a
    directory (the stack analysers' --su) would take them for this port's."""
    for entry in bdir.iterdir():
        if entry.name in KEPT_ACROSS_PORTS:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def configure(bdir, port=DEFAULT_PORT, extra=()):
    """Configure `bdir` with Ninja if it is not yet, or afresh if it was
    configured for another port, if its last configure did not finish, or
    if a CMake file it read or its options changed since (build_tree.py).
    With no `extra`, the options the tree was configured with are given
    again. A port with cmake/toolchain-<port>.cmake is cross-compiled with
    it. build() has refused a foreign tree (foreign_tree()) before."""
    cache_file = bdir / "CMakeCache.txt"
    options = list(extra)
    if cache_file.exists():
        cache = cache_file.read_text(errors="replace")
        cached_port = build_tree.cached_value(cache, "MOTET_PORT")
        if cached_port != port:
            _empty_for_another_port(bdir)
            reason = f"it was configured for port {cached_port} (its files removed)"
        elif not (bdir / "build.ninja").exists():
            # What a failed first configure cached may be what was wrong.
            reason = "its last configure did not finish (no build.ninja)"
        else:
            reason = build_tree.stale_reason(bdir, ROOT, extra)
            if reason is None:
                return 0
        recorded = build_tree.recorded_options(bdir)
        if not options and recorded:
            options = recorded
            reason += f"; with the options it was configured with: {' '.join(recorded)}"
        elif not options and recorded is None and cached_port == port:
            reason += ("; it has no record of the options it was configured with: an entry "
                       "of its cache set by hand or by an option (-D...) is not carried over")
        print(f"motet: configuring {bdir} afresh: {reason}", flush=True)
        # What `cmake --fresh` removes; the objects and Ninja's log stay, so
        # only what the new configuration compiles differently is rebuilt.
        cache_file.unlink(missing_ok=True)
        shutil.rmtree(bdir / "CMakeFiles", ignore_errors=True)
    elif not options and (recorded := build_tree.recorded_options(bdir)):
        options = recorded
        print(f"motet: configuring {bdir} with the options it was configured with: "
              f"{' '.join(recorded)}", flush=True)
    # A configure that fails leaves no build.ninja, so the next one starts
    # afresh (above) rather than from what this one cached; the options go
    # in the record first, so that it carries them over.
    (bdir / "build.ninja").unlink(missing_ok=True)
    build_tree.write_record(bdir, ROOT, options, configured=False)
    cmd = ["cmake", "-G", "Ninja", "-S", ROOT, "-B", bdir, f"-DMOTET_PORT={port}",
           f"-DPython3_EXECUTABLE={sys.executable}", *compiler_launcher(bdir), *options]
    toolchain = ROOT / "cmake" / f"toolchain-{port}.cmake"
    if toolchain.exists():
        cmd.append(f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    status = run(cmd).returncode
    if status == 0:
        build_tree.write_record(bdir, ROOT, options)
    return status


# What a directory with no CMake cache may hold and still be a build tree:
# CMake's own files (a tree configured by plain `cmake -S . -B build`, or
# whose cache was removed), motet's record of its configure (build_tree.py),
# what a file system or a user leaves in any directory.
TREE_MARKERS = ("CMakeFiles", "build.ninja", build_tree.RECORD)
ANY_DIRECTORY_HOLDS = ("lost+found",)
# What a fuzzing run keeps in the fuzz tree (fuzz.py), which a CI cache
# restores before the tree is configured.
FUZZ_CORPUS = "corpus"
FUZZ_ARTIFACTS = "artifacts"


def foreign_tree(bdir):
    """Why the directory `bdir` is no tree motet may configure, as the error
    that tells the user what to do, or None. What such a directory holds is
    someone's: it is refused before anything is written in it, the lock of
    tree_lock() included. A directory with no CMake cache is a tree if it
    holds CMake's or motet's files (TREE_MARKERS), or nothing but what any
    directory may hold and what motet puts in a tree it has not configured
    yet (its lock, its compiler cache, a fuzzing run's corpus in the fuzz
    tree); anything else is someone's files (--build-dir docs), which the
    user should keep: another --build-dir, not its removal, is the way out.
    A CMake tree of another generator or of no Motet port is refused too."""
    elsewhere = "pick another --build-dir"
    try:
        if bdir.is_symlink() and not bdir.exists():
            return (f"{bdir} is a symbolic link to {os.readlink(bdir)}, which does not exist; "
                    f"{elsewhere}")
        if not bdir.exists():
            return None
        if not bdir.is_dir():
            return f"{bdir} is not a directory; {elsewhere}"
    except OSError as e:
        return f"cannot look at {bdir}: {e.strerror}; {elsewhere}"
    try:
        cache = (bdir / "CMakeCache.txt").read_text(errors="replace")
    except FileNotFoundError:
        try:
            names = {p.name for p in bdir.iterdir()}
        except OSError as e:
            return f"cannot read {bdir}: {e.strerror}; {elsewhere}"
        if names & set(TREE_MARKERS):
            return None
        allowed = {*KEPT_ACROSS_PORTS, *ANY_DIRECTORY_HOLDS}
        if bdir.name.endswith("-fuzz"):
            allowed |= {FUZZ_CORPUS, FUZZ_ARTIFACTS}
        others = sorted(n for n in names if n not in allowed and not n.startswith("."))
        if others:
            return (f"{bdir} is no build tree: it has no CMake cache, and holds "
                    f"{', '.join(others[:3])}{', ...' if len(others) > 3 else ''}; {elsewhere}")
        return None
    except OSError as e:
        return f"cannot read {bdir / 'CMakeCache.txt'}: {e.strerror}; {elsewhere}"
    gen = build_tree.cached_value(cache, "CMAKE_GENERATOR")
    if gen and gen != "Ninja":
        return (f"{bdir} was configured with the {gen!r} generator, not Ninja; remove it or "
                f"{elsewhere}")
    cached_port = build_tree.cached_value(cache, "MOTET_PORT")
    if cached_port not in known_ports():
        return (f"{bdir} is a CMake tree of no Motet port (its cache has "
                f"MOTET_PORT={cached_port or '(nothing)'}); remove it or {elsewhere}")
    return None


def _locked_by_motet(bdir):
    """Whether `bdir` holds the lock file of tree_lock(), which motet writes
    only in a tree it accepted: what another build does in it under the
    lock (emptying it for another port) may look foreign for a moment."""
    try:
        return (bdir / LOCK_FILE).is_file()
    except OSError:
        return False


def port_build_dir(bdir, port):
    """Build directory of `port` beside the native one: build-<port>. A
    variant of the native tree (build-asan) has the plain tree's port trees
    (build-avr): a variant changes the host build only, the other ports'
    images are the same, so the sanitized scenarios run those already built."""
    bdir = build_dir(bdir)
    if port == DEFAULT_PORT:
        return bdir
    base = variant_base(bdir)
    return base.with_name(f"{base.name}-{port}")


def known_ports():
    """The ports a tree can be built for: the directories under ports/."""
    return sorted(p.name for p in (ROOT / "ports").iterdir() if p.is_dir())


def configured_targets(bdir) -> set[str] | None:
    """The targets of the configured tree bdir (CMake's phony target names,
    from Ninja, the generator of every tree), or None if bdir is not
    configured or Ninja cannot say."""
    bdir = Path(bdir)
    if not (bdir / "build.ninja").exists():
        return None
    try:
        res = subprocess.run(["ninja", "-C", str(bdir), "-t", "targets", "all"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    return {line.split(": ", 1)[0] for line in res.stdout.splitlines()
            if line.endswith(": phony") and "/" not in line.split(": ", 1)[0]}


def targets_not_in(bdir, targets):
    """Those of `targets` the configured tree `bdir` has no target for: a
    name given wrong, not a build that failed ([] if the tree cannot say)."""
    known = configured_targets(bdir) if targets else None
    return [t for t in targets if known is not None and t not in known]


def build(bdir=None, port=DEFAULT_PORT, targets=(), extra=()):
    """Configure if needed, then build. Returns an exit status."""
    bdir = build_dir(bdir)
    if port not in known_ports():
        print(f"error: no port {port!r} (ports/ has: {', '.join(known_ports())})",
              file=sys.stderr)
        return 2
    # Looked at before the lock, which would be written in a foreign
    # directory, and again under it, where no other build changes the tree.
    refused = foreign_tree(bdir)
    if refused and not _locked_by_motet(bdir):
        print(f"error: {refused}", file=sys.stderr)
        return 2
    try:
        bdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"error: cannot create {bdir}: {e.strerror}; pick another --build-dir",
              file=sys.stderr)
        return 2
    with tree_lock(bdir):
        refused = foreign_tree(bdir)
        if refused:
            print(f"error: {refused}", file=sys.stderr)
            return 2
        # A refusal recorded by an earlier build is not this one's.
        shutil.rmtree(bdir / APPC_REFUSALS, ignore_errors=True)
        status = configure(bdir, port, extra)
        if status != 0:
            refusals = appc_refusals(bdir)
            if refusals:
                return _refused(bdir, refusals)
            print(f"error: cmake configure failed in {bdir}", file=sys.stderr)
            return status
        cmd = ["cmake", "--build", bdir]
        for t in targets:
            cmd += ["--target", t]
        status = run(cmd).returncode
        unknown = targets_not_in(bdir, targets) if status != 0 else []
        refusals = appc_refusals(bdir) if status != 0 else []
    if unknown:
        print(f"error: no target {', '.join(map(repr, unknown))} in {bdir} (above: what Ninja "
              "suggests)", file=sys.stderr)
        return 2
    if refusals:
        return _refused(bdir, refusals)
    if status != 0:
        print(f"error: build failed in {bdir}", file=sys.stderr)
    return status


def _refused(bdir, refusals):
    """Say that the build of `bdir`, its configure or its compile, stopped
    at the descriptions appc refused (appc_refusals()); status 2. Bad
    input, not a failed build: what appc said, last, where the user looks,
    rather than amid CMake's or Ninja's output."""
    print(f"error: the build in {bdir} stopped at an application description appc "
          "refused:\n" + "".join(refusals), end="", file=sys.stderr)
    return 2


# Where the build's appc leaves each error refusing a description
# (motet_app_descriptions(), apps/CMakeLists.txt; at configure time, the
# AVR size check of apps/ssl/CMakeLists.txt), emptied before each build.
APPC_REFUSALS = "appc-refused"


def appc_refusals(bdir):
    """The errors appc refused descriptions with in the last build of
    `bdir`, each a line or more, sorted by file."""
    return [p.read_text(errors="replace") for p in sorted((bdir / APPC_REFUSALS).glob("*.txt"))]


@contextlib.contextmanager
def tree_lock(bdir):
    """Hold the build tree `bdir` (created if need be) for one configure and
    build at a time: the tests run in parallel (`motet test`), and several
    of them build what they run in the same tree."""
    bdir.mkdir(parents=True, exist_ok=True)
    with open(bdir / LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def rebuild_captured(bdir):
    """Bring the configured tree `bdir` up to date as it was configured,
    under its lock (tree_lock()), Ninja's output captured: the completed
    `cmake --build`, or None if `bdir` has no build.ninja (nothing to bring
    up to date: the benchmarks read images built elsewhere as they are)."""
    bdir = Path(bdir)
    if not (bdir / "build.ninja").exists():
        return None
    with tree_lock(bdir):
        return subprocess.run(["cmake", "--build", str(bdir)], capture_output=True, text=True)


# The sanitizer build (`motet test`, stage sanitize): the native tree again,
# with AddressSanitizer and UndefinedBehaviorSanitizer, any report fatal.
SANITIZE_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Only what its tests run (MOTET_BUILD_BENCH_ONLY, CMakeLists.txt), at
# -O1 with line tables only (-g1): the sanitizers' own recommended level,
# their reports still name file and line, and the tree compiles in about
# half the CPU of -O2 -g (the tree's build is most of the sanitize stage).
SANITIZE_CMAKE_ARGS = (f"-DCMAKE_C_FLAGS={SANITIZE_FLAGS}",
                       "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG",
                       "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined",
                       "-DMOTET_BUILD_BENCH_ONLY=OFF")


# Variants of the native tree: the sanitized one, the fuzz targets' (Clang).
VARIANTS = ("asan", "fuzz")


def variant_build_dir(bdir, suffix):
    """A build tree beside `bdir` (None: the default): build-<suffix>."""
    if suffix not in VARIANTS:
        raise ValueError(f"unknown build variant {suffix!r} (known: {', '.join(VARIANTS)})")
    bdir = build_dir(bdir)
    return bdir.with_name(f"{bdir.name}-{suffix}")


def variant_base(bdir):
    """The tree `bdir` is a variant of (build for build-asan), else bdir."""
    for suffix in VARIANTS:
        if bdir.name.endswith(f"-{suffix}"):
            return bdir.with_name(bdir.name.removesuffix(f"-{suffix}"))
    return bdir


def build_sanitized(bdir=None):
    """Configure (with the sanitizer flags; afresh a tree configured without
    them) and build build-asan; exit status."""
    return build(variant_build_dir(bdir, "asan"), DEFAULT_PORT, extra=SANITIZE_CMAKE_ARGS)


def hello_binary(bdir=None):
    return build_dir(bdir) / "apps" / "hello" / "hello"


# ---- footprint: `motet size` ----------------------------------------------

# The full kernel with the event log on and off, and the kernel core (every
# optional subsystem compiled out, kernel/CMakeLists.txt).
KERNEL_LIBS = ("libmotet_kernel.a", "libmotet_kernel_nolog.a", "libmotet_kernel_core.a")
KERNEL_TARGETS = ("motet_kernel", "motet_kernel_nolog", "motet_kernel_core")
# The suffixes CMake's generators give an object in an archive: the host
# toolchain's log.c.o, the cross toolchains' log.c.obj.
OBJECT_SUFFIXES = (".o", ".obj")


def object_source(name):
    """The source an archive member was compiled from (log.c for log.c.o
    and log.c.obj), or the name as it is if it has no object suffix."""
    for suffix in OBJECT_SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


# The source of the event log, whose object has no text in the no-log kernel.
LOG_SOURCE = "log.c"
# Sources of the optional subsystems, which must compile to no code in the
# core: the event log, multicast, the application manager and the module
# programs built on it, the bus manager, migration's protocol and threads.
# (The codecs of descriptions, frames, images and layouts stay, for their
# tests and tools; an image links them only where referenced.)
OPTIONAL_SOURCES = re.compile(r"(log|mcast|appmgr|module|module_main|module_errors|"
                              r"bus|bus_app|bus_check|migrate|migrate_bus|migrate_layout|migrate_peer|migrate_source|"
                              r"migrate_peer_cast|migrate_source_tx|thread\w*)\.c")
# Symbols of those subsystems and of the statistics, which no object of the
# core may define or reference: no hook left on a path pulls them in.
OPTIONAL_SYMBOLS = re.compile(r"^(mcast_|appmgr_|log_|thread_|timer_interrupt_count$|"
                              r"send_remote$|sched_remote_find$)")


def parse_size_output(text):
    """Parse Berkeley `size` output of an archive: {object: (text, data, bss)}."""
    out = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or not fields[0].isdigit():
            continue
        name = fields[5]
        out[name] = (int(fields[0]), int(fields[1]), int(fields[2]))
    return out


def archive_sizes(archive):
    res = run(["size", archive], quiet=True, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"`size {archive}` failed: {res.stderr.strip()}")
    return parse_size_output(res.stdout)


def archive_symbol_types(archive, nm="nm"):
    """{object: {symbol: nm's letter for its type}} of every symbol each
    object of an archive defines or references."""
    res = run([nm, "-A", archive], quiet=True, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"`{nm} -A {archive}` failed: {res.stderr.strip()}")
    out = {}
    for line in res.stdout.splitlines():
        # "lib.a:obj.o:0000000000000000 T name" or "lib.a:obj.o:                 U name"
        head, _, rest = line.rpartition(":")
        fields = rest.split()
        if len(fields) >= 2:
            out.setdefault(head.rpartition(":")[2], {})[fields[-1]] = fields[-2]
    return out


def archive_symbols(archive):
    """{object: set of symbols it defines or references} of an archive."""
    return {obj: set(types) for obj, types in archive_symbol_types(archive).items()}


def size_report(logged, nolog, core=None, core_symbols=None):
    """Lines of a per-object comparison table and a list of failures; `core`
    (the kernel core's sizes) adds its column and checks, `core_symbols`
    ({object: symbols it defines or references}) the check of its symbols."""
    core_col = f" {'core':>8}" if core is not None else ""
    lines = [f"{'object':<20} {'log on':>8} {'log off':>8} {'diff':>7}{core_col}"
             "   (text+data+bss bytes" +
             ("; core: every optional subsystem off)" if core is not None else ")")]
    failures = []
    total_on = total_off = total_core = 0
    for name in sorted(set(logged) | set(nolog) | set(core or {})):
        on = sum(logged.get(name, (0, 0, 0)))
        off = sum(nolog.get(name, (0, 0, 0)))
        in_core = sum((core or {}).get(name, (0, 0, 0)))
        total_on += on
        total_off += off
        total_core += in_core
        extra = f" {in_core:>8}" if core is not None else ""
        lines.append(f"{name:<20} {on:>8} {off:>8} {off - on:>+7}{extra}")
    extra = f" {total_core:>8}" if core is not None else ""
    lines.append(f"{'total':<20} {total_on:>8} {total_off:>8} {total_off - total_on:>+7}{extra}")
    if total_off >= total_on:
        failures.append(f"the no-log kernel ({total_off} B) is not smaller than the "
                        f"kernel with the event log ({total_on} B)")
    for name, sizes in sorted(nolog.items()):
        if object_source(name) == LOG_SOURCE and sizes[0]:
            failures.append(f"{name} still has {sizes[0]} B of text in the no-log build")
    if core is None:
        return lines, failures
    if total_core >= total_off:
        failures.append(f"the kernel core ({total_core} B) is not smaller than the full "
                        f"kernel without the event log ({total_off} B)")
    for name, sizes in sorted(core.items()):
        if OPTIONAL_SOURCES.fullmatch(object_source(name)) and sum(sizes):
            failures.append(f"{name}, an optional subsystem, still has {sum(sizes)} B in the "
                            "kernel core")
    for name, syms in sorted((core_symbols or {}).items()):
        found = sorted(s for s in syms if OPTIONAL_SYMBOLS.match(s))
        if found:
            failures.append(f"{name} in the kernel core still names {', '.join(found)}")
    return lines, failures


def size_check(bdir=None, port=DEFAULT_PORT):
    """Compare the built kernel configurations (log on, log off, core: the
    targets KERNEL_TARGETS) of the tree `bdir`. Exit status."""
    kdir = build_dir(bdir) / "kernel"
    paths = [kdir / lib for lib in KERNEL_LIBS]
    for p in paths:
        if not p.exists():
            print(f"size: error: {p} does not exist (build the kernel first)", file=sys.stderr)
            return 1
    try:
        logged, nolog, core = (archive_sizes(p) for p in paths)
        core_symbols = archive_symbols(paths[2])
    except RuntimeError as e:
        print(f"size: error: {e}", file=sys.stderr)
        return 1
    lines, failures = size_report(logged, nolog, core, core_symbols)
    print(f"size: kernel footprint per object, {port} port ({', '.join(KERNEL_LIBS)})")
    for line in lines:
        print("  " + line)
    for f in failures:
        print(f"size: FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0
