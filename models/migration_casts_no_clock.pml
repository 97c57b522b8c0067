/* SPDX-License-Identifier: MIT */
/*
 * migration_casts.pml without the source's timeouts after its decision
 * (NO_CLOCK_AFTER_DECISION: no take-back on a clock, no RESULT ok sent
 * again): the configuration `complete` is checked on with multicasts
 * under weak fairness. With the take-back, that search went past 55
 * million states (3 GB) and was stopped; with RESULT ok sent again alone
 * it takes 200 s, too long for the test run. Both are checked for
 * `complete` without multicasts (migration.pml), and with them for the
 * assertions and `single` (migration_casts.pml).
 */
#define NO_CLOCK_AFTER_DECISION
#include "migration_casts.pml"
