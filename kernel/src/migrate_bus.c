/* SPDX-License-Identifier: MIT */
/*
 * The migrator's interrupt half (migrate.c has the common machinery and the
 * task half): what bus.c asks of it while a frame is received, before
 * anything acts on the frame (migrate_bus_valid(), migrate_bus_busy()), and
 * what must happen at the frame's place in bus order: image chunks and
 * forwarded messages put where they belong, a frame for a task held or
 * moved elsewhere kept or passed on, every other frame recorded in the ring
 * for the task half. docs/migration.md walks through the protocol.
 */
#include "bus_internal.h"
#include "migrate_internal.h"

#if MOTET_BUS

/* ---- what another module may send (bus.c asks before anything acts) ---- */

static bool on_device(mt_module_t m)
{
    return m < MOTET_BUS_MODULES && (bus_modules() & mig_bit(m));
}

static bool is_error(uint8_t err)
{
    return err < MT_ERR_COUNT;
}

/* The messages of a FORWARD (or END's tail) from `at` fill it exactly,
 * each to an input port; a multicast's names a module of the device as
 * its origin. */
static bool forward_fits(const uint8_t *p, uint16_t at, uint16_t len)
{
    while (at < len) {
        uint16_t left = (uint16_t) (len - at);
        bool cast = (p[at] & MIG_FWD_CAST) != 0;
        uint16_t head = cast ? MIG_FWD_CAST_ENTRY : MIG_FWD_ENTRY;
        if (left < head || (p[at] & ~MIG_FWD_CAST) >= PORT_LIMIT) return false;
        if (cast && !on_device(p[at + MIG_FWD_ENTRY])) return false;
        uint16_t n = mig_get16(p + at + 1);
        if (n > left - head) return false;
        at = (uint16_t) (at + head + n);
    }
    return true;
}

/* A frame's payload against the layout of its kind (migrate.h): its
 * length, then every field that names a module, a priority or an error.
 * A module names itself where the kind says it is the sender: a request's
 * first hop comes from its requester, and only a migration's source
 * freezes, decides and confirms it. */
static bool payload_fits(const bus_frame_t *f)
{
    const uint8_t *p = f->payload;
    uint16_t len = f->len;
    bool cast_ok = f->port == MIG_MSG_FREEZE || f->port == MIG_MSG_RESULT ||
                   f->port == MIG_MSG_CONFIRM; /* also unicast: to one that asked again */
    if (f->type == BUS_FRAME_MCAST && !cast_ok) return false;
    /* every kind starts with the task's pid, an application's: only those move */
    if (len < 2 || !task_pid_is_app(p[0])) return false;
    switch (f->port) {
    case MIG_MSG_REQUEST: /* pid, dest, requester, hops */
        return len == 4 && on_device(p[1]) && on_device(p[2]) && p[3] >= 1u &&
               p[3] <= MIG_MAX_HOPS && (p[3] > 1u || p[2] == f->src);
    case MIG_MSG_FREEZE: /* pid, id, source, dest, prio */
        return len == 5 && p[2] == f->src && on_device(p[3]) && p[3] != p[2] &&
               p[4] < MOTET_PRIO_LEVELS;
    case MIG_MSG_REPLY:    /* pid, id, err */
    case MIG_MSG_ATTACHED: /* pid, id, err */
        return len == 3 && is_error(p[2]);
    case MIG_MSG_STATE: /* pid, id, u16 offset, image bytes */
        return len >= MIG_CHUNK_HDR;
    case MIG_MSG_RESULT: /* pid, id, err, source, dest */
        return len == 5 && is_error(p[2]) && p[3] == f->src && on_device(p[4]);
    case MIG_MSG_FORWARD: /* pid, id, messages */
        return forward_fits(p, MIG_FWD_HDR, len);
    case MIG_MSG_END: /* pid, id, u16 count, u32 age, the tail's multicasts */
        return len >= MIG_END_HDR && forward_fits(p, MIG_END_HDR, len);
    case MIG_MSG_REFUSED: /* pid, err */
        return len == 2 && is_error(p[1]) && p[1] != MT_OK;
    case MIG_MSG_PING: /* pid, id (, the source asked, from one waiting for its outcome) */
        return len == 2 || (len == 3 && on_device(p[2]));
    case MIG_MSG_ABORT: /* pid, id */
        return len == 2;
    case MIG_MSG_CONFIRM: /* pid, id, source, dest */
        return len == 4 && p[2] == f->src && on_device(p[3]);
    default: /* KICK and the ring's own records never travel */
        return false;
    }
}

