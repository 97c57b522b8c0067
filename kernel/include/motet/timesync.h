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
#include "motet/types.h"

/* Pairs used by the fit from now on (1 .. MOTET_TIMESYNC_WINDOW); restarts
 * it. MT_ERR_INVALID outside the range. */
mt_err_t timesync_set_window(uint8_t window);
/* True on the reference and on a module that has received a beacon. */
bool timesync_synced(void);
/* True if this module sent the most recent beacon it knows of. */
bool timesync_is_reference(void);
/* Beacons received since bus_start(). */
uint32_t timesync_beacons(void);
/* The global time (microseconds) at kernel time `local` (timer_now() scale). */
uint32_t timesync_global(uint32_t local);
/* The global time now, in microseconds. */
uint32_t timesync_now(void);
/* Kernel ticks in a span of `us` global microseconds (rounded down). */
uint32_t timesync_ticks(uint32_t us);

#endif /* MOTET_TIMESYNC_H */
