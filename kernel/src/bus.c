/* SPDX-License-Identifier: MIT */
/*
 * The bus manager (see bus.h): the send queue, retransmission, receive
 * dispatch and duplicate detection.
 *
 * The queue. Frames wait encoded, in heap blocks, in an array sorted by
 * priority and then by age; queue[0] is the next to go or, while `in_flight`
 * is set, the one the interface holds, which nothing may overtake (a bus
 * transfer is not preempted). Every change happens with interrupts off:
 * tasks queue frames and the bus interrupt finishes them.
 *
 * Sequence numbers. Each link (this module to one module, or to all by
 * broadcast) numbers its frames as they first go to the interface, not as
 * they are queued: the queue lets a higher priority pass, and numbers in
 * the order of the wire let every receiver tell a gap, and the migrator
 * tell which multicasts a module took before another (migrate_peer.c).
 * A frame is sealed (its CRC) as it is queued, with the number it will
 * most likely get, and resealed as it goes only if that changed.
 * A frame sent again after a rejection
 * carries BUS_TYPE_RETRY. A receiver that already took a frame, because
 * only another receiver rejected the broadcast, sees the retry with the
 * number it accepted last on that link and acknowledges it without a
 * second delivery. First transmissions are never taken for duplicates.
 * Numbering starts at 0 on every link at bus_start(), on every module of a
 * device at once; a receiver expects each link's next number, and one
 * further on means its sender gave the frames in between up (a gap,
 * reported before the frame is delivered). Eight bits: a run of 256 or
 * more frames given up in a row looks like a shorter gap.
 *
 * Losses. A message given up (MOTET_BUS_RETRIES rejections, or an
 * unreachable destination) is counted on its link (bus_link()) and noted
 * for the task that sent it; that task's next send over the same link
 * consumes the note and fails with MT_ERR_BUS_LOST, so the error reaches
 * the code that can act on it (resend state, resynchronise), on the path
 * it already checks. Notes are few (MOTET_BUS_LOST_NOTES): with none free
 * the loss is still counted and logged, only that task's report is lost.
 */
#include <string.h>

#include "bus_internal.h"
#include "mcast_internal.h"
#include "mem_internal.h"
#include "migrate_bus.h"
#include "migrate_internal.h"
#include "motet/log.h"
#include "motet/mem.h"
#include "motet/migrate.h"
#include "motet/timer.h"
#include "motet/timesync.h"
#include "sched_internal.h"
#include "timesync_internal.h"

#if MOTET_BUS

/* EV_BUS argument flag: a frame received (clear: sent). */
#define LOG_BUS_RX 0x8000u

typedef struct tx_entry {
    uint8_t *frame; /* heap block owned by the kernel */
    uint16_t n;
    mt_prio_t prio;
    uint8_t tries; /* transmissions rejected so far */
    uint8_t link;  /* destination module, or LINK_BROADCAST */
    bool numbered; /* its sequence number is written (it went to the interface) */
} tx_entry_t;

/* A loss not yet reported to the task that sent the message. */
typedef struct lost_note {
    mt_pid_t pid; /* MT_PID_NONE: free */
    uint8_t link; /* destination module, or MOTET_BUS_MODULES: broadcast */
} lost_note_t;

#define LINK_BROADCAST ((uint8_t) MOTET_BUS_MODULES)

static struct {
    tx_entry_t queue[MOTET_BUS_TX_QUEUE];
    uint8_t count;
    bool in_flight;
    bool active;
    mt_module_t self;
    uint32_t modules;
    uint8_t tx_seq[MOTET_BUS_MODULES + 1]; /* per destination; last: broadcast */
    uint8_t rx_seq[MOTET_BUS_MODULES][2];  /* last accepted: unicast, broadcast */
    uint32_t rx_seen[2];                   /* which rx_seq entries are valid */
    uint8_t cast_ended;                    /* number of our last multicast to a group to end */
    bool any_cast_ended;                   /* cast_ended is valid */
    bus_link_t links[MOTET_BUS_MODULES + 1];
    lost_note_t notes[MOTET_BUS_LOST_NOTES];
    uint8_t notes_used; /* sends skip the search while none is pending */
    bus_stats_t stats;
} B;

