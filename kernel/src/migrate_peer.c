/* SPDX-License-Identifier: MIT */
/*
 * The task migrator, the other modules' side: the destination and every
 * bystander (migrate.c has the overview).
 *
 * On FREEZE a module holds back whatever its tasks send to the migrating
 * task from then on, and replies to the source at the task's priority: the
 * bus queue keeps equal priorities in order, so the reply arrives behind
 * every message this module sent to the task before. On a failed outcome,
 * or on CONFIRM after a successful one (the destination has started the
 * task: before that a second, failed outcome may still come), it routes
 * the task where it now is and sends what it held back there, in order;
 * until the last has gone, new sends join the end of the line.
 *
 * The destination also receives the image (in the bus interrupt, into
 * blocks allocated when the first chunk arrives: out of memory is an
 * answer, at once, not a lost frame), creates the task frozen, gives it its state,
 * and answers. On success it waits for END: by then the forwarded messages
 * have been put first in the task's held list (they were sent to it
 * earlier than anything held back here, which comes next, before anything
 * that arrived directly). Then the timers are re-armed and the task starts.
 * It joins the task's groups at the successful outcome's frame; which
 * forwarded multicasts it keeps, migrate_peer_cast.c says.
 * On failure the copy is dropped and whatever reached it goes back to the
 * source, behind what was held back.
 */
#include <string.h>

#include "bus_internal.h"
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/program.h"

#if MOTET_BUS

/* ---- holding back ---- */

slot_t *mig_peer_holding(mt_pid_t pid)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) {
        slot_t *s = &MIG.slots[i];
        if (s->role != ROLE_FREE && s->hold && s->pid == pid) return s;
    }
    return NULL;
}

static void append(slot_t *s, msg_t *list)
{
    port_irq_state_t st = port_irq_save();
    msg_t **link = &s->out;
    while (*link) link = &(*link)->next;
    *link = list;
    port_irq_restore(st);
}

mt_err_t mig_peer_hold(slot_t *s, mt_port_t port, const void *data, uint16_t len)
{
    mt_err_t err;
    msg_t *m = sched_mig_msg(s->pid, port, data, len, &err); /* logs exhaustion */
    if (!m) return err;
    append(s, m);
    return MT_OK;
}

/* Two places of the bus queue are left to the module's other senders. */
void mig_flush(slot_t *s)
{
    while (s->out) {
        msg_t *m = s->out;
        if (bus_tx_pending() + (MOTET_BUS_TX_QUEUE > 2 ? 2u : 0u) >= MOTET_BUS_TX_QUEUE) {
            MIG.want_room = true;
            return;
        }
        mt_err_t err =
            bus_send_frame(BUS_FRAME_DATA, s->out_to, s->pid, m->port, s->prio, m->data, m->len);
        if (err == MT_ERR_NO_MEM) {
            MIG.want_room = true;
            return;
        }
        port_irq_state_t st = port_irq_save();
        s->out = m->next; /* sent, or given up and logged */
        port_irq_restore(st);
        sched_mig_msg_free(m);
    }
    mig_slot_free(s);
}

void mig_peer_pump(slot_t *s)
{
    if (s->step == ST_FLUSHING) mig_flush(s);
}

/* ---- FREEZE ---- */

static void reply(mt_pid_t pid, uint8_t id, mt_module_t source, mt_prio_t prio, mt_err_t err)
{
    uint8_t d[3] = {pid, id, (uint8_t) err};
    /* At the task's priority: behind every message already queued for it. */
    mig_ctrl(MIG_MSG_REPLY, source, prio, d, 3);
}

/* A slot still flushing an earlier migration of its task, taken over by
 * a new one: of the earlier one only its line of messages held back stays
 * (with what names the slot to the interrupt half, which may add to the
 * line meanwhile); its blocks (a destination's image and state, which a
 * new image would otherwise replace unfreed or inherit, a source's lists)
 * go, and every other field starts as a new slot's. */
