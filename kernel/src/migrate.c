/* SPDX-License-Identifier: MIT */
/*
 * The task migrator (migrate.h): the common machinery. The source's side of
 * the protocol is in migrate_source.c, the destination's and the bystanders'
 * in migrate_peer.c; docs/migration.md walks through the whole of it.
 *
 * One migrator per module, in two halves:
 *
 * - In the bus interrupt (migrate_bus_*, in migrate_bus.c), only what must
 *   happen at the frame's place in bus order: copying image chunks and
 *   forwarded messages where they belong, and switching the task's group
 *   memberships from the source to the destination at the outcome's
 *   frame, so that every multicast reaches the task once. Every other
 *   frame becomes a record in a ring for the task half.
 * - The migrator task (pid MT_PID_MIGRATOR, priority 0) does the rest. At
 *   the lowest level, and never started at once (only posted to), it runs
 *   with nothing below it on the stack: no handler is half-way through a
 *   send when it freezes a route, and the migrating task is not running
 *   when it is serialised or replaced.
 *
 * Output. Control frames go straight to the bus queue, or wait in a small
 * queue of their own while it is full; bulk frames (image chunks, forwarded
 * messages) go one at a time per migration, each once the previous has
 * ended, which bounds the heap they take and tells at once if the
 * destination has stopped answering. Any frame of ours ending wakes the
 * task when it is waiting for room.
 */
#include <string.h>

#include "bus_internal.h"
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/program.h"

#if MOTET_BUS

mig_t MIG;
static migrate_observer_fn observer;

uint32_t mig_bit(mt_module_t m)
{
    return (uint32_t) 1u << m;
}

/* ---- slots ---- */

slot_t *mig_slot_new(void)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) {
        slot_t *s = &MIG.slots[i];
        if (s->role != ROLE_FREE) continue;
        memset(s, 0, sizeof *s);
        s->out_to = MIG_NO_MODULE;
        return s;
    }
    return NULL;
}

void mig_free_list(msg_t *m)
{
    while (m) {
        msg_t *next = m->next;
        sched_mig_msg_free(m);
        m = next;
    }
}

void mig_slot_release_blocks(const slot_t *s)
{
    mem_release(s->head);
    mem_release(s->state);
    mig_free_list(s->fwd);
    mig_free_list(s->casts);
    mig_free_list(s->reserved);
}

void mig_slot_free(slot_t *s)
{
    port_irq_state_t st = port_irq_save();
    s->role = ROLE_FREE; /* first: the interrupt half stops looking at it */
    port_irq_restore(st);
    mig_slot_release_blocks(s);
    mig_free_list(s->out);
    memset(s, 0, sizeof *s);
}

slot_t *mig_slot_find(uint8_t role, mt_pid_t pid, uint8_t id)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) {
        slot_t *s = &MIG.slots[i];
        if (s->role != ROLE_FREE && s->pid == pid && s->id == id && (!role || s->role == role))
            return s;
    }
    return NULL;
}

slot_t *mig_slot_of(mt_pid_t pid)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++)
        if (MIG.slots[i].role != ROLE_FREE && MIG.slots[i].pid == pid) return &MIG.slots[i];
    return NULL;
}

bool mig_pid_pinned(mt_pid_t pid)
{
    return mig_slot_of(pid) != NULL;
}

uint8_t migrate_active(void)
{
    uint8_t n = 0;
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) n += MIG.slots[i].role != ROLE_FREE;
    return n;
}

/* ---- the input ring and waking the task ---- */

void mig_kick(void)
{
    port_irq_state_t s = port_irq_save();
    bool post = !MIG.kick_pending;
    MIG.kick_pending = true;
    port_irq_restore(s);
    /* Posted, never sent: the migrator must not run nested on a handler. */
    bool lost = post && sched_post_isr(MT_PID_MIGRATOR, MIG_MSG_KICK, NULL, 0, 0) != MT_OK;
    if (lost) MIG.kick_pending = false; /* the next frame tries again */
    MIG.kick_lost = lost;
}

