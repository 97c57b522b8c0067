/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration.pml that verification must reject: the
 * source frees what it forwards instead of keeping a copy until END is
 * through, as Motet did before the CONFIRM step. When the destination dies
 * between the commit and END, the source takes the task back without
 * those messages: the next one it handles is out of order
 * (tests/tools/test_spin_migration.py expects the assertion to fail).
 */
#define BROKEN_NO_COPIES 1
#include "migration.pml"
