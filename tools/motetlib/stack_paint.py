# SPDX-License-Identifier: MIT
"""The stack analyser against stack painting, on a real AVR image.

Runs IMAGE under the simavr harness (the port paints the free RAM before
main() and reports the painted bytes overwritten at halt: the shared-stack
high-water mark), analyses the same image with `motet stack`, and fails
unless
  - the analysis is not refused and its kernel-stack figure is at least the
    measured high-water mark (a bound below a measurement is wrong);
  - with --port-config, the port's PORT_THREAD_STACK_EXTRA is at least the
    analysed "interrupts on a thread" figure (what an interrupt and its
    exit, up to the switch away, put on a thread's stack).
It prints both figures and the margin; the margin is reported, not judged:
the bound is sound, not tight (docs/threads.md, "The kernel stack").

Images that do not halt on their own (the benchmark images wait for the
interrupts their benchmark run injects) take the mark their benchmark run
recorded instead: --measured-from docs/benchmarks.md reads the row of IMAGE
in a "| image | stack bytes used |" table ("Shared stack high-water mark").

    stack_paint.py IMAGE.elf --annotations FILE [--annotations ...]
                   [--su DIR ...] [--port-config port_config.h]
                   [--harness motet-simavr | --measured-from FILE]
Exit status: 0 pass, 1 fail, 2 usage or tool error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import port_avr  # noqa: E402
import stackcheck  # noqa: E402

EXTRA = re.compile(r"^#define\s+PORT_THREAD_STACK_EXTRA\s+(\d+)u?\b", re.M)


def painted_high_water(elf: Path, harness: str | None) -> int:
    """The image's shared-stack high-water mark, measured by painting."""
    exe = port_avr.harness_or_exit(harness)
    with tempfile.TemporaryDirectory(prefix="motet-stack-paint-") as work:
        summary = Path(work) / "run.json"
        status, _, err = port_avr._harness_run(exe, elf, ["--json", str(summary)])
        run = json.loads(summary.read_text()) if summary.exists() else {}
    if run.get("end") != "halted" or run.get("stack_used") is None:
        raise stackcheck.StackError(f"{elf.name} did not halt under the harness "
                                    f"(status {status}): {err.strip()[-300:]}")
    return int(run["stack_used"])


def recorded_high_water(elf: Path, table: Path) -> int:
    """The high-water mark recorded for IMAGE in a benchmark report."""
    rows = re.findall(rf"^\|\s*{re.escape(elf.name)}\s*\|\s*(\d+)\s*\|\s*$", table.read_text(),
                      re.M)
    if len(rows) != 1:
        raise stackcheck.StackError(f"{table}: {len(rows)} stack rows for {elf.name}, not one")
    return int(rows[0])


def port_thread_extra(config: Path) -> int:
    m = EXTRA.search(config.read_text())
    if not m:
        raise stackcheck.StackError(f"{config}: no PORT_THREAD_STACK_EXTRA")
    return int(m[1])


def failures(bound: int, measured: int, extra: int | None = None,
             need: int | None = None, config: str = "port_config.h") -> list[str]:
    """What is wrong with the figures: a bound below the measurement, or a
    thread allowance below the analysed figure."""
    out = []
    if bound < measured:
        out.append(f"the bound {bound} B is below the measured {measured} B")
    if extra is not None and need is not None and extra < need:
        out.append(f"PORT_THREAD_STACK_EXTRA ({extra} B) is below the analysed {need} B: "
                   f"raise it in {config}")
    return out


def check(elf: Path, ann: stackcheck.Annotations, su: list[Path], config: Path | None,
          harness: str | None, recorded: Path | None = None) -> int:
    out = stackcheck.analyse(elf, [], ann.isrs, ann=ann, su_dirs=su)
    lines, refused = stackcheck.report(out, False)
    print("\n".join(lines))
    kernel = out["kernel"]
    if refused or kernel is None:
        print(f"stack_paint: FAIL: {elf.name}: the analysis refused the image", file=sys.stderr)
        return 1
    if recorded is not None:
        measured, source = recorded_high_water(elf, recorded), f"recorded in {recorded.name}"
    else:
        measured, source = painted_high_water(elf, harness), "measured now"
    print(f"{elf.name}: kernel stack bound {kernel.depth} B, painted high-water mark "
          f"{measured} B ({source}), margin {kernel.depth - measured} B")
    extra = need = None
    if config is not None:
        extra, need = port_thread_extra(config), out["thread_extra"].depth
        print(f"PORT_THREAD_STACK_EXTRA {extra} B, analysed interrupts on a thread {need} B")
    wrong = failures(kernel.depth, measured, extra, need, str(config))
    for w in wrong:
        print(f"stack_paint: FAIL: {w}", file=sys.stderr)
    return 1 if wrong else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="stack_paint.py", description=__doc__.split("\n\n")[0])
    p.add_argument("elf", type=Path)
    p.add_argument("--annotations", action="append", type=Path, default=[], required=True)
    p.add_argument("--su", action="append", type=Path, default=[])
    p.add_argument("--port-config", type=Path)
    p.add_argument("--harness")
    p.add_argument("--measured-from", type=Path,
                   help="take the painted mark from this report instead of a run")
    args = p.parse_args(argv)
    try:
        ann = stackcheck.Annotations()
        for path in args.annotations:
            stackcheck.parse_annotations(path.read_text(), str(path), ann)
        return check(args.elf, ann, args.su or [args.elf.parent], args.port_config,
                     args.harness, args.measured_from)
    except (stackcheck.StackError, OSError) as e:
        print(f"stack_paint: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
