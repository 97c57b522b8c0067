/* SPDX-License-Identifier: MIT */
/*
 * The event log ring (its layout and the append: log_ring.h). With
 * MOTET_EVENT_LOG=0 nothing here is compiled: log.h then supplies empty
 * inline versions of the whole API.
 */
#include "motet/log.h"

#include <string.h>

#include "log_ring.h"
#include "motet/port.h"
#include "motet/sched.h"

#if MOTET_EVENT_LOG

mt_err_t log_error(mt_err_t err)
{
    log_record(EV_ERROR, sched_current_pid(), (uint16_t) err);
    return err;
}

log_slot_t log_ring[MOTET_LOG_ENTRIES];
log_offset_t log_write_offset;
uint8_t log_laps_ahead;
uint32_t log_folded_overruns;
static log_offset_t drained_slot; /* record index of the drained position */

#if PORT_COUNTER_BITS < 32
/* The drain's reckoning of kernel time's high half (log_ring.h): the wraps
 * counted up to the stamp drained last, and how many of them the clock had
 * not seen at its last time-base record (none while the clock reads the
 * counter at least once a wrap). */
static struct {
    port_counter_t last_stamp;
    uint16_t high;
    uint16_t ahead_of_clock;
} drain_time;
#endif

/* The handlers begun and not yet ended, as the drain has seen them: an END
 * slot carries its task and the handler's result, not its port, which the
 * drain takes from the START or RUN it closes. Handlers nest on the one
 * stack, each task at most once (rule 4), so an END closes the newest open
 * slice of its task; those above it lost their ENDs to an overrun. */
typedef struct {
    mt_pid_t pid;
    mt_port_t port;
} open_slice_t;
static open_slice_t open_slices[MOTET_MAX_TASKS];
static uint8_t open_count;

void log_init(void)
{
    open_count = 0;
    log_write_offset = 0;
    drained_slot = 0;
    log_laps_ahead = 0;
    log_folded_overruns = 0;
#if PORT_COUNTER_BITS < 32
    drain_time.last_stamp = 0;
    drain_time.high = 0;
    drain_time.ahead_of_clock = 0;
#endif
}

/* Kernel time of a slot, the slots before it drained already. A 32-bit
 * stamp is kernel time. A 16-bit one is its low half; the high half counts
 * the wraps, each of which shows as a stamp stepping back from the one
 * before (slots less than a wrap apart), or as the clock's time-base
 * record (slots further apart while a timer runs). Both only ever miss
 * wraps, never invent one, so the high half is the larger of the two
 * counts: a base record raises it to the clock's count (plus the wraps the
 * stamps had seen beyond the clock's before), never lowers it. */
static uint32_t slot_time(const log_slot_t *r)
{
#if PORT_COUNTER_BITS < 32
    if (r->stamp < drain_time.last_stamp) drain_time.high++;
    drain_time.last_stamp = r->stamp;
    if (r->type == LOG_TIME_BASE) {
        uint16_t by_clock = (uint16_t) (r->arg + drain_time.ahead_of_clock);
        if ((int16_t) (by_clock - drain_time.high) > 0) drain_time.high = by_clock;
        drain_time.ahead_of_clock = (uint16_t) (drain_time.high - r->arg);
    }
    return (uint32_t) drain_time.high << 16 | r->stamp;
#else
    return r->stamp;
#endif
}

/* Interrupts off: records written but not drained, overwritten ones included. */
static uint32_t records_pending(void)
{
    return (uint32_t) log_laps_ahead * MOTET_LOG_ENTRIES + log_write_offset / LOG_SLOT_BYTES -
           drained_slot;
}

void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    port_irq_state_t s = port_irq_save();
    isr_slot_expiry_log();
    log_record_inline_irq_off(type, pid, arg);
    port_irq_restore(s);
}

static void slice_opened(mt_pid_t pid, mt_port_t port)
{
    if (open_count == MOTET_MAX_TASKS) { /* ENDs lost: the oldest goes */
        memmove(open_slices, open_slices + 1, sizeof open_slices - sizeof open_slices[0]);
        open_count--;
    }
    open_slices[open_count++] = (open_slice_t){.pid = pid, .port = port};
}

