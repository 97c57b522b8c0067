/* SPDX-License-Identifier: MIT */
/*
 * A broken variant of migration_stalls.pml that verification must reject:
 * the destination drops every forwarded multicast numbered past its cut,
 * as if it had delivered it itself (Motet before). One that went by the
 * stopped destination before it joined late, numbered past the cut since
 * it took nothing later from that link before joining, is lost, and the
 * task handles a later one first (tests/tools/test_spin_migration.py
 * expects the assertion to fail).
 */
#define BROKEN_WENT_BY 1
#include "migration_stalls.pml"
