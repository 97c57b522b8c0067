/* SPDX-License-Identifier: MIT */
/*
 * The bus manager: messages between modules (rule 8, docs/architecture.md).
 *
 * Modules share one bus. A message to a task on another module, a multicast,
 * a time-sync beacon and an application description each travel as one
 * frame: a 10-byte header, the payload, and a CRC-16 over both. The manager
 * keeps the frames waiting to be sent in a queue ordered by priority (then
 * by age) and hands them to the port one at a time; the bus interface sends
 * a frame in this module's slot and reports when every receiver has taken
 * it (hardware flow control). A receiver that finds a frame corrupt rejects
 * it: the frame is counted, logged, never delivered, and sent again. A
 * frame that arrives intact but that its kind does not allow (a field out
 * of range, the wrong length, address or sender for its type, a kind of
 * the migrator's that never travels) is dropped: acknowledged, since the
 * same bytes would be as wrong again, counted (rx_bad) and logged with its
 * sender (EV_BAD_FRAME), and nothing acts on any of its fields.
 * Duplicates that a retransmission may cause are recognised by the
 * sender's sequence number and acknowledged without a second delivery.
 *
 * When a message is given up (rule 8, docs/bus.md): exactly when its frame
 * was rejected as corrupt on each of MOTET_BUS_RETRIES transmissions, or
 * the interface found its destination unreachable. Then the sending task
 * is told: its next send over the same link (that module; for a multicast,
 * the broadcast link) fails with MT_ERR_BUS_LOST and is not made, and
 * bus_link() says how many were lost there and why. A receiver that then
 * sees the sender's sequence numbers skip reports the gap (rx_missed,
 * EV_BUS_GAP naming the sending module) before it delivers what follows:
 * order is never broken silently.
 *
 * Frame layout (little-endian; docs/bus.md):
 *
 *   0 type (| BUS_TYPE_RETRY)   1 src module   2 dst module (BUS_BROADCAST:
 *   all)   3 seq
 *   4 dst pid   5 dst port or group   6 src pid   7 priority
 *   8 payload length u16   10 payload   10+len CRC-16/CCITT-FALSE u16
 *
 * Multicast goes out once as a broadcast; every module delivers it to its
 * own members (mcast.h), the sender once the frame has gone. An application
 * description goes to every module the same way, so every module sees
 * descriptions in the same order; each creates its part, broadcasts the
 * outcome, and initialisation starts only when every module has reported.
 *
 * Without MOTET_BUS the same calls exist as inline stand-ins: multicast is
 * local, the module is MOTET_MODULE_ID, and loading never waits.
 *
 * Example (a native module's main, after motet_boot()):
 *
 *     bus_start(2, 0x1Fu);                 // module 2 of modules 0..4
 *     if (loader) bus_app_load(desc, desc_len);
 *     sched_run();
 */
#ifndef MOTET_BUS_H
#define MOTET_BUS_H

#include "motet/config.h"
#include "motet/mcast.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "motet/types.h"

/* Frame types (byte 0). */
enum {
    BUS_FRAME_DATA = 1, /* a message to (pid, port) on the destination module */
    BUS_FRAME_MCAST,    /* a multicast to group `port`, broadcast */
    BUS_FRAME_SYNC,     /* a time-sync beacon: u32 stamp, broadcast */
    BUS_FRAME_DESC,     /* an application description, broadcast */
    BUS_FRAME_CREATED,  /* a module's outcome of creating its part (docs/bus.md) */
    BUS_FRAME_ASK,      /* a load's outcomes asked for again (docs/bus.md), broadcast */
    BUS_FRAME_TYPE_END
};

#define BUS_TYPE_RETRY   0x80u /* type byte flag: a repeated transmission */
#define BUS_BROADCAST    0xFFu /* destination module of a broadcast frame */
#define BUS_HEADER_SIZE  10u
#define BUS_CRC_SIZE     2u
#define BUS_OVERHEAD     (BUS_HEADER_SIZE + BUS_CRC_SIZE)
#define BUS_FRAME_MAX    (BUS_OVERHEAD + MOTET_BUS_PAYLOAD_MAX)
#define BUS_SYNC_PAYLOAD 4u /* a beacon carries the sender's u32 stamp */

/* A decoded frame; `payload` points into the buffer it was decoded from. */
typedef struct bus_frame {
    uint8_t type; /* BUS_FRAME_* */
    bool retry;   /* sent again after a receiver rejected it */
    mt_module_t src;
    mt_module_t dst;
    uint8_t seq;
    mt_pid_t pid;
    mt_port_t port;
    mt_pid_t src_pid;
    mt_prio_t prio;
    uint16_t len;
    const uint8_t *payload;
} bus_frame_t;

/* Counters of this module's bus traffic since bus_start(). */
typedef struct bus_stats {
    uint32_t tx_frames;        /* frames acknowledged by every receiver */
    uint32_t tx_bytes;         /* their bytes, overhead included */
    uint32_t tx_retransmits;   /* sends repeated after a receiver rejected one */
    uint32_t tx_given_up;      /* frames abandoned after MOTET_BUS_RETRIES */
    uint32_t tx_unreachable;   /* frames whose destination did not take them */
    uint32_t tx_queue_full;    /* sends refused: the queue was full */
    uint32_t rx_frames;        /* frames accepted (duplicates included) */
    uint32_t rx_corrupt;       /* frames rejected: bad length or checksum */
    uint32_t rx_duplicates;    /* retransmissions already delivered */
    uint32_t rx_undeliverable; /* good frames for no task here (logged) */
    uint32_t rx_bad;           /* intact frames dropped: a field their kind does not allow */
    uint32_t rx_missed;        /* frames never received: sequence numbers skipped (logged
                                * EV_BUS_GAP) */
    uint8_t tx_queue_high;     /* most frames queued at once */
} bus_stats_t;

