# SPDX-License-Identifier: MIT
"""`motet setup`: install what building and testing Motet needs, idempotently.

Every package the project needs is listed here and nowhere else. Setup
checks each one first (`dpkg -s`) and only when something is missing runs
`apt-get update` and `apt-get install -y --no-install-recommends` for the
missing ones, which needs root. Run as another user, it prints the exact
command to run as root and fails.

The Python modules the tools import (PY_MODULES: pytest for the tests and
pytest-xdist to run them on every core, scipy for `motet plan`'s solver,
matplotlib for the benchmark plots and the planner's regions plot, pyflakes
for the lint stage's check of the Python files) are the exception:
whatever the running Python can already import is used. Otherwise the
Debian package (python3-pytest, python3-pytest-xdist, python3-scipy,
python3-matplotlib, python3-pyflakes) is installed when this is the system
Python, which the `motet` wrapper prefers, and `pip install` is used for
any other interpreter (a virtualenv, pyenv), which cannot see Debian's
packages.
"""

import importlib.util
import os
import shutil
import subprocess
import sys

# Package groups: the native build, and the tool chain and emulator of each
# emulated port (Cortex-M on QEMU, AVR on simavr). `motet test` runs the
# kernel tests on every port, so every group is installed by default.
PACKAGES = {
    "native": [
        "cmake",
        "ninja-build",
        "gcc",
        "binutils",  # `size` for the footprint check
        "libcmocka-dev",
        "clang-format",
        "valgrind",
        "spin",
        "clang",  # the fuzz targets (tests/fuzz): libFuzzer is Clang's
        "libclang-rt-14-dev",  # libclang_rt.fuzzer, -fsanitize=fuzzer (bookworm's Clang 14)
        "ccache",  # a tree's repeated compiles of one source (build.compiler_launcher())
    ],
    "cortex-m": [
        "gcc-arm-none-eabi",
        "libnewlib-arm-none-eabi",
        "qemu-system-arm",
    ],
    "avr": [
        "gcc-avr",
        "avr-libc",
        "binutils-avr",
        "simavr",
        "libsimavr-dev",
        "libelf-dev",  # pkg-config --cflags --libs simavr needs it
    ],
}
DEFAULT_GROUPS = ("native", "cortex-m", "avr")
# Python modules: import name -> (Debian package, pip package).
PY_MODULES = {
    "pytest": ("python3-pytest", "pytest"),
    "xdist": ("python3-pytest-xdist", "pytest-xdist"),  # `motet test`: pytest -n CORES
    "scipy": ("python3-scipy", "scipy"),  # scipy.optimize.milp (HiGHS): motet plan
    "matplotlib": ("python3-matplotlib", "matplotlib"),  # plots: benchmarks, plan --regions
    "pyflakes": ("python3-pyflakes", "pyflakes"),  # `motet test`'s lint of the Python files
}


def packages_for(groups):
    """The Debian packages of `groups`, in order, without duplicates."""
    out = []
    for group in groups:
        if group not in PACKAGES:
            raise ValueError(f"unknown package group {group!r} (known: {', '.join(PACKAGES)})")
        for pkg in PACKAGES[group]:
            if pkg not in out:
                out.append(pkg)
    return out


def deb_installed(pkg):
    """True if dpkg reports `pkg` as installed (not merely known)."""
    try:
        res = subprocess.run(["dpkg", "-s", pkg], capture_output=True, text=True)
    except FileNotFoundError:
        return False
    if res.returncode != 0:
        return False
    for line in res.stdout.splitlines():
        if line.startswith("Status:"):
            return line.split()[-1] == "installed"
    return False


def importable(module):
    return importlib.util.find_spec(module) is not None


def is_system_python():
    """True if the running interpreter is Debian's python3 (apt can serve it)."""
    exe = os.path.realpath(sys.executable)
    return exe.startswith("/usr/bin/python3")


def plan(groups):
    """(missing Debian packages, pip packages the running Python needs)."""
    missing = [p for p in packages_for(groups) if not deb_installed(p)]
    pip = []
    for module, (deb, pip_name) in PY_MODULES.items():
        if importable(module):
            continue
        if is_system_python():
            if deb not in missing:
                missing.append(deb)
        else:
            pip.append(pip_name)
    return missing, pip


def _apt_command(missing):
    return "apt-get update && apt-get install -y --no-install-recommends " + " ".join(missing)


def _run(cmd, env=None):
    print("setup: $ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, env=env).returncode


def apt_install(missing):
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        print("setup: error: this is not a Debian-like system (no apt-get/dpkg); install the "
              "equivalents of these Debian packages by hand: " + " ".join(missing),
              file=sys.stderr)
        return 1
    if os.geteuid() != 0:
        print("setup: error: missing packages: " + " ".join(missing), file=sys.stderr)
        print("setup: run this as root, then try again:\n    " + _apt_command(missing),
              file=sys.stderr)
        return 1
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if _run(["apt-get", "update"], env) != 0:
        print("setup: error: apt-get update failed", file=sys.stderr)
        return 1
    if _run(["apt-get", "install", "-y", "--no-install-recommends"] + missing, env) != 0:
        print("setup: error: apt-get install failed for: " + " ".join(missing), file=sys.stderr)
        return 1
    python_debs = {deb for deb, _ in PY_MODULES.values()}
    still = [p for p in missing if p not in python_debs and not deb_installed(p)]
    if still:
        print("setup: error: still not installed after apt-get: " + " ".join(still),
              file=sys.stderr)
        return 1
    return 0


def pip_install(names):
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", *names]
    if _run(cmd) != 0:
        print(f"setup: error: could not install {' '.join(names)} for {sys.executable}; run:"
              "\n    " + " ".join(cmd), file=sys.stderr)
        return 1
    importlib.invalidate_caches()
    return 0


def setup(groups=DEFAULT_GROUPS, quiet=False):
    """Install whatever `groups` need that is missing. Returns an exit status."""
    try:
        missing, pip = plan(groups)
    except ValueError as e:
        print(f"setup: error: {e}", file=sys.stderr)
        return 1
    if not missing and not pip:
        if not quiet:
            n = len(packages_for(groups))
            print(f"setup: all {n} packages of {', '.join(groups)} present, "
                  f"{', '.join(PY_MODULES)} importable")
        return 0
    if missing:
        status = apt_install(missing)
        if status != 0:
            return status
    if pip:
        status = pip_install(pip)
        if status != 0:
            return status
    absent = [m for m in PY_MODULES if not importable(m)]
    if absent:
        print(f"setup: error: {', '.join(absent)} still not importable by {sys.executable}",
              file=sys.stderr)
        return 1
    print("setup: done")
    return 0


def all_groups():
    return tuple(PACKAGES)
