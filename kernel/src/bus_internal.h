/* SPDX-License-Identifier: MIT */
/*
 * Bus manager internals shared by its files: bus.c (queue, send, receive),
 * bus_frame.c (the frame format), bus_app.c (application loading across
 * modules) and timesync.c (beacons), with the multicast manager (mcast.c)
 * and the application manager (appmgr.c), the bus's ends of their work,
 * and with the kernel's other components (boot, a kill, a send to a
 * group). bus.h is the public side.
 */
#ifndef MOTET_BUS_INTERNAL_H
#define MOTET_BUS_INTERNAL_H

#include "mcast_internal.h"
#include "motet/bus.h"

/* Priority of the kernel's own frames (beacons, descriptions, outcomes):
 * the top level, the application manager's. */
#define BUS_PRIO_SYSTEM ((mt_prio_t) (MOTET_PRIO_LEVELS - 1))

/* ---- the application manager's ports and frames on the bus ---- */

/* The application manager's input for the device-wide verdict on a
 * description: one byte, MT_OK (initialise) or the first module's error
 * (undo stage one). */
#define BUS_APPMGR_PORT_VERDICT (PORT_0 + 1)
/* Its input for a module's failure of a load after this module committed
 * it (the device disagrees): a CREATED frame's payload, below. */
#define BUS_APPMGR_PORT_DISAGREED (PORT_0 + 2)
/* Its input for a description the bus brought (every module's, its
 * loader's included, in bus order), kept apart from PORT_0, where a
 * task's description comes (appmgr_load()). These ports past PORT_0, and
 * its timer BUS_APP_DEADLINE_TIMER's, are the bus's: the manager refuses
 * anyone else's message there, a task's, a thread's, an interrupt's or a
 * multicast's (MT_ERR_NO_PORT, logged), and a description's route to one
 * (MT_ERR_DESC_ROUTE); no timer.h call starts or stops that timer. */
#define BUS_APPMGR_PORT_DESC (PORT_0 + 3)
/* The application manager's timer that bounds its wait for a verdict. */
#define BUS_APP_DEADLINE_TIMER 0u

/* A CREATED frame's payload, and the verdict's: u8 mt_err_t, u8 relative
 * pid of the task the error is about (APPMGR_NO_TASK: none), u8 that
 * task's module; so that every module can log which task failed where. */
#define BUS_APP_OUTCOME_SIZE 3u
/* A CREATED frame's payload: the outcome, then the load it is about: u8
 * its loader's module, u8 the loader's number for it (the port byte of
 * the load's DESC frame). */
#define BUS_APP_CREATED_SIZE (BUS_APP_OUTCOME_SIZE + 2u)
/* An ASK frame's payload: the load (u8 its loader's module, u8 the
 * loader's number for it), then u32 little-endian, the modules asked to
 * send their outcome of it again. */
#define BUS_APP_ASK_SIZE 6u

/* ---- bus_frame.c: the steps of a frame's encoding, for bus.c ---- */

/* Write the header of `f` (its len, not its payload) into out[0 ..
 * BUS_HEADER_SIZE). */
void bus_frame_put_header(const bus_frame_t *f, uint8_t *out);
/* Write the CRC of an encoded frame (its header and payload in place). */
void bus_frame_seal(uint8_t *frame, uint16_t n);
/* bus_frame_decode() of a frame this module encoded itself: the same
 * checks but the CRC's (its bytes did not leave the module's RAM). */
mt_err_t bus_frame_read_own(const uint8_t *buf, uint16_t n, bus_frame_t *f);
/* Flag an encoded frame as a retransmission and reseal it. */
void bus_frame_set_retry(uint8_t *frame, uint16_t n);
/* Write the link's sequence number into a sealed frame and reseal it,
 * unless the frame holds that number already. */
void bus_frame_set_seq(uint8_t *frame, uint16_t n, uint8_t seq);
/* The stamp of a decoded beacon. */
uint32_t bus_frame_sync_stamp(const bus_frame_t *f);

/* ---- bus.c, for the kernel's other components ---- */

#if MOTET_BUS
/* Reset to no bus (inactive, empty queue, no time sync); boot only. */
void bus_init(void);
/* Forget the loss reports pending for task `pid` (it was killed); any
 * context. */
