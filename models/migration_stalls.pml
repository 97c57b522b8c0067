/* SPDX-License-Identifier: MIT */
/*
 * migration.pml with multicasts and a destination that stops once, at
 * any moment before it takes END, and goes on at any later moment (a
 * debugger, a brown-out that keeps its RAM) instead of dying: the frames
 * on their way to it go by it. One of the image's or the commit's
 * unicasts among them ends unreachable at the source, which takes the
 * task back; the destination, resumed, asks what came of the migration,
 * learns it failed and drops its copy, giving back only what the source
 * lacks. Or it resumes before any did: it may have missed RESULT ok and
 * join late, at the FORWARD, with multicasts that went by it numbered
 * past its cut; it keeps every forwarded one it did not deliver itself
 * (tests/tools/test_spin_migration.py). One message from the sender on S
 * (forwarded, so kept at S as a copy) and two multicasts: the smallest
 * configuration with both kinds of message the copy must not give back.
 */
#define STALLS
#define D_STAYS
#define NP 0
#define NS 1
#define NC 2
#include "migration.pml"
