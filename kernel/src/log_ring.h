/* SPDX-License-Identifier: MIT */
/*
 * The event log ring's state and its append, in line. Internal to the
 * kernel: log.c owns the ring (drain, overrun count); the records every
 * message writes (the scheduler's dispatch paths) are appended here without
 * a call to log_record(): about ten instructions of a record's twenty on
 * 32-bit cores, ten cycles of fifty on 8 bits for some 130 bytes of flash a
 * copy. Those of a timer expiry or a heap block, one per operation rather
 * than two per message, are in line on 32-bit cores only; on the common
 * paths (an expiry, an allocation, a free the O(1) check accepts) they are
 * written inside the caller's own critical section, while the rare ones
 * (a free the heap walk decides, mem_realloc()) log after it.
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
#include "timer_clock.h"

#if MOTET_EVENT_LOG

_Static_assert(sizeof(log_record_t) == 8, "a log record is 8 bytes (log.h)");

/* Byte offsets into the ring: a byte on rings of up to 256 bytes, where
 * the step to the next record then wraps by itself. */
#define LOG_RING_BYTES ((uint32_t) MOTET_LOG_ENTRIES * sizeof(log_record_t))
#if MOTET_LOG_ENTRIES <= 32
typedef uint8_t log_offset_t;
#elif MOTET_LOG_ENTRIES <= 8192
typedef uint16_t log_offset_t;
#else
typedef uint32_t log_offset_t;
#endif

extern log_record_t log_ring[MOTET_LOG_ENTRIES];
extern log_offset_t log_write_offset; /* byte offset of the written position */
extern uint8_t log_laps_ahead;        /* laps of written beyond drained: 0 .. 2 */
extern uint32_t log_folded_overruns;  /* overwritten records folded in by laps */
/* (The drained position is log.c's alone.) */

/* log_record(), inline, for a caller holding irq off: a byte offset
 * stepped and masked, the clock read in place, one branch (not taken but
 * once a lap). */
static MT_INLINE void log_record_inline_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_record_t *r = (log_record_t *) ((char *) log_ring + log_write_offset);
    log_offset_t next = (log_offset_t) ((log_write_offset + sizeof *r) & (LOG_RING_BYTES - 1u));
    log_write_offset = next;
    r->type = (uint8_t) type; /* stored first: the arguments need no saving */
    r->pid = pid;
    r->arg = arg;
    timer_clock_extend_into(&r->time);
    if (next == 0) { /* this record completes a lap */
        if (log_laps_ahead == 2)
            log_folded_overruns += MOTET_LOG_ENTRIES;
        else
            log_laps_ahead++;
    }
}

/* log_record(), inline; any context. */
static MT_INLINE void log_record_inline(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    port_irq_state_t s = port_irq_save();
    log_record_inline_irq_off(type, pid, arg);
    port_irq_restore(s);
}

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

/* log_record_inline_irq_off() out of line (log.c). */
void log_record_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg);

/* log_event() for a record per operation (timer expiry, heap block), by a
 * caller holding irq off (its own critical section: no lock of the
 * record's own): in line, or a call where flash is tight (port.h). */
static MT_INLINE void log_event_frequent_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
#ifdef PORT_FLASH_TIGHT
    log_record_irq_off(type, pid, arg);
#else
    log_record_inline_irq_off(type, pid, arg);
#endif
}

#else

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

static MT_INLINE void log_event_frequent_irq_off(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    (void) type;
    (void) pid;
    (void) arg;
}

#endif /* MOTET_EVENT_LOG */

#endif /* MOTET_LOG_RING_H */