static void forget_earlier(slot_t *s)
{
    port_irq_state_t st = port_irq_save();
    slot_t was = *s;
    *s = (slot_t){
        .role = was.role, .step = was.step, .pid = was.pid, .hold = was.hold, .out = was.out};
    port_irq_restore(st);
    mig_slot_release_blocks(&was);
}

/* Of a task known elsewhere, a FREEZE that would open a slot, or take
 * over one still flushing, must come from the task's host: from any other
 * module it would hold the task's messages, take over a line still going
 * out, and make its sender the source that decides the outcome here
 * (from_its_part() asks the slot, not may_decide()). Checked in the task
 * half, not as the frame arrives: the CONFIRM that moved the task to its
 * sender may be in the ring still, ahead of it. A FREEZE met by a
 * migration of the task not over here is put off (hold_for()), which
 * changes nothing, whoever sent it: a newer migration from the module the
 * task moved to, its CONFIRM not come yet, is one. */
static bool forged_freeze(const uint8_t *d, const slot_t *earlier)
{
    if (earlier && earlier->step != ST_FLUSHING) return false;
    return !may_decide(d[0], d[2]);
}

/* A slot for a new migration of pid, `earlier` the slot this module has
 * for pid, if any. One still flushing an earlier migration of the same
 * task carries on as the new one: what it holds back was sent before what
 * will be held back now, and all of it goes, in that order, wherever the
 * task ends up. */
static slot_t *hold_for(const uint8_t *d, slot_t *s)
{
    if (s && s->step != ST_FLUSHING) return NULL; /* two migrations of one task */
    if (s)
        forget_earlier(s);
    else
        s = mig_slot_new();
    if (!s) return NULL;
    s->pid = d[0];
    s->id = d[1];
    s->source = d[2];
    s->dest = d[3];
    s->prio = (mt_prio_t) d[4];
    s->out_to = MIG_NO_MODULE;
    s->step = ST_HOLDING;
    s->hold = true;
    s->since = timer_now();
    s->role = d[3] == bus_self() ? ROLE_DEST : ROLE_PEER; /* last: the interrupt looks */
    return s;
}

static void on_freeze(const mig_record_t *r)
{
    const uint8_t *d = r->data;
    if (r->len < 5 || d[2] == bus_self()) return;
    mt_prio_t prio = (mt_prio_t) d[4];
    if (sched_task_exists(d[0])) { /* the task is here, not at the source */
        reply(d[0], d[1], d[2], prio, MT_ERR_STATE);
        return;
    }
    /* Asked again: the same source's migration. A migration's number is
     * its source's own, so a newer one of the task, from the module it
     * moved to, may carry the number of the one this module still holds
     * back for; replying for it as asked again would go ahead of what is
     * held back (the older migration's line), and hold nothing for the
     * newer one. It is a new migration: hold_for() carries a line still
     * flushing over into it, or, with the older one not over here, it
     * is put off. */
    slot_t *s = mig_slot_find(ROLE_FREE, d[0], d[1]);
    if (!s || s->source != d[2]) {
        slot_t *earlier = mig_slot_of(d[0]);
        if (forged_freeze(d, earlier)) {
            /* Logged as a frame dropped for its fields; not counted in
             * rx_bad: the bus took it (rx_frames), and counts each frame
             * once. */
            log_event(EV_BAD_FRAME, MT_PID_MIGRATOR, (uint16_t) (r->from << 8 | BUS_FRAME_MCAST));
            return;
        }
        s = hold_for(d, earlier);
    }
    /* No slot free: at its limit of migrations at once; the source puts
     * this one off (nothing has moved) and asks again later. */
    reply(d[0], d[1], d[2], prio, s ? MT_OK : log_error(MT_ERR_FULL));
}

/* ---- the image (interrupt) ---- */

static void finish_rx(slot_t *s)
{
    s->rx_done = true;
    uint8_t d[2] = {s->pid, s->id};
    mig_ring_push(MIG_REC_RECEIVED, s->source, d, 2);
}

