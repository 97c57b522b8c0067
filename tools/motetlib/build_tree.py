# SPDX-License-Identifier: MIT
"""Whether a CMake build tree still has the configuration its sources give.

CMake reads some of what its files say only when a tree is configured for
the first time: the flags a toolchain file starts from, its compiler, an
option's or a cache entry's default, a program found once. Once the tree
has those cache entries, a later configure, Ninja's own re-run included,
keeps them whatever the sources now say, so a tree configured before a
toolchain file gained a flag builds without it for ever. `motet build`
records, in the tree, a digest of every CMake file under the repository
that its configure read, and the configure options it was given, and
configures afresh a tree whose record no longer matches
(build.configure()).

Any change to such a file counts, even one that a re-run of CMake would
have taken: which statements only a first configure reads is CMake's own
evaluation (a default inside if(), from ${VAR}, string(APPEND ..._INIT)),
and a fresh configure costs about a second and keeps the objects, so only
what it compiles differently is rebuilt.
"""

import hashlib
import json
import re
from pathlib import Path

RECORD = ".motet-configured-from.json"
RECORD_VERSION = 2


def cached_value(cache_text, key):
    """The value of entry `key` in a CMakeCache.txt's text, or None."""
    m = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", cache_text, re.M)
    return m.group(1) if m else None


def digest(path):
    """Digest of the file `path`, or None if it does not exist."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _ninja_unescape(word):
    return re.sub(r"\$(.)", r"\1", word)


def configure_inputs(bdir, root):
    """The CMake files under `root` that the last configure of `bdir` read
    (the inputs of build.ninja's own regeneration), as absolute paths; not
    those the configure wrote in the tree itself (CMakeFiles/), which may
    lie under `root` too."""
    try:
        text = (Path(bdir) / "build.ninja").read_text(errors="replace")
    except FileNotFoundError:
        return []
    m = re.search(r"^build build\.ninja\b[^\n]*?: RERUN_CMAKE\b([^\n]*(?:\$\n[^\n]*)*)",
                  text, re.M)
    if not m:
        return []
    deps = m.group(1).replace("$\n", " ").partition("|")[2].partition("||")[0]
    words = re.findall(r"(?:\$.|[^\s$])+", deps)
    root, tree = Path(root).resolve(), Path(bdir).resolve()
    found = []
    for word in words:
        path = Path(_ninja_unescape(word))
        if not path.is_absolute():
            path = tree / path
        if ((path.name == "CMakeLists.txt" or path.suffix == ".cmake")
                and path.is_relative_to(root) and not path.is_relative_to(tree)):
            found.append(path)
    return found


def _toolchain(cache_text):
    value = cached_value(cache_text, "CMAKE_TOOLCHAIN_FILE")
    return Path(value) if value else None


def _definitions(options):
    """(name, value) of each -DNAME[:TYPE]=VALUE among configure options."""
    for option in options:
        m = re.match(r"-D([^:=]+)(?::[A-Z]+)?=(.*)$", option, re.S)
        if m:
            yield m.group(1), m.group(2)


def _record_path(bdir):
    return Path(bdir) / RECORD


def _read_record(bdir):
    try:
        record = json.loads(_record_path(bdir).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("version") == RECORD_VERSION else None


def _write(bdir, record):
    _record_path(bdir).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def write_record(bdir, root, options, configured=True):
    """Record what the tree `bdir`, just configured, was configured from:
    its CMake inputs and the configure options (`options`) it was given;
    before it is (not `configured`), the options only."""
    bdir = Path(bdir)
    if not configured:
        _write(bdir, {"version": RECORD_VERSION, "options": list(options), "inputs": {}})
        return
    toolchain = _toolchain((bdir / "CMakeCache.txt").read_text(errors="replace"))
    inputs = configure_inputs(bdir, root)
    if toolchain is not None and toolchain not in inputs:
        inputs.append(toolchain)
    _write(bdir, {"version": RECORD_VERSION, "options": list(options),
                  "inputs": {str(p): digest(p) for p in inputs}})


def recorded_options(bdir):
    """The configure options the record of `bdir` says it was configured
    with, or None if it has no record."""
    record = _read_record(bdir)
    return None if record is None else list(record.get("options") or [])


def _first_configure_time(bdir):
    """When `bdir` was first configured: CMake writes the target system's
    description then, and never again in that tree."""
    times = [p.stat().st_mtime for p in Path(bdir).glob("CMakeFiles/*/CMakeSystem.cmake")]
    return min(times) if times else None


def _shown(path, root):
    path = Path(path)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def stale_reason(bdir, root, options):
    """Why the configured tree `bdir` must be configured afresh, in a few
    words, or None if it is up to date. `options`: the configure options
    this build asks for (none: whatever the tree was configured with). A
    tree with no record (configured by hand, or by a motet before the
    records) is up to date if no CMake input of it changed after its first
    configure; it then gets its record."""
    bdir, root = Path(bdir), Path(root).resolve()
    record = _read_record(bdir)
    cache = (bdir / "CMakeCache.txt").read_text(errors="replace")
    if record is None:
        first = _first_configure_time(bdir)
        if first is None:
            return "it has no record of its first configure"
        toolchain = _toolchain(cache)
        inputs = configure_inputs(bdir, root) + ([toolchain] if toolchain else [])
        for path in inputs:
            if path.exists() and path.stat().st_mtime > first:
                return f"{_shown(path, root)} changed after its first configure"
        for name, value in _definitions(options):
            cached = cached_value(cache, name)
            if cached != value:
                return (f"its cache has {name}={'(nothing)' if cached is None else cached}, not "
                        f"the {value} this build gives")
        write_record(bdir, root, options)
        return None
    recorded = record.get("inputs", {})
    kept = {}
    for name, was in recorded.items():
        now = digest(name)
        if now is None:  # a file gone (an application removed) sets nothing any more
            continue
        if now != was:
            return f"{_shown(name, root)} changed since it was configured"
        kept[name] = was
    if options and list(options) != record.get("options"):
        return (f"it was configured with options {' '.join(record.get('options') or []) or 'none'}, "
                f"not {' '.join(options)}")
    # Files that Ninja's re-run of CMake has read since: what they say now is
    # what that re-run took.
    new = [p for p in configure_inputs(bdir, root) if str(p) not in recorded]
    if new or len(kept) != len(recorded):
        record["inputs"] = {**kept, **{str(p): digest(p) for p in new}}
        _write(bdir, record)
    return None
