/* SPDX-License-Identifier: MIT */
/*
 * The migration image (format in migrate_internal.h) and the timer
 * arithmetic of a migration: pure functions, no kernel state, so that the
 * unit tests can take them apart (tests/unit/test_migrate_image.c).
 */
#include <string.h>

#include "migrate_internal.h"

uint16_t mig_image_size(const mig_image_t *img)
{
    return (uint16_t) (MIG_IMAGE_HEADER + img->n_routes * MIG_ROUTE_BYTES +
                       img->n_timers * MIG_TIMER_BYTES + img->n_groups * MIG_GROUP_BYTES);
}

static uint8_t *encode_timers(const mig_image_t *img, uint8_t *p)
{
    for (uint8_t i = 0; i < img->n_timers; i++) {
        const mig_timer_t *t = &img->timers[i];
        p[0] = t->index;
        mig_put32(p + 1, t->remaining);
        mig_put32(p + 5, t->period);
        p += MIG_TIMER_BYTES;
    }
    return p;
}

uint16_t mig_image_encode(const mig_image_t *img, uint8_t *out, uint16_t cap)
{
    uint16_t size = mig_image_size(img);
    if (img->n_timers > TIMERS_PER_TASK || size > cap) return 0;
    out[0] = MIG_IMAGE_VERSION;
    out[1] = img->pid;
    out[2] = (uint8_t) img->prio;
    out[3] = img->flags;
    out[4] = img->program;
    out[5] = img->n_routes;
    out[6] = img->n_timers;
    out[7] = img->n_groups;
    mig_put32(out + 8, img->tick_hz);
    mig_put16(out + 12, img->state_len);
    mig_put16(out + MIG_IMAGE_HELD, img->held);
    uint8_t *p = out + MIG_IMAGE_HEADER;
    if (img->n_routes) memcpy(p, img->routes, img->n_routes * MIG_ROUTE_BYTES);
    p = encode_timers(img, p + img->n_routes * MIG_ROUTE_BYTES);
    if (img->n_groups) memcpy(p, img->groups, img->n_groups * MIG_GROUP_BYTES);
    return size;
}

/* Timers of a decoded image: valid indices, each at most once. */
static mt_err_t decode_timers(const uint8_t *p, mig_image_t *img)
{
    uint8_t seen = 0;
    for (uint8_t i = 0; i < img->n_timers; i++, p += MIG_TIMER_BYTES) {
        mig_timer_t *t = &img->timers[i];
        t->index = p[0];
        t->remaining = mig_get32(p + 1);
        t->period = mig_get32(p + 5);
        if (t->index >= TIMERS_PER_TASK || (seen & (1u << t->index))) return MT_ERR_INVALID;
        seen |= (uint8_t) (1u << t->index);
    }
    return MT_OK;
}

/* The image comes from another module, and its ports reach the task's
 * handler: each group's (u8 group, u8 port) names an input port (not a
 * system port: the copy joins its groups as mcast_join() would), and
 * each route's (u8 pid, u8 port) the port sched_task_create() takes, a
 * group's id in a route to the multicast pid (route_port_ok()). */
static bool groups_fit(const uint8_t *p, uint8_t n)
{
    for (uint8_t i = 0; i < n; i++, p += MIG_GROUP_BYTES)
        if (!member_port_ok(p[1])) return false;
    return true;
}

static bool routes_fit(const uint8_t *p, uint8_t n)
{
    for (uint8_t i = 0; i < n; i++, p += MIG_ROUTE_BYTES)
        if (!route_port_ok(p[0], p[1])) return false;
    return true;
}

mt_err_t mig_image_decode(const uint8_t *buf, uint16_t n, mig_image_t *img)
{
    memset(img, 0, sizeof *img);
    if (!buf || n < MIG_IMAGE_HEADER || buf[0] != MIG_IMAGE_VERSION) return MT_ERR_INVALID;
    img->pid = buf[1];
    img->prio = (mt_prio_t) buf[2];
    img->flags = buf[3];
    img->program = buf[4];
    img->n_routes = buf[5];
    img->n_timers = buf[6];
    img->n_groups = buf[7];
    img->tick_hz = mig_get32(buf + 8);
    img->state_len = mig_get16(buf + 12);
    img->held = mig_get16(buf + MIG_IMAGE_HELD);
    if (img->prio < 0 || img->prio >= MOTET_PRIO_LEVELS || !img->tick_hz) return MT_ERR_INVALID;
    if (img->n_timers > TIMERS_PER_TASK || mig_image_size(img) > n) return MT_ERR_INVALID;
    img->routes = buf + MIG_IMAGE_HEADER;
    const uint8_t *timers = img->routes + img->n_routes * MIG_ROUTE_BYTES;
    img->groups = timers + img->n_timers * MIG_TIMER_BYTES;
    if (!routes_fit(img->routes, img->n_routes) || !groups_fit(img->groups, img->n_groups))
        return MT_ERR_INVALID;
    return decode_timers(timers, img);
}

route_t mig_image_route(const mig_image_t *img, uint8_t i)
{
    const uint8_t *p = img->routes + i * MIG_ROUTE_BYTES;
    return (route_t){.pid = p[0], .port = p[1]};
}

void mig_image_group(const mig_image_t *img, uint8_t i, uint8_t *group, mt_port_t *port)
{
    const uint8_t *p = img->groups + i * MIG_GROUP_BYTES;
    *group = p[0];
    *port = p[1];
}

mig_rearm_t mig_timer_rearm(uint32_t remaining, uint32_t period, uint32_t elapsed)
{
    if (elapsed < remaining) return (mig_rearm_t){.fire_now = false, .first = remaining - elapsed};
    if (!period) return (mig_rearm_t){.fire_now = true, .first = 0};
    /* Due `late` ticks ago: fire that expiry now, and the next one where
     * the period puts it, not a burst of the missed ones. */
    uint32_t late = elapsed - remaining;
    return (mig_rearm_t){.fire_now = true, .first = period - late % period};
}

uint32_t mig_ticks_convert(uint32_t ticks, uint32_t from_hz, uint32_t to_hz)
{
    if (from_hz == to_hz || !ticks) return ticks;
    uint64_t v = ((uint64_t) ticks * to_hz + from_hz / 2u) / from_hz;
    if (v == 0) return 1; /* a timer still running never becomes none */
    return v < TIMER_TICKS_LIMIT ? (uint32_t) v : TIMER_TICKS_LIMIT - 1u;
}
