/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration_casts.pml that verification must reject:
 * the protocol before the tail. A destination that missed the successful
 * RESULT (it went by while the destination was stopped) joins T's group
 * only at END, with no cut when the FORWARDs come: it drops every
 * forwarded multicast, and those it took before END were recorded at the
 * source after the commit and never forwarded. A multicast is lost, and
 * T handles a later one first (tests/tools/test_spin_migration.py expects
 * the assertion to fail).
 */
#define BROKEN_LATE_JOIN 1
#include "migration_casts.pml"
