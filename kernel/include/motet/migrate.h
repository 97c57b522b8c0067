/* SPDX-License-Identifier: MIT */
/*
 * The task migrator: moving a running task to another module, atomically.
 *
 * Every module runs one migrator, a kernel task with the pid MT_PID_MIGRATOR
 * at the lowest priority (it works only when its module has nothing else to
 * do, so it never catches a task in the middle of a handler). Its timeout
 * tick (PORT_TIMEOUT0) takes a message with no sender while its own
 * timer's expiry is owed, and nothing else: a task's send there, or an
 * interrupt's post with no tick owed, is refused (MT_ERR_NO_PORT, logged)
 * and changes nothing; an interrupt's post while one is owed is taken in
 * the tick's place, and the expiry then refused (the same work, once).
 * Any task on any module may ask for a migration with migrate_request();
 * the request goes to the task's current module, the source, and the
 * migrators then follow the protocol of the CoMOS paper
 * (docs/migration.md):
 *
 *   1. REQUEST    reaches the source (forwarded along the routing tables).
 *   2. FREEZE     the source stops the task (its messages are held), has it
 *                 serialise itself (PORT_SERIALIZE) or encodes its state in
 *                 its program's layout (motet/state_layout.h), takes its
 *                 timers with their remaining time in its ticks, its output
 *                 table and its group memberships, and multicasts FREEZE.
 *   3. REPLY      every other migrator holds back, at the sender, whatever
 *                 its module sends to the task from now on, and answers on
 *                 the same bus queue, behind anything already sent to it.
 *   4. TRANSFER   with every reply in, the source sends the image to the
 *                 destination, which creates the task, still held, and
 *                 hands it its state (PORT_DESERIALIZE).
 *   5. RESULT     the destination answers; the source decides and
 *                 multicasts the outcome. Failure: the task resumes at the
 *                 source, or, if it cannot, is killed (KILLED). Success:
 *                 the source forwards copies of the task's held messages
 *                 in order, then END, on which the destination starts the
 *                 task (timers re-armed, minus the time the migration
 *                 took); the source keeps the task frozen and the other
 *                 modules keep holding meanwhile.
 *   6. CONFIRM    END went through: every module routes the task to the
 *                 destination and releases what it held back. END did not
 *                 (the destination died): the source takes the task back
 *                 with all its messages and multicasts a failed RESULT.
 *
 * Guarantees: at no instant is the task live on two modules (the source
 * decides alone, and the destination starts only on its END); no message
 * to the task is lost, duplicated or reordered (per sender); a timer that
 * falls due during the migration fires once, on the module where the task
 * ends up; a destination that dies before it has started the task, or has
 * no memory, leaves it running at the source. MT_ERR_TIMEOUT, the task
 * running at the source still, ends a migration in two cases: before the
 * decision, a source that has not decided within its budget (the rounds
 * of answers, and MOTET_MIGRATE_FRAME_MS per chunk of the image) gives
 * up; after it, until the bus interface has END, MOTET_MIGRATE_ROUNDS
 * timeouts in a row in which none of the source module's frames ended
 * (its RESULT ok, a FORWARD or END stuck; END still queued is taken out)
 * have the task taken back, with every message, the failed RESULT
 * multicast. Once the interface has END, only END's verdict decides.
 * Protocol model: models/migration.pml.
 *
 * The task's side. A program may declare its state's layout
 * (program_t.layout): the kernel then moves the state itself, in a format
 * that modules of other word sizes and byte orders read alike, and
 * PORT_DESERIALIZE runs on arrival with no payload. Otherwise a movable
 * task (TASK_MOVABLE) answers PORT_SERIALIZE by
 * putting its state in one heap block and handing it over with
 * migrate_state(); returning an error refuses the migration. On the
 * destination it gets PORT_DESERIALIZE with that state as the payload
 * (sched_take() keeps the block); an error there fails the migration
 * and the task stays where it was. PORT_INIT is not run again.
 *
 * Example:
 *
 *     if (port == PORT_SERIALIZE) {
 *         counter_t *copy = mem_alloc(sizeof *copy);
 *         if (!copy) return MT_ERR_NO_MEM;   // refused: the task stays
 *         *copy = *state;
 *         return migrate_state(copy, sizeof *copy);
 *     }
 *     if (port == PORT_DESERIALIZE && len == sizeof *state)
 *         memcpy(state, data, sizeof *state);
 *
 *     migrate_request(0x12, 3);   // anywhere: move task 0x12 to module 3
 */
