/* SPDX-License-Identifier: MIT */
/*
 * The event log ring. With MOTET_EVENT_LOG=0 nothing here is compiled: log.h
 * then supplies empty inline versions of the whole API.
 */
#include "motet/log.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "timer_clock.h"

#if MOTET_EVENT_LOG

mt_err_t log_error(mt_err_t err)
{
    log_record(EV_ERROR, sched_current_pid(), (uint16_t) err);
    return err;
}

/* Byte offsets into the ring: a byte on rings of up to 256 bytes, where
 * the step to the next record then wraps by itself. */
_Static_assert(sizeof(log_record_t) == 8, "a log record is 8 bytes (log.h)");
#define RING_BYTES ((uint32_t) MOTET_LOG_ENTRIES * sizeof(log_record_t))
#if MOTET_LOG_ENTRIES <= 32
typedef uint8_t log_offset_t;
#elif MOTET_LOG_ENTRIES <= 8192
typedef uint16_t log_offset_t;
#else
typedef uint32_t log_offset_t;
#endif

/*
 * Two positions in an endless sequence of records: `written` (the next
 * record goes there) and `drained` (the oldest not yet drained, which may
 * since have been overwritten). Each is a lap of the ring and a place in
 * it; of the laps only their difference is kept, `laps_ahead`. A record
 * then only steps the write offset, and the full-ring bookkeeping happens
 * once per lap or at drain time:
 *     pending = laps_ahead * ENTRIES + written slot - drained slot
 *     overwritten = folded_overruns + (pending - ENTRIES if above ENTRIES)
 * A lap that would put `written` three laps ahead moves `drained` one lap
 * on and adds a ring's worth to folded_overruns instead. pending stays
 * above ENTRIES across that fold, so the count is exact however long
 * nobody drains, and the laps difference never outgrows a byte.
 */
static log_record_t ring[MOTET_LOG_ENTRIES];
static log_offset_t write_offset; /* byte offset of the written position */
static log_offset_t drained_slot; /* record index of the drained position */
static uint8_t laps_ahead;        /* laps of written beyond drained: 0 .. 2 */
static uint32_t folded_overruns;  /* overwritten records folded in by laps */

void log_init(void)
{
    write_offset = 0;
    drained_slot = 0;
    laps_ahead = 0;
    folded_overruns = 0;
}

/* Interrupts off: records written but not drained, overwritten ones included. */
static uint32_t records_pending(void)
{
    return (uint32_t) laps_ahead * MOTET_LOG_ENTRIES + write_offset / sizeof(log_record_t) -
           drained_slot;
}

/* The hot path: a byte offset stepped and masked, the clock read in place,
 * one branch (not taken but once a lap). */
void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    port_irq_state_t s = port_irq_save();
    log_record_t *r = (log_record_t *) ((char *) ring + write_offset);
    log_offset_t next = (log_offset_t) ((write_offset + sizeof *r) & (RING_BYTES - 1u));
    write_offset = next;
    r->type = (uint8_t) type; /* stored first: the arguments need no saving */
    r->pid = pid;
    r->arg = arg;
    timer_clock_extend_into(&r->time);
    if (next == 0) { /* this record completes a lap */
        if (laps_ahead == 2)
            folded_overruns += MOTET_LOG_ENTRIES;
        else
            laps_ahead++;
    }
    port_irq_restore(s);
}

unsigned log_drain(log_record_t *out, unsigned max)
{
    port_irq_state_t s = port_irq_save();
    uint32_t pending = records_pending();
    /* Full: the oldest record kept is the one the next record overwrites. */
    if (pending > MOTET_LOG_ENTRIES) {
        folded_overruns += pending - MOTET_LOG_ENTRIES;
        drained_slot = (log_offset_t) (write_offset / sizeof(log_record_t));
        pending = MOTET_LOG_ENTRIES;
    }
    unsigned n = 0;
    while (n < pending && n < max) {
        out[n++] = ring[drained_slot];
        drained_slot = (log_offset_t) ((drained_slot + 1u) & (MOTET_LOG_ENTRIES - 1u));
    }
    pending -= n;
    laps_ahead = drained_slot + pending >= MOTET_LOG_ENTRIES;
    port_irq_restore(s);
    return n;
}

uint32_t log_overruns(void)
{
    port_irq_state_t s = port_irq_save();
    uint32_t pending = records_pending();
    uint32_t lost = folded_overruns;
    if (pending > MOTET_LOG_ENTRIES) lost += pending - MOTET_LOG_ENTRIES;
    port_irq_restore(s);
    return lost;
}

static const char *const type_names[EV_TYPE_COUNT] = {
    "?",    "SEND",  "START",  "END",  "ALLOC",   "FREE", "TIMER", "SLEEP",
    "WAKE", "ERROR", "CREATE", "KILL", "MIGRATE", "BUS",  "RUN",
};

const char *log_type_name(uint8_t type)
{
    return type < EV_TYPE_COUNT ? type_names[type] : "?";
}

#endif /* MOTET_EVENT_LOG */
