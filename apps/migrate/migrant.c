/* SPDX-License-Identifier: MIT */
/*
 * Programs for migration tests and benchmarks. Every line a module prints
 * starts with its time, and names the module, so that a test can follow a
 * task from module to module (with exact clocks, times compare across
 * modules):
 *
 *     [  120.250 ms] sink 0x10 at m2: from 0x11 seq 57 in order
 *     [  121.003 ms] mig 0x10 FROZEN m1 MT_OK live=0
 *
 * sender  numbered messages to its output 0 (a task or a group) every
 *         period, forever or `count` of them; a refused send is tried
 *         again with the same number, so the numbers that left are exactly
 *         1, 2, 3, ...; the first refusal of a run of them is printed
 * sink    movable: checks each sender's numbers (in order, DUPLICATE, GAP),
 *         counts a periodic timer, fires a one-shot timer, and carries
 *         `pad` extra bytes of state in a block of its own (a pointer the
 *         kernel cannot follow: it serialises it itself)
 * mover   asks for a task to move between two modules every period
 * script  asks for migrations at given times
 * clock   the time-sync reference (beacons)
 * hog     takes nearly all of its module's heap (the out-of-memory case)
 * fixed   not movable
 */
#include <string.h>

#include "migrant.h"
#include "motet/motet.h"

static int32_t state_override = -1; /* migrant_register() */
static uint32_t count_override;     /* migrant_set_count() */

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t) (v >> (8 * i));
}

/* Field `i` (u32) of an init payload, or `otherwise`. */
static uint32_t init_u32(const void *data, uint16_t len, unsigned i, uint32_t otherwise)
{
    return len >= 4 * (i + 1) ? get32((const uint8_t *) data + 4 * i) : otherwise;
}

/* ---- sender ---- */

typedef struct sender {
    uint32_t next;    /* number of the next message */
    uint32_t count;   /* messages to send, 0: no end */
    uint32_t refused; /* refusals so far */
    bool refusing;    /* the last try was refused */
} sender_t;

/* INIT: u32 period (ticks), u32 first (ticks before the first message),
 * u32 count (0: no end). */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    sender_t *s = state;
    if (port == PORT_INIT) {
        s->next = 1;
        s->count = init_u32(data, len, 2, count_override);
        uint32_t period = init_u32(data, len, 0, 0), first = init_u32(data, len, 1, period);
        if (!period) return MT_ERR_INVALID;
        return timer_start_phase(sched_current_pid(), 0, first ? first : 1, period);
    }
    if (port != PORT_TIMEOUT0 || (s->count && s->next > s->count)) return MT_OK;
    uint8_t m[5] = {sched_current_pid()};
    put32(m + 1, s->next);
    mt_err_t err = sched_send(0, m, sizeof m, 0);
    if (err && !s->refusing)
        module_say("sender 0x%02x: seq %lu refused: %s", m[0], (unsigned long) s->next,
                   mt_strerror(err));
    s->refusing = err != MT_OK;
    s->refused += err != MT_OK;
    if (err == MT_OK && s->count && s->next == s->count) {
        timer_stop(0);
        module_say("sender 0x%02x: sent %lu, %lu refusals", m[0], (unsigned long) s->count,
                   (unsigned long) s->refused);
    }
    if (err == MT_OK) s->next++;
    return MT_OK;
}

/* ---- sink ---- */

#define SINK_SENDERS 6

typedef struct sink {
    uint32_t ticks;    /* periodic timer 0 expiries */
    uint32_t received; /* messages handled */
    uint16_t pad_len;
    uint8_t n_from;
    struct {
        mt_pid_t pid;
        uint32_t next;
    } from[SINK_SENDERS];
    uint8_t *pad; /* pad_len bytes of extra state, its own block */
} sink_t;

/* The serialised form: the fields above, little-endian, then the pad. */
#define SINK_FIXED (4 + 4 + 2 + 1 + SINK_SENDERS * 5)
_Static_assert(SINK_FIXED == MIGRANT_STATE_MIN, "migrant.h states the size");

static uint8_t pad_byte(mt_pid_t pid, uint16_t i)
{
    return (uint8_t) (i * 7u + pid);
}

static const char *check_seq(sink_t *s, mt_pid_t from, uint32_t seq)
{
    uint8_t i = 0;
    while (i < s->n_from && s->from[i].pid != from) i++;
    if (i == s->n_from) {
        if (i == SINK_SENDERS) return "UNTRACKED";
        s->n_from++;
        s->from[i].pid = from;
        s->from[i].next = 1;
    }
    uint32_t want = s->from[i].next;
    if (seq < want) return "DUPLICATE";
    s->from[i].next = seq + 1;
    return seq == want ? "in order" : "GAP";
}