static uint32_t bit(mt_module_t m)
{
    return (uint32_t) 1u << m;
}

static bool is_member(mt_module_t m)
{
    return m < MOTET_BUS_MODULES && (B.modules & bit(m));
}

static mt_err_t remote_send(mt_module_t module, const msg_t *msg, mt_prio_t prio);

/* ---- state ---- */

void bus_init(void)
{
    port_irq_state_t s = port_irq_save();
    memset(&B, 0, sizeof B);
    port_irq_restore(s);
    timesync_reset();
    migrate_reset();
}

mt_err_t bus_start(mt_module_t self, uint32_t modules)
{
    if (!((self < MOTET_BUS_MODULES) && (modules & bit(self)))) return log_error(MT_ERR_INVALID);
    if (MOTET_BUS_MODULES < 32 && (modules >> MOTET_BUS_MODULES) != 0)
        return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    memset(&B, 0, sizeof B); /* after motet_boot(): the heap holds no frame */
    B.self = self;
    B.modules = modules;
    B.active = true;
    port_irq_restore(s);
    timesync_reset();
    bus_app_reset();
    sched_set_remote_send(remote_send);
    mt_err_t err = migrate_start(); /* one migrator per module on the bus */
    B.active = !err;                /* a module without one has not joined */
    if (err) task_system_start_failed(MT_PID_MIGRATOR, err);
    return err;
}

bool bus_active(void)
{
    return B.active;
}

mt_module_t bus_self(void)
{
    return B.active ? B.self : (mt_module_t) MOTET_MODULE_ID;
}

uint32_t bus_modules(void)
{
    return B.active ? B.modules : bit(MOTET_MODULE_ID);
}

const bus_stats_t *bus_stats(void)
{
    return &B.stats;
}

uint8_t bus_tx_pending(void)
{
    return B.count;
}

static uint8_t link_of(mt_module_t dst)
{
    return dst == BUS_BROADCAST ? LINK_BROADCAST : dst;
}

const bus_link_t *bus_link(mt_module_t module)
{
    if (module != BUS_BROADCAST && (!is_member(module) || module == B.self)) return NULL;
    return &B.links[link_of(module)];
}

/* Our message frame `f` is given up (`why`): counted on its link, logged,
 * and noted for its sender; interrupt context. */
static void lost(const bus_frame_t *f, mt_err_t why)
{
    uint8_t link = link_of(f->dst);
    bus_link_t *k = &B.links[link];
    if (k->lost < UINT16_MAX) k->lost++;
    k->err = why;
    k->pid = f->src_pid;
    log_event(EV_BUS_LOST, f->src_pid, (uint16_t) (f->dst << 8 | f->type));
    if (!task_pid_is_app(f->src_pid)) return; /* the kernel or an interrupt: no task to tell */
    lost_note_t *free_note = NULL;
    for (uint8_t i = 0; i < MOTET_BUS_LOST_NOTES; i++) {
        lost_note_t *n = &B.notes[i];
        if (n->pid == f->src_pid && n->link == link) return; /* one report covers both */
        if (n->pid == MT_PID_NONE && !free_note) free_note = n;
    }
    if (!free_note) return; /* counted and logged; only the report is lost */
    free_note->pid = f->src_pid;
    free_note->link = link;
    B.notes_used++;
}

/* True once if the running task has a loss on `link` not yet reported:
 * the note is consumed, and the caller fails its send with
 * MT_ERR_BUS_LOST. Task context only: an interrupt is no task. */