/* The first chunk carries the whole header (the source sees to it): one
 * that does not decode, is for another task, or announces more bytes than
 * the offsets count is refused before anything is allocated for it; a
 * program this module does not carry is refused at once, not after the
 * whole image. Then both blocks are allocated. */
static bool start_rx(slot_t *s, const uint8_t *b, uint16_t n)
{
    mig_image_t img;
    if (mig_image_decode(b, n, &img) != MT_OK || img.pid != s->pid) return false;
    uint16_t head = mig_image_size(&img);
    if ((uint32_t) head + img.state_len > UINT16_MAX) return false;
    const program_t *prog = program_find(img.program);
    if (!prog) {
        s->err = MT_ERR_NO_PROGRAM;
        return true;
    }
    s->head_len = head;
    s->state_len = img.state_len;
    s->head = mem_alloc_owned(head, MEM_OWNER_KERNEL);
    if (!s->head) {
        s->err = MT_ERR_NO_MEM;
    } else if (prog->layout) { /* decoded as it comes, into the new task's state */
        s->decoding = prog;
        s->state = mig_layout_rx_start(prog, s->state_len, &s->err);
    } else if (s->state_len) {
        s->state = mem_alloc_owned(s->state_len, MEM_OWNER_KERNEL);
        if (!s->state) s->err = MT_ERR_NO_MEM;
    }
    return true;
}

/* Image bytes [offset, offset+n) into the header, then the state. */
static void copy_in(slot_t *s, const uint8_t *b, uint16_t n)
{
    uint16_t off = s->offset, total = (uint16_t) (s->head_len + s->state_len);
    if (s->err || off >= total) return;
    if (n > total - off) n = (uint16_t) (total - off); /* never past the blocks */
    uint16_t to_head = off < s->head_len ? (uint16_t) (s->head_len - off) : 0u;
    if (to_head > n) to_head = n;
    if (to_head) memcpy(s->head + off, b, to_head);
    if (n == to_head) return;
    uint16_t at = (uint16_t) (off + to_head - s->head_len);
    if (s->decoding)
        mig_layout_rx_part(s->decoding, s->state, at, b + to_head, (uint16_t) (n - to_head));
    else
        memcpy(s->state + at, b + to_head, n - to_head);
}

void mig_peer_rx_state(const bus_frame_t *f)
{
    if (f->len < MIG_CHUNK_HDR) return;
    const uint8_t *p = f->payload;
    slot_t *s = mig_slot_find(ROLE_DEST, p[0], p[1]);
    if (!s || s->rx_done || s->step != ST_HOLDING || f->src != s->source) return;
    uint16_t off = mig_get16(p + 2), n = (uint16_t) (f->len - MIG_CHUNK_HDR);
    const uint8_t *b = p + MIG_CHUNK_HDR;
    if (off != s->offset || (off == 0 && !start_rx(s, b, n))) {
        if (!s->err) s->err = MT_ERR_INVALID;
        finish_rx(s);
        return;
    }
    copy_in(s, b, n);
    s->offset = (uint16_t) (s->offset + n);
    /* Out of memory: say so now rather than after the whole image. */
    if (s->err || s->offset >= s->head_len + s->state_len) finish_rx(s);
}

/* ---- attaching ---- */

static void answer(const slot_t *s, mt_err_t err)
{
    uint8_t d[3] = {s->pid, s->id, (uint8_t) err};
    mig_ctrl(MIG_MSG_ATTACHED, s->source, MIG_CTRL_PRIO, d, 3);
}