static mt_err_t sink_serialize(const sink_t *s)
{
    if (state_override == 0) return migrate_state(NULL, 0); /* moves with no state */
    uint8_t *b = mem_alloc(SINK_FIXED + s->pad_len);
    if (!b) return MT_ERR_NO_MEM; /* refused: it stays where it is */
    memset(b, 0, SINK_FIXED);
    put32(b, s->ticks);
    put32(b + 4, s->received);
    b[8] = (uint8_t) s->pad_len;
    b[9] = (uint8_t) (s->pad_len >> 8);
    b[10] = s->n_from;
    for (uint8_t i = 0; i < s->n_from; i++) {
        b[11 + 5 * i] = s->from[i].pid;
        put32(b + 12 + 5 * i, s->from[i].next);
    }
    if (s->pad_len) memcpy(b + SINK_FIXED, s->pad, s->pad_len);
    mt_err_t err = migrate_state(b, (uint16_t) (SINK_FIXED + s->pad_len));
    if (err) mem_free(b);
    return err;
}

static mt_err_t sink_deserialize(sink_t *s, const void *data, uint16_t len)
{
    const uint8_t *b = data;
    if (state_override == 0 && len == 0) return MT_OK; /* no state: starts afresh */
    if (len < SINK_FIXED) return MT_ERR_INVALID;
    uint16_t pad = (uint16_t) (b[8] | b[9] << 8);
    if (len != SINK_FIXED + pad || b[10] > SINK_SENDERS) return MT_ERR_INVALID;
    s->pad = pad ? mem_alloc(pad) : NULL;
    if (pad && !s->pad) return MT_ERR_NO_MEM; /* the copy goes, the task stays */
    s->ticks = get32(b);
    s->received = get32(b + 4);
    s->pad_len = pad;
    s->n_from = b[10];
    for (uint8_t i = 0; i < s->n_from; i++) {
        s->from[i].pid = b[11 + 5 * i];
        s->from[i].next = get32(b + 12 + 5 * i);
    }
    if (pad) memcpy(s->pad, b + SINK_FIXED, pad);
    bool intact = true;
    for (uint16_t i = 0; i < pad; i++)
        intact = intact && s->pad[i] == pad_byte(sched_current_pid(), i);
    module_say("sink 0x%02x at m%u: arrived, state %u bytes, pad %s", sched_current_pid(),
               bus_self(), len, intact ? "intact" : "CORRUPT");
    return MT_OK;
}

/* INIT: u32 tick period (0: none), u32 pad bytes, u32 one-shot timer 1
 * (ticks, 0: none). */
static mt_err_t sink_init(sink_t *s, const void *data, uint16_t len)
{
    uint32_t tick = init_u32(data, len, 0, 0), pad = init_u32(data, len, 1, 0),
             once = init_u32(data, len, 2, 0);
    if (!pad && state_override >= SINK_FIXED) pad = (uint32_t) state_override - SINK_FIXED;
    s->pad_len = (uint16_t) pad;
    s->pad = pad ? mem_alloc(pad) : NULL;
    if (pad && !s->pad) return MT_ERR_NO_MEM;
    for (uint16_t i = 0; i < pad; i++) s->pad[i] = pad_byte(sched_current_pid(), i);
    module_say("sink 0x%02x at m%u: started, pad %lu", sched_current_pid(), bus_self(),
               (unsigned long) pad);
    mt_err_t err = tick ? timer_start(0, tick, true) : MT_OK;
    if (!err && once) err = timer_start(1, once, false);
    return err;
}

static mt_err_t sink(void *state, mt_port_t port, void *data, uint16_t len)
{
    sink_t *s = state;
    mt_pid_t me = sched_current_pid();
    switch (port) {
    case PORT_INIT:
        return sink_init(s, data, len);
    case PORT_SERIALIZE:
        return sink_serialize(s);
    case PORT_DESERIALIZE:
        return sink_deserialize(s, data, len);
    case PORT_TIMEOUT0:
        module_say("sink 0x%02x at m%u: tick %lu", me, bus_self(), (unsigned long) ++s->ticks);
        return MT_OK;
    case PORT_TIMEOUT1:
        module_say("sink 0x%02x at m%u: timer 1 fired", me, bus_self());
        return MT_OK;
    default:
        break;
    }
    if (port < PORT_0 || len != 5) return MT_OK;
    const uint8_t *m = data;
    uint32_t seq = get32(m + 1);
    s->received++;
    module_say("sink 0x%02x at m%u: from 0x%02x seq %lu %s", me, bus_self(), m[0],
               (unsigned long) seq, check_seq(s, m[0], seq));
    return MT_OK;
}

/* ---- mover and script ---- */

typedef struct mover {
    uint32_t count, done;
    mt_pid_t pid;
    mt_module_t a, b;
} mover_t;