static bool take_lost(uint8_t link)
{
    if (!B.notes_used || port_in_isr()) return false;
    mt_pid_t me = sched_current_pid();
    bool hit = false;
    port_irq_state_t s = port_irq_save();
    for (uint8_t i = 0; i < MOTET_BUS_LOST_NOTES && !hit; i++) {
        lost_note_t *n = &B.notes[i];
        if (n->pid != me || n->link != link || me == MT_PID_NONE) continue;
        n->pid = MT_PID_NONE;
        B.notes_used--;
        hit = true;
    }
    port_irq_restore(s);
    return hit;
}

void bus_task_gone(mt_pid_t pid)
{
    port_irq_state_t s = port_irq_save();
    for (uint8_t i = 0; i < MOTET_BUS_LOST_NOTES && B.notes_used; i++) {
        if (B.notes[i].pid != pid || pid == MT_PID_NONE) continue;
        B.notes[i].pid = MT_PID_NONE;
        B.notes_used--;
    }
    port_irq_restore(s);
}

/* ---- sending ---- */

/* Hand queue[0] to the interface unless it holds a frame already. */
static void kick(void)
{
    port_irq_state_t s = port_irq_save();
    bool go = !B.in_flight && B.count > 0;
    if (go) B.in_flight = true;
    port_irq_restore(s);
    if (!go) return;
    /* queue[0] cannot move meanwhile: inserts go behind a frame in flight,
     * and only the context that set in_flight numbers a frame. */
    tx_entry_t *head = &B.queue[0];
    if (!head->numbered) { /* resealed only if a frame overtook it (expected_seq()) */
        bus_frame_set_seq(head->frame, head->n, B.tx_seq[head->link]++);
        head->numbered = true;
    }
    if (!port_bus_send(head->frame, head->n)) {
        B.in_flight = false; /* the port broke its contract: try at the next kick */
        log_error(MT_ERR_STATE);
    }
}

/* The number a frame of `prio` on `link` queued now will go with: the
 * link's next, past the link's frames still unnumbered ahead of it (insert()
 * puts it behind equal priorities). It is sealed with it as it is queued,
 * in the sender's context; if a frame of that link overtakes it meanwhile,
 * kick() writes the right number and reseals it there. Irq off. */
static uint8_t expected_seq(uint8_t link, mt_prio_t prio)
{
    uint8_t seq = B.tx_seq[link];
    for (uint8_t i = 0; i < B.count; i++)
        if (B.queue[i].link == link && !B.queue[i].numbered && B.queue[i].prio >= prio) seq++;
    return seq;
}

/* Insert by priority, behind equal priorities and the frame in flight. */
static void insert(const tx_entry_t *e)
{
    uint8_t at = B.in_flight ? 1u : 0u;
    while (at < B.count && B.queue[at].prio >= e->prio) at++;
    memmove(&B.queue[at + 1], &B.queue[at], (size_t) (B.count - at) * sizeof B.queue[0]);
    B.queue[at] = *e;
    B.count++;
    if (B.count > B.stats.tx_queue_high) B.stats.tx_queue_high = B.count;
}

uint8_t *bus_open_frame(uint16_t len)
{
    if (!B.active) { /* no bus (yet) */
        log_error(MT_ERR_NO_ROUTE);
        return NULL;
    }
    if (len > MOTET_BUS_PAYLOAD_MAX) {
        log_error(MT_ERR_INVALID);
        return NULL;
    }
    uint8_t *frame = mem_alloc_owned((uint16_t) (BUS_OVERHEAD + len), MEM_OWNER_KERNEL);
    return frame ? frame + BUS_HEADER_SIZE : NULL; /* none: logged by the memory manager */
}

void bus_drop_frame(uint8_t *payload)
{
    if (payload) mem_release(payload - BUS_HEADER_SIZE);
}

/* Header, seal and queue a frame whose payload is written, for a member
 * `dst`: false if the queue is full (counted; the frame stays the caller's). */
