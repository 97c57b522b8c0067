/* SPDX-License-Identifier: MIT */
/*
 * Programs for migration tests and benchmarks (migrant.c) and their
 * compiled descriptions (one per *.toml here).
 */
#ifndef APPS_MIGRANT_H
#define APPS_MIGRANT_H

#include <stdint.h>

#include "motet/migrate.h"
#include "motet/types.h"

extern const uint8_t migrate_desc[];
extern const uint16_t migrate_desc_len;
extern const uint8_t migrate_cases_desc[];
extern const uint16_t migrate_cases_desc_len;
extern const uint8_t migrate_window_desc[];
extern const uint16_t migrate_window_desc_len;
extern const uint8_t migrate_burst_desc[];
extern const uint16_t migrate_burst_desc_len;
extern const uint8_t migrate_recast_desc[];
extern const uint16_t migrate_recast_desc_len;
extern const uint8_t migrate_bench_desc[];
extern const uint16_t migrate_bench_desc_len;
extern const uint8_t soak_desc[];
extern const uint16_t soak_desc_len;

/* Bytes a sink serialises when its description gives it no pad: its own
 * fields (41 bytes) and a pad; 0: nothing at all; -1: as described. */
#define MIGRANT_STATE_MIN 41
/* Register the programs every module carries; `state_bytes`: the state
 * size of sinks without a pad of their own (the benchmark's, from the
 * command line), 0 for none at all, -1 to leave them as described. */
void migrant_register(int32_t state_bytes);
/* Every sender whose description gives no count sends `count` messages
 * (0: no end, the default); call before the description is loaded. */
void migrant_set_count(uint32_t count);
/* The observer every module installs: one line per migration phase. */
void migrant_observe(const migrate_event_t *ev);

#endif /* APPS_MIGRANT_H */
