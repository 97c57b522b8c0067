/* SPDX-License-Identifier: MIT */
/*
 * The OS event log: compact timestamped records in a ring buffer, drained by
 * the host. Compiled out entirely with MOTET_EVENT_LOG=0: log_event() is then
 * an empty inline function and log.c contributes no code.
 *
 * A drained record (log_record_t) is kernel time, type, pid and a 16-bit
 * argument. The ring holds its records smaller than that (the port counter
 * as read, and an END without its port: kernel/src/log_ring.h), and
 * log_drain() gives them back whole. When the ring is full the oldest
 * record is overwritten and `overruns` counts it, so a host always knows
 * what it missed.
 */
#ifndef MOTET_LOG_H
#define MOTET_LOG_H

#include "motet/config.h"
#include "motet/types.h"

typedef enum {
    EV_SEND = 1, /* pid = sender, arg = dst << 8 | port */
    EV_START,    /* pid = task, arg = port */
    EV_END,      /* pid = task, arg = port (LOG_PORT_UNKNOWN: its START was overwritten) */
    EV_ALLOC,    /* pid = owner, arg = size */
    EV_FREE,     /* pid = owner, arg = size */
    EV_TIMER,    /* pid = owner, arg = timer index; a task's timer: the expiry and
                  * the SEND of its timeout message in one record */
    EV_SLEEP,    /* arg = sleep mode */
    EV_WAKE,
    EV_ERROR,     /* pid = running task, arg = mt_err_t */
    EV_CREATE,    /* pid = task, arg = priority */
    EV_KILL,      /* pid = task, arg = its messages dropped (queued or held) */
    EV_MIGRATE,   /* pid = task, arg = phase << 8 | other module (migrate.h) */
    EV_BUS,       /* arg = frame bytes */
    EV_RUN,       /* pid = receiver, arg = sender << 8 | port: a send run at once, its
                   * SEND and START in one record */
    EV_APPFAIL,   /* pid = relative pid of the task an application description failed
                   * for, arg = mt_err_t << 8 | that task's module (appmgr.h) */
    EV_BAD_FRAME, /* pid = the sending task, arg = sending module << 8 | frame type: a
                   * frame from another module dropped as malformed (bus.h, rx_bad) */
    EV_BUS_LOST,  /* pid = the sending task, arg = destination module (0xFF: all) << 8 |
                   * frame type: a message of this module's given up (bus.h, bus_link()) */
    EV_BUS_GAP,   /* pid = the task that sent the frame after the gap, arg = sending module
                   * << 8 | frames missed: a receiver's sequence numbers skipped (rx_missed) */
    EV_BUDGET,    /* pid = task, arg = ms it had run (at most 65535): the task overran
                   * its run budget (timer_set_budget(), MOTET_TASK_BUDGET); once a run */
    EV_DISAGREE,  /* pid = a module that failed an application load committed here, arg =
                   * the load's loader << 8 | the loader's number for it; the error
                   * follows in an EV_ERROR (docs/bus.md, Lost frames) */
    EV_UNSENT,    /* arg = a load's loader << 8 | the loader's number for it: this
                   * module's failure of that load, refused by a full transmit queue
                   * or given up by the bus, dropped unsent: a newer one owed
                   * instead, lost at every retry, or lost once a newer one had
                   * taken its place (docs/bus.md, Lost frames) */
    EV_UNTRACKED, /* arg = a load's loader << 8 | the loader's number for it: this
                   * module's failure of that load, replaced by a newer one while
                   * copies of it were still to go, followed no more (more than
                   * MOTET_BUS_FOLLOWED such): whether one reached every module is
                   * not known (docs/bus.md, Lost frames) */
    EV_INITFAIL,  /* pid = task, arg = mt_err_t its PORT_INIT handler returned: the task
                   * ends, never initialised (no FINAL); its KILL follows (sched.h).
                   * For a kernel task (pid >= MT_PID_SYSTEM), arg = its INIT's error
                   * or why it could not be created: the module halts, no KILL */
    EV_TYPE_COUNT
} log_event_type_t;

/* An END's port when its START was overwritten before it was drained. */
#define LOG_PORT_UNKNOWN 0xFFu

typedef struct log_record {
    uint32_t time;
    uint8_t type;
    mt_pid_t pid;
    uint16_t arg;
} log_record_t;

#if MOTET_EVENT_LOG

/* Append a record (any context). */
void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg);
/* Copy out up to `max` oldest records and remove them; returns how many (an
 * END and the ERROR it carries, or an expiry's START and its TIMER, come out
 * together: give max >= 2). */
unsigned log_drain(log_record_t *out, unsigned max);
/* Ring slots overwritten before they were drained since boot (a slot
 * may stand for more than one record: a RUN, an expiry's START). */
uint32_t log_overruns(void);
/* Short name of an event type ("SEND"). */
const char *log_type_name(uint8_t type);
/* Log an error for the running task and return it: `return log_error(e);`. */
mt_err_t log_error(mt_err_t err);

#else /* compiled out: the same API, empty, so callers need no #if */

static inline void log_record(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    (void) type;
    (void) pid;
    (void) arg;
}
static inline unsigned log_drain(log_record_t *out, unsigned max)
{
    (void) out;
    (void) max;
    return 0;
}
static inline uint32_t log_overruns(void)
{
    return 0;
}
static inline const char *log_type_name(uint8_t type)
{
    (void) type;
    return "?";
}
static inline mt_err_t log_error(mt_err_t err)
{
    return err;
}

#endif

/* Record an event; vanishes when the log is compiled out. */
static inline void log_event(log_event_type_t type, mt_pid_t pid, uint16_t arg)
{
    log_record(type, pid, arg);
}

#endif /* MOTET_LOG_H */
