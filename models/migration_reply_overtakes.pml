/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration.pml that verification must reject: the
 * bystander replies to FREEZE at control priority, so its reply may
 * overtake messages it had already sent to the task; the source then moves
 * the task before they arrive, and they reach it late, behind later ones
 * (tests/tools/test_spin_migration.py expects the assertion to fail).
 */
#define BROKEN_REPLY_OVERTAKES 1
#include "migration.pml"