/* The task's control block, frozen, with what was held back here first. */
static mt_err_t create(slot_t *s, const mig_image_t *img)
{
    const program_t *prog = program_find(img->program);
    if (img->pid != s->pid) return MT_ERR_INVALID;
    if (!prog) return MT_ERR_NO_PROGRAM;
    route_t *routes = NULL;
    if (img->n_routes) {
        routes = mem_alloc_owned(img->n_routes * sizeof(route_t), MEM_OWNER_KERNEL);
        if (!routes) return MT_ERR_NO_MEM;
    }
    for (uint8_t i = 0; i < img->n_routes; i++) routes[i] = mig_image_route(img, i);
    task_spec_t spec = {.pid = s->pid,
                        .prio = img->prio,
                        .flags = (uint8_t) (img->flags & TASK_MOVABLE),
                        .handler = prog->handler,
                        /* a state decoded as it came is given to it later */
                        .state_size = s->decoding ? 0u : prog->state_size,
                        .routes = routes,
                        .n_routes = img->n_routes};
    /* Held first, in the step that creates it: anything that reaches the
     * task from then on is newer. The line is read, handed over and the
     * slot stops holding in that same step: a frame held just before is
     * in the line, and a handler at an interrupt's exit that kills the
     * copy just after frees a line the slot no longer names. */
    port_irq_state_t st = port_irq_save();
    mt_err_t err = sched_mig_move_in(&spec, &s->out);
    if (!err) s->hold = false;
    port_irq_restore(st);
    mem_release(routes);
    return err;
}

/* Of what reached the copy, what the source lacks: not the forwarded
 * messages (the first fwd_kept held; the source kept copies and takes them
 * back first), nor any multicast delivered here (MSG_CAST: the source
 * recorded every one it took before taking the task back, and takes the
 * later ones as a member again). The rest is a list in its order. */
static msg_t *lacked_by_source(const slot_t *s, msg_t *held)
{
    msg_t *keep = NULL, **tail = &keep;
    for (uint16_t i = 0; held; i++) {
        msg_t *m = held;
        held = m->next;
        if (i < s->fwd_kept || (m->flags & MSG_CAST)) {
            sched_mig_msg_free(m);
            continue;
        }
        m->next = NULL;
        *tail = m;
        tail = &m->next;
    }
    return keep;
}

/* The copy goes; what reached it that the source lacks joins what is held
 * back for the source. */
static void drop_copy(slot_t *s)
{
    msg_t *held = NULL;
    if (sched_mig_move_out(s->pid, s->source, &held) == MT_OK) append(s, lacked_by_source(s, held));
    port_irq_state_t st = port_irq_save();
    msg_t *reserved = s->reserved; /* nothing more is forwarded to the copy */
    s->reserved = NULL;
    port_irq_restore(st);
    mig_free_list(reserved);
    s->hold = true;
}

/* The copy found by pid at each use: a handler may have killed it. */
static mt_err_t deserialise(slot_t *s)
{
    uint8_t *block = s->state; /* the task's from now on, or freed after */
    s->state = NULL;
    mt_err_t err = s->decoding ? mig_layout_attach(s->pid, block)
                               : sched_mig_call(s->pid, PORT_DESERIALIZE, block, s->state_len);
    if (err) drop_copy(s);
    return err;
}

static void attach(slot_t *s)
{
    mig_image_t img;
    mt_err_t err = s->err;
    if (!err) err = mig_image_decode(s->head, s->head_len, &img);
    /* Blocks for the messages the source will forward, set aside before
     * ATTACHED: the pool cannot refuse them later, and FORWARD cannot be
     * answered busy (the task starts only after END). Not enough: refused,
     * as out of memory, and the task stays at the source. */
    if (!err) err = sched_mig_reserve(&s->reserved, img.held);
    if (!err) err = create(s, &img);
    if (!err) err = deserialise(s);
    s->since = timer_now();
    if (err) {
        log_error(err);
        mem_release(s->state);
        s->state = NULL;
        mig_free_list(s->reserved);
        s->reserved = NULL;
        s->step = ST_FAILED; /* still holding back, for the source now */
        answer(s, err);
        return;
    }
    s->step = ST_ATTACHED;
    mig_notify(s->pid, MIG_ATTACHED, s->source, MT_OK);
    answer(s, MT_OK);
}

