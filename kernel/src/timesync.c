/* SPDX-License-Identifier: MIT */
/*
 * Time synchronisation (see timesync.h): the offset and drift fit, and the
 * module's view of the global clock.
 *
 * The fit. Each pair is (x, y) = (local time, global - local), both taken
 * relative to the newest pair so that 32-bit wrap-around never matters. A
 * least-squares line through the pairs averages out the stamp resolution
 * (a 32.768 kHz stamp is only good to 30.5 us) and its slope is the drift.
 * Sums are kept in 64 bits; local times far apart are scaled down by a
 * power of two first so that no sum can overflow, and the slope is then
 * divided out bit by bit, which needs no wider type.
 *
 * The module's clock. Pairs and estimates are in microseconds: a kernel
 * time converts by one multiplication, which commutes with the wrap at
 * 2^32 because a tick is a whole number of microseconds.
 */
#include "motet/timesync.h"
#include "bus_internal.h"
#include "motet/bus.h"
#include "motet/log.h"
#include "motet/mem.h"
#include "motet/port.h"
#include "motet/timer.h"
#include "sched_internal.h"
#include "timesync_internal.h"

/* Scaled local differences stay below this, so n * sum(x^2) < 2^63. */
#define X_LIMIT ((int64_t) 1 << 26)
/* Offsets may disagree with the fit by this much beyond TIMESYNC_MAX_PPM
 * (stamp resolution and interrupt latency), in microseconds. */
#define SLACK_US 1000

