# SPDX-License-Identifier: MIT
"""`motet test`'s lint stage and `motet format`: clang-format over the C
files, pyflakes over the Python files."""

import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

from . import build

ROOT = build.ROOT

# What `motet test` formats and lints: every C source and header below these.
LINT_DIRS = ("kernel", "ports", "apps", "tests", "bench")
# What pyflakes checks: every Python file below these (and tools/motet, by its shebang).
PY_LINT_DIRS = ("tools", "tests", "apps", "bench")


def lint_files():
    """Tracked (and new, not ignored) *.c/*.h files under LINT_DIRS."""
    try:
        res = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                              "-z", "--", *LINT_DIRS], cwd=ROOT, capture_output=True)
        ok = res.returncode == 0
    except FileNotFoundError:
        ok = False
    if ok:
        names = [n for n in res.stdout.decode().split("\0") if n]
    else:  # not a git checkout: every file on disk
        names = [str(p.relative_to(ROOT)) for d in LINT_DIRS if (ROOT / d).is_dir()
                 for p in (ROOT / d).rglob("*")]
    return sorted({n for n in names if n.endswith((".c", ".h")) and (ROOT / n).is_file()})


def _clang_format_violations(name):
    res = subprocess.run(["clang-format", "--dry-run", "--Werror", name], cwd=ROOT,
                         capture_output=True, text=True)
    if res.returncode == 0:
        return 0
    return max(1, res.stderr.count("error:"))


def lint():
    """clang-format check of every C file, pyflakes of every Python file;
    returns (status, detail)."""
    status, detail = lint_c()
    py_status, py_detail = lint_python()
    return status or py_status, f"{detail}; {py_detail}"


def lint_python():
    """pyflakes over the host tools and the tests: unused imports and names,
    undefined names, f-strings without placeholders."""
    res = subprocess.run([sys.executable, "-m", "pyflakes", *PY_LINT_DIRS], cwd=ROOT,
                         capture_output=True, text=True)
    if res.returncode == 0:
        print(f"lint: Python files under {', '.join(PY_LINT_DIRS)} pass pyflakes")
        return 0, "pyflakes clean"
    if "No module named pyflakes" in res.stderr:
        print("lint: error: pyflakes not importable (run `./motet setup`)", file=sys.stderr)
        return 1, "pyflakes missing"
    problems = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    print(f"lint: pyflakes found {len(problems)} problem{'s' if len(problems) != 1 else ''}:",
          file=sys.stderr)
    for line in problems:
        print("    " + line, file=sys.stderr)
    return 1, f"{len(problems)} pyflakes problem{'s' if len(problems) != 1 else ''}"


def lint_c():
    """clang-format check of every C file; returns (status, detail)."""
    files = lint_files()
    if not (ROOT / ".clang-format").exists():
        print("lint: error: no .clang-format at the repository root", file=sys.stderr)
        return 1, "no .clang-format"
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            counts = list(pool.map(_clang_format_violations, files))
    except FileNotFoundError:
        print("lint: error: clang-format not found (run `./motet setup`)", file=sys.stderr)
        return 1, "clang-format missing"
    bad = [(f, n) for f, n in zip(files, counts) if n]
    if not bad:
        print(f"lint: {len(files)} C files formatted as .clang-format says")
        return 0, f"{len(files)} files"
    print(f"lint: {len(bad)} of {len(files)} C files are not clang-formatted:", file=sys.stderr)
    for f, n in bad:
        print(f"    {f}  ({n} place{'s' if n > 1 else ''})", file=sys.stderr)
    print("lint: see the differences with `clang-format --dry-run FILE`, fix with:\n"
          "    clang-format -i " + " ".join(f for f, _ in bad), file=sys.stderr)
    return 1, f"{len(bad)} file{'s' if len(bad) > 1 else ''} not formatted"


def cmd_format(args):
    """clang-format -i, with the configuration the lint stage checks
    against (.clang-format), on FILEs or on every file lint checks."""
    files = [str(Path(f).resolve()) for f in args.files] or lint_files()
    if not (ROOT / ".clang-format").exists():
        print("format: error: no .clang-format at the repository root", file=sys.stderr)
        return 1
    before = {f: (ROOT / f).read_bytes() for f in files if (ROOT / f).is_file()}
    missing = sorted(set(files) - set(before))
    if missing:
        print(f"format: error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 1
    try:
        res = subprocess.run(["clang-format", "-i", "--", *files], cwd=ROOT)
    except FileNotFoundError:
        print("format: error: clang-format not found (run `./motet setup`)", file=sys.stderr)
        return 1
    if res.returncode != 0:
        return res.returncode
    changed = [f for f, data in before.items() if (ROOT / f).read_bytes() != data]
    print(f"format: {len(files)} C files, {len(changed)} reformatted"
          + (":\n    " + "\n    ".join(changed) if changed else ""))
    return 0