/* ---- the outcome ---- */

void mig_peer_rx_result(const bus_frame_t *f)
{
    if (f->len < 5) return;
    const uint8_t *p = f->payload;
    slot_t *s = mig_slot_find(ROLE_DEST, p[0], p[1]);
    if (!s || p[2] != MT_OK || s->step != ST_ATTACHED) return;
    mig_peer_join(s);
}

/* The migration is over without the task here: the copy (if any) goes,
 * and what was held back goes to the source. */
static void give_up(slot_t *s, mt_err_t why)
{
    if (s->role == ROLE_DEST) {
        drop_copy(s);
        mig_notify(s->pid, MIG_DISCARDED, s->source, why);
    }
    s->out_to = s->source;
    s->step = ST_FLUSHING;
}

static void drop_held_back(slot_t *s)
{
    while (s->out) {
        msg_t *m = s->out;
        s->out = m->next;
        log_error(MT_ERR_NO_TASK); /* the task is dead: nowhere to go */
        sched_mig_msg_free(m);
    }
}

static void on_result(const mig_record_t *r)
{
    const uint8_t *d = r->data;
    if (r->len < 5) return;
    mt_pid_t pid = d[0];
    mt_err_t err = (mt_err_t) d[2];
    slot_t *s = mig_slot_find(ROLE_FREE, pid, d[1]);
    if (s) s->since = timer_now();
    /* Success is not final until CONFIRM: the destination may die before it
     * starts the task, and then a second RESULT sends everyone back. A
     * bystander already flushing (it gave up on an unreachable source)
     * keeps flushing: its line goes to one module, in order. */
    if (err == MT_OK) {
        if (s && ((s->role == ROLE_PEER && s->step != ST_FLUSHING) || s->step == ST_ATTACHED))
            s->step = ST_COMMITTED;
        return;
    }
    if (err != MT_ERR_FULL) mig_notify(pid, MIG_DONE, d[4], err); /* else: put off, not over */
    bool over_here =
        !s || (s->role == ROLE_PEER && s->step == ST_FLUSHING) || s->step == ST_STARTING;
    if (!over_here) give_up(s, err);
    if (err != MIG_RESULT_KILLED) return;
    /* After give_up(): a copy's move out routes its pid to the source, and
     * the task is dead. */
    if (sched_mig_remote(pid, NULL, NULL)) sched_task_remove_remote(pid);
    if (!over_here) drop_held_back(s);
}

/* A copy killed here before END is not reported live. Found, re-armed
 * and thawed in one step: a copy killed before gets no timer, and a kill
 * after stops what was armed with its task. */
static void start_copy(slot_t *s, uint32_t age, uint32_t since)
{
    mig_image_t img;
    mt_err_t err = mig_rearm_plan(s->head, s->head_len, age, since, &img);
    port_irq_state_t st = port_irq_save();
    task_t *t = sched_find_task(s->pid);
    if (t) {
        if (!err) err = mig_rearm(s->pid, &img);
        s->joined = false; /* its groups deliver to it from now on, behind what it holds */
        sched_mig_thaw(t);
    }
    port_irq_restore(st);
    if (t && err) log_error(err);
    if (t)
        mig_notify(s->pid, MIG_LIVE, s->source, MT_OK);
    else
        mig_notify(s->pid, MIG_DISCARDED, s->source, MT_ERR_NO_TASK);
    mig_slot_free(s);
}

/* A destination that asked about an outcome its source no longer keeps:
 * the source routes the task to `where`. Here: END was through (a source
 * lets the task go at END alone); if its record was lost, END's age is
 * used when its frame was taken, else the timers go on from the freeze.
 * Elsewhere: the copy is stale, and
 * what was held back here goes there. */
