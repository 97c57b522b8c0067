/* SPDX-License-Identifier: MIT */
/*
 * migration.pml with a destination that stays up: the source still gives
 * up at any moment before its decision (out of time), so the image may
 * reach the destination after the failed RESULT. Checked here: no copy
 * left frozen at the destination for good (`no_stale_copy`), besides the
 * model's own checks (tests/tools/test_spin_migration.py).
 */
#define D_STAYS
#include "migration.pml"