#define US_PER_TICK (1000000u / PORT_TICKS_PER_SECOND)
_Static_assert(1000000u % PORT_TICKS_PER_SECOND == 0,
               "the global clock counts microseconds: a kernel tick must be a whole number");

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* a / b rounded to nearest, b > 0 (C division truncates toward zero). */
static int64_t div_round(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

/* num / den as a Q32 fraction, den > 0, |num| < den; saturates. */
static int32_t ratio_q32(int64_t num, int64_t den)
{
    uint64_t n = (uint64_t) abs64(num), d = (uint64_t) den, q = 0;
    if (n >= d) return num < 0 ? -INT32_MAX : INT32_MAX;
    for (uint8_t i = 0; i < 32; i++) { /* n < d < 2^63: n << 1 fits */
        n <<= 1;
        q <<= 1;
        if (n >= d) {
            n -= d;
            q |= 1u;
        }
    }
    if (q > INT32_MAX) q = INT32_MAX;
    return num < 0 ? -(int32_t) q : (int32_t) q;
}

void ts_fit_reset(ts_fit_t *f, uint8_t window)
{
    if (window < 1) window = 1;
    if (window > MOTET_TIMESYNC_WINDOW) window = MOTET_TIMESYNC_WINDOW;
    *f = (ts_fit_t){.window = window};
}

static uint8_t newest(const ts_fit_t *f)
{
    return (uint8_t) ((f->next + f->window - 1u) % f->window);
}

/* The slope of y over x, Q32, from the n pairs (x scaled by 2^shift). */
static int32_t fit_slope(const ts_fit_t *f, uint8_t shift)
{
    int64_t sx = 0, sy = 0, sxx = 0, sxy = 0, n = f->count;
    for (uint8_t i = 0; i < f->count; i++) {
        int64_t x = (int32_t) (f->local[i] - f->base_local) / ((int64_t) 1 << shift);
        int64_t y = (int32_t) (f->offset[i] - f->base_offset);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    int64_t den = n * sxx - sx * sx, num = n * sxy - sx * sy;
    if (den <= 0) return 0;
    int32_t slope = ratio_q32(num, den) / (int32_t) ((int32_t) 1 << shift);
    int32_t limit = (int32_t) (((int64_t) TIMESYNC_MAX_PPM << 32) / 1000000);
    return slope > limit ? limit : slope < -limit ? -limit : slope;
}

static void refit(ts_fit_t *f)
{
    uint8_t k = newest(f);
    f->base_local = f->local[k];
    f->base_offset = f->offset[k];
    int64_t sx = 0, sy = 0, span = 0;
    for (uint8_t i = 0; i < f->count; i++) {
        int64_t x = (int32_t) (f->local[i] - f->base_local);
        sx += x;
        sy += (int32_t) (f->offset[i] - f->base_offset);
        if (abs64(x) > span) span = abs64(x);
    }
    uint8_t shift = 0;
    while ((span >> shift) >= X_LIMIT) shift++;
    f->mean_x = (int32_t) (sx / f->count);
    f->mean_y_q16 = sy * 65536 / f->count;
    f->drift_q32 = f->count > 1 ? fit_slope(f, shift) : 0;
}

/* The fitted offset at local time `local`, relative to base_offset. */
static int64_t fitted_y(const ts_fit_t *f, uint32_t local)
{
    int64_t dx = (int64_t) (int32_t) (local - f->base_local) - f->mean_x;
    return div_round(f->mean_y_q16 + div_round(dx * f->drift_q32, 65536), 65536);
}

uint32_t ts_fit_global(const ts_fit_t *f, uint32_t local)
{
    if (!f->count) return local;
    return local + f->base_offset + (uint32_t) fitted_y(f, local);
}

int32_t ts_fit_drift_ppb(const ts_fit_t *f)
{
    return (int32_t) div_round((int64_t) f->drift_q32 * 1000000000, (int64_t) 1 << 32);
}

/* A new pair that the fit cannot explain by any plausible clock. */
static bool implausible(const ts_fit_t *f, uint32_t local, uint32_t global)
{
    if (!f->count) return false;
    int64_t error = (int32_t) (global - ts_fit_global(f, local));
    int64_t elapsed = abs64((int32_t) (local - f->base_local));
    return abs64(error) > elapsed * TIMESYNC_MAX_PPM / 1000000 + SLACK_US;
}

bool ts_fit_add(ts_fit_t *f, uint32_t local, uint32_t global)
{
    bool plausible = !implausible(f, local, global);
    if (!plausible) ts_fit_reset(f, f->window);
    f->local[f->next] = local;
    f->offset[f->next] = global - local;
    f->next = (uint8_t) ((f->next + 1u) % f->window);
    if (f->count < f->window) f->count++;
    refit(f);
    return plausible;
}

/* ---- the module's clock ---- */

static struct {
    ts_fit_t fit;
    uint32_t beacons;
    bool reference;
} T;

void timesync_reset(void)
{
    port_irq_state_t s = port_irq_save();
    T.beacons = 0;
    T.reference = false;
    ts_fit_reset(&T.fit, MOTET_TIMESYNC_WINDOW);
    port_irq_restore(s);
}

mt_err_t timesync_set_window(uint8_t window)
{
    if (window < 1 || window > MOTET_TIMESYNC_WINDOW) return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    ts_fit_reset(&T.fit, window);
    port_irq_restore(s);
    return MT_OK;
}

bool timesync_synced(void)
{
    return T.reference || T.fit.count > 0;
}

bool timesync_is_reference(void)
{
    return T.reference;
}

uint32_t timesync_beacons(void)
{
    return T.beacons;
}

static uint32_t local_us(uint32_t ticks)
{
    return ticks * US_PER_TICK; /* modulo 2^32, like the ticks */
}

uint32_t timesync_global(uint32_t local)
{
    if (T.reference) return local_us(local);
    port_irq_state_t s = port_irq_save(); /* beacons arrive in interrupts */
    uint32_t global = ts_fit_global(&T.fit, local_us(local));
    port_irq_restore(s);
    return global;
}

uint32_t timesync_ticks(uint32_t us)
{
    return us / US_PER_TICK;
}

uint32_t timesync_now(void)
{
    return timesync_global(timer_now());
}

void timesync_beacon(uint32_t stamp, uint32_t local)
{
    T.reference = false; /* another module keeps the global clock */
    T.beacons++;
    ts_fit_add(&T.fit, local_us(local), stamp);
}

void timesync_beacon_sent(void)
{
    T.reference = true;
}

#if MOTET_BUS

/* A beacon carries only its stamp; a payload sent with it is checked and
 * let go as one sent off the module is (payload_check()). */
mt_err_t timesync_send(void *data, uint16_t len, uint8_t flags)
{
    static const uint8_t blank[BUS_SYNC_PAYLOAD]; /* the interface stamps it */
    mt_pid_t sender = port_in_isr() ? MT_PID_NONE : sched_current_pid();
    mt_err_t err = payload_check(data, len, flags, sender);
    if (err) return err;
    err = bus_send_frame(BUS_FRAME_SYNC, BUS_BROADCAST, MT_PID_TIMESYNC, PORT_0, BUS_PRIO_SYSTEM,
                         blank, BUS_SYNC_PAYLOAD);
    if (err) return err; /* logged by the bus manager; the payload still the sender's */
    payload_consumed(data, flags, sender);
    return MT_OK;
}

#endif