static bool enqueue(uint8_t *frame, uint8_t type, mt_module_t dst, mt_pid_t pid, mt_port_t port,
                    mt_prio_t prio, uint16_t len)
{
    uint16_t n = (uint16_t) (BUS_OVERHEAD + len);
    bus_frame_t f = {.type = type,
                     .src = B.self,
                     .dst = dst,
                     .pid = pid,
                     .port = port,
                     .src_pid = port_in_isr() ? MT_PID_NONE : sched_current_pid(),
                     .prio = prio < 0 ? 0 : prio,
                     .len = len};
    uint8_t link = link_of(dst);
    port_irq_state_t s = port_irq_save();
    f.seq = expected_seq(link, f.prio);
    port_irq_restore(s);
    /* Sealed here, not in the interrupt that hands it over (kick()): a
     * long frame's CRC takes milliseconds on an 8-bit core, which would
     * hold back every interrupt and keep the interface idle meanwhile. */
    bus_frame_put_header(&f, frame);
    bus_frame_seal(frame, n);
    s = port_irq_save();
    bool room = B.count < MOTET_BUS_TX_QUEUE;
    if (room)
        insert(&(tx_entry_t){.frame = frame, .n = n, .prio = f.prio, .link = link});
    else
        B.stats.tx_queue_full++;
    port_irq_restore(s);
    if (room) kick();
    return room;
}

mt_err_t bus_queue_frame(uint8_t *payload, uint8_t type, mt_module_t dst, mt_pid_t pid,
                         mt_port_t port, mt_prio_t prio, uint16_t len)
{
    uint8_t *frame = payload - BUS_HEADER_SIZE;
    mt_err_t err = MT_OK;
    if (!(dst == BUS_BROADCAST || is_member(dst)))
        err = MT_ERR_INVALID;
    else if (!enqueue(frame, type, dst, pid, port, prio, len))
        err = MT_ERR_QUEUE_FULL;
    if (!err) return MT_OK;
    mem_release(frame);
    return log_error(err);
}

mt_err_t bus_send_frame(uint8_t type, mt_module_t dst, mt_pid_t pid, mt_port_t port, mt_prio_t prio,
                        const void *payload, uint16_t len)
{
    if (!B.active) return log_error(MT_ERR_NO_ROUTE); /* no bus (yet) */
    if (len > MOTET_BUS_PAYLOAD_MAX || !(dst == BUS_BROADCAST || is_member(dst)))
        return log_error(MT_ERR_INVALID);
    uint8_t *body = bus_open_frame(len);
    if (!body) return MT_ERR_NO_MEM; /* logged by the memory manager */
    if (len) memcpy(body, payload, len);
    return bus_queue_frame(body, type, dst, pid, port, prio, len);
}

/* A message whose payload is a heap block of its sender with room for a
 * frame's header and CRC around it goes out in that block: the payload
 * moves up by the header inside it, and the block, now the kernel's, is
 * the frame until the frame ends. The module needs no second block of the
 * payload's size while the frame waits, which on a small module is the
 * difference between fitting its RAM or not (a sensing module's 660-byte
 * band, in the 1 KB block its samples came in). False if the block has
 * no such room or is not the sender's (the payload is then copied into
 * a frame) or the queue is full (MT_ERR_QUEUE_FULL in `err`, the payload
 * back in place and still the sender's). */
static bool send_in_place(mt_module_t module, const msg_t *msg, mt_prio_t prio, mt_err_t *err)
{
    uint8_t *block = msg->data;
    if (!(msg->flags & MSG_HEAP) || msg->len > MOTET_BUS_PAYLOAD_MAX || port_in_isr() ||
        mem_owner(block) != msg->src || mem_block_size(block) < (size_t) BUS_OVERHEAD + msg->len)
        return false;
    /* The log shows the kernel's frame as it shows a copied one, an
     * allocation of the frame's bytes by the kernel (motet profile takes
     * one inside a handler for the bus driver's work, not the task's). */
    uint16_t n = (uint16_t) (BUS_OVERHEAD + msg->len);
    mem_hand_over(block, MEM_OWNER_KERNEL);
    log_event(EV_ALLOC, MEM_OWNER_KERNEL, n);
    memmove(block + BUS_HEADER_SIZE, block, msg->len);
    if (enqueue(block, BUS_FRAME_DATA, module, msg->dst, msg->port, prio, msg->len)) {
        *err = MT_OK;
        return true;
    }
    memmove(block, block + BUS_HEADER_SIZE, msg->len);
    log_event(EV_FREE, MEM_OWNER_KERNEL, n);
    mem_hand_over(block, msg->src);
    *err = MT_ERR_QUEUE_FULL; /* logged by the caller */
    return true;
}

