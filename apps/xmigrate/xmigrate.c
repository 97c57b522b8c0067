/* SPDX-License-Identifier: MIT */
/*
 * Programs for task migration across instruction sets: the same programs on
 * a native module, an ATmega128 and a Cortex-M3 (docs/migration.md, "Across
 * instruction sets"). Times in descriptions are microseconds or
 * milliseconds, never ticks, which differ from port to port. Every line
 * starts with the module's own time:
 *
 *     [   42.016 ms] meter 0x10: from 0x11 seq 9 in order
 *
 * (the hub prefixes each with its module: `m2| [   42.016 ms] ...`).
 *
 * sender  numbered messages to output 0 every period; a refused send is
 *         tried again with the same number, so the numbers that left are
 *         exactly 1, 2, 3, ...
 * meter   movable, its state declared as a layout (8-, 16- and 32-bit
 *         fields and arrays): the kernel moves it; checks each sender's
 *         numbers, keeps a signature of all of them, counts a periodic
 *         timer and, on arrival, says what it brought
 * script  asks for migrations at given times
 * b32 .. b1024  movable, a state of 32 .. 1024 bytes in one array of 16-bit
 *         words, each checked on arrival: the benchmark's
 * timing  makes its module's migration phases silent but for one line at
 *         the end, with their times (the benchmark's)
 */
#include <string.h>

#include "motet/motet.h"
#include "xmigrate.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* ---- sender ---- */

typedef struct sender {
    uint32_t next;
    bool refusing;
} sender_t;

/* INIT: u32 period (us), u32 first (us). Message: u8 sender, u32 seq. */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    sender_t *s = state;
    if (port == PORT_INIT) {
        if (len < 8) return MT_ERR_INVALID;
        s->next = 1;
        const uint8_t *d = data;
        return timer_start_phase(sched_current_pid(), 0, TIMER_US(get32(d + 4)) + 1u,
                                 TIMER_US(get32(d)));
    }
    if (port != PORT_TIMEOUT0) return MT_OK;
    uint8_t m[5] = {sched_current_pid(), (uint8_t) s->next, (uint8_t) (s->next >> 8),
                    (uint8_t) (s->next >> 16), (uint8_t) (s->next >> 24)};
    mt_err_t err = sched_send(0, m, sizeof m, 0);
    if (err && !s->refusing)
        module_say("sender 0x%02x: seq %lu refused: err %d", m[0], (unsigned long) s->next, err);
    s->refusing = err != MT_OK;
    if (!err) s->next++;
    return MT_OK;
}

/* ---- meter ---- */

#define METER_SENDERS 4
#define METER_RECENT  8

/* Laid out differently on each port (padding, pointer size, byte order);
 * moved field by field in its layout. */
typedef struct meter {
    uint8_t moves;  /* arrivals so far */
    uint8_t n_from; /* senders seen */
    uint16_t ticks; /* periodic timer 0 expiries */
    uint32_t received;
    uint32_t signature; /* over every (sender, seq) handled, in order */
    uint8_t from[METER_SENDERS];
    uint32_t next[METER_SENDERS];
    uint16_t recent[METER_RECENT]; /* low halves of the last numbers handled, a ring */
} meter_t;

static const state_field_t meter_fields[] = {
    STATE_FIELD(meter_t, moves),    STATE_FIELD(meter_t, n_from),    STATE_FIELD(meter_t, ticks),
    STATE_FIELD(meter_t, received), STATE_FIELD(meter_t, signature), STATE_ARRAY(meter_t, from),
    STATE_ARRAY(meter_t, next),     STATE_ARRAY(meter_t, recent),
};
static const state_layout_t meter_layout = STATE_LAYOUT(meter_fields);

static const char *meter_check(meter_t *s, mt_pid_t from, uint32_t seq)
{
    uint8_t i = 0;
    while (i < s->n_from && s->from[i] != from) i++;
    if (i == s->n_from) {
        if (i == METER_SENDERS) return "UNTRACKED";
        s->n_from++;
        s->from[i] = from;
        s->next[i] = 1;
    }
    uint32_t want = s->next[i];
    if (seq < want) return "DUPLICATE";
    s->next[i] = seq + 1;
    return seq == want ? "in order" : "GAP";
}