void bus_task_gone(mt_pid_t pid);
/* A message to (pid, port) on module `module`, whatever this module's
 * routing says: for kernel services that address a module rather than a
 * task (the task migrator). The payload is copied; any context.
 * MT_ERR_INVALID for this module or one not on the device. */
mt_err_t bus_send_to(mt_module_t module, mt_pid_t pid, mt_port_t port, const void *data,
                     uint16_t len, mt_prio_t prio);
/* A message to a multicast group: with the bus up, one broadcast frame and
 * local delivery once it has gone; otherwise local delivery now. Any
 * context; a MSG_HEAP payload is consumed on success. */
mt_err_t bus_multicast(uint8_t group, void *data, uint16_t len, uint8_t flags, bool from_isr);
#else
/* No bus: one module, everything local. */
static inline void bus_init(void)
{
}
static inline void bus_task_gone(mt_pid_t pid)
{
    (void) pid;
}
static inline mt_err_t bus_multicast(uint8_t group, void *data, uint16_t len, uint8_t flags,
                                     bool from_isr)
{
    return mcast_deliver(group, data, len, flags, from_isr);
}
#endif /* MOTET_BUS */

/* ---- mcast.c, for bus.c ---- */

/* The delivery of a multicast frame (received, or our own once it has
 * gone) to the local members of `group`, as from an interrupt, each
 * message with `src`, the frame's sending task, as its sender; the
 * payload is borrowed. Returns the first error or MT_OK. Internal: a
 * sender given by the caller is the kernel's to give (bus_app.c's
 * messages to the manager are told by theirs). */
#if MOTET_MULTICAST
mt_err_t mcast_deliver_from(mt_pid_t src, uint8_t group, const void *data, uint16_t len);
#else
static inline mt_err_t mcast_deliver_from(mt_pid_t src, uint8_t group, const void *data,
                                          uint16_t len)
{
    (void) src;
    (void) group;
    (void) data;
    (void) len;
    return log_error(MT_ERR_NO_ROUTE);
}
#endif

#if MOTET_BUS

/* Encode a frame from this module and queue it by priority; any context.
 * MT_ERR_INVALID (payload too long, bad destination), MT_ERR_NO_MEM,
 * MT_ERR_QUEUE_FULL; each logged. */
mt_err_t bus_send_frame(uint8_t type, mt_module_t dst, mt_pid_t pid, mt_port_t port, mt_prio_t prio,
                        const void *payload, uint16_t len);
/* A frame from this module with `len` payload bytes for the caller to
 * write its payload into (serialised straight into the frame, no copy):
 * the payload, or NULL (MT_ERR_NO_ROUTE, MT_ERR_INVALID, MT_ERR_NO_MEM,
 * each logged). Then bus_queue_frame() or bus_drop_frame(). Any context. */
uint8_t *bus_open_frame(uint16_t len);
/* Queue a frame opened by bus_open_frame(), its payload written: as
 * bus_send_frame(); the frame is the bus's (or freed) whatever the result. */
mt_err_t bus_queue_frame(uint8_t *payload, uint8_t type, mt_module_t dst, mt_pid_t pid,
                         mt_port_t port, mt_prio_t prio, uint16_t len);
/* Free a frame opened by bus_open_frame() and never queued (NULL: nothing). */
void bus_drop_frame(uint8_t *payload);

/* Our frames of `type` still waiting to go out, never yet handed to the
 * interface, whose `len`-byte payload is `was` (compared from its last
 * byte): each gets `now` instead, resealed, in its place in the queue (a
 * frame the interface has may be on the wire, and keeps its bytes), the
 * first `most` of them only, as the caller knows how many there can be.
 * How many were rewritten; any context (interrupts off meanwhile). */
uint8_t bus_rewrite_waiting(uint8_t type, const uint8_t *was, const uint8_t *now, uint16_t len,
                            uint8_t most);

/* bus_check.c: whether a frame another module sent, its CRC good and its
 * sender and receiver members, is one this kernel sends: false, it is
 * dropped as bad, nothing acting on it. Interrupt. */
bool bus_frame_allowed(const bus_frame_t *f);