/* The port of pid's newest open slice, closed; LOG_PORT_UNKNOWN if its
 * START was overwritten before it was drained. */
static mt_port_t slice_closed(mt_pid_t pid)
{
    for (uint8_t i = open_count; i-- > 0;)
        if (open_slices[i].pid == pid) {
            open_count = i;
            return open_slices[i].port;
        }
    return LOG_PORT_UNKNOWN;
}

/* Whether slot r is the START of a task timer's expiry that stands for
 * the expiry's TIMER too (log_ring.h). */
static bool slot_is_expiry_start(const log_slot_t *r)
{
    return r->type == EV_START && r->arg >> 8 == LOG_START_EXPIRY;
}

/* How many records slot r stands for: a time base none, an END with a
 * failed handler's result two (the END and the ERROR log_error() would
 * have written), an expiry's START two (the TIMER and the START), any
 * other slot one. */
static unsigned slot_record_count(const log_slot_t *r)
{
    if (r->type == LOG_TIME_BASE) return 0;
    if (slot_is_expiry_start(r)) return 2;
    return r->type == EV_END && r->arg != MT_OK ? 2u : 1u;
}

/* The records of slot r, at `time`, into out[0 .. slot_record_count(r)). */
static void slot_records(const log_slot_t *r, uint32_t time, log_record_t *out)
{
    mt_port_t port = (mt_port_t) r->arg; /* a START's and a RUN's */
    if (slot_is_expiry_start(r))
        *out++ = (log_record_t){.time = time,
                                .type = EV_TIMER,
                                .pid = r->pid,
                                .arg = (uint16_t) (port - PORT_TIMEOUT0)};
    out[0] = (log_record_t){.time = time, .type = r->type, .pid = r->pid, .arg = r->arg};
    if (r->type == EV_START) out[0].arg = port;
    if (r->type == EV_START || r->type == EV_RUN) slice_opened(r->pid, port);
    if (r->type != EV_END) return;
    out[0].arg = slice_closed(r->pid);
    if (r->arg != MT_OK)
        out[1] = (log_record_t){.time = time, .type = EV_ERROR, .pid = r->pid, .arg = r->arg};
}

unsigned log_drain(log_record_t *out, unsigned max)
{
    port_irq_state_t s = port_irq_save();
    uint32_t pending = records_pending();
    /* Full: the oldest record kept is the one the next record overwrites. */
    if (pending > MOTET_LOG_ENTRIES) {
        log_folded_overruns += pending - MOTET_LOG_ENTRIES;
        drained_slot = (log_offset_t) (log_write_offset / LOG_SLOT_BYTES);
        pending = MOTET_LOG_ENTRIES;
    }
    unsigned n = 0;
    while (pending > 0) {
        const log_slot_t *r = &log_ring[drained_slot];
        unsigned records = slot_record_count(r);
        if (records > max - n) break;
        uint32_t time = slot_time(r);
        if (records) slot_records(r, time, out + n);
        n += records;
        drained_slot = (log_offset_t) ((drained_slot + 1u) & (MOTET_LOG_ENTRIES - 1u));
        pending--;
    }
    log_laps_ahead = drained_slot + pending >= MOTET_LOG_ENTRIES;
    port_irq_restore(s);
    return n;
}

uint32_t log_overruns(void)
{
    port_irq_state_t s = port_irq_save();
    uint32_t pending = records_pending();
    uint32_t lost = log_folded_overruns;
    if (pending > MOTET_LOG_ENTRIES) lost += pending - MOTET_LOG_ENTRIES;
    port_irq_restore(s);
    return lost;
}

static const char *const type_names[EV_TYPE_COUNT] = {
    "?",         "SEND",     "START",   "END",    "ALLOC",    "FREE",   "TIMER",     "SLEEP",
    "WAKE",      "ERROR",    "CREATE",  "KILL",   "MIGRATE",  "BUS",    "RUN",       "APPFAIL",
    "BAD_FRAME", "BUS_LOST", "BUS_GAP", "BUDGET", "DISAGREE", "UNSENT", "UNTRACKED", "INITFAIL",
};

const char *log_type_name(uint8_t type)
{
    return type < EV_TYPE_COUNT ? type_names[type] : "?";
}

#endif /* MOTET_EVENT_LOG */
