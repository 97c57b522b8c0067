# SPDX-License-Identifier: MIT
"""Whether a CMake build tree still has the configuration its sources give.

CMake reads some statements only when a tree is configured for the first
time: the flags a toolchain file starts from (CMAKE_C_FLAGS_INIT), its
compiler, an option's or a cache entry's default, a program found once.
Once the tree has those cache entries, a later configure, Ninja's own
re-run included, keeps them whatever the sources now say, so a tree
configured before a toolchain file gained a flag builds without it for
ever. `motet build` records, in the tree, what those statements said when it
configured the tree, and configures afresh a tree whose record no longer
matches the sources (build.configure()).
"""

import hashlib
import json
import re
from pathlib import Path

RECORD = ".motet-configured-from.json"
RECORD_VERSION = 1

# Statements whose effect a configure after the first does not renew.
FIND_COMMANDS = {"find_program", "find_library", "find_path", "find_file"}
TOOLCHAIN_VARIABLES = re.compile(r"^CMAKE_(\w+_COMPILER|SYSTEM_NAME|SYSTEM_PROCESSOR|"
                                 r"SYSTEM_VERSION|SYSROOT)$")

_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def _bracket_end(text, i):
    """End of the bracket argument or comment that opens at text[i], or None
    if none opens there."""
    m = _BRACKET_OPEN.match(text, i)
    if not m:
        return None
    close = text.find("]" + m.group(1) + "]", m.end())
    return len(text) if close < 0 else close + len(m.group(1)) + 2


def _skip_comment(text, i):
    """End of the comment that starts at text[i] ('#')."""
    end = _bracket_end(text, i + 1)
    if end is not None:
        return end
    nl = text.find("\n", i)
    return len(text) if nl < 0 else nl


def _arguments(text, i):
    """The arguments of the command whose '(' is just before text[i], and the
    index after its ')'."""
    args, depth, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            i = _skip_comment(text, i)
        elif c == "(":
            depth += 1
            args.append(c)
            i += 1
        elif c == ")":
            if depth == 0:
                return args, i + 1
            depth -= 1
            args.append(c)
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            args.append(text[i:j + 1])
            i = j + 1
        elif (end := _bracket_end(text, i)) is not None:
            args.append(text[i:end])
            i = end
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()#"':
                j += 2 if text[j] == "\\" else 1
            args.append(text[i:j])
            i = j
    return args, n


def commands(text):
    """(name in lower case, [arguments]) of each command of a CMake file,
    comments left out and each argument as written (quotes kept)."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            i = _skip_comment(text, i)
            continue
        m = _NAME.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            args, i = _arguments(text, m.end())
            yield m.group(1).lower(), args
            continue
        i += 1


def _unquoted(arg):
    return arg[1:-1] if len(arg) >= 2 and arg[0] == arg[-1] == '"' else arg


def first_configure_only(name, args):
    """Whether a later configure leaves the effect of this command as the
    first one made it."""
    if name == "option" or name in FIND_COMMANDS:
        return True
    if name != "set" or not args:
        return False
    variable = _unquoted(args[0])
    return ("CACHE" in args[1:] or variable.endswith("_INIT")
            or TOOLCHAIN_VARIABLES.match(variable) is not None)


def digest(path, whole=False):
    """Digest of what the CMake file `path` says that only a first configure
    reads (`whole`: all its commands, as for a toolchain file, which a
    configure reads before anything is cached); None if it does not exist.
    Comments and layout do not count."""
    try:
        text = Path(path).read_text(errors="replace")
    except FileNotFoundError:
        return None
    kept = ["\x1f".join([name, *args]) for name, args in commands(text)
            if whole or first_configure_only(name, args)]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()


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
    m = re.search(r"^CMAKE_TOOLCHAIN_FILE:[A-Z]+=(.*)$", cache_text, re.M)
    return Path(m.group(1)) if m and m.group(1) else None


def _definitions(options):
    """(name, value) of each -DNAME[:TYPE]=VALUE among configure options."""
    for option in options:
        m = re.match(r"-D([^:=]+)(?::[A-Z]+)?=(.*)$", option, re.S)
        if m:
            yield m.group(1), m.group(2)


def _record_path(bdir):
    return Path(bdir) / RECORD


def _digests(paths, toolchain):
    return {str(p): digest(p, whole=toolchain is not None and p == toolchain) for p in paths}


def write_record(bdir, root, options):
    """Record what the tree `bdir`, just configured, was configured from:
    the first-configure statements of its CMake inputs and the configure
    options (`options`) it was given."""
    bdir = Path(bdir)
    cache = (bdir / "CMakeCache.txt").read_text(errors="replace")
    toolchain = _toolchain(cache)
    inputs = configure_inputs(bdir, root)
    if toolchain is not None and toolchain not in inputs:
        inputs.append(toolchain)
    record = {"version": RECORD_VERSION, "options": list(options),
              "inputs": _digests(inputs, toolchain)}
    _record_path(bdir).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def forget(bdir):
    """Remove the record of `bdir` (before its configure starts afresh)."""
    _record_path(bdir).unlink(missing_ok=True)


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
    try:
        record = json.loads(_record_path(bdir).read_text())
        if record.get("version") != RECORD_VERSION:
            record = None
    except (FileNotFoundError, ValueError):
        record = None
    cache = (bdir / "CMakeCache.txt").read_text(errors="replace")
    toolchain = _toolchain(cache)
    if record is None:
        first = _first_configure_time(bdir)
        if first is None:
            return "it has no record of its first configure"
        inputs = configure_inputs(bdir, root) + ([toolchain] if toolchain else [])
        for path in inputs:
            if path.exists() and path.stat().st_mtime > first:
                return f"{_shown(path, root)} changed after its first configure"
        for name, value in _definitions(options):
            m = re.search(rf"^{re.escape(name)}:[A-Z]+=(.*)$", cache, re.M)
            if m is None or m.group(1) != value:
                return (f"its cache has {name}={m.group(1) if m else '(nothing)'}, not the "
                        f"{value} this build gives")
        write_record(bdir, root, options)
        return None
    recorded = record.get("inputs", {})
    kept = {}
    for name, was in recorded.items():
        now = digest(name, whole=toolchain is not None and Path(name) == toolchain)
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
        record["inputs"] = {**kept, **_digests(new, toolchain)}
        _record_path(bdir).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return None
