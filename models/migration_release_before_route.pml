/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration.pml that verification must reject: on the
 * outcome, the bystander releases what it held back before it updates its
 * route, so those messages go to the old place and overtake nothing there
 * but are overtaken by the ones it sends next, straight to the new place
 * (tests/tools/test_spin_migration.py expects the assertion to fail).
 */
#define BROKEN_RELEASE_BEFORE_ROUTE 1
#include "migration.pml"