static mt_err_t meter(void *state, mt_port_t port, void *data, uint16_t len)
{
    meter_t *s = state;
    mt_pid_t me = sched_current_pid();
    if (port == PORT_INIT) {
        if (len < 4) return MT_ERR_INVALID;
        module_say("meter 0x%02x: started", me);
        return timer_start(0, TIMER_US(get32(data)), true);
    }
    if (port == PORT_DESERIALIZE) { /* the kernel has put the layout's fields back */
        s->moves++;
        module_say("meter 0x%02x: arrived, moves %u ticks %u received %lu sig %08lx last %u", me,
                   s->moves, s->ticks, (unsigned long) s->received, (unsigned long) s->signature,
                   s->recent[(s->received + 7u) % METER_RECENT]);
        return MT_OK;
    }
    if (port == PORT_TIMEOUT0) {
        module_say("meter 0x%02x: tick %u", me, ++s->ticks);
        return MT_OK;
    }
    if (port != PORT_0 || len != 5) return MT_OK;
    const uint8_t *m = data;
    uint32_t seq = get32(m + 1);
    const char *verdict = meter_check(s, m[0], seq);
    s->signature = s->signature * 31u + ((uint32_t) m[0] << 24 ^ seq);
    s->recent[s->received % METER_RECENT] = (uint16_t) seq;
    s->received++;
    module_say("meter 0x%02x: from 0x%02x seq %lu %s", me, m[0], (unsigned long) seq, verdict);
    return MT_OK;
}

/* ---- bulk: the benchmark's states ---- */

/* A state of `bytes` bytes, 16-bit words: one program per size. */
#define BULK_LAYOUT(bytes)                                                                         \
    {                                                                                              \
        .fields = &(const state_field_t){.offset = 0, .count = (bytes) / 2, .width = 2},           \
        .n_fields = 1                                                                              \
    }
static const state_layout_t bulk_layouts[] = {BULK_LAYOUT(32),  BULK_LAYOUT(64),
                                              BULK_LAYOUT(96),  BULK_LAYOUT(128),
                                              BULK_LAYOUT(512), BULK_LAYOUT(1024)};

static uint16_t bulk_word(uint16_t i)
{
    return (uint16_t) (i * 257u + 1u);
}

/* The last arrival, checked and said once the migration is over here
 * (timing_observe()): the check of every word and a console line inside
 * PORT_DESERIALIZE would be timed as part of the migration, which the
 * kernel's decoding of the layout ends. */
static struct {
    mt_pid_t pid; /* MT_PID_NONE: nothing to say */
    uint16_t bytes;
    const uint16_t *words; /* the task's state */
} bulk_arrived;

static mt_err_t bulk(uint16_t *words, uint16_t bytes, mt_port_t port)
{
    if (port == PORT_INIT)
        for (uint16_t i = 0; i < bytes / 2u; i++) words[i] = bulk_word(i);
    if (port != PORT_DESERIALIZE) return MT_OK;
    bulk_arrived.pid = sched_current_pid();
    bulk_arrived.bytes = bytes;
    bulk_arrived.words = words;
    return MT_OK;
}

static void bulk_say(void)
{
    if (bulk_arrived.pid == MT_PID_NONE) return;
    uint16_t wrong = 0;
    for (uint16_t i = 0; i < bulk_arrived.bytes / 2u; i++)
        wrong += bulk_arrived.words[i] != bulk_word(i);
    module_say("bulk 0x%02x: %u B, %u wrong", bulk_arrived.pid, bulk_arrived.bytes, wrong);
    bulk_arrived.pid = MT_PID_NONE;
}

/* One handler per program: the kernel finds a task's program by its code
 * (program_find_handler()), a migration included. */
#define BULK_HANDLER(bytes)                                                                        \
    static mt_err_t bulk##bytes(void *state, mt_port_t port, void *data, uint16_t len)             \
    {                                                                                              \
        (void) data;                                                                               \
        (void) len;                                                                                \
        return bulk(state, bytes, port);                                                           \
    }
BULK_HANDLER(32)
BULK_HANDLER(64)
BULK_HANDLER(96)
BULK_HANDLER(128)
BULK_HANDLER(512)
BULK_HANDLER(1024)

/* ---- timing: an observer that prints nothing while a task moves ---- */

/* Kernel time of the phases timed, this migration. */
static const uint8_t timed[] = {MIG_FROZEN, MIG_ATTACHED, MIG_LIVE, MIG_LEFT};
static uint32_t timed_at[sizeof timed];