/* The remote-send hook of the scheduler: a message to a task elsewhere. A
 * heap payload is ours on success: the frame's, or freed once copied. */
static mt_err_t remote_send(mt_module_t module, const msg_t *msg, mt_prio_t prio)
{
    if (module == B.self || !is_member(module)) return MT_ERR_NO_ROUTE;
    if (take_lost(module)) return MT_ERR_BUS_LOST; /* logged by the caller */
    mt_err_t err;
    bool held = migrate_bus_hold(msg, &err); /* frozen for a migration */
    if (!held && send_in_place(module, msg, prio, &err)) return err;
    if (!held)
        err =
            bus_send_frame(BUS_FRAME_DATA, module, msg->dst, msg->port, prio, msg->data, msg->len);
    if (!err) payload_consumed(msg->data, msg->flags, msg->src); /* held or framed: a copy */
    return err;
}

mt_err_t bus_send_to(mt_module_t module, mt_pid_t pid, mt_port_t port, const void *data,
                     uint16_t len, mt_prio_t prio)
{
    if (!B.active || module == B.self || !is_member(module)) return log_error(MT_ERR_INVALID);
    return bus_send_frame(BUS_FRAME_DATA, module, pid, port, prio, data, len);
}

mt_err_t bus_multicast(uint8_t group, void *data, uint16_t len, uint8_t flags, bool from_isr)
{
    if (!B.active) return mcast_deliver(group, data, len, flags, from_isr);
    mt_pid_t sender = from_isr ? MT_PID_NONE : sched_current_pid();
    mt_err_t err = payload_check(data, len, flags, sender);
    if (err) return err;
    if (take_lost(LINK_BROADCAST)) return log_error(MT_ERR_BUS_LOST);
    mt_prio_t prio = from_isr ? BUS_PRIO_SYSTEM : sched_running_prio();
    err = bus_send_frame(BUS_FRAME_MCAST, BUS_BROADCAST, MT_PID_MULTICAST, group, prio, data, len);
    if (!err) payload_consumed(data, flags, sender); /* the frame holds a copy */
    return err;
}

uint8_t bus_rewrite_waiting(uint8_t type, const uint8_t *was, const uint8_t *now, uint16_t len,
                            uint8_t most)
{
    uint8_t rewritten = 0;
    port_irq_state_t s = port_irq_save();
    for (uint8_t i = 0; i < B.count && rewritten < most; i++) {
        tx_entry_t *e = &B.queue[i];
        uint8_t *payload = e->frame + BUS_HEADER_SIZE;
        uint16_t k = len; /* from the end, where an outcome names its load */
        /* Numbered: handed to the interface, whose bytes it may be sending
         * or sending again; a retry must carry the bytes its first try had. */
        if (e->numbered || e->n != BUS_OVERHEAD + len || e->frame[0] != type) continue;
        while (k && payload[k - 1] == was[k - 1]) k--;
        if (k) continue;
        memcpy(payload, now, len);
        bus_frame_seal(e->frame, e->n);
        rewritten++;
    }
    port_irq_restore(s);
    return rewritten;
}

/* ---- a frame's end ---- */

/* A multicast frame, ours or received, to the group's members here, from
 * the task that sent it; the source of a task on the move keeps a copy of
 * those for it (migrate.h). */