/* Our frame for task `pid`, port `port`, whose payload starts with the
 * `len` bytes `head`, taken out of the send queue and freed if the
 * interface never had it (a frame it has may be on the wire, and ends
 * with a verdict): true; false if none waits so. Any context. */
bool bus_withdraw_waiting(mt_pid_t pid, mt_port_t port, const uint8_t *head, uint8_t len);

/* The sequence number of the last multicast frame taken from module
 * `from` (from this module itself: of its own last multicast to a group
 * to have ended); false if there was none yet. A link's frames are
 * numbered in the order they go on the wire, so every module takes them
 * in that order. Interrupt or irq off. */
bool bus_cast_last(mt_module_t from, uint8_t *seq);

/* ---- bus_app.c ---- */

/* Forget every load, the one in progress and the committed one alike,
 * and our outcome kept of it; bus_start(). */
void bus_app_reset(void);
/* A description frame reached this module (received, or its own sent):
 * hand it to the application manager, or refuse it if this module takes
 * part in another load; interrupt context. */
void bus_app_description(const bus_frame_t *f);
/* Our description frame `f` was given up (`why`): if it was our load's,
 * the load ends here, failed, and that is our outcome of it, so that the
 * modules that took it undo their part; interrupt context. */
void bus_app_given_up(const bus_frame_t *f, mt_err_t why);
/* Module `from` reported its outcome of stage one (a CREATED payload,
 * BUS_APP_CREATED_SIZE bytes, naming its load); interrupt context. */
void bus_app_report(mt_module_t from, const uint8_t *outcome);
/* Module f->src asks for outcomes of a load again (an ASK frame, its
 * payload BUS_APP_ASK_SIZE bytes): ours is sent again if it is among
 * them and we have one of that load; interrupt context. */
void bus_app_asked(const bus_frame_t *f);
/* Bus hook, interrupt context: an ASK frame of ours ended, sent or given up. */
void bus_app_ask_ended(void);
/* Bus hook, interrupt context: a CREATED frame of ours (its payload
 * `outcome`) ended, `sent` to every module or given up. */
void bus_app_outcome_ended(const uint8_t *outcome, bool sent);

#endif /* MOTET_BUS */

/* ---- bus_app.c, for the application manager (appmgr.c) ---- */

/* The bus's messages to the manager on its ports past PORT_0 (verdict,
 * disagreement, description) come from the manager itself, which no
 * public call can send as: it takes a message there from no one else.
 * Its verdict deadline is a timer no public call can start or stop. */

#if MOTET_BUS
/* After stage one with the bus up: `err` is this module's outcome, about
 * relative task `task` (APPMGR_NO_TASK: none) on `module`. It is
 * broadcast; once every module has reported, the manager gets the verdict
 * (the first error reported, with its task and module) on
 * BUS_APPMGR_PORT_VERDICT. Task context. */
void bus_app_created(mt_err_t err, uint8_t task, mt_module_t module);
/* The manager's timer BUS_APP_DEADLINE_TIMER expired: a load still
 * lacking outcomes MOTET_BUS_VERDICT_TIMEOUT_MS after its description
 * came (for its loader: after that frame was sent to every module), or
 * after the last ask, asks the modules it lacks them from again; after
 * MOTET_BUS_RETRIES asks it fails here (MT_ERR_TIMEOUT, logged, undone),
 * which is broadcast as this module's outcome. Task context. */
void bus_app_deadline(void);
/* True, and counted as taken, if the message on the manager's
 * PORT_TIMEOUT0 + BUS_APP_DEADLINE_TIMER can be the verdict deadline's
 * expiry (timer_counted_take()): no sender, and an expiry owed, once for
 * each start of its timer that was not stopped before it expired, the
 * running timer's excepted. Anything else there (a task's send, an
 * interrupt's post with none owed) is refused by the caller. Task
 * context. */
bool bus_app_deadline_expired(void);
#else
static inline void bus_app_created(mt_err_t err, uint8_t task, mt_module_t module)
{
    (void) err;
    (void) task;
    (void) module;
}
static inline void bus_app_deadline(void)
{
}
static inline bool bus_app_deadline_expired(void)
{
    return false;
}
#endif /* MOTET_BUS */

#endif /* MOTET_BUS_INTERNAL_H */