#ifndef MOTET_MIGRATE_H
#define MOTET_MIGRATE_H

#include "motet/bus.h"
#include "motet/config.h"
#include "motet/log.h"
#include "motet/sched.h"
#include "motet/types.h"

/* What happened to a migrating task on this module: the EV_MIGRATE event
 * (arg = phase << 8 | the other module) and the observer's argument. */
typedef enum {
    MIG_REQUESTED = 1, /* requester: the request left (other = destination) */
    MIG_FROZEN,        /* source: the task stopped; it is not live anywhere */
    MIG_ATTACHED,      /* destination: the task exists here, held (other = source) */
    MIG_LEFT,          /* source: the task is gone; routed to other = destination */
    MIG_LIVE,          /* destination: the task runs here (other = source) */
    MIG_RESUMED,       /* source: failed (err), the task runs here again */
    MIG_DISCARDED,     /* destination: the copy here is gone: failed (err), or the outcome was
                        * OK but the copy was killed before it could start (MT_ERR_NO_TASK) */
    MIG_KILLED,        /* source: failed and could not resume: the task is dead */
    MIG_REFUSED,       /* source or requester: refused before anything moved */
    MIG_DONE,          /* every module: the outcome (err), routes updated */
    MIG_LOST,          /* a message for the task could not be kept here while it moved (err:
                        * why): it is lost; other = the module that sent it. One per message */
    MIG_PHASE_END
} migrate_phase_t;

typedef struct migrate_event {
    mt_pid_t pid;
    uint8_t phase;     /* migrate_phase_t */
    mt_module_t other; /* see each phase */
    mt_err_t err;      /* MIG_RESUMED, MIG_REFUSED, MIG_DONE: the outcome; MIG_DISCARDED: why */
} migrate_event_t;

/* Called by the migrator (task context) at each phase on this module. */
typedef void (*migrate_observer_fn)(const migrate_event_t *ev);

/* True if task pid is live here: on this module, started, not frozen for
 * a migration. Any build, any context. */
bool migrate_live(mt_pid_t pid);

#if MOTET_BUS

/* Ask for task `pid` to move to module `dest`; any module, task or
 * interrupt context. The request is queued for the local migrator, which
 * forwards it to the task's module; the outcome arrives later (observer,
 * EV_MIGRATE, EV_ERROR). Errors now: MT_ERR_INVALID (dest not on the
 * device), MT_ERR_NO_TASK (pid unknown here), MT_ERR_NOT_MOVABLE (a local
 * task without TASK_MOVABLE), MT_ERR_NO_ROUTE (no bus). */
mt_err_t migrate_request(mt_pid_t pid, mt_module_t dest);
/* From a PORT_SERIALIZE handler: `block` (a heap block of the running
 * task holding len bytes, or NULL with len 0) is the task's state; the
 * migrator owns it from now on. MT_ERR_STATE outside a serialisation,
 * MT_ERR_NOT_OWNER, MT_ERR_INVALID (shorter), MT_ERR_BAD_POINTER. */
mt_err_t migrate_state(void *block, uint16_t len);
/* Observe this module's migration phases (NULL: none). */
void migrate_set_observer(migrate_observer_fn fn);
/* Migrations this module takes part in right now. */
uint8_t migrate_active(void);
/* The name of a migrate_phase_t ("LIVE"), "?" for another number. */
const char *migrate_phase_name(uint8_t phase);

#else  /* no bus: nowhere to go */

static inline mt_err_t migrate_request(mt_pid_t pid, mt_module_t dest)
{
    (void) pid;
    (void) dest;
    return log_error(MT_ERR_NO_ROUTE);
}
static inline mt_err_t migrate_state(void *block, uint16_t len)
{
    (void) block;
    (void) len;
    return log_error(MT_ERR_STATE);
}
static inline void migrate_set_observer(migrate_observer_fn fn)
{
    (void) fn;
}
static inline uint8_t migrate_active(void)
{
    return 0;
}
#endif /* MOTET_BUS */

#endif /* MOTET_MIGRATE_H */
