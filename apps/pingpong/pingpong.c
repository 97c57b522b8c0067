/* SPDX-License-Identifier: MIT */
/*
 * Programs for applications that span modules. Each message carries a
 * sequence number and the sender's kernel time, so every receiver can say
 * whether messages arrive complete and in order, and how long they took
 * (in the receiver's clock: comparable across modules when the device's
 * clocks are exact, see the devices directory). Every line starts with the
 * module's own time:
 *
 *     [     12.345 ms] pong 0x11: seq 3 sent 12.100 in order
 */
#include <string.h>

#include "motet/motet.h"
#include "pingpong.h"

typedef struct stamp {
    uint32_t seq;
    uint32_t sent; /* the sender's kernel time */
} stamp_t;

typedef struct series {
    uint32_t period; /* ticks between messages */
    uint32_t count;  /* messages to send, 0: no limit */
    uint32_t sent;
} series_t;

/* Kernel time as "ms.us" for the lines above. */
#define MS(t) (unsigned long) ((t) / 1000u), (unsigned long) ((t) % 1000u)

static const char *order(uint32_t *expected, uint32_t seq)
{
    const char *verdict = seq == *expected ? " in order" : " OUT OF ORDER";
    *expected = seq + 1u;
    return verdict;
}

/* INIT: u32 period, u32 count (both optional); starts timer 0. */
static mt_err_t start_series(series_t *s, const void *data, uint16_t len)
{
    memset(s, 0, sizeof *s);
    if (len >= 4) memcpy(&s->period, data, 4);
    if (len >= 8) memcpy(&s->count, (const uint8_t *) data + 4, 4);
    if (!s->period) return MT_ERR_INVALID;
    return timer_start(0, s->period, true);
}

/* The next stamp of a series, false once it is complete. */
static bool next_stamp(series_t *s, stamp_t *p)
{
    if (s->count && s->sent == s->count) return false;
    p->seq = ++s->sent;
    p->sent = timer_now();
    return true;
}

/* Send a stamp on output `out`. A message of this task's given up by the
 * bus makes its next send over that link fail with MT_ERR_BUS_LOST, not
 * sent: the task says so and sends again (the refusal was the report;
 * bus_link() keeps the count of losses on the link and their reason). */
static mt_err_t send_stamp(mt_port_t out, stamp_t *p, const char *who)
{
    mt_err_t err = sched_send(out, p, sizeof *p, 0);
    if (err != MT_ERR_BUS_LOST) return err;
    module_say("%s: seq %lu refused: an earlier message was lost on the bus", who,
               (unsigned long) p->seq);
    return sched_send(out, p, sizeof *p, 0);
}

/* pinger: sends a stamp every period on output 0, prints each reply's
 * round-trip time. */
static mt_err_t pinger(void *state, mt_port_t port, void *data, uint16_t len)
{
    series_t *s = state;
    stamp_t p;
    if (port == PORT_INIT) return start_series(s, data, len);
    if (port == PORT_TIMEOUT0) return next_stamp(s, &p) ? send_stamp(0, &p, "ping") : 0;
    if (port != PORT_0 || len != sizeof p) return MT_OK;
    memcpy(&p, data, sizeof p);
    module_say("ping: seq %lu rtt %lu us", (unsigned long) p.seq,
               (unsigned long) (timer_now() - p.sent));
    return MT_OK;
}

/* ponger: checks the order of what arrives and sends it back on output 0. */
static mt_err_t ponger(void *state, mt_port_t port, void *data, uint16_t len)
{
    uint32_t *expected = state;
    stamp_t p;
    if (port == PORT_INIT) *expected = 1;
    if (port != PORT_0 || len != sizeof p) return MT_OK;
    memcpy(&p, data, sizeof p);
    module_say("pong 0x%02x: seq %lu sent %lu.%03lu%s", sched_current_pid(), (unsigned long) p.seq,
               MS(p.sent), order(expected, p.seq));
    return sched_send(0, data, len, 0);
}

/* caster: every period, a unicast on output 1 (if wired) and a multicast
 * on output 0, both with the same stamp. */
static mt_err_t caster(void *state, mt_port_t port, void *data, uint16_t len)
{
    series_t *s = state;
    stamp_t p;
    if (port == PORT_INIT) return start_series(s, data, len);
    if (port != PORT_TIMEOUT0 || !next_stamp(s, &p)) return MT_OK;
    module_say("cast: seq %lu", (unsigned long) p.seq);
    mt_err_t err = sched_send(1, &p, sizeof p, 0);
    if (err && err != MT_ERR_NO_PORT) return err;
    return send_stamp(0, &p, "cast");
}

/* member (of a group, or a plain receiver): prints what arrives, with
 * its own priority, in what order. */
static mt_err_t member(void *state, mt_port_t port, void *data, uint16_t len)
{
    uint32_t *expected = state;
    stamp_t p;
    if (port == PORT_INIT) *expected = 1;
    if (port != PORT_0 || len != sizeof p) return MT_OK;
    memcpy(&p, data, sizeof p);
    module_say("member 0x%02x prio %d: seq %lu sent %lu.%03lu%s", sched_current_pid(),
               sched_running_prio(), (unsigned long) p.seq, MS(p.sent), order(expected, p.seq));
    return MT_OK;
}

/* clock: a time-sync beacon on output 0 (wired to the timesync pid) every
 * period: this module keeps the device's global clock. */
static mt_err_t clock_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    series_t *s = state;
    if (port == PORT_INIT) return start_series(s, data, len);
    if (port == PORT_TIMEOUT0) return sched_send(0, NULL, 0, 0);
    return MT_OK;
}

static const program_t programs[] = {
    {.id = 1, .name = "pinger", .handler = pinger, .state_size = sizeof(series_t)},
    {.id = 2, .name = "ponger", .handler = ponger, .state_size = sizeof(uint32_t)},
    {.id = 3, .name = "caster", .handler = caster, .state_size = sizeof(series_t)},
    {.id = 4, .name = "member", .handler = member, .state_size = sizeof(uint32_t)},
    {.id = 5, .name = "clock", .handler = clock_task, .state_size = sizeof(series_t)},
};

void pingpong_register(void)
{
    program_register(programs, sizeof programs / sizeof programs[0]);
}
