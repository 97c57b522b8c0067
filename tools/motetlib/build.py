# SPDX-License-Identifier: MIT
"""Build helpers: where things are, CMake configure and build, the size check.

The build tree defaults to `build/` at the repository root; a relative
--build-dir is taken relative to the root too, so the commands work from
any directory. The generator is always Ninja.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

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


def _cached_value(cache, key):
    m = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", cache, re.M)
    return m.group(1) if m else None


def configure(bdir, port=DEFAULT_PORT, extra=()):
    """Configure `bdir` with Ninja once; again only if the port changed.
    A port with cmake/toolchain-<port>.cmake is cross-compiled with it."""
    cache_file = bdir / "CMakeCache.txt"
    if cache_file.exists():
        cache = cache_file.read_text(errors="replace")
        gen = _cached_value(cache, "CMAKE_GENERATOR")
        if gen and gen != "Ninja":
            print(f"error: {bdir} was configured with the {gen!r} generator, not Ninja; "
                  f"remove it or pick another --build-dir", file=sys.stderr)
            return 1
        if _cached_value(cache, "MOTET_PORT") == port and (bdir / "build.ninja").exists():
            return 0
    cmd = ["cmake", "-G", "Ninja", "-S", ROOT, "-B", bdir, f"-DMOTET_PORT={port}",
           f"-DPython3_EXECUTABLE={sys.executable}", *extra]
    toolchain = ROOT / "cmake" / f"toolchain-{port}.cmake"
    if toolchain.exists():
        cmd.append(f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    return run(cmd).returncode


def port_build_dir(bdir, port):
    """Build directory of `port` beside the native one: build-<port>."""
    bdir = build_dir(bdir)
    return bdir if port == DEFAULT_PORT else bdir.with_name(f"{bdir.name}-{port}")


def build(bdir=None, port=DEFAULT_PORT, targets=(), extra=()):
    """Configure if needed, then build. Returns an exit status."""
    bdir = build_dir(bdir)
    if not (ROOT / "ports" / port).is_dir():
        known = sorted(p.name for p in (ROOT / "ports").iterdir() if p.is_dir())
        print(f"error: no port {port!r} (ports/ has: {', '.join(known)})", file=sys.stderr)
        return 1
    status = configure(bdir, port, extra)
    if status != 0:
        print(f"error: cmake configure failed in {bdir}", file=sys.stderr)
        return status
    cmd = ["cmake", "--build", bdir]
    for t in targets:
        cmd += ["--target", t]
    status = run(cmd).returncode
    if status != 0:
        print(f"error: build failed in {bdir}", file=sys.stderr)
    return status


# The sanitizer build (`motet test`, stage sanitize): the native tree again,
# with AddressSanitizer and UndefinedBehaviorSanitizer, any report fatal.
SANITIZE_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
SANITIZE_CMAKE_ARGS = (f"-DCMAKE_C_FLAGS={SANITIZE_FLAGS}",
                       "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")


def variant_build_dir(bdir, suffix):
    """A build tree beside `bdir` (None: the default): build-<suffix>."""
    bdir = build_dir(bdir)
    return bdir.with_name(f"{bdir.name}-{suffix}")


def _cached_flags_lack(bdir, flag):
    cache = bdir / "CMakeCache.txt"
    if not cache.exists():
        return False
    return flag not in (_cached_value(cache.read_text(errors="replace"), "CMAKE_C_FLAGS") or "")


def build_sanitized(bdir=None):
    """Configure (with the sanitizer flags) and build build-asan; exit status."""
    sdir = variant_build_dir(bdir, "asan")
    if _cached_flags_lack(sdir, "-fsanitize=address"):
        print(f"error: {sdir} was configured without the sanitizers; remove it", file=sys.stderr)
        return 1
    return build(sdir, DEFAULT_PORT, extra=SANITIZE_CMAKE_ARGS)


def hello_binary(bdir=None):
    return build_dir(bdir) / "apps" / "hello" / "hello"


# ---- footprint: `motet size` ----------------------------------------------

KERNEL_LIBS = ("libmotet_kernel.a", "libmotet_kernel_nolog.a")
# Sub-string of the object name of the event log in the archives.
LOG_OBJECT = "log.c.o"


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


def size_report(logged, nolog):
    """Lines of a per-object comparison table and a list of failures."""
    lines = [f"{'object':<20} {'log on':>8} {'log off':>8} {'diff':>7}   (text+data+bss bytes)"]
    failures = []
    total_on = total_off = 0
    for name in sorted(set(logged) | set(nolog)):
        on = sum(logged.get(name, (0, 0, 0)))
        off = sum(nolog.get(name, (0, 0, 0)))
        total_on += on
        total_off += off
        lines.append(f"{name:<20} {on:>8} {off:>8} {off - on:>+7}")
    lines.append(f"{'total':<20} {total_on:>8} {total_off:>8} {total_off - total_on:>+7}")
    if total_off >= total_on:
        failures.append(f"the no-log kernel ({total_off} B) is not smaller than the "
                        f"kernel with the event log ({total_on} B)")
    log_text = sum(v[0] for k, v in nolog.items() if k == LOG_OBJECT)
    if log_text:
        failures.append(f"{LOG_OBJECT} still has {log_text} B of text in the no-log build")
    return lines, failures


def size_check(bdir=None, port=DEFAULT_PORT, do_build=True):
    """Build both kernel configurations and compare them. Exit status."""
    if do_build:
        status = build(bdir, port, targets=("motet_kernel", "motet_kernel_nolog"))
        if status != 0:
            return status
    kdir = build_dir(bdir) / "kernel"
    paths = [kdir / lib for lib in KERNEL_LIBS]
    for p in paths:
        if not p.exists():
            print(f"size: error: {p} does not exist (build the kernel first)", file=sys.stderr)
            return 1
    try:
        logged, nolog = (archive_sizes(p) for p in paths)
    except RuntimeError as e:
        print(f"size: error: {e}", file=sys.stderr)
        return 1
    lines, failures = size_report(logged, nolog)
    print(f"size: kernel footprint per object, {port} port ({KERNEL_LIBS[0]} vs {KERNEL_LIBS[1]})")
    for line in lines:
        print("  " + line)
    for f in failures:
        print(f"size: FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0
