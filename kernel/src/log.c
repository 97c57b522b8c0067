/* SPDX-License-Identifier: MIT */
/*
 * The event log ring (its layout and the append: log_ring.h). With
 * MOTET_EVENT_LOG=0 nothing here is compiled: log.h then supplies empty
 * inline versions of the whole API.
 */
#include "motet/log.h"
#include "log_ring.h"
#include "motet/port.h"
#include "motet/sched.h"

#if MOTET_EVENT_LOG

mt_err_t log_error(mt_err_t err)
{
    log_record(EV_ERROR, sched_current_pid(), (uint16_t) err);
    return err;
}

log_record_t log_ring[MOTET_LOG_ENTRIES];
log_offset_t log_write_offset;
uint8_t log_laps_ahead;
uint32_t log_folded_overruns;
static log_offset_t drained_slot; /* record index of the drained position */

void log_init(void)
{
    log_write_offset = 0;
    drained_slot = 0;
    log_laps_ahead = 0;
    log_folded_overruns = 0;
}

/* Interrupts off: records written but not drained, overwritten ones included. */
static uint32_t records_pending(void)
{
    return (uint32_t) log_laps_ahead * MOTET_LOG_ENTRIES + log_write_offset / sizeof(log_record_t) -
           drained_slot;
}

void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_record_inline(type, pid, arg);
}

void log_record_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_record_inline_irq_off(type, pid, arg);
}

unsigned log_drain(log_record_t *out, unsigned max)
{
    port_irq_state_t s = port_irq_save();
    uint32_t pending = records_pending();
    /* Full: the oldest record kept is the one the next record overwrites. */
    if (pending > MOTET_LOG_ENTRIES) {
        log_folded_overruns += pending - MOTET_LOG_ENTRIES;
        drained_slot = (log_offset_t) (log_write_offset / sizeof(log_record_t));
        pending = MOTET_LOG_ENTRIES;
    }
    unsigned n = 0;
    while (n < pending && n < max) {
        out[n++] = log_ring[drained_slot];
        drained_slot = (log_offset_t) ((drained_slot + 1u) & (MOTET_LOG_ENTRIES - 1u));
    }
    pending -= n;
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
    "?",     "SEND",    "START",     "END",      "ALLOC",   "FREE",    "TIMER",
    "SLEEP", "WAKE",    "ERROR",     "CREATE",   "KILL",    "MIGRATE", "BUS",
    "RUN",   "APPFAIL", "BAD_FRAME", "BUS_LOST", "BUS_GAP", "BUDGET",
};

const char *log_type_name(uint8_t type)
{
    return type < EV_TYPE_COUNT ? type_names[type] : "?";
}

#endif /* MOTET_EVENT_LOG */