static void ask(const char *who, mt_pid_t pid, mt_module_t dest)
{
    mt_err_t err = migrate_request(pid, dest);
    module_say("%s: 0x%02x -> m%u asked: %s", who, pid, dest, mt_strerror(err));
}

/* INIT: u32 period, u32 count, u8 module a, u8 module b, then the name of
 * the task to move (its description's): moves it to b, a, b, ... */
static mt_err_t mover(void *state, mt_port_t port, void *data, uint16_t len)
{
    mover_t *s = state;
    if (port == PORT_INIT) {
        char name[16];
        if (len < 11 || len - 10u >= sizeof name) return MT_ERR_INVALID;
        const uint8_t *d = data;
        memcpy(name, d + 10, len - 10u);
        name[len - 10u] = '\0';
        s->count = get32(d + 4);
        s->a = d[8];
        s->b = d[9];
        s->pid = module_task_pid(name); /* the pid this load gave it, wherever it runs */
        if (s->pid == MT_PID_INVALID) return MT_ERR_NO_TASK;
        return timer_start(0, get32(d), true);
    }
    if (port != PORT_TIMEOUT0 || s->done == s->count) return MT_OK;
    ask("mover", s->pid, s->done++ % 2 ? s->a : s->b);
    if (s->done == s->count) timer_stop(0);
    return MT_OK;
}

typedef struct script {
    uint8_t steps[64]; /* (u16 at ms, u8 pid, u8 dest) each */
    uint8_t n, next;
} script_t;

static void script_arm(script_t *s)
{
    if (s->next == s->n) return;
    const uint8_t *st = &s->steps[4 * s->next];
    uint32_t at = TIMER_MS(st[0] | st[1] << 8), now = timer_now();
    timer_start(0, at > now ? at - now : 1, false);
}

/* INIT: up to 16 steps (u16 at ms, u8 pid, u8 dest), in time order. */
static mt_err_t script(void *state, mt_port_t port, void *data, uint16_t len)
{
    script_t *s = state;
    if (port == PORT_INIT) {
        s->n = (uint8_t) (len / 4 < 16 ? len / 4 : 16);
        memcpy(s->steps, data, 4u * s->n);
        script_arm(s);
        return MT_OK;
    }
    if (port != PORT_TIMEOUT0 || s->next == s->n) return MT_OK;
    const uint8_t *st = &s->steps[4 * s->next++];
    ask("script", st[2], st[3]);
    script_arm(s);
    return MT_OK;
}

/* ---- clock, hog, fixed ---- */

/* INIT: u32 period: a time-sync beacon (output 0) every period. */
static mt_err_t clock_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) return timer_start(0, init_u32(data, len, 0, TIMER_MS(100)), true);
    if (port == PORT_TIMEOUT0) return sched_send(0, NULL, 0, 0);
    return MT_OK;
}

/* INIT: u32 bytes to leave free: takes the rest of the heap, for good. */
static mt_err_t hog(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    uint32_t keep = init_u32(data, len, 0, 256), took = 0;
    mem_stats_t st;
    for (mem_get_stats(&st); st.largest_free > keep + 64u; mem_get_stats(&st)) {
        uint32_t n = st.largest_free - keep;
        if (!mem_alloc(n > 1024u ? 1024u : n)) break;
        took += n > 1024u ? 1024u : n;
    }
    module_say("hog at m%u: took %lu bytes, largest free %u", bus_self(), (unsigned long) took,
               st.largest_free);
    return MT_OK;
}

static mt_err_t fixed(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT)
        module_say("fixed 0x%02x at m%u: started", sched_current_pid(), bus_self());
    return MT_OK;
}

static const program_t programs[] = {
    {.id = 10, .name = "sender", .handler = sender, .state_size = sizeof(sender_t)},
    {.id = 11, .name = "sink", .handler = sink, .state_size = sizeof(sink_t)},
    {.id = 12, .name = "mover", .handler = mover, .state_size = sizeof(mover_t)},
    {.id = 13, .name = "script", .handler = script, .state_size = sizeof(script_t)},
    {.id = 14, .name = "clock", .handler = clock_task, .state_size = 0},
    {.id = 15, .name = "hog", .handler = hog, .state_size = 0},
    {.id = 16, .name = "fixed", .handler = fixed, .state_size = 0},
};

void migrant_set_count(uint32_t count)
{
    count_override = count;
}

void migrant_register(int32_t state_bytes)
{
    state_override = state_bytes;
    program_register(programs, sizeof programs / sizeof programs[0]);
}

/* ---- the observer ---- */

void migrant_observe(const migrate_event_t *ev)
{
    module_say("mig 0x%02x %s m%u %s live=%d", ev->pid, migrate_phase_name(ev->phase), ev->other,
               mt_strerror(ev->err), migrate_live(ev->pid) ? 1 : 0);
}
