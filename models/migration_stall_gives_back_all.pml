/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration_stalls.pml that verification must reject:
 * the destination, told its migration failed after the source took the
 * task back, gives back everything that reached its copy (Motet before):
 * the forwarded messages, of which the source kept copies, and the
 * multicasts it delivered after joining, which the source recorded. The
 * task handles one twice (tests/tools/test_spin_migration.py expects the
 * assertion to fail).
 */
#define BROKEN_GIVES_BACK_ALL 1
#include "migration_stalls.pml"
