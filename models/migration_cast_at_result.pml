/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration.pml that verification must reject: the
 * protocol as it was before the cut. T stays in its group at the source
 * until the source's RESULT has reached every module (its transmission
 * ended), while the destination joins at its own copy of that RESULT, and
 * the destination keeps everything forwarded. When a module rejects the
 * RESULT and the source sends it again, a multicast that goes out in
 * between reaches T on both: held at the source and forwarded, and
 * delivered on the destination. T handles it twice (the soak found this:
 * docs/benchmarks.md; tests/tools/test_spin_migration.py expects the
 * assertion to fail).
 */
#define BROKEN_CAST_AT_RESULT 1
#include "migration_casts.pml"
