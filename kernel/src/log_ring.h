/* SPDX-License-Identifier: MIT */
/*
 * The event log ring's state and its append, in line. Internal to the
 * kernel: log.c owns the ring (drain, overrun count); the records every
 * message writes (the scheduler's dispatch paths) are appended here without
 * a call to log_record(). So are those of a heap block, one per operation
 * rather than two per message (every port);
 * on the common paths (an allocation, a free the O(1) check
 * accepts) they are written inside the caller's own critical section,
 * while the rare ones (a free the heap walk decides, mem_realloc()) log
 * after it.
 *
 * A slot of the ring is what log_record_t is less the extension of its
 * time: the port counter as read (port_counter_t, the stamp), type, pid and
 * argument; 6 bytes with a 16-bit counter, 8 with a 32-bit one. An append
 * is then a counter read and the slot's stores, nothing of kernel time's
 * bookkeeping. log_drain() turns stamps back into kernel time: with a
 * 32-bit counter a stamp is kernel time; with a 16-bit one the drain counts
 * a wrap wherever a stamp steps back from the one before, and the clock
 * itself writes a time-base slot (LOG_TIME_BASE, its high half in arg)
 * wherever it sees a wrap (timer_clock.h), so stamps more than a wrap apart
 * still come out right while a timer runs. An END slot holds the handler's
 * result where its record has the port: the drain restores the port from
 * the START it closes and gives a failure back as an ERROR record. A START
 * slot's argument has the port in its low byte; a high byte of
 * LOG_START_EXPIRY says the message is a task timer's expiry run first at
 * the interrupt's exit, and the slot stands for that expiry's TIMER record
 * too, at the same stamp (docs/architecture.md, "The event log").
 *
 * Two positions in an endless sequence of records: `written` (the next
 * record goes there) and `drained` (the oldest not yet drained, which may
 * since have been overwritten). Each is a lap of the ring and a place in
 * it; of the laps only their difference is kept, log_laps_ahead. A record
 * then only steps the write offset, and the full-ring bookkeeping happens
 * once per lap or at drain time:
 *     pending = laps_ahead * ENTRIES + written slot - drained slot
 *     overwritten = folded_overruns + (pending - ENTRIES if above ENTRIES)
 * A lap that would put `written` three laps ahead moves `drained` one lap
 * on and adds a ring's worth to log_folded_overruns instead. pending stays
 * above ENTRIES across that fold, so the count is exact however long
 * nobody drains, and the laps difference never outgrows a byte.
 */
#ifndef MOTET_LOG_RING_H
#define MOTET_LOG_RING_H

#include "motet/log.h"
#include "motet/port.h"

/* A START slot's argument's high byte for a task timer's expiry whose
 * TIMER record (timer index: the port less PORT_TIMEOUT0) the slot stands
 * for too; 0 for a START alone. The bit of the slot message's flags that
 * says the TIMER is owed (sched_internal.h, MSG_TIMER_OWED), so that the
 * exit writes the flag as it finds it (dispatch.c). */
#define LOG_START_EXPIRY 0x04u

#if MOTET_EVENT_LOG
/* Empty the ring; boot only. */
void log_init(void);
#else
static inline void log_init(void)
{
}
#endif

#if MOTET_EVENT_LOG

/* The time-base slot's type: none of log_event_type_t's (EV_SEND is 1), and
 * never drained as a record of its own. */
#define LOG_TIME_BASE 0u

typedef struct log_slot {
    port_counter_t stamp;
    uint8_t type;
    mt_pid_t pid;
    uint16_t arg;
} log_slot_t;

/* A slot's size, usable in #if. */
#define LOG_SLOT_BYTES (PORT_COUNTER_BITS / 8 + 4)
_Static_assert(sizeof(log_slot_t) == LOG_SLOT_BYTES, "a ring slot is a stamp and 4 bytes");

/* Byte offsets into the ring: a byte where the ring and the step past its
 * end fit in one. */
#define LOG_RING_BYTES (MOTET_LOG_ENTRIES * LOG_SLOT_BYTES)
#if LOG_RING_BYTES <= 255
typedef uint8_t log_offset_t;
#elif LOG_RING_BYTES <= 65535
typedef uint16_t log_offset_t;
#else
typedef uint32_t log_offset_t;
#endif

extern log_slot_t log_ring[MOTET_LOG_ENTRIES];
extern log_offset_t log_write_offset; /* byte offset of the written position */
extern uint8_t log_laps_ahead;        /* laps of written beyond drained: 0 .. 2 */
extern uint32_t log_folded_overruns;  /* overwritten records folded in by laps */
/* (The drained position and the drain's reckoning of time are log.c's.) */

/* Step the write position past the slot at `at`, just written; irq off.
 * The lap that ends at the ring's end is one branch, taken once a lap. */
static MT_INLINE void log_slot_written_irq_off(log_offset_t at)
{
    log_offset_t next = (log_offset_t) (at + LOG_SLOT_BYTES);
    if (next == LOG_RING_BYTES) { /* this record completes a lap */
        next = 0;
        if (log_laps_ahead == 2)
            log_folded_overruns += MOTET_LOG_ENTRIES;
        else
            log_laps_ahead++;
    }
    log_write_offset = next;
}

/* log_record(), inline, for a caller holding irq off: the slot at the
 * write position filled, the counter read into it as it stands. */
static MT_INLINE void log_record_inline_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_offset_t at = log_write_offset;
    log_slot_t *r = (log_slot_t *) ((char *) log_ring + at);
    r->stamp = port_counter_read_irq_off(); /* the fields in their order */
    r->type = (uint8_t) type;
    r->pid = pid;
    r->arg = arg;
    log_slot_written_irq_off(at);
}

/* The clock's note that kernel time's high half became `high` (a 16-bit
 * counter wrapped, timer_clock.h); irq off. */
static MT_INLINE void log_time_base_irq_off(uint16_t high)
{
    log_offset_t at = log_write_offset;
    log_slot_t *r = (log_slot_t *) ((char *) log_ring + at);
    r->stamp = port_counter_read_irq_off();
    r->type = LOG_TIME_BASE;
    r->arg = high;
    log_slot_written_irq_off(at);
}

/* log_record(), inline; any context. */
static MT_INLINE void log_record_inline(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    port_irq_state_t s = port_irq_save();
    log_record_inline_irq_off(type, pid, arg);
    port_irq_restore(s);
}

/* The TIMER the interrupt slot's message owes as a task timer's expiry,
 * if it does, written now (post.c); irq off. Before every record written
 * out of line (log_record()), so that none precedes it. */
void isr_slot_expiry_log(void);

/* log_event() in line: vanishes when the log is compiled out. */
static MT_INLINE void log_event_inline(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_record_inline(type, pid, arg);
}

/* log_event_inline() for a caller holding irq off: no lock of its own. */
static MT_INLINE void log_event_inline_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_record_inline_irq_off(type, pid, arg);
}

#else

static MT_INLINE void isr_slot_expiry_log(void)
{
}

static MT_INLINE void log_event_inline(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    (void) type;
    (void) pid;
    (void) arg;
}

static MT_INLINE void log_event_inline_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    (void) type;
    (void) pid;
    (void) arg;
}

static MT_INLINE void log_time_base_irq_off(uint16_t high)
{
    (void) high;
}

#endif /* MOTET_EVENT_LOG */

#endif /* MOTET_LOG_RING_H */
