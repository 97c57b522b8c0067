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

/* Record counts fit a byte on the small rings of 8-bit parts. */
#if MOTET_LOG_ENTRIES < 256
typedef uint8_t log_count_t;
#else
typedef uint16_t log_count_t;
#endif

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

static log_record_t ring[MOTET_LOG_ENTRIES];
static log_offset_t write_offset; /* where the next record goes */
static log_count_t count;         /* records in the ring, the newest before write_offset */
/* Records overwritten. A full ring pays the count on every record: the
 * small rings of 8-bit parts count in a byte, with its wraps beside it;
 * the others in one 32-bit word. */
#if MOTET_LOG_ENTRIES < 256
typedef uint8_t log_lost_t;
#else
typedef uint32_t log_lost_t;
#endif
static log_lost_t overrun_low;
static uint32_t overrun_laps; /* wraps of a one-byte overrun_low */

void log_init(void)
{
    write_offset = 0;
    count = 0;
    overrun_low = 0;
    overrun_laps = 0;
}

/* The hot path: a byte offset stepped and masked (no compare), the clock
 * read in place. */
void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    port_irq_state_t s = port_irq_save();
    log_record_t *r = (log_record_t *) ((char *) ring + write_offset);
    write_offset = (log_offset_t) ((write_offset + sizeof *r) & (RING_BYTES - 1u));
    r->type = (uint8_t) type; /* stored first: the arguments need no saving */
    r->pid = pid;
    r->arg = arg;
    r->time = timer_clock_extend();
    /* Full: keep the newest; the oldest record is overwritten and counted. */
    if (count != MOTET_LOG_ENTRIES)
        count++;
    else if (++overrun_low == 0 && sizeof overrun_low == 1)
        overrun_laps++;
    port_irq_restore(s);
}

unsigned log_drain(log_record_t *out, unsigned max)
{
    unsigned n = 0;
    port_irq_state_t s = port_irq_save();
    unsigned oldest =
        (unsigned) (write_offset / sizeof(log_record_t) - count) & (MOTET_LOG_ENTRIES - 1u);
    while (count && n < max) {
        out[n++] = ring[oldest];
        oldest = (oldest + 1u) & (MOTET_LOG_ENTRIES - 1u);
        count--;
    }
    port_irq_restore(s);
    return n;
}

uint32_t log_overruns(void)
{
    port_irq_state_t s = port_irq_save();
    uint32_t lost = sizeof overrun_low == 1 ? overrun_laps << 8 | overrun_low : overrun_low;
    port_irq_restore(s);
    return lost;
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
