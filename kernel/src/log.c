/* SPDX-License-Identifier: MIT */
/*
 * The event log ring. With MOTET_EVENT_LOG=0 nothing here is compiled: log.h
 * then supplies empty inline versions of the whole API.
 */
#include "motet/log.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "motet/timer.h"

#if MOTET_EVENT_LOG

mt_err_t log_error(mt_err_t err)
{
    log_record(EV_ERROR, sched_current_pid(), (uint16_t) err);
    return err;
}

static log_record_t ring[MOTET_LOG_ENTRIES];
static uint16_t head;  /* next record to drain */
static uint16_t count; /* records in the ring */
static uint32_t overruns;

void log_init(void)
{
    head = count = 0;
    overruns = 0;
}

void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    port_irq_state_t s = port_irq_save();
    if (count == MOTET_LOG_ENTRIES) {
        /* Keep the newest: the oldest record is overwritten and counted. */
        head = (uint16_t) ((head + 1) & (MOTET_LOG_ENTRIES - 1));
        count--;
        overruns++;
    }
    log_record_t *r = &ring[(head + count) & (MOTET_LOG_ENTRIES - 1)];
    r->time = timer_now_irq_off();
    r->type = (uint8_t) type;
    r->pid = pid;
    r->arg = arg;
    count++;
    port_irq_restore(s);
}

unsigned log_drain(log_record_t *out, unsigned max)
{
    unsigned n = 0;
    port_irq_state_t s = port_irq_save();
    while (count && n < max) {
        out[n++] = ring[head];
        head = (uint16_t) ((head + 1) & (MOTET_LOG_ENTRIES - 1));
        count--;
    }
    port_irq_restore(s);
    return n;
}

uint32_t log_overruns(void)
{
    return overruns;
}

static const char *const type_names[EV_TYPE_COUNT] = {
    "?",     "SEND", "START", "END",    "ALLOC", "FREE",    "TIMER",
    "SLEEP", "WAKE", "ERROR", "CREATE", "KILL",  "MIGRATE", "BUS",
};

const char *log_type_name(uint8_t type)
{
    return type < EV_TYPE_COUNT ? type_names[type] : "?";
}

#endif /* MOTET_EVENT_LOG */