bool mig_ring_push(uint8_t kind, mt_module_t from, const uint8_t *data, uint8_t len)
{
    port_irq_state_t s = port_irq_save();
    bool room = MIG.ring_count < MOTET_MIGRATE_RING && len <= MIG_CTRL_MAX;
    if (room) {
        mig_record_t *r =
            &MIG.ring[(uint8_t) (MIG.ring_head + MIG.ring_count) % MOTET_MIGRATE_RING];
        r->kind = kind;
        r->from = from;
        r->len = len;
        if (len) memcpy(r->data, data, len); /* an empty record may come without data */
        MIG.ring_count++;
    }
    port_irq_restore(s);
    if (!room) {
        log_error(MT_ERR_QUEUE_FULL);
        return false;
    }
    mig_kick();
    return true;
}

void mig_lost(mt_pid_t pid, mt_module_t from, mt_err_t why)
{
    port_irq_state_t s = port_irq_save();
    mig_record_t *last =
        MIG.ring_count
            ? &MIG.ring[(uint8_t) (MIG.ring_head + MIG.ring_count - 1u) % MOTET_MIGRATE_RING]
            : NULL;
    bool counted = last && last->kind == MIG_REC_LOST && last->from == from &&
                   last->data[0] == pid && last->data[2] == (uint8_t) why &&
                   last->data[1] < UINT8_MAX;
    if (counted) last->data[1]++;
    port_irq_restore(s);
    uint8_t d[3] = {pid, 1, (uint8_t) why};
    if (!counted) mig_ring_push(MIG_REC_LOST, from, d, 3); /* a full ring logs it */
}

static void report_lost(const mig_record_t *r)
{
    for (uint8_t n = r->data[1]; n; n--)
        mig_notify(r->data[0], MIG_LOST, r->from, (mt_err_t) r->data[2]);
}

static bool ring_pop(mig_record_t *out)
{
    port_irq_state_t s = port_irq_save();
    bool any = MIG.ring_count > 0;
    if (any) {
        *out = MIG.ring[MIG.ring_head];
        MIG.ring_head = (uint8_t) ((MIG.ring_head + 1u) % MOTET_MIGRATE_RING);
        MIG.ring_count--;
    }
    port_irq_restore(s);
    return any;
}

/* ---- output ---- */

static bool bus_has_room(void)
{
    return bus_tx_pending() < MOTET_BUS_TX_QUEUE;
}

uint8_t *mig_open_frame(uint16_t len, mt_err_t *err)
{
    if (!bus_has_room()) {
        MIG.want_room = true;
        *err = MT_ERR_QUEUE_FULL;
        return NULL;
    }
    uint8_t *payload = bus_open_frame(len); /* its failures are logged */
    if (payload)
        *err = MT_OK;
    else if (!bus_active())
        *err = MT_ERR_NO_ROUTE;
    else if (len > MOTET_BUS_PAYLOAD_MAX)
        *err = MT_ERR_INVALID;
    else
        *err = MT_ERR_NO_MEM;
    if (*err == MT_ERR_NO_MEM) MIG.want_room = true; /* frames that end free heap too */
    return payload;
}

mt_err_t mig_queue_frame(uint8_t *payload, uint8_t kind, mt_module_t to, mt_prio_t prio,
                         uint16_t len)
{
    uint8_t type = to == BUS_BROADCAST ? BUS_FRAME_MCAST : BUS_FRAME_DATA;
    return bus_queue_frame(payload, type, to, MT_PID_MIGRATOR, kind, prio, len);
}

/* Queue one frame to the migrator of `to` (BUS_BROADCAST: every module).
 * MT_ERR_QUEUE_FULL (not logged) when the bus queue has no room: try
 * again once a frame has ended. */
mt_err_t mig_frame(uint8_t kind, mt_module_t to, mt_prio_t prio, const void *data, uint16_t len)
{
    mt_err_t err;
    uint8_t *payload = mig_open_frame(len, &err);
    if (!payload) return err;
    if (len) memcpy(payload, data, len);
    return mig_queue_frame(payload, kind, to, prio, len);
}

static bool ctrl_try(const mig_ctrl_t *c)
{
    mt_err_t err = mig_frame(c->kind, c->to, c->prio, c->data, c->len);
    return err != MT_ERR_QUEUE_FULL && err != MT_ERR_NO_MEM; /* others: logged, given up */
}