/* What became of the messages (DATA and MCAST frames) this module sent
 * over one link since bus_start(). */
typedef struct bus_link {
    uint16_t lost; /* messages given up (saturates) */
    mt_err_t err;  /* why the last was: MT_ERR_BUS_CORRUPT (rejected on every try)
                    * or MT_ERR_BUS_DOWN (destination unreachable); MT_OK: none */
    mt_pid_t pid;  /* the task that sent the last one lost */
} bus_link_t;

/* ---- frames: pure functions, on every build ---- */

/* Encode `f` (f->payload, f->len) into `out`; returns the frame size, or 0
 * if it would exceed `cap` or MOTET_BUS_PAYLOAD_MAX. */
uint16_t bus_frame_encode(const bus_frame_t *f, uint8_t *out, uint16_t cap);
/* Check length and CRC of `n` bytes and fill *f (pointing into buf).
 * MT_ERR_BUS_CORRUPT if the frame is damaged or its type unknown. */
mt_err_t bus_frame_decode(const uint8_t *buf, uint16_t n, bus_frame_t *f);
/* True if the encoded frame is a time-sync beacon to be stamped on send. */
bool bus_frame_is_sync(const uint8_t *frame, uint16_t n);
/* Write the sender's stamp into an encoded beacon and fix its CRC. */
void bus_frame_stamp(uint8_t *frame, uint16_t n, uint32_t stamp);

#if MOTET_BUS

/* ---- the manager ---- */

/* Join the bus as module `self`; `modules` has bit m set for every module m
 * of the device (self included). Installs the remote-send hook; after
 * motet_boot(), once, task context. MT_ERR_INVALID for a bad address or
 * mask. */
mt_err_t bus_start(mt_module_t self, uint32_t modules);
/* True once bus_start() succeeded. */
bool bus_active(void);
/* This module's address (MOTET_MODULE_ID before bus_start()). */
mt_module_t bus_self(void);
/* The modules of the device (bit mask), only this one before bus_start(). */
uint32_t bus_modules(void);
/* Counters since bus_start(). */
const bus_stats_t *bus_stats(void);
/* Frames waiting in the queue, the one in the interface included. */
uint8_t bus_tx_pending(void);
/* Messages given up on the link to `module` (BUS_BROADCAST: multicasts);
 * NULL for a module not on the device or this one. */
const bus_link_t *bus_link(mt_module_t module);

/* A receiver's answer to a frame (bus_isr_rx()). */
typedef enum {
    BUS_RX_REJECTED = 0, /* corrupt: the sender sends it again */
    BUS_RX_ACCEPTED = 1, /* taken, or dropped as malformed (rx_bad): sending it again
                            would not mend it */
    BUS_RX_BUSY = 2      /* no room now: the interface leaves it unacknowledged and takes it
                            again later; the sender's interface waits (flow control) */
} bus_rx_t;

/* Port hook, interrupt context: a frame arrived; `capture` is the counter
 * when it was complete. BUS_RX_BUSY only for a unicast data frame to a
 * task here while the message pool has no block for it (for a task frozen
 * for a migration: while the pool is down to the migrator's reserve). */
bus_rx_t bus_isr_rx(const uint8_t *frame, uint16_t n, port_counter_t capture);
/* Port hook, interrupt context: the frame given to port_bus_send() ended. */
void bus_isr_tx_done(port_bus_result_t result);

/* ---- application descriptions across modules ---- */

/* Load a description on every module: it is broadcast and each module's
 * manager handles it in bus order (this one included, once it has gone).
 * Without the bus started: appmgr_load(), which with it started is this.
 * MT_ERR_STATE (logged) while this module takes part in a load still
 * waiting for its device-wide verdict, unless that load is its own, its
 * outcome given, and stuck (a whole verdict deadline without every
 * outcome): the new load supersedes it (docs/bus.md).
 * A module taking part in another load refuses this one (MT_ERR_STATE, its
 * outcome), so that it fails everywhere: appmgr_last_result() says so. */
mt_err_t bus_app_load(const uint8_t *desc, uint16_t len);

#else /* no bus: one module, everything local */

#include "motet/appmgr.h" /* the manager loads alone: bus_app_load() */

static inline bool bus_active(void)
{
    return false;
}
static inline mt_module_t bus_self(void)
{
    return MOTET_MODULE_ID;
}
/* The device is this module alone. */
static inline uint32_t bus_modules(void)
{
    return (uint32_t) 1u << MOTET_MODULE_ID;
}
/* The device is this module: the description is its manager's alone. */
static inline mt_err_t bus_app_load(const uint8_t *desc, uint16_t len)
{
    return appmgr_load(desc, len);
}

#endif /* MOTET_BUS */

#endif /* MOTET_BUS_H */