/* The role a frame of `kind` is checked against, of the slot it names
 * here: ROLE_DEST (the source sends it), ROLE_SOURCE (the destination
 * does), ROLE_FREE (any role: the source decides; with no slot, the
 * task's host); ROLE_PEER for a kind with no sender to check. */
static uint8_t checked_role(uint8_t kind)
{
    if (kind == MIG_MSG_ATTACHED) return ROLE_SOURCE;
    if (kind == MIG_MSG_RESULT || kind == MIG_MSG_CONFIRM) return ROLE_FREE;
    if (kind == MIG_MSG_STATE || kind == MIG_MSG_FORWARD || kind == MIG_MSG_END ||
        kind == MIG_MSG_ABORT)
        return ROLE_DEST;
    return ROLE_PEER;
}

/* Of a migration this module takes part in, only the destination attaches
 * and only the source sends the image and what follows it, or decides;
 * of one it takes no part in, only the task's host decides. A refusal is
 * taken only by a module that asked for the task to move (a late one too,
 * after the task's migration ended its requests: logged as the refusal it
 * is, not as a bad frame): the requester a forwarded REQUEST names is the
 * forwarder's word, which the module that refuses cannot check, so a
 * forged one must not make another module log a refusal of a request it
 * never made. */
static bool from_its_part(const bus_frame_t *f)
{
    const uint8_t *p = f->payload;
    uint8_t role = checked_role(f->port);
    if (f->port == MIG_MSG_REFUSED) return mig_asked(p[0]);
    if (role == ROLE_PEER) return true;
    const slot_t *s = mig_slot_find(role, p[0], p[1]);
    if (!s) return role != ROLE_FREE || may_decide(p[0], f->src);
    return (role == ROLE_SOURCE ? s->dest : s->source) == f->src;
}

bool migrate_bus_valid(const bus_frame_t *f)
{
    return payload_fits(f) && from_its_part(f);
}

/* ---- the interrupt half (bus.c) ---- */

void migrate_bus_rx(const bus_frame_t *f)
{
    if (f->port == MIG_MSG_STATE) {
        mig_peer_rx_state(f);
    } else if (f->port == MIG_MSG_FORWARD) {
        mig_peer_rx_forward(f);
    } else if (f->port == MIG_MSG_END) {
        mig_peer_rx_end(f); /* its age; the rest for the task */
        mig_ring_push(f->port, f->src, f->payload, MIG_END_RING);
    } else {
        if (f->port == MIG_MSG_RESULT) mig_peer_rx_result(f);
        if (f->port == MIG_MSG_REFUSED) { /* with whether it ends a request still awaited */
            uint8_t d[3] = {f->payload[0], f->payload[1], mig_asked_refused(f->payload[0])};
            mig_ring_push(f->port, f->src, d, 3);
            return;
        }
        /* Checked (migrate_bus_valid()): at most MIG_CTRL_MAX bytes. */
        mig_ring_push(f->port, f->src, f->payload, (uint8_t) f->len);
    }
}

void migrate_bus_own(const bus_frame_t *f)
{
    if (f->port == MIG_MSG_RESULT) mig_source_own_result(f);
}

void migrate_bus_cast(const bus_frame_t *f)
{
    mig_source_record_cast(f);
    mig_peer_record_cast(f);
}

bool migrate_bus_cast_taken(mt_pid_t pid)
{
    return mig_peer_takes_casts(pid);
}