void mig_ctrl(uint8_t kind, mt_module_t to, mt_prio_t prio, const uint8_t *data, uint8_t len)
{
    mig_ctrl_t c = {.kind = kind, .to = to, .prio = prio, .len = len};
    memcpy(c.data, data, len);
    if (!MIG.ctrl_count && ctrl_try(&c)) return;
    if (MIG.ctrl_count == MIG_CTRL_QUEUE) {
        log_error(MT_ERR_QUEUE_FULL); /* lost: the source's timeouts ask again */
        return;
    }
    MIG.ctrl[(uint8_t) (MIG.ctrl_head + MIG.ctrl_count) % MIG_CTRL_QUEUE] = c;
    MIG.ctrl_count++;
    MIG.want_room = true;
}

/* Control frames first, in order, then each migration's bulk. */
static void pump(void)
{
    while (MIG.ctrl_count && ctrl_try(&MIG.ctrl[MIG.ctrl_head])) {
        MIG.ctrl_head = (uint8_t) ((MIG.ctrl_head + 1u) % MIG_CTRL_QUEUE);
        MIG.ctrl_count--;
    }
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) {
        slot_t *s = &MIG.slots[i];
        if (s->role == ROLE_SOURCE)
            mig_source_pump(s);
        else if (s->role != ROLE_FREE)
            mig_peer_pump(s);
    }
}

/* ---- reporting ---- */

const char *migrate_phase_name(uint8_t phase)
{
    static const char *const names[MIG_PHASE_END] = {
        [MIG_REQUESTED] = "REQUESTED", [MIG_FROZEN] = "FROZEN", [MIG_ATTACHED] = "ATTACHED",
        [MIG_LEFT] = "LEFT",           [MIG_LIVE] = "LIVE",     [MIG_RESUMED] = "RESUMED",
        [MIG_DISCARDED] = "DISCARDED", [MIG_KILLED] = "KILLED", [MIG_REFUSED] = "REFUSED",
        [MIG_DONE] = "DONE",           [MIG_LOST] = "LOST",
    };
    return phase < MIG_PHASE_END && names[phase] ? names[phase] : "?";
}

/* The place of pid's requests, awaiting their end or not: once their
 * count is 0 the place is free, but names pid until another task's
 * request takes it. A task has one place at most (note_asked()). */
static mig_asked_t *asked_find(mt_pid_t pid)
{
    for (uint8_t i = 0; i < MIG_ASKED; i++)
        if (MIG.asked[i].pid == pid) return &MIG.asked[i];
    return NULL;
}

bool mig_asked(mt_pid_t pid)
{
    return asked_find(pid) != NULL;
}

bool mig_asked_refused(mt_pid_t pid)
{
    mig_asked_t *a = asked_find(pid);
    bool awaited = a && a->count;
    if (awaited) a->count--;
    return awaited;
}

/* The task's migration has its outcome here (MIG_DONE: its RESULT, or the
 * CONFIRM that it runs at its destination): every request for it from
 * before has ended, the one that moved it and any it overtook (put off,
 * then dropped, mig_task_gone()), which no refusal will end. */
static void asked_ended(mt_pid_t pid)
{
    port_irq_state_t s = port_irq_save();
    mig_asked_t *a = asked_find(pid);
    if (a) a->count = 0;
    port_irq_restore(s);
}

void mig_notify(mt_pid_t pid, uint8_t phase, mt_module_t other, mt_err_t err)
{
    if (phase == MIG_DONE) asked_ended(pid);
    log_event(EV_MIGRATE, pid, (uint16_t) ((phase << 8) | other));
    if (!observer) return;
    migrate_event_t ev = {.pid = pid, .phase = phase, .other = other, .err = err};
    observer(&ev);
}

void migrate_set_observer(migrate_observer_fn fn)
{
    observer = fn;
}

void mig_refuse(mt_pid_t pid, mt_err_t err, mt_module_t requester)
{
    log_error(err);
    mig_notify(pid, MIG_REFUSED, requester, err);
    if (requester != bus_self()) {
        uint8_t d[2] = {pid, (uint8_t) err};
        mig_ctrl(MIG_MSG_REFUSED, requester, MIG_CTRL_PRIO, d, 2);
    }
}