static unsigned long us(uint32_t ticks)
{
    return (unsigned long) ((uint64_t) ticks * 1000000u / PORT_TICKS_PER_SECOND);
}

/* One line when the migration is over here (DONE): the source's FROZEN
 * and LEFT, the destination's ATTACHED and LIVE, in microseconds of this
 * module's clock (0: not here). */
static void timing_observe(const migrate_event_t *ev)
{
    for (uint8_t i = 0; i < sizeof timed; i++)
        if (ev->phase == timed[i]) timed_at[i] = timer_now();
    if (ev->phase != MIG_DONE) return;
    bulk_say();
    module_say("timing 0x%02x err %d: %lu %lu %lu %lu", ev->pid, ev->err, us(timed_at[0]),
               us(timed_at[1]), us(timed_at[2]), us(timed_at[3]));
    memset(timed_at, 0, sizeof timed_at);
}

/* INIT: this module's migrations are timed, silently (the benchmark). */
static mt_err_t timing(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_INIT) migrate_set_observer(timing_observe);
    return MT_OK;
}

/* ---- script ---- */

#define SCRIPT_STEPS 12

typedef struct script {
    uint8_t steps[4 * SCRIPT_STEPS]; /* (u16 at ms, u8 pid, u8 dest) each */
    uint8_t n, next;
} script_t;

static void script_arm(script_t *s)
{
    if (s->next == s->n) return;
    const uint8_t *st = &s->steps[4 * s->next];
    uint32_t at = TIMER_MS((uint32_t) (st[0] | st[1] << 8)), now = timer_now();
    timer_start(0, at > now ? at - now : 1, false);
}

/* INIT: up to SCRIPT_STEPS steps (u16 at ms, u8 pid, u8 dest), in time
 * order. */
static mt_err_t script(void *state, mt_port_t port, void *data, uint16_t len)
{
    script_t *s = state;
    if (port == PORT_INIT) {
        s->n = (uint8_t) (len / 4 < SCRIPT_STEPS ? len / 4 : SCRIPT_STEPS);
        memcpy(s->steps, data, 4u * s->n);
        script_arm(s);
        return MT_OK;
    }
    if (port != PORT_TIMEOUT0 || s->next == s->n) return MT_OK;
    const uint8_t *st = &s->steps[4 * s->next++];
    mt_err_t err = migrate_request(st[2], st[3]);
    module_say("script: 0x%02x -> m%u asked: err %d", st[2], st[3], err);
    script_arm(s);
    return MT_OK;
}

static const program_t all_programs[] = {
    {.id = 1, .name = "sender", .handler = sender, .state_size = sizeof(sender_t)},
    {.id = 3, .name = "script", .handler = script, .state_size = sizeof(script_t)},
    {.id = 4, .name = "timing", .handler = timing, .state_size = 0},
    /* The movable ones. */
    {.id = 2,
     .name = "meter",
     .handler = meter,
     .state_size = sizeof(meter_t),
     .layout = &meter_layout},
    {.id = 5, .name = "b32", .handler = bulk32, .state_size = 32, .layout = &bulk_layouts[0]},
    {.id = 6, .name = "b64", .handler = bulk64, .state_size = 64, .layout = &bulk_layouts[1]},
    {.id = 7, .name = "b96", .handler = bulk96, .state_size = 96, .layout = &bulk_layouts[2]},
    {.id = 8, .name = "b128", .handler = bulk128, .state_size = 128, .layout = &bulk_layouts[3]},
    {.id = 9, .name = "b512", .handler = bulk512, .state_size = 512, .layout = &bulk_layouts[4]},
    {.id = 10,
     .name = "b1024",
     .handler = bulk1024,
     .state_size = 1024,
     .layout = &bulk_layouts[5]},
};

#define N_PROGRAMS  (sizeof all_programs / sizeof all_programs[0])
#define N_IMMOVABLE 3u

void xmigrate_register(bool with_meter)
{
    program_register(all_programs, (uint8_t) (with_meter ? N_PROGRAMS : N_IMMOVABLE));
}

/* ---- the observer ---- */

void xmigrate_observe(const migrate_event_t *ev)
{
    module_say("mig 0x%02x %s m%u err %d", ev->pid, migrate_phase_name(ev->phase), ev->other,
               ev->err);
}
