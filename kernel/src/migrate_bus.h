/* SPDX-License-Identifier: MIT */
/*
 * The migrator's side of the bus (migrate.h is the public side): the
 * protocol's frame kinds and the calls the bus manager (bus.c) and the
 * multicast manager (mcast.c) make into the migrator; docs/migration.md
 * describes the protocol.
 */
#ifndef MOTET_MIGRATE_BUS_H
#define MOTET_MIGRATE_BUS_H

#include "motet/bus.h"
#include "motet/migrate.h"
#include "motet/sched.h"

/* Frames of the protocol: the input port of a migrator frame (bus.c). */
enum {
    MIG_MSG_REQUEST = PORT_0, /* u8 pid, u8 dest, u8 requester, u8 hops */
    MIG_MSG_FREEZE,           /* multicast: u8 pid, u8 id, u8 source, u8 dest, u8 prio */
    MIG_MSG_REPLY,            /* u8 pid, u8 id, u8 err */
    MIG_MSG_STATE,            /* u8 pid, u8 id, u16 offset, image bytes */
    MIG_MSG_ATTACHED,         /* u8 pid, u8 id, u8 err */
    MIG_MSG_RESULT,           /* multicast: u8 pid, u8 id, u8 err, u8 source, u8 dest */
    MIG_MSG_FORWARD,          /* u8 pid, u8 id, then (u8 port, u16 len, bytes)... */
    MIG_MSG_END,              /* u8 pid, u8 id, u16 messages forwarded, u32 timers' age */
    MIG_MSG_REFUSED,          /* u8 pid, u8 err */
    MIG_MSG_PING,             /* u8 pid, u8 id (, u8 source): there? (what came of it?) */
    MIG_MSG_ABORT,            /* u8 pid, u8 id: drop the copy of a failed migration */
    MIG_MSG_CONFIRM,          /* multicast: u8 pid, u8 id, u8 source, u8 dest: it runs */
    MIG_MSG_KICK,             /* local only: the migrator has work */
    MIG_MSG_END_KIND
};

/* Outcome of a RESULT that killed the task (it could not resume). */
#define MIG_RESULT_KILLED MT_ERR_NO_TASK

#if MOTET_BUS

/* Create this module's migrator task; bus_start(). */
mt_err_t migrate_start(void);
/* True if a frame for MT_PID_MIGRATOR from another module is one the
 * protocol sends: a kind that travels, as unicast or multicast as that
 * kind goes, its payload's length and fields as the kind lays them out,
 * and from the module whose part that kind is (a migration's source, its
 * destination). Interrupt; nothing changes. */
bool migrate_bus_valid(const bus_frame_t *f);
/* A frame for MT_PID_MIGRATOR arrived (unicast or multicast) that
 * migrate_bus_valid() passed; interrupt. */
void migrate_bus_rx(const bus_frame_t *f);
/* Our own multicast to the migrators went out; interrupt. */
void migrate_bus_own(const bus_frame_t *f);
/* A multicast frame is about to be delivered here (received, or our own
 * that has ended); interrupt. */
void migrate_bus_cast(const bus_frame_t *f);
/* True if local task pid is a migration's copy that takes its multicasts
 * from migrate_bus_cast() (joined, not started): the groups' delivery
 * leaves it out. Interrupt. */
bool migrate_bus_cast_taken(mt_pid_t pid);
/* A frame of ours ended with `result`; interrupt. */
void migrate_bus_tx_end(const uint8_t *frame, uint16_t n, port_bus_result_t result);
/* The remote-send path: true if the migrator took msg (its destination is
 * frozen for a migration here); *err is then the outcome. Task context. */
bool migrate_bus_hold(const msg_t *msg, mt_err_t *err);
/* A DATA frame about to be delivered: for a task that is not here, it is
 * forwarded along the route if there is one (a sender with a stale route).
 * True if it was handled here; interrupt. */
bool migrate_bus_forward(const bus_frame_t *f, mt_err_t *err);
/* True if a DATA frame that has just arrived must wait (bus_isr_rx()
 * answers BUS_RX_BUSY): it is for a task frozen or held back here for a
 * migration, and the message pool is down to the migrator's reserve
 * (logged: MT_ERR_QUEUE_FULL). Interrupt. */
bool migrate_bus_busy(const bus_frame_t *f);

#else /* no bus: no migration */

static inline bool migrate_bus_cast_taken(mt_pid_t pid)
{
    (void) pid;
    return false;
}

#endif /* MOTET_BUS */

#endif /* MOTET_MIGRATE_BUS_H */