/* ---- timers ---- */

mt_err_t mig_rearm_plan(const uint8_t *head, uint16_t head_len, uint32_t age, uint32_t since,
                        mig_image_t *img)
{
    mt_err_t err = mig_image_decode(head, head_len, img);
    if (err) return err;
    /* In the source's ticks, where the timers' phases are exact; the
     * destination's clock may count at another rate. */
    uint32_t here = PORT_TICKS_PER_SECOND;
    uint32_t elapsed = age + mig_ticks_convert(since, here, img->tick_hz);
    for (uint8_t i = 0; i < img->n_timers; i++) {
        mig_timer_t *t = &img->timers[i];
        mig_rearm_t r = mig_timer_rearm(t->remaining, t->period, elapsed);
        t->due = r.fire_now;
        t->remaining = mig_ticks_convert(r.first, img->tick_hz, here);
        t->period = mig_ticks_convert(t->period, img->tick_hz, here);
    }
    return MT_OK;
}

mt_err_t mig_rearm(mt_pid_t pid, const mig_image_t *img)
{
    mt_err_t err = MT_OK;
    for (uint8_t i = 0; i < img->n_timers && !err; i++) {
        const mig_timer_t *t = &img->timers[i];
        mt_port_t port = (mt_port_t) (PORT_TIMEOUT0 + t->index);
        if (t->due) err = sched_post_isr(pid, port, NULL, 0, 0); /* held: frozen */
        if (!err && t->remaining) err = timer_start_phase(pid, t->index, t->remaining, t->period);
    }
    return err;
}

mt_err_t mig_rejoin(mt_pid_t pid, const uint8_t *head, uint16_t head_len)
{
    mig_image_t img;
    mt_err_t err = mig_image_decode(head, head_len, &img);
    for (uint8_t i = 0; !err && i < img.n_groups; i++) {
        uint8_t group;
        mt_port_t port;
        mig_image_group(&img, i, &group, &port);
        mcast_join(group, pid, port);
    }
    return err;
}

/* ---- requests ---- */

bool mig_movable(const task_t *t)
{
    return (t->flags & TASK_MOVABLE) && !(t->flags & TASK_THREAD);
}

mt_err_t migrate_request(mt_pid_t pid, mt_module_t dest)
{
    if (!bus_active()) return log_error(MT_ERR_NO_ROUTE);
    if (dest >= MOTET_BUS_MODULES || !(bus_modules() & mig_bit(dest)))
        return log_error(MT_ERR_INVALID);
    task_t *t = task_find_locked(pid);
    if (t && !mig_movable(t)) return log_error(MT_ERR_NOT_MOVABLE);
    if (!t && !sched_mig_remote(pid, NULL, NULL)) return log_error(MT_ERR_NO_TASK);
    uint8_t d[4] = {pid, dest, bus_self(), 0};
    return mig_ring_push(MIG_MSG_REQUEST, bus_self(), d, 4) ? MT_OK : MT_ERR_QUEUE_FULL;
}

/* Our own request leaves for another module: whoever it reaches may
 * refuse it, and a refusal is taken only for a task asked for here
 * (migrate_bus.c): the requester a forwarded hop names cannot be checked
 * where it arrives. False, nothing noted, with no place for pid, or 255
 * requests for it awaiting their end: then it does not leave. */
static bool note_asked(mt_pid_t pid)
{
    port_irq_state_t s = port_irq_save();
    mig_asked_t *a = asked_find(pid); /* its own place, free or not: one a task */
    for (uint8_t i = 0; !a && i < MIG_ASKED; i++)
        if (!MIG.asked[i].count) a = &MIG.asked[i];
    bool room = a && a->count < UINT8_MAX;
    if (room) {
        a->pid = pid;
        a->count++;
    }
    port_irq_restore(s);
    return room;
}

/* ---- requests put off: a module had no slot free ---- */

/* Keep the request to ask it again later, the tries so far counted; false
 * once it has been put off MOTET_MIGRATE_ROUNDS times, or if no place is
 * free: it is then refused (MT_ERR_FULL). Modules wait differently long,
 * so that sources refused together do not all come back together. */