static mt_err_t deliver_cast(const bus_frame_t *f)
{
    if (f->src == B.self) { /* ours: it has ended, given up or not */
        B.cast_ended = f->seq;
        B.any_cast_ended = true;
    }
    migrate_bus_cast(f);
    return mcast_deliver_from(f->src_pid, f->port, f->payload, f->len);
}

bool bus_cast_last(mt_module_t from, uint8_t *seq)
{
    if (from == B.self) {
        *seq = B.cast_ended;
        return B.any_cast_ended;
    }
    if (!is_member(from) || !(B.rx_seen[1] & bit(from))) return false;
    *seq = B.rx_seq[from][1];
    return true;
}

/* Our own frame went out: what the sender does once everyone has it. */
static void sent(const uint8_t *frame, uint16_t n)
{
    bus_frame_t f;
    if (bus_frame_read_own(frame, n, &f) != MT_OK) return; /* our own: cannot fail */
    log_event(EV_BUS, f.pid, n);
    B.stats.tx_frames++;
    B.stats.tx_bytes += n;
    if (f.type == BUS_FRAME_MCAST && f.pid == MT_PID_MIGRATOR)
        migrate_bus_own(&f);
    else if (f.type == BUS_FRAME_MCAST)
        deliver_cast(&f);
    else if (f.type == BUS_FRAME_SYNC)
        timesync_beacon_sent();
    else if (f.type == BUS_FRAME_DESC)
        bus_app_description(&f);
    else if (f.type == BUS_FRAME_CREATED)
        bus_app_outcome_ended(f.payload, true);
    else if (f.type == BUS_FRAME_ASK)
        bus_app_ask_ended();
}

void bus_isr_tx_done(port_bus_result_t result)
{
    if (!B.in_flight) return; /* spurious */
    tx_entry_t *head = &B.queue[0];
    if (result == PORT_BUS_REJECTED && ++head->tries < MOTET_BUS_RETRIES) {
        B.stats.tx_retransmits++;
        bus_frame_set_retry(head->frame, head->n);
        B.in_flight = false;
        kick();
        return;
    }
    port_irq_state_t s = port_irq_save();
    tx_entry_t done = *head;
    B.count--;
    memmove(&B.queue[0], &B.queue[1], (size_t) B.count * sizeof B.queue[0]);
    B.in_flight = false;
    port_irq_restore(s);
    if (result == PORT_BUS_SENT) {
        sent(done.frame, done.n);
    } else {
        mt_err_t why = result == PORT_BUS_REJECTED ? MT_ERR_BUS_CORRUPT : MT_ERR_BUS_DOWN;
        if (why == MT_ERR_BUS_CORRUPT)
            B.stats.tx_given_up++;
        else
            B.stats.tx_unreachable++;
        log_error(why);
        bus_frame_t f;
        /* A task's message: its sender is told. The migrator's own frames
         * have their ends reported to it below, and it acts on them. */
        bool read = bus_frame_read_own(done.frame, done.n, &f) == MT_OK; /* ours: it is */
        if (read && (f.type == BUS_FRAME_DATA || f.type == BUS_FRAME_MCAST) &&
            f.pid != MT_PID_MIGRATOR) {
            lost(&f, why);
            /* This module's own members cannot miss it: they get it now,
             * still in bus order (the next frame has not gone). Only the
             * receivers that rejected it lack it, and each reports the gap. */
            if (f.type == BUS_FRAME_MCAST) deliver_cast(&f);
        } else if (read && f.type == BUS_FRAME_DESC) { /* a load: it ends, failed */
            bus_app_given_up(&f, why);
        } else if (read && f.type == BUS_FRAME_ASK) {
            bus_app_ask_ended();
        } else if (read && f.type == BUS_FRAME_CREATED) {
            bus_app_outcome_ended(f.payload, false);
        }
    }
    migrate_bus_tx_end(done.frame, done.n, result); /* its answers, and room */
    mem_release(done.frame);
    kick();
}

/* ---- receiving ---- */

