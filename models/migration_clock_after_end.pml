/* SPDX-License-Identifier: MIT */
/*
 * migration.pml, broken: after its decision the source takes the task
 * back on a clock whether END is out or not (the C takes END out of the
 * send queue first, and waits for its verdict once the bus interface has
 * it). The destination may have taken END and started the task, which is
 * then live on two modules: `single` must fail
 * (tests/tools/test_spin_migration.py).
 */
#define BROKEN_CLOCK_AFTER_END
#include "migration.pml"
