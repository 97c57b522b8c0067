/* SPDX-License-Identifier: MIT */
/*
 * migration.pml with multicasts and a destination that stops once, at
 * any moment before it takes END, and goes on later (a debugger, a
 * brown-out that keeps its RAM) instead of dying: the frames on their way
 * to it go by it; one of the image's or the commit's unicasts among them
 * ends unreachable at the source, which takes the task back. The
 * destination, resumed once that has happened (RESUME_WHEN), asks what
 * came of the migration, learns it failed and drops its copy, giving back
 * only what the source lacks (tests/tools/test_spin_migration.py).
 * Resumed earlier (`#define RESUME_WHEN 1`), a multicast that went by it
 * is lost: docs/migration.md, "Multicasts", the open case. One message from the sender on S
 * (forwarded, so kept at S as a copy) and two multicasts: the smallest
 * configuration with both kinds of message the copy must not give back.
 */
#define STALLS
#define D_STAYS
#define NP 0
#define NS 1
#define NC 2
#include "migration.pml"