/* Kernel time of a counter capture taken moments ago (wrap-safe). */
static uint32_t capture_time(port_counter_t capture)
{
    return timer_now() - (port_counter_t) (port_counter_read() - capture);
}

/* A task that may send: no virtual pid and not the invalid one. */
static bool sender_pid_ok(mt_pid_t pid)
{
    return pid != MT_PID_MULTICAST && pid != MT_PID_TIMESYNC && pid != MT_PID_INVALID;
}

/* An ASK's mask (u32 little-endian): at least one module, and only
 * modules of the device. */
static bool asked_ok(const uint8_t *mask)
{
    uint32_t asked = (uint32_t) mask[0] | (uint32_t) mask[1] << 8 | (uint32_t) mask[2] << 16 |
                     (uint32_t) mask[3] << 24;
    return asked && !(asked & ~B.modules);
}

/* What every frame of a kind carries, as this kernel sends it: a frame
 * from another module that differs is no frame of ours, and nothing may
 * act on it. DATA goes to one module and to a task's input port (or to
 * the migrator, which knows its own payloads); a DATA frame for a virtual
 * pid or the application manager would have this module multicast, take
 * over the global clock or load a description on another's behalf. The
 * rest go to every module, each to the one virtual pid that takes it. The
 * priority byte orders the sender's queue only and is never read here. */
static bool frame_allowed(const bus_frame_t *f)
{
    bool broadcast = f->dst == BUS_BROADCAST;
    if (!sender_pid_ok(f->src_pid)) return false;
    switch (f->type) {
    case BUS_FRAME_DATA:
        if (broadcast) return false;
        if (f->pid == MT_PID_MIGRATOR) return migrate_bus_valid(f);
        return f->pid != MT_PID_NONE && f->pid < MT_PID_SYSTEM && f->port < PORT_LIMIT;
    case BUS_FRAME_MCAST:
        if (f->pid == MT_PID_MIGRATOR) return broadcast && migrate_bus_valid(f);
        return broadcast && f->pid == MT_PID_MULTICAST;
    case BUS_FRAME_SYNC:
        return broadcast && f->pid == MT_PID_TIMESYNC && f->port == PORT_0;
    case BUS_FRAME_DESC: /* its port byte is the loader's number for the load */
        return broadcast && f->pid == MT_PID_APPMGR;
    case BUS_FRAME_CREATED: /* its outcome (bus_frame_decode() checked the length):
                             * an mt_err_t, a relative task and its module, then
                             * the load's loader and number */
        return broadcast && f->pid == MT_PID_APPMGR && f->port == BUS_APPMGR_PORT_VERDICT &&
               f->payload[0] < MT_ERR_COUNT && f->payload[2] < MOTET_BUS_MODULES &&
               is_member(f->payload[BUS_APP_OUTCOME_SIZE]);
    case BUS_FRAME_ASK: /* the load (its loader and number), the modules asked:
                         * some, all of the device's */
        return broadcast && f->pid == MT_PID_APPMGR && f->port == BUS_APPMGR_PORT_VERDICT &&
               is_member(f->payload[0]) && asked_ok(f->payload + 2);
    default:
        return false;
    }
}

static void rx_bad(const bus_frame_t *f)
{
    B.stats.rx_bad++;
    log_event(EV_BAD_FRAME, f->src_pid, (uint16_t) ((f->src << 8) | f->type));
}

/* Where a frame taken stands on its link: a retransmission of the one
 * accepted last (another receiver rejected it) is a duplicate; a number
 * past the next expected one means its sender gave the frames in between
 * up, which is counted and logged here, before this frame is delivered,
 * so that nothing after a loss arrives as if in order. Before the first
 * frame of a link, number 0 is expected (bus_start() on every module). */
