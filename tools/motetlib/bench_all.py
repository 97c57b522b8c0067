# SPDX-License-Identifier: MIT
"""`motet bench`: every benchmark, each into its section of docs/benchmarks.md.

Benchmarks that render a whole markdown report of their own (the ports, the
device) write it to a scratch file; it is folded in here as a section with
its headings one level down. Those that already write sections (native,
SSL, migration) write directly. `--only` picks some; the others' sections
stay as they were.
"""
import re
import sys
import tempfile
import time
from pathlib import Path

from . import build, report

ALL = ("native", "cortex-m", "avr", "device", "ssl", "ssl-ports", "ssl-avr", "mixed",
       "migration", "migration-avr", "energy", "energy-load", "planner")


def _absorb(name, path):
    """Fold the markdown report at `path` into section `name`: its own
    section of that name if it has one, else the whole file one level down."""
    sections = report.read_sections(Path(path))
    if name in sections:
        report.write_section(name, sections[name])
        return
    text = Path(path).read_text()
    text = re.sub(r"^<!--.*?-->\n", "", text)  # the SPDX line of a standalone file
    text = re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)
    report.write_section(name, text)


def _native(bdir):
    from . import bench
    return bench.bench(bdir)


def _cortex_m(bdir):
    from . import port_cortex_m
    pdir = build.port_build_dir(bdir, "cortex-m")
    if build.build(pdir, "cortex-m") != 0:
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cortex-m.md"
        if not port_cortex_m.bench(pdir, out):
            return 1
        _absorb("cortex-m", out)
    return 0


def _avr(bdir):
    from . import port_avr
    pdir = build.port_build_dir(bdir, "avr")
    if build.build(pdir, "avr") != 0:
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "avr.md"
        status = port_avr.bench(pdir, None, out)
        if status == 0:
            _absorb("avr", out)
        return status


def _device(bdir):
    from . import bench_device
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "device.md"
        args = ["--output", str(out)] + (["--build-dir", str(bdir)] if bdir else [])
        status = bench_device.main(args)
        if status == 0:
            _absorb("device", out)
        return status


def _ssl(bdir):
    from . import bench_ssl
    return bench_ssl.bench(bdir, report.REPORT)


def _ssl_ports(bdir):
    from . import bench_ssl_ports
    pdir = build.port_build_dir(bdir, "cortex-m")  # the same chain on Cortex-M
    if build.build(pdir, "cortex-m") != 0:
        return 1
    return bench_ssl_ports.bench(pdir, report.REPORT)


def _ssl_avr(bdir):
    from . import bench_ssl_avr
    pdir = build.port_build_dir(bdir, "avr")  # a sensing module's share on the ATmega128
    if build.build(pdir, "avr") != 0:
        return 1
    return bench_ssl_avr.bench(pdir, report.REPORT)


def _mixed(bdir):
    from . import bench_mixed
    return bench_mixed.bench(bdir)


def _migration(bdir):
    try:
        from . import bench_migrate
    except ImportError:
        print("bench: migration: no benchmark yet", file=sys.stderr)
        return 0
    return bench_migrate.main(["--build-dir", str(build.build_dir(bdir))])


def _migration_avr(bdir):
    from . import bench_xmigrate
    return bench_xmigrate.main(["--build-dir", str(build.build_dir(bdir))])


def _energy(bdir):
    from . import bench_energy
    return bench_energy.bench(bdir)


def _energy_load(bdir):
    from . import bench_energy_load
    return bench_energy_load.bench(bdir)


def _planner(bdir):
    from . import bench_planner
    return bench_planner.bench(bdir=bdir)


RUNNERS = {"native": _native, "cortex-m": _cortex_m, "avr": _avr, "device": _device,
           "ssl": _ssl, "ssl-ports": _ssl_ports, "ssl-avr": _ssl_avr, "mixed": _mixed,
           "migration": _migration, "migration-avr": _migration_avr, "energy": _energy,
           "energy-load": _energy_load, "planner": _planner}


def run(bdir=None, only=ALL):
    """Run the chosen benchmarks, each on the ports it measures, the native
    tree `bdir` (None: the default) and the other ports' trees beside it;
    an exit status (the first failure's)."""
    failed = []
    unknown = [name for name in only if name not in RUNNERS]
    if unknown:
        print(f"bench: error: unknown benchmark {unknown[0]!r} (known: {', '.join(ALL)})",
              file=sys.stderr)
        return 2
    started = time.monotonic()
    for k, name in enumerate(only, 1):
        print(f"\n== bench {name} ({k} of {len(only)}, {time.monotonic() - started:.0f} s so "
              "far)", flush=True)
        if RUNNERS[name](bdir) != 0:
            failed.append(name)
    if failed:
        print(f"bench: FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"bench: wrote {report.REPORT.relative_to(build.ROOT)}")
    return 0
