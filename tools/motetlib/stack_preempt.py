# SPDX-License-Identifier: MIT
"""The kernel-stack bound of stackcheck: stack preemption without recursion.

Motet runs every handler nested on the one kernel stack, so its static call
graph has cycles (handler -> sched_send -> ... -> handler call -> handler).
The analyser cuts them where a new *activation* begins and sizes each piece
on its own (stackcheck.Analyser.depth):

  - a handler call: an indirect call inside a `dispatch` function, whose
    targets are the task set of the image (stack_tasks.py);
  - a call into a `bounded` function: a kernel path that runs a handler
    outside the send rules (finish_kill runs a dying task's FINAL handler
    wherever the kill happens), allowed at most N times on the stack.

An element is an entry (the root, a task's handler, a bounded function, an
interrupt) with two figures: `full`, its deepest stack when nothing runs
above it, and `reach`, the deepest point at which the next activation can
begin (None: it cannot start one). The stack at any instant is the root,
then a sequence of activations, each above the reach point of the one
below, or above any point of it when an interrupt came in between.

What bounds the sequence (docs/threads.md, "The kernel stack"):
  - rule 4: a task is on the stack at most once, so each task's handler is
    at most one element;
  - a bounded function appears at most its bound (finish_kill: once per
    task, FINAL being the last handler a task runs);
  - the port's interrupt nesting: at most `nesting` interrupt frames, each
    interrupt entry at most once; or, where the port's exit dispatch turns
    interrupts on only to run a task above the interrupted frame
    (`isr-reentry levels`), any entry again, but at most one interrupt per
    priority level of the task set plus one on top (priority_levels()): each
    exit dispatch that let another interrupt in runs at a level of its own,
    strictly above the one below it.

Priority order (rule 1: a nested handler is at least as important as the
one below) is not used: FINAL (kill) and SERIALIZE (migration) handlers run
nested whatever their priority, so a priority-ordered chain would not be a
bound. The bound is therefore the sum over all elements, which the order of
the sequence does not change:

  K = max over the top element T of
        full(T) + sum of reach(e) over the other elements that can reach
        + the `nesting` largest gains full(e) - reach(e) (an interrupt lets
          the next activation begin anywhere in e, not just at its reach
          point; an element that cannot reach joins only that way)
        + the `nesting` largest interrupt costs (hardware frame + full).
The root is always the bottom element; if it cannot reach, one interrupt
must sit above it for anything to run there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Element:
    name: str
    full: int
    reach: int | None


def priority_levels(prios: list[int | None]) -> int:
    """Distinct priority levels of a task set; a task of unknown priority
    (None) may be on any, so it counts as a level of its own."""
    return len({p for p in prios if p is not None}) + sum(p is None for p in prios)


def bound(root: Element, elements: list[Element], isrs: list[Element],
          nesting: int) -> tuple[int, list[str]]:
    """(worst-case kernel stack, the terms of its worst case)."""
    nesting = min(nesting, len(isrs))
    by_cost = sorted(isrs, key=lambda i: i.full, reverse=True)[:nesting]
    isr_total = sum(i.full for i in by_cost)
    isr_terms = [f"interrupt {i.name} {i.full}" for i in by_cost]
    best = root.full + isr_total
    terms = [f"root {root.name} {root.full} (nothing above it)"] + isr_terms
    for top in elements:
        others = [e for e in elements if e is not top]
        total = top.full + sum(e.reach for e in others if e.reach is not None)
        slots = nesting
        chosen: list[str] = []
        if root.reach is None:
            if slots == 0:
                continue  # nothing can run above the root
            total += root.full
            slots -= 1
            chosen.append(f"root {root.name} {root.full} (interrupted)")
        else:
            total += root.reach
            chosen.append(f"root {root.name} {root.reach}")
        gains = sorted(((e.full - (e.reach or 0), e) for e in others + [root]
                        if e is not root or root.reach is not None), key=lambda g: -g[0])
        gains = [g for g in gains if g[0] > 0][:slots]
        total += sum(g for g, _ in gains)
        total += isr_total
        if total > best:
            best = total
            terms = chosen + [f"top {top.name} {top.full}"]
            terms += [f"{e.name} {e.reach}" for e in others if e.reach is not None]
            terms += [f"interrupted in {e.name} +{g}" for g, e in gains] + isr_terms
    return best, terms