static bool is_duplicate(const bus_frame_t *f)
{
    uint8_t link = f->dst == BUS_BROADCAST ? 1u : 0u;
    bool seen = (B.rx_seen[link] & bit(f->src)) != 0;
    uint8_t last = seen ? B.rx_seq[f->src][link] : (uint8_t) 0xFFu;
    if (seen && f->retry && last == f->seq) return true;
    uint8_t missed = (uint8_t) (f->seq - last - 1u);
    if (missed) {
        B.stats.rx_missed += missed;
        log_event(EV_BUS_GAP, f->src_pid, (uint16_t) (f->src << 8 | missed));
    }
    B.rx_seq[f->src][link] = f->seq;
    B.rx_seen[link] |= bit(f->src);
    return false;
}

static void dispatch(const bus_frame_t *f, uint32_t local)
{
    mt_err_t err = MT_OK;
    bool data_frame = f->type == BUS_FRAME_DATA;
    if ((data_frame || f->type == BUS_FRAME_MCAST) && f->pid == MT_PID_MIGRATOR)
        migrate_bus_rx(f);
    else if (data_frame && migrate_bus_forward(f, &err))
        ;                /* for a task that has moved: sent on to where it is */
    else if (data_frame) /* the payload is borrowed: the queued message copies it */
        err = sched_post_from(f->src_pid, f->pid, f->port, f->payload, f->len);
    else if (f->type == BUS_FRAME_MCAST)
        err = deliver_cast(f);
    else if (f->type == BUS_FRAME_SYNC)
        timesync_beacon(bus_frame_sync_stamp(f), local);
    else if (f->type == BUS_FRAME_DESC)
        bus_app_description(f);
    else if (f->type == BUS_FRAME_CREATED)
        bus_app_report(f->src, f->payload);
    else if (f->type == BUS_FRAME_ASK)
        bus_app_asked(f);
    if (err) B.stats.rx_undeliverable++; /* logged where it failed */
}

/* A message for a task here with no message block left to store it in:
 * the frame is not taken, and the sender's interface offers it again, as
 * behind a full receive buffer. Only unicast data frames: a broadcast may
 * have been taken by other receivers already, a multicast by some of the
 * groups' members here, and the migrator's own frames must never wait
 * behind the messages they are to release (migrate.c keeps its own
 * reserve of blocks for them). */
static bool no_block_for(const bus_frame_t *f)
{
    if (f->type != BUS_FRAME_DATA || f->dst != B.self || f->pid == MT_PID_MIGRATOR) return false;
    if (sched_msg_spare_more_than(0) || !sched_task_exists(f->pid)) return false;
    log_error(MT_ERR_QUEUE_FULL);
    return true;
}

bus_rx_t bus_isr_rx(const uint8_t *frame, uint16_t n, port_counter_t capture)
{
    uint32_t local = capture_time(capture);
    bus_frame_t f;
    bool ok = B.active && bus_frame_decode(frame, n, &f) == MT_OK;
    /* A frame that passes the CRC but names no sender or receiver we know
     * is as wrong as a corrupt one: rejected, never delivered. */
    if (ok) ok = f.src != B.self && is_member(f.src) && (f.dst == B.self || f.dst == BUS_BROADCAST);
    if (!ok) {
        B.stats.rx_corrupt++;
        log_error(MT_ERR_BUS_CORRUPT);
        return BUS_RX_REJECTED; /* never delivered: the sender sends it again */
    }
    if (!frame_allowed(&f)) {
        rx_bad(&f);
        return BUS_RX_ACCEPTED; /* dropped: the same bytes would be as wrong again */
    }
    /* Not taken, not seen (no sequence number recorded): offered again. */
    if (f.type == BUS_FRAME_DATA && migrate_bus_busy(&f)) return BUS_RX_BUSY;
    if (no_block_for(&f)) return BUS_RX_BUSY; /* the hub counts busy answers */
    B.stats.rx_frames++;
    log_event(EV_BUS, f.pid, (uint16_t) (n | LOG_BUS_RX));
    if (is_duplicate(&f)) {
        B.stats.rx_duplicates++;
        return BUS_RX_ACCEPTED;
    }
    dispatch(&f, local);
    return BUS_RX_ACCEPTED;
}

#endif /* MOTET_BUS */
