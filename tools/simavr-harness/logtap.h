/* SPDX-License-Identifier: MIT */
/*
 * The kernel's event log as the harness sees it written (logtap.c): each
 * slot of the image's ring, when the kernel steps its write offset past
 * it, goes to a file with the cycle it was written at, so that a device
 * run has every module's event log in exact cycles.
 */
#ifndef SIMAVR_HARNESS_LOGTAP_H
#define SIMAVR_HARNESS_LOGTAP_H

#include <stdint.h>

#include "sim_avr.h"

/* Where the image keeps its ring (data-space addresses, from its symbols):
 * log_ring, its size in bytes, and log_write_offset. */
typedef struct logtap_ring {
    uint32_t ring;
    uint32_t ring_bytes;
    uint32_t offset;
} logtap_ring_t;

/* Parse "RING:BYTES:OFFSET" (decimal or 0x hex); 0 on success. */
int logtap_parse_ring(const char *text, logtap_ring_t *out);
/* Open `path` for the slots of `avr`'s ring, its data space ending at
 * `data_end`; 0 on success. */
int logtap_open(const char *path, const logtap_ring_t *ring, avr_t *avr, uint32_t data_end,
                uint32_t freq);
/* After each instruction: the slot written, if the offset moved. */
void logtap_step(void);
/* Flush and close the file. */
void logtap_close(void);

#endif /* SIMAVR_HARNESS_LOGTAP_H */