static void settle_copy(slot_t *s, mt_module_t where)
{
    log_error(MT_ERR_STATE); /* settled without END */
    if (where != bus_self() || (s->step != ST_ATTACHED && s->step != ST_COMMITTED)) {
        give_up(s, MIG_RESULT_FORGOTTEN);
        if (where != bus_self()) s->out_to = where;
        return;
    }
    mig_peer_join(s);   /* if it missed RESULT ok too */
    if (!s->end_seen) { /* the timers go on from the freeze */
        s->age = 0;
        s->clock = timer_now();
    }
    s->step = ST_STARTING;
    mig_peer_start(s);
}

void mig_peer_start(slot_t *s)
{
    if (mig_peer_cuts_ahead(s) && timer_now() - s->clock < TIMER_MS(MOTET_MIGRATE_FRAME_MS))
        return; /* a frame it kept the forwarded copy of may still come */
    start_copy(s, s->age, timer_now() - s->clock);
}

/* The destination has taken END: the task runs there. */
static void on_confirm(const mig_record_t *r)
{
    const uint8_t *d = r->data;
    if (r->len < 4) return;
    mig_notify(d[0], MIG_DONE, d[3], MT_OK);
    slot_t *copy = mig_slot_find(ROLE_DEST, d[0], d[1]);
    if (copy && copy->step != ST_FLUSHING && copy->step != ST_STARTING) settle_copy(copy, d[3]);
    if (!sched_task_exists(d[0])) sched_mig_reroute(d[0], d[3]);
    slot_t *s = mig_slot_find(ROLE_PEER, d[0], d[1]);
    if (!s || s->step == ST_FLUSHING) return;
    s->out_to = d[3];
    s->step = ST_FLUSHING;
}

static void on_abort(const mig_record_t *r)
{
    slot_t *s = mig_slot_find(ROLE_DEST, r->data[0], r->data[1]);
    if (s && s->step < ST_COMMITTED) give_up(s, MT_ERR_STATE);
}

/* ---- a source that has gone silent ---- */

bool mig_peer_waiting(const slot_t *s)
{
    return (s->role == ROLE_PEER || s->role == ROLE_DEST) && s->step != ST_FLUSHING;
}

/* Waiting for the source too long: ask whether it is still there. */
void mig_peer_tick(slot_t *s)
{
    if (s->role == ROLE_DEST && s->step == ST_STARTING) {
        mig_peer_start(s); /* MOTET_MIGRATE_FRAME_MS after END, it starts */
        return;
    }
    if (!mig_peer_waiting(s) || timer_now() - s->since < TIMER_MS(MOTET_MIGRATE_TIMEOUT_MS)) return;
    s->since = timer_now();
    uint8_t d[3] = {s->pid, s->id, s->source};
    mig_ctrl(MIG_MSG_PING, s->source, MIG_CTRL_PRIO, d, 3);
}

/* A source that cannot be reached decides nothing more: the task was there
 * and is gone with it (or comes back with it). A destination still waiting
 * has not taken END (END starts its copy, RESULT ok taken or not, and a
 * source lets the task go only once END is through), so dropping its copy
 * leaves the task on one module. */
void mig_peer_tx_end(slot_t *s, mt_module_t to, uint8_t kind, uint8_t result)
{
    if (kind != MIG_MSG_PING || result == PORT_BUS_SENT || to != s->source) return;
    if (!mig_peer_waiting(s) || s->step == ST_STARTING) return;
    log_error(MT_ERR_BUS_DOWN);
    mig_notify(s->pid, MIG_DONE, s->dest, MT_ERR_BUS_DOWN);
    give_up(s, MT_ERR_BUS_DOWN);
}

/* ---- forwarded messages and the start ---- */

