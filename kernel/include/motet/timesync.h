/* SPDX-License-Identifier: MIT */
/*
 * Time synchronisation: one global clock for a device whose modules each
 * count on their own crystal.
 *
 * The global clock is the kernel time of the reference module, the one that
 * sends beacons, in microseconds: a device's modules may tick at different
 * rates (1 us on the native port, 100 us on the Cortex-M port, 32 us on an
 * 8 MHz ATmega128), so every module counts the global clock, and its own
 * time in the fit, in microseconds (a kernel tick is a whole number of
 * them; on the native port the two are the same). A task makes its module
 * the reference by sending any message to the virtual pid MT_PID_TIMESYNC
 * (typically from a periodic timer, so the rate can change at run time).
 * Each beacon is one broadcast frame; the bus stamps it with the sender's
 * time in microseconds at the instant it is complete at the receivers, and
 * each receiver's driver captures its own time at that same instant. Every
 * receiver thus gets pairs (local, global) and fits global - local = offset
 * + drift * local by least squares over the last MOTET_TIMESYNC_WINDOW
 * pairs: the offset removes the difference of the clocks, the drift their
 * rate difference (a few ppm), so the estimate stays good between beacons.
 * A window of 1 is offset only.
 *
 * All arithmetic is on 32-bit times modulo 2^32, in integers (the same on
 * an 8-bit module): the drift is a Q32 fraction, the fit is taken about its
 * newest pair, and a pair that disagrees with the fit by more
 * than a plausible clock error (a new reference, a restarted module)
 * starts the fit over.
 *
 * Example (a task on the reference module, once a second):
 *
 *     if (port == PORT_TIMEOUT0) sched_send_to(MT_PID_TIMESYNC, PORT_0, NULL, 0, 0);
 *
 * and anywhere:  uint32_t t = timesync_now();   // global microseconds
 */
#ifndef MOTET_TIMESYNC_H
#define MOTET_TIMESYNC_H

#include "motet/config.h"
#include "motet/log.h"
#include "motet/types.h"

/* Largest rate difference the fit accepts between two clocks, in ppm; a
 * pair implying more restarts the fit. Crystals are within +/-100 ppm. */
#define TIMESYNC_MAX_PPM 500

/* The estimator, exposed for tests; one instance lives in timesync.c. */
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
/* Pairs used by the fit from now on (1 .. MOTET_TIMESYNC_WINDOW); restarts
 * it. MT_ERR_INVALID outside the range. */
mt_err_t timesync_set_window(uint8_t window);
/* True on the reference and on a module that has received a beacon. */
bool timesync_synced(void);
/* True if this module sent the most recent beacon it knows of. */
bool timesync_is_reference(void);
/* Beacons received since timesync_reset(). */
uint32_t timesync_beacons(void);
/* The global time (microseconds) at kernel time `local` (timer_now() scale). */
uint32_t timesync_global(uint32_t local);
/* The global time now, in microseconds. */
uint32_t timesync_now(void);
/* Kernel ticks in a span of `us` global microseconds (rounded down). */
uint32_t timesync_ticks(uint32_t us);
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

#endif /* MOTET_TIMESYNC_H */