bool mig_put_off_request(mt_pid_t pid, mt_module_t dest, mt_module_t requester, uint8_t tries)
{
    uint32_t wait = MIG_TIMEOUT_TICKS * tries + MIG_TIMEOUT_TICKS / 2u * bus_self();
    mig_retry_t *r = NULL;
    /* irq off: a kill anywhere (mig_task_gone) must find the entries whole */
    port_irq_state_t st = port_irq_save();
    for (uint8_t i = 0; i < MIG_RETRIES; i++) {
        if (MIG.retries[i].pid == pid) MIG.retries[i].pid = MT_PID_NONE; /* the newest wins */
        if (!r && !MIG.retries[i].pid) r = &MIG.retries[i];
    }
    if (tries > MOTET_MIGRATE_ROUNDS) r = NULL;
    if (r)
        *r = (mig_retry_t){.pid = pid,
                           .dest = dest,
                           .requester = requester,
                           .tries = tries,
                           .due = timer_now() + wait};
    port_irq_restore(st);
    return r != NULL;
}

void mig_task_gone(mt_pid_t pid)
{
    port_irq_state_t st = port_irq_save();
    for (uint8_t i = 0; i < MIG_RETRIES; i++)
        if (MIG.retries[i].pid == pid) MIG.retries[i].pid = MT_PID_NONE;
    port_irq_restore(st);
}

void mig_source_retry(void)
{
    for (uint8_t i = 0; i < MIG_RETRIES; i++) {
        port_irq_state_t st = port_irq_save(); /* taken whole, as a kill clears it */
        mig_retry_t r = MIG.retries[i];
        bool due = r.pid && (int32_t) (timer_now() - r.due) >= 0;
        if (due) MIG.retries[i].pid = MT_PID_NONE;
        port_irq_restore(st);
        if (!due) continue;
        mig_source_begin(r.pid, r.dest, r.requester, r.tries); /* refused if gone */
    }
}

/* A request here: this is the source, or it goes on along the route. */
static void on_request(const mig_record_t *r)
{
    if (r->len < 4) return; /* the bus checks frames; this is the ring's own guard */
    mt_pid_t pid = r->data[0];
    mt_module_t dest = r->data[1], requester = r->data[2];
    uint8_t hops = r->data[3];
    if (task_find_locked(pid)) { /* looked up again, and pinned, as it begins */
        mig_source_begin(pid, dest, requester, 0);
        return;
    }
    mt_module_t where;
    if (!sched_mig_remote(pid, &where, NULL)) {
        mig_refuse(pid, MT_ERR_NO_TASK, requester);
        return;
    }
    if (hops >= MIG_MAX_HOPS || where == bus_self()) {
        mig_refuse(pid, MT_ERR_NO_ROUTE, requester);
        return;
    }
    if (requester == bus_self() && hops == 0) {
        if (!note_asked(pid)) {
            mig_refuse(pid, MT_ERR_FULL, requester); /* logged, told to our observer */
            return;
        }
        mig_notify(pid, MIG_REQUESTED, dest, MT_OK);
    }
    uint8_t d[4] = {pid, dest, requester, (uint8_t) (hops + 1u)};
    mig_ctrl(MIG_MSG_REQUEST, where, MIG_CTRL_PRIO, d, 4);
}

/* ---- the task ---- */

static void handle(const mig_record_t *r)
{
    if (r->kind < MIG_MSG_END_KIND) MIG.silent &= ~mig_bit(r->from); /* it speaks */
    switch (r->kind) {
    case MIG_MSG_REQUEST:
        on_request(r);
        break;
    case MIG_MSG_REFUSED: /* pid, err, whether a request of ours awaited it */
        if (r->len < 3) break;
        log_error((mt_err_t) r->data[1]);
        if (r->data[2])
            mig_notify(r->data[0], MIG_REFUSED, r->from, (mt_err_t) r->data[1]);
        else /* late: the task's DONE ended every request for it, and told the observer */
            log_event(EV_MIGRATE, r->data[0], (uint16_t) (MIG_REFUSED << 8 | r->from));
        break;
    case MIG_MSG_PING:
        mig_source_ping(r);
        break;
    case MIG_MSG_REPLY:
    case MIG_MSG_ATTACHED:
    case MIG_REC_TX_END:
    case MIG_REC_COMMITTED:
        mig_source_record(r);
        break;
    case MIG_REC_LOST:
        report_lost(r);
        break;
    default:
        mig_peer_record(r);
        break;
    }
}