/* The messages of a FORWARD, or of END's tail, from `at` on. */
static void take_forwarded(slot_t *s, task_t *t, const bus_frame_t *f, uint16_t at)
{
    const uint8_t *p = f->payload;
    mig_peer_join(s); /* if it missed RESULT ok */
    while (at + MIG_FWD_ENTRY <= f->len) {
        bool cast = (p[at] & MIG_FWD_CAST) != 0;
        uint16_t head = cast ? MIG_FWD_CAST_ENTRY : MIG_FWD_ENTRY;
        uint16_t n = mig_get16(p + at + 1);
        if (at + head + n > f->len) break;
        s->fwd_count++;
        mt_port_t port = (mt_port_t) (p[at] & ~MIG_FWD_CAST);
        const uint8_t *frame = p + at + MIG_FWD_ENTRY; /* a multicast's origin and number */
        const uint8_t *body = p + at + head;
        at = (uint16_t) (at + head + n);
        if (cast) {
            mig_peer_forwarded_cast(s, t, port, frame, body, n);
            continue;
        }
        /* After the ones forwarded before, ahead of everything else, in a
         * block set aside at attaching (the payload needs heap: if that is
         * out, lost, logged and reported). */
        mt_err_t why;
        msg_t *m = sched_mig_msg_from(&s->reserved, s->pid, port, body, n, &why);
        if (m)
            sched_mig_hold_at(t, m, s->fwd_kept++);
        else
            mig_lost(s->pid, s->source, why);
    }
}

/* The copy this FORWARD or END is for, or NULL. */
static slot_t *copy_of(const bus_frame_t *f, task_t **t)
{
    const uint8_t *p = f->payload;
    slot_t *s = mig_slot_find(ROLE_DEST, p[0], p[1]);
    *t = s && f->src == s->source ? task_find_locked(s->pid) : NULL;
    return *t ? s : NULL;
}

void mig_peer_rx_forward(const bus_frame_t *f)
{
    task_t *t;
    slot_t *s = f->len >= MIG_FWD_HDR ? copy_of(f, &t) : NULL;
    if (s) take_forwarded(s, t, f, MIG_FWD_HDR);
}

/* END's tail and age, for the destination's slot; the task half does the
 * rest. */
void mig_peer_rx_end(const bus_frame_t *f)
{
    task_t *t;
    slot_t *s = copy_of(f, &t); /* none: END starts nothing here */
    if (!s) return;
    take_forwarded(s, t, f, MIG_END_HDR);
    s->age = mig_get32(f->payload + 4);
    s->clock = timer_now(); /* the source's count ends about here */
    s->end_seen = true;
}

static void on_end(const mig_record_t *r)
{
    if (r->len < 4) return;
    slot_t *s = mig_slot_find(ROLE_DEST, r->data[0], r->data[1]);
    /* In ST_ATTACHED it missed RESULT ok: a source sends END only after an
     * OK decision, so END says the outcome too. */
    if (!s || (s->step != ST_COMMITTED && s->step != ST_ATTACHED)) return;
    if (mig_get16(r->data + 2) != s->fwd_count) log_error(MT_ERR_STATE); /* some lost */
    mig_peer_join(s); /* if it missed RESULT ok */
    s->step = ST_STARTING;
    mig_peer_start(s);
}

void mig_peer_record(const mig_record_t *r)
{
    if (r->kind == MIG_MSG_FREEZE) {
        on_freeze(r);
    } else if (r->kind == MIG_REC_RECEIVED) {
        slot_t *s = mig_slot_find(ROLE_DEST, r->data[0], r->data[1]);
        if (s && s->step == ST_HOLDING) attach(s);
    } else if (r->kind == MIG_MSG_RESULT) {
        on_result(r);
    } else if (r->kind == MIG_MSG_END) {
        on_end(r);
    } else if (r->kind == MIG_REC_CUTS_ENDED) {
        slot_t *s = mig_slot_find(ROLE_DEST, r->data[0], r->data[1]);
        if (s && s->step == ST_STARTING) mig_peer_start(s);
    } else if (r->kind == MIG_MSG_CONFIRM) {
        on_confirm(r);
    } else if (r->kind == MIG_MSG_ABORT && r->len >= 2) {
        on_abort(r);
    }
}

#endif /* MOTET_BUS */