msg_t *mig_cast_messages(const slot_t *s, const bus_frame_t *f)
{
    mig_image_t img;
    msg_t *list = NULL, **tail = &list;
    if (mig_image_decode(s->head, s->head_len, &img) != MT_OK) return NULL;
    for (uint8_t k = 0; k < img.n_groups; k++) {
        uint8_t g;
        mt_port_t port;
        mig_image_group(&img, k, &g, &port);
        if (g != f->port) continue;
        mt_err_t why;
        msg_t *m = sched_mig_msg(s->pid, port, f->payload, f->len, &why);
        if (!m) { /* a multicast is not offered again: lost, and said so */
            mig_lost(s->pid, f->src, why);
            continue;
        }
        mig_cast_mark(m, f->src, f->seq);
        *tail = m;
        tail = &m->next;
    }
    return list;
}

void migrate_bus_tx_end(const uint8_t *frame, uint16_t n, port_bus_result_t result)
{
    if (MIG.kick_lost) mig_kick();
    /* Another's frame ended: the send queue moves, and a decided source's
     * wait starts again. The migrator's own do not count: a FORWARD's end
     * restarts it itself, and RESULT ok given up again and again is no
     * progress. */
    if (frame[4] != MT_PID_MIGRATOR) MIG.tx_ends++;
    bool ours = n >= BUS_HEADER_SIZE + 2u && (frame[0] & ~BUS_TYPE_RETRY) == BUS_FRAME_DATA &&
                frame[4] == MT_PID_MIGRATOR;
    if (ours) {
        const uint8_t *p = frame + BUS_HEADER_SIZE;
        uint8_t d[4] = {frame[5], p[0], p[1], (uint8_t) result};
        mig_ring_push(MIG_REC_TX_END, frame[2], d, 4);
    } else if (MIG.want_room) {
        MIG.want_room = false;
        mig_kick();
    }
}

bool migrate_bus_hold(const msg_t *msg, mt_err_t *err)
{
    slot_t *s = mig_peer_holding(msg->dst);
    if (!s) return false;
    *err = mig_peer_hold(s, msg->port, msg->data, msg->len);
    return true;
}

/* A frame for a task that lives on a third module: migrate_bus_forward()
 * passes it on there. */
static bool passes_on(const bus_frame_t *f)
{
    mt_module_t where;
    mt_prio_t prio;
    if (task_find_locked(f->pid) || mig_peer_holding(f->pid)) return false;
    if (!sched_mig_remote(f->pid, &where, &prio)) return false;
    return where != bus_self() && where != f->src;
}

bool migrate_bus_busy(const bus_frame_t *f)
{
    if (MIG.kick_lost) mig_kick();
    if (f->pid == MT_PID_MIGRATOR) return false;
    /* Passing it on needs a place in our own send queue: without one the
     * frame waits at its sender rather than being lost here. */
    if (bus_tx_pending() >= MOTET_BUS_TX_QUEUE && passes_on(f)) {
        log_error(MT_ERR_QUEUE_FULL);
        return true;
    }
    if (sched_msg_spare_more_than(MIG_RESERVE)) return false;
    task_t *t = task_find_locked(f->pid);
    bool held = t ? (t->flags & TASK_FROZEN) != 0 : mig_peer_holding(f->pid) != NULL;
    if (held) log_error(MT_ERR_QUEUE_FULL); /* the reserve is the migrator's: wait */
    return held;
}

bool migrate_bus_forward(const bus_frame_t *f, mt_err_t *err)
{
    (void) err; /* what it sends on is logged where it fails */
    if (MIG.kick_lost) mig_kick();
    task_t *t = task_find_locked(f->pid);
    if (t) return false;
    slot_t *s = mig_peer_holding(f->pid);
    /* migrate_bus_busy() found blocks beyond the reserve in this same
     * interrupt: only the heap can fail here (MT_ERR_NO_MEM). */
    if (s) {
        mt_err_t why = mig_peer_hold(s, f->port, f->payload, f->len);
        if (why) mig_lost(f->pid, f->src, why);
        return true;
    }
    mt_module_t where;
    mt_prio_t prio;
    if (!sched_mig_remote(f->pid, &where, &prio)) return false;
    if (where == bus_self() || where == f->src) return false; /* no loops */
    bus_send_frame(BUS_FRAME_DATA, where, f->pid, f->port, prio, f->payload, f->len);
    return true;
}

#endif /* MOTET_BUS */