/* The timeout tick's wait, in ticks (at least one). */
#define MIG_TICK                                                                                   \
    (TIMER_MS(MOTET_MIGRATE_TIMEOUT_MS) / 2u ? TIMER_MS(MOTET_MIGRATE_TIMEOUT_MS) / 2u : 1u)

/* Keep the timeout tick coming while a migration waits for an answer. It
 * is a one-shot timer started again after each tick taken, and counted
 * (timer_counted_start(): its block is its own, TIMER_SLOT_TICK, so no
 * start fails), so that the migrator takes its own timer's expiries alone
 * on PORT_TIMEOUT0 (migrator()). Whether it runs is MIG.ticking, which a
 * start, a stop and a tick taken change: this runs at every frame of a
 * migration, and the timer list is walked only when the tick starts or
 * stops. */
static void update_tick(void)
{
    bool need = false;
    for (uint8_t i = 0; i < MIG_RETRIES; i++) need = need || MIG.retries[i].pid != MT_PID_NONE;
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++)
        need = need || mig_source_waiting(&MIG.slots[i]) || mig_peer_waiting(&MIG.slots[i]);
    if (need == MIG.ticking) return;
    _Static_assert(MIG_TICK < TIMER_TICKS_LIMIT, "the tick is one timer's wait");
    if (need)
        timer_counted_start(TIMER_SLOT_TICK, MT_PID_MIGRATOR, MIG_TICK_TIMER, MIG_TICK,
                            &MIG.ticks_owed);
    else
        timer_counted_stop(MT_PID_MIGRATOR, MIG_TICK_TIMER, &MIG.ticks_owed);
    MIG.ticking = need;
}

static mt_err_t migrator(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    /* The tick is our timer's expiry alone: a task's send or an interrupt
     * body's post there would run the timeouts out of turn. None breaks a
     * state (each timeout acts only once its wait has passed), but it is
     * not ours to take: refused, logged, nothing changed. Counted before
     * anything else, so that a tick taken below as a kick is no longer
     * owed. */
    if (port == PORT_TIMEOUT0) {
        if (!timer_counted_take(MT_PID_MIGRATOR, MIG_TICK_TIMER, &MIG.ticks_owed)) {
            log_error(MT_ERR_NO_PORT);
            return MT_OK;
        }
        /* Taken once the one-shot has expired, whether its own expiry or
         * an interrupt's post in its place: it runs no more. */
        MIG.ticking = false;
    }
    /* A task wired to the migrator asks with (pid, dest). */
    if (port == MIG_MSG_REQUEST && len == 2)
        migrate_request(((const uint8_t *) data)[0], ((const uint8_t *) data)[1]);
    if (sched_stack_depth() > 1) { /* sent to directly: not with a handler below */
        mig_kick();
        return MT_OK;
    }
    port_irq_state_t s = port_irq_save();
    MIG.kick_pending = false;
    port_irq_restore(s);
    for (uint8_t i = 0; port == PORT_TIMEOUT0 && i < MOTET_MIGRATE_SLOTS; i++) {
        if (MIG.slots[i].role == ROLE_SOURCE)
            mig_source_tick(&MIG.slots[i]);
        else
            mig_peer_tick(&MIG.slots[i]);
    }
    if (port == PORT_TIMEOUT0) mig_source_retry();
    mig_record_t r;
    while (ring_pop(&r)) handle(&r);
    pump();
    update_tick();
    return MT_OK;
}

void migrate_reset(void)
{
    port_irq_state_t s = port_irq_save();
    memset(&MIG, 0, sizeof MIG);
    port_irq_restore(s);
}

mt_err_t migrate_start(void)
{
    migrate_reset();
    task_spec_t spec = {.pid = MT_PID_MIGRATOR, .prio = MIG_TASK_PRIO, .handler = migrator};
    mt_err_t err = task_create_system(&spec);
    if (err) return err;
    return sched_task_init(MT_PID_MIGRATOR, NULL, 0);
}

#endif /* MOTET_BUS */
