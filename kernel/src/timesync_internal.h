/* SPDX-License-Identifier: MIT */
/*
 * Time synchronisation's kernel side (timesync.h is the public side): the
 * fit that turns (local, global) pairs into the global clock, kept apart
 * so that tests and the fuzz target drive it alone, and the calls of the
 * bus manager and of a send to MT_PID_TIMESYNC.
 */
#ifndef MOTET_TIMESYNC_INTERNAL_H
#define MOTET_TIMESYNC_INTERNAL_H

#include "motet/log.h"
#include "motet/timesync.h"

/* Largest rate difference the fit accepts between two clocks, in ppm; a
 * pair implying more restarts the fit. Crystals are within +/-100 ppm. */
#define TIMESYNC_MAX_PPM 500

/* The estimator; one instance lives in timesync.c. */
typedef struct ts_fit {
    uint32_t local[MOTET_TIMESYNC_WINDOW];  /* receive times, a ring */
    uint32_t offset[MOTET_TIMESYNC_WINDOW]; /* global - local, modulo 2^32 */
    uint8_t window;                         /* pairs the fit uses */
    uint8_t count;                          /* pairs held, <= window */
    uint8_t next;                           /* ring slot of the next pair */
    uint32_t base_local;                    /* the newest pair */
    uint32_t base_offset;
    int32_t mean_x;     /* mean local time of the pairs, relative to base */
    int64_t mean_y_q16; /* mean offset relative to base_offset, Q16 */
    int32_t drift_q32;  /* d(offset)/d(local), Q32 */
} ts_fit_t;

/* Empty the fit; `window` is clamped to 1 .. MOTET_TIMESYNC_WINDOW. */
void ts_fit_reset(ts_fit_t *f, uint8_t window);
/* Add the pair (local time, global time) and refit. Returns false if the
 * pair was implausible against the fit and started it over. */
bool ts_fit_add(ts_fit_t *f, uint32_t local, uint32_t global);
/* Estimated global time at local time `local` (local itself if empty). */
uint32_t ts_fit_global(const ts_fit_t *f, uint32_t local);
/* The fitted drift in parts per billion (0 with fewer than two pairs). */
int32_t ts_fit_drift_ppb(const ts_fit_t *f);

/* Forget every beacon: not synchronised, not the reference; boot. */
void timesync_reset(void);
/* Bus manager: a beacon with `stamp` (the reference's time, microseconds)
 * was complete here at kernel time `local`; interrupt context. */
void timesync_beacon(uint32_t stamp, uint32_t local);
/* Bus manager: this module's own beacon went out; it is the reference. */
void timesync_beacon_sent(void);

#if MOTET_BUS
/* A message to MT_PID_TIMESYNC: broadcast a beacon (the payload is not
 * sent; a MSG_HEAP payload, refused as any sent off the module unless the
 * sender's, holding len bytes, is freed once the beacon is queued). Any
 * context. */
mt_err_t timesync_send(void *data, uint16_t len, uint8_t flags);
#else
static inline mt_err_t timesync_send(void *data, uint16_t len, uint8_t flags)
{
    (void) data;
    (void) len;
    (void) flags;
    return log_error(MT_ERR_NO_ROUTE); /* no bus: nobody to synchronise with */
}
#endif

#endif /* MOTET_TIMESYNC_INTERNAL_H */
