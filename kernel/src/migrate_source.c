/* SPDX-License-Identifier: MIT */
/*
 * The task migrator, the source's side (migrate.c has the overview).
 *
 * The source alone decides. It freezes the task and has it serialise
 * itself, multicasts FREEZE, waits for every other module's reply (each
 * reply follows, on its module's bus queue, whatever that module had
 * already sent to the task), sends the image, and waits for the
 * destination's ATTACHED. Then it multicasts the outcome. The task leaves
 * its groups here when it is frozen: from then on the multicasts to them
 * are recorded, each with its bus frame, and follow the held messages to
 * the destination, which joins the groups at the outcome and drops those
 * it took after joining (it delivered them itself). On success copies of
 * the held messages and the recorded multicasts follow the task in order,
 * closed by END. Until END is through the source keeps everything it needs to
 * take the task back: the task itself (frozen: its state, routes and what
 * is sent to it here since), the image (timers, groups), the held messages
 * it forwarded, and the multicasts to the task's groups. END through: the
 * destination runs the task; the source multicasts CONFIRM, drops all of
 * that and sends what it held since to the destination. END (or any frame
 * before it) unreachable: the destination never started the task; it
 * resumes here and a second RESULT, a failure, sends everyone back here.
 * On failure before the decision the task resumes here, or is killed if it
 * cannot.
 *
 * A module that does not answer is asked again after a timeout, with a
 * unicast whose failure tells the bus manager's verdict: unreachable (dead,
 * or stopped) means it can send nothing more, so it is no longer waited
 * for, nor in later migrations until a frame from it arrives again; an
 * unreachable destination fails the migration.
 */
#include <string.h>

#include "bus_internal.h"
#include "mcast_internal.h"
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/program.h"

#if MOTET_BUS

static mt_err_t check(const task_t *t, mt_module_t dest)
{
    if (!mig_movable(t)) return MT_ERR_NOT_MOVABLE;
    if (dest == bus_self() || dest >= MOTET_BUS_MODULES || !(bus_modules() & mig_bit(dest)))
        return MT_ERR_INVALID;
    if (!(t->flags & TASK_INITIALISED) || (t->flags & (TASK_FROZEN | TASK_KILL_PENDING)) ||
        task_on_stack(t) || mig_slot_of(t->pid))
        return MT_ERR_STATE; /* not started, dying, or on the move already */
    if (!program_find_handler(t->handler)) return MT_ERR_NO_PROGRAM;
    return MT_OK;
}

/* ---- serialising ---- */

mt_err_t migrate_state(void *block, uint16_t len)
{
    slot_t *s = MIG.serialising;
    if (!s || sched_current_pid() != s->pid) return log_error(MT_ERR_STATE);
    if (len && !block) return log_error(MT_ERR_INVALID);
    /* The task's own block, holding len bytes, becomes the kernel's, to
     * survive the task leaving; one of no bytes is freed as the task's. */
    mt_err_t err = len ? mem_pass(block, len, s->pid, MEM_OWNER_KERNEL) : mem_free(block);
    if (err) return err;
    mem_release(s->state); /* a second call replaces the first */
    s->state = len ? block : NULL;
    s->state_len = len;
    return MT_OK;
}

/* The migrating task, frozen since its freeze until it resumes or moves;
 * NULL once it is gone: a handler run at an interrupt's exit may kill it
 * at any moment, freeing its control block, though none may create a task
 * of its pid while the slot holds it (sched_task_create()). Whoever uses
 * the task after the lookup keeps interrupts off in between. */
static task_t *frozen_task(mt_pid_t pid)
{
    task_t *t = task_find_locked(pid);
    return t && (t->flags & TASK_FROZEN) ? t : NULL;
}

static mt_err_t serialise(slot_t *s)
{
    task_handler_t handler = NULL;
    port_irq_state_t st = port_irq_save();
    task_t *t = frozen_task(s->pid);
    if (t) handler = t->handler;
    port_irq_restore(st);
    if (!t) return MT_ERR_NO_TASK; /* killed at MIG_FROZEN's report */
    const program_t *prog = program_find_handler(handler);
    if (!prog) return MT_ERR_NO_PROGRAM;
    if (prog->layout) return mig_layout_check(prog, &s->state_len); /* encoded as it goes */
    MIG.serialising = s;
    mt_err_t err = sched_mig_call(s->pid, PORT_SERIALIZE, NULL, 0);
    MIG.serialising = NULL;
    return err;
}

/* Stop the task's timers, keeping what was left of each, and when. */
static void take_timers(slot_t *s, mig_image_t *img, mt_pid_t pid)
{
    port_irq_state_t st = port_irq_save();
    s->clock = timer_now();
    img->tick_hz = PORT_TICKS_PER_SECOND;
    img->n_timers = 0;
    for (uint8_t n = 0; n < TIMERS_PER_TASK; n++) {
        mig_timer_t *t = &img->timers[img->n_timers];
        if (!timer_info(pid, n, &t->remaining, &t->period)) continue;
        t->index = n;
        timer_stop_for(pid, n);
        img->n_timers++;
    }
    port_irq_restore(st);
}

/* The image header of task pid into s->head; its timers are taken last,
 * once nothing can fail any more. The task is looked up twice, each time
 * under a short lock: to size the image, then, the blocks allocated with
 * interrupts on, to copy its routes and take its timers. s->head is set
 * only then, so that a slot with a head is one whose timers were taken
 * (resume() re-arms them from it): out of heap at either block, the task
 * is as it was and the request is refused. */
static mt_err_t build_image(slot_t *s, mt_pid_t pid)
{
    uint8_t groups[2 * MOTET_MAX_GROUP_MEMBERS];
    mig_image_t img = {.pid = pid,
                       .n_timers = TIMERS_PER_TASK, /* room for all, for now */
                       .state_len = s->state_len,
                       .groups = groups};
    task_handler_t handler = NULL;
    port_irq_state_t st = port_irq_save();
    task_t *t = frozen_task(pid);
    if (t) {
        img.prio = t->prio;
        img.flags = (uint8_t) (t->flags & TASK_MOVABLE);
        img.n_routes = t->n_routes;
        handler = t->handler;
    }
    port_irq_restore(st);
    if (!t) return MT_ERR_NO_TASK; /* killed meanwhile */
    img.program = program_find_handler(handler)->id;
    img.n_groups = mcast_memberships(pid, groups, MOTET_MAX_GROUP_MEMBERS);
    uint16_t most = mig_image_size(&img);
    if (most > MOTET_MIGRATE_CHUNK || (uint32_t) most + s->state_len > UINT16_MAX)
        return MT_ERR_INVALID; /* the header must fit in the first frame */
    uint8_t *routes =
        img.n_routes ? mem_alloc_owned(img.n_routes * MIG_ROUTE_BYTES, MEM_OWNER_KERNEL) : NULL;
    uint8_t *head = routes || !img.n_routes ? mem_alloc_owned(most, MEM_OWNER_KERNEL) : NULL;
    if (!head) {
        mem_release(routes);
        return MT_ERR_NO_MEM;
    }
    st = port_irq_save(); /* its routes a frozen task does not change */
    t = frozen_task(pid);
    for (uint8_t i = 0; t && i < img.n_routes; i++) {
        routes[2 * i] = t->routes[i].pid;
        routes[2 * i + 1] = t->routes[i].port;
    }
    if (t) take_timers(s, &img, pid);
    port_irq_restore(st);
    img.routes = routes;
    if (t) {
        s->head_len = mig_image_encode(&img, head, most);
        s->head = head;
    } else {
        mem_release(head); /* killed meanwhile: nothing to rearm */
    }
    mem_release(routes);
    return t ? MT_OK : MT_ERR_NO_TASK;
}

/* ---- failing: the task resumes here ---- */

/* The task runs here again; false if it could not and was killed, or is
 * gone (killed meanwhile: found, re-armed and thawed in one step, so
 * that no timer is armed for a task gone). */
static bool resume(slot_t *s, mt_err_t why)
{
    mig_image_t img = {.n_timers = 0}; /* no head: its timers were never taken */
    mt_err_t err =
        s->head ? mig_rearm_plan(s->head, s->head_len, 0, timer_now() - s->clock, &img) : MT_OK;
    port_irq_state_t st = port_irq_save();
    task_t *t = frozen_task(s->pid);
    if (t && !err) err = mig_rearm(s->pid, &img);
    if (t && !err) sched_mig_thaw(t);
    port_irq_restore(st);
    if (!t) return false;
    if (err) {
        sched_task_kill(s->pid); /* frozen: no FINAL; its held messages and timers go too */
        mig_notify(s->pid, MIG_KILLED, s->dest, err);
        return false;
    }
    mig_notify(s->pid, MIG_RESUMED, s->dest, why);
    return true;
}

/* Keep the final outcome for any module that missed it (a success once
 * confirmed; a second outcome replaces the first). */
static void keep_outcome(const slot_t *s, mt_err_t outcome)
{
    mig_outcome_t *o = NULL;
    for (uint8_t i = 0; i < MIG_OUTCOMES && !o; i++)
        if (MIG.outcomes[i].pid == s->pid && MIG.outcomes[i].id == s->id) o = &MIG.outcomes[i];
    if (!o) {
        o = &MIG.outcomes[MIG.next_outcome];
        MIG.next_outcome = (uint8_t) ((MIG.next_outcome + 1u) % MIG_OUTCOMES);
    }
    *o = (mig_outcome_t){.pid = s->pid, .id = s->id, .err = (uint8_t) outcome, .dest = s->dest};
}

/* Announce the outcome to every module (`to`: BUS_BROADCAST) or one. */
static void send_result(mt_pid_t pid, uint8_t id, mt_err_t outcome, mt_module_t dest,
                        mt_module_t to)
{
    uint8_t d[5] = {pid, id, (uint8_t) outcome, bus_self(), dest};
    mig_ctrl(MIG_MSG_RESULT, to, MIG_CTRL_PRIO, d, 5);
}

static void send_confirm(mt_pid_t pid, uint8_t id, mt_module_t dest, mt_module_t to)
{
    uint8_t d[4] = {pid, id, bus_self(), dest};
    mig_ctrl(MIG_MSG_CONFIRM, to, MIG_CTRL_PRIO, d, 4);
}

static void announce(const slot_t *s, mt_err_t outcome)
{
    if (outcome != MT_OK) keep_outcome(s, outcome);
    send_result(s->pid, s->id, outcome, s->dest, BUS_BROADCAST);
}

/* A migration decided here so long ago that its outcome is no longer
 * kept: it is over, and where the task is now is this module's own
 * knowledge. Here (a failure, or it came back since): a failed outcome
 * sends the asker's held messages here and drops a destination's copy.
 * On another module (a success, or it moved on since): CONFIRM naming
 * that module, where a bystander sends them, and which a destination
 * that is that module takes as END. Neither (it died): the task is dead. */
static void answer_from_here(mt_pid_t pid, uint8_t id, mt_module_t asker)
{
    mt_module_t where;
    log_error(MT_ERR_STATE); /* asked about an outcome no longer kept */
    if (sched_task_exists(pid))
        send_result(pid, id, MIG_RESULT_FORGOTTEN, bus_self(), asker);
    else if (sched_mig_remote(pid, &where, NULL))
        send_confirm(pid, id, where, asker);
    else
        send_result(pid, id, MIG_RESULT_KILLED, bus_self(), asker);
}

void mig_source_ping(const mig_record_t *r)
{
    if (r->len < 2 || mig_slot_find(ROLE_SOURCE, r->data[0], r->data[1])) return; /* ongoing */
    for (uint8_t i = 0; i < MIG_OUTCOMES; i++) {
        const mig_outcome_t *o = &MIG.outcomes[i];
        if (!o->pid || o->pid != r->data[0] || o->id != r->data[1]) continue;
        send_result(o->pid, o->id, (mt_err_t) o->err, o->dest, r->from); /* to it alone */
        if (o->err == MT_OK) send_confirm(o->pid, o->id, o->dest, r->from);
        return;
    }
    /* Only a module waiting for this one's outcome names it (the source's
     * own question to a destination does not): it is owed an answer. */
    if (r->len >= 3 && r->data[2] == bus_self() &&
        !mig_slot_find(ROLE_FREE, r->data[0], r->data[1]))
        answer_from_here(r->data[0], r->data[1], r->from);
}

/* The task's messages come back to it, in order: the copies of what was
 * forwarded (what it held at the commit), then what it holds now, then
 * the multicasts recorded since the freeze; and it rejoins its groups, in
 * the same step as recording stops, so that the bus interrupt either
 * records a multicast or delivers it to the task, never both or neither.
 * A task gone meanwhile gets nothing: they are freed with the slot. */
static void reclaim(slot_t *s)
{
    port_irq_state_t st = port_irq_save();
    task_t *t = frozen_task(s->pid);
    bool left = s->recording;
    s->recording = false;
    msg_t *casts = s->casts;
    s->casts = s->casts_sent = s->casts_last = NULL;
    if (t) {
        sched_mig_hold_at(t, s->fwd, 0);
        sched_mig_hold_at(t, casts, UINT16_MAX);
        s->fwd = s->fwd_next = NULL;
        casts = NULL;
        if (left) mig_rejoin(s->pid, s->head, s->head_len);
    }
    port_irq_restore(st);
    s->casts = casts; /* freed with the slot */
}

void mig_source_fail(slot_t *s, mt_err_t err)
{
    log_error(err);
    reclaim(s);
    mt_err_t outcome = resume(s, err) ? err : MIG_RESULT_KILLED;
    announce(s, outcome);
    mig_notify(s->pid, MIG_DONE, s->dest, outcome);
    mig_slot_free(s);
}

/* ---- a module with no slot free: asked again later ---- */

/* A module had no slot for this migration: nothing has moved yet. The
 * task resumes, the others release what they held back for it (the
 * outcome MT_ERR_FULL tells them it is not over: no MIG_DONE), and the
 * request is asked again later, or refused for good. */
static void put_off(slot_t *s)
{
    log_error(MT_ERR_FULL);
    reclaim(s);
    bool resumed = resume(s, MT_ERR_FULL);
    announce(s, resumed ? MT_ERR_FULL : MIG_RESULT_KILLED);
    if (!resumed)
        mig_notify(s->pid, MIG_DONE, s->dest, MIG_RESULT_KILLED);
    else if (!mig_put_off_request(s->pid, s->dest, s->requester, (uint8_t) (s->tries + 1u)))
        mig_refuse(s->pid, MT_ERR_FULL, s->requester);
    mig_slot_free(s);
}

/* ---- the steps ---- */

/* Checked, given its slot and frozen in one step: from the slot on, no
 * task of pid can be created (sched_task_create()), so any task found by
 * pid later is this one, or none once a handler killed it. */
void mig_source_begin(mt_pid_t pid, mt_module_t dest, mt_module_t requester, uint8_t tries)
{
    slot_t *s = NULL;
    port_irq_state_t st = port_irq_save();
    task_t *t = sched_find_task(pid);
    mt_err_t err = t ? check(t, dest) : MT_ERR_NO_TASK;
    if (!err) s = mig_slot_new();
    if (s) {
        s->tries = tries;
        s->pid = pid;
        s->id = ++MIG.next_id;
        s->source = bus_self();
        s->dest = dest;
        s->requester = requester;
        s->prio = t->prio;
        s->role = ROLE_SOURCE;
        s->step = ST_REPLIES;
        sched_mig_freeze(t);
    }
    port_irq_restore(st);
    if (!err && !s) { /* before anything stops: asked again later */
        if (mig_put_off_request(pid, dest, requester, (uint8_t) (tries + 1u))) return;
        err = MT_ERR_FULL;
    }
    if (err) {
        mig_refuse(pid, err, requester);
        return;
    }
    mig_task_gone(pid); /* a request put off before is overtaken by this one */
    mig_notify(pid, MIG_FROZEN, dest, MT_OK);
    err = serialise(s);
    if (!err) err = build_image(s, pid);
    if (err) { /* refused before anything left this module */
        resume(s, err);
        mig_slot_free(s);
        mig_refuse(pid, err, requester);
        return;
    }
    /* A module known to be gone sends nothing: no reply to wait for. */
    s->waiting = bus_modules() & ~mig_bit(bus_self()) & ~MIG.silent;
    s->since = timer_now();
    /* Out of its groups, in one step with recording their multicasts: the
     * destination will tell, by their frames, which of them it lacks. */
    st = port_irq_save();
    mcast_leave_all(pid);
    s->recording = true;
    port_irq_restore(st);
    uint8_t d[5] = {pid, s->id, bus_self(), dest, (uint8_t) s->prio};
    mig_ctrl(MIG_MSG_FREEZE, BUS_BROADCAST, MIG_CTRL_PRIO, d, 5);
}

/* Every reply is in: whatever other modules sent to the task before the
 * freeze is held here now. The image tells the destination how many
 * messages will follow it, so that it sets blocks aside for them before
 * it attaches. (Multicasts and this module's own sends may still add some
 * until the commit: they follow too, without a block set aside.) */
static uint16_t casts_recorded(const slot_t *s)
{
    uint16_t n = 0;
    port_irq_state_t st = port_irq_save();
    for (const msg_t *m = s->casts; m; m = m->next) n++;
    port_irq_restore(st);
    return n;
}

static void start_sending(slot_t *s)
{
    port_irq_state_t st = port_irq_save();
    task_t *t = frozen_task(s->pid);
    uint16_t held = t ? sched_mig_held_count(t) : 0u;
    port_irq_restore(st);
    mig_put16(s->head + MIG_IMAGE_HELD, (uint16_t) (held + casts_recorded(s)));
    s->step = ST_SENDING;
    s->offset = 0;
    mig_source_pump(s);
}

static void on_reply(slot_t *s, mt_module_t from, mt_err_t err)
{
    if (!s || s->step != ST_REPLIES) return;
    if (err == MT_ERR_FULL) {
        put_off(s);
        return;
    }
    if (err) {
        mig_source_fail(s, err);
        return;
    }
    s->waiting &= ~mig_bit(from);
    if (!s->waiting) start_sending(s);
}

static void decide(slot_t *s)
{
    s->step = ST_DECIDED; /* the image stays: the task may yet come back */
    s->since = timer_now();
    s->rounds = 0;
    s->tx_ends = MIG.tx_ends;
    announce(s, MT_OK);
}

static void on_attached(slot_t *s, const mig_record_t *r)
{
    if (!s) { /* a copy of a migration already given up: drop it */
        uint8_t d[2] = {r->data[0], r->data[1]};
        mig_ctrl(MIG_MSG_ABORT, r->from, MIG_CTRL_PRIO, d, 2);
        return;
    }
    if (s->step != ST_SENDING && s->step != ST_ATTACHING) return;
    if (r->data[2] != MT_OK)
        mig_source_fail(s, (mt_err_t) r->data[2]);
    else if (!frozen_task(s->pid))
        mig_source_fail(s, MT_ERR_NO_TASK); /* killed meanwhile: the copy must not start */
    else
        decide(s);
}

/* The destination cannot have taken END: the task resumes here with, in
 * order, the copies of what was forwarded, what was not yet, what was sent
 * to it here since the commit, then the multicasts to its groups since the
 * freeze. */
static void take_back(slot_t *s, mt_err_t why)
{
    log_error(why);
    reclaim(s);
    mt_err_t outcome = resume(s, why) ? why : MIG_RESULT_KILLED;
    announce(s, outcome); /* the second outcome: everyone routes back here */
    mig_notify(s->pid, MIG_DONE, s->dest, outcome);
    mig_slot_free(s);
}

/* Our RESULT went out: copies of the held messages follow the task, the
 * task itself stays here, frozen, until END is through. */
static void on_committed(slot_t *s)
{
    if (!s || s->step != ST_DECIDED) return;
    s->fwd_count = 0;
    s->forwarded = s->tail_read = false;
    s->since = timer_now();
    s->rounds = 0;
    /* The multicasts recorded so far follow; later ones were taken after
     * the destination had joined (it has them), and are kept only in case
     * the task comes back here. */
    port_irq_state_t st = port_irq_save();
    task_t *t = frozen_task(s->pid);
    s->fwd = s->fwd_next = t ? sched_mig_take_held(t) : NULL;
    for (msg_t *m = s->casts; m; m = m->next) s->casts_last = m;
    port_irq_restore(st);
    s->step = ST_FORWARDING;
    if (s->dest_lost)
        take_back(s, MT_ERR_BUS_DOWN);
    else
        mig_source_pump(s);
}

/* END is through: the destination runs the task. Everyone may send to it
 * there; the task here becomes a remote control block, and what was sent
 * to it here since the commit follows it. */
static void confirm(slot_t *s)
{
    port_irq_state_t st = port_irq_save();
    s->recording = false; /* the destination has what it lacked of those: END is through */
    port_irq_restore(st);
    send_confirm(s->pid, s->id, s->dest, BUS_BROADCAST);
    keep_outcome(s, MT_OK);
    mig_free_list(s->fwd);
    mig_free_list(s->casts);
    mem_release(s->head);
    mem_release(s->state);
    s->fwd = s->fwd_next = s->casts = s->casts_sent = s->casts_last = NULL;
    s->head = s->state = NULL;
    msg_t *held = NULL;
    mt_err_t err = sched_mig_move_out(s->pid, s->dest, &held);
    if (err == MT_ERR_NO_SLAB) { /* no route to keep: the copy here goes anyway */
        st = port_irq_save();
        task_t *t = frozen_task(s->pid);
        held = t ? sched_mig_take_held(t) : NULL;
        port_irq_restore(st);
        if (t) sched_task_kill(s->pid); /* frozen: no FINAL; none of its pid can come meanwhile */
    } else if (err == MT_ERR_NO_TASK) {
        /* Killed after the decision: the copy runs there, and the pid,
         * which no task here could take while the slot held it, routes
         * there from now on, as from every other module. */
        log_error(MT_ERR_NO_TASK);
        task_create_remote_migrating(s->pid, s->prio, s->dest); /* logs its own errors */
    }
    s->out = held;
    s->out_to = s->dest;
    s->hold = true; /* later sends from here join the end of the line */
    s->step = ST_FLUSHING;
    mig_notify(s->pid, MIG_LEFT, s->dest, MT_OK);
    mig_notify(s->pid, MIG_DONE, s->dest, MT_OK);
    mig_flush(s);
}

/* A bulk frame ended, or a probe did. */
static void tx_end(slot_t *s, mt_module_t to, uint8_t kind, uint8_t result)
{
    if (kind == MIG_MSG_STATE && s->chunks_out) {
        s->chunks_out--;
    } else if (kind == MIG_MSG_FORWARD || kind == MIG_MSG_END) {
        s->in_flight = false;
        s->since = timer_now(); /* the forwarding goes on: its wait starts again */
        s->rounds = 0;
    }
    if (result != PORT_BUS_SENT) {
        MIG.silent |= mig_bit(to);
        if (to == s->dest && s->step <= ST_ATTACHING) {
            mig_source_fail(s, MT_ERR_BUS_DOWN); /* the destination is gone: stay here */
        } else if (to == s->dest && s->step == ST_DECIDED) {
            s->dest_lost = true; /* taken back once our RESULT is out */
        } else if (to == s->dest && s->step == ST_FORWARDING) {
            take_back(s, MT_ERR_BUS_DOWN); /* END never reached it */
        } else if (kind == MIG_MSG_FREEZE && s->step == ST_REPLIES) {
            s->waiting &= ~mig_bit(to); /* dead: it sends nothing any more */
            if (!s->waiting) start_sending(s);
        }
        return;
    }
    if (kind == MIG_MSG_END && s->step == ST_FORWARDING) {
        confirm(s);
    } else if (kind == MIG_MSG_STATE && s->step == ST_SENDING && s->offset == mig_image_total(s) &&
               !s->chunks_out) {
        s->step = ST_ATTACHING;
        s->since = timer_now();
        s->rounds = 0;
    }
}

void mig_source_record(const mig_record_t *r)
{
    const uint8_t *d = r->data;
    if (r->kind == MIG_REC_TX_END) { /* d: kind, pid, id, result; from: to */
        slot_t *s = mig_slot_find(ROLE_FREE, d[1], d[2]);
        if (d[0] == MIG_MSG_REQUEST && d[3] != PORT_BUS_SENT) { /* d[2]: the dest */
            log_error(MT_ERR_BUS_DOWN);
            mig_notify(d[1], MIG_REFUSED, r->from, MT_ERR_BUS_DOWN);
        } else if (s && s->role == ROLE_SOURCE)
            tx_end(s, r->from, d[0], d[3]);
        else if (s)
            mig_peer_tx_end(s, r->from, d[0], d[3]);
        return;
    }
    if (r->len < 2) return;
    slot_t *s = mig_slot_find(ROLE_SOURCE, d[0], d[1]);
    if (r->kind == MIG_MSG_REPLY && r->len >= 3)
        on_reply(s, r->from, (mt_err_t) d[2]);
    else if (r->kind == MIG_MSG_ATTACHED && r->len >= 3)
        on_attached(s, r);
    else if (r->kind == MIG_REC_COMMITTED)
        on_committed(s);
}

void mig_source_own_result(const bus_frame_t *f)
{
    if (f->len < 5) return;
    const uint8_t *p = f->payload;
    slot_t *s = mig_slot_find(ROLE_SOURCE, p[0], p[1]);
    if (!s || p[2] != MT_OK || s->step != ST_DECIDED) return;
    mig_ring_push(MIG_REC_COMMITTED, bus_self(), p, 2);
}

void mig_source_record_cast(const bus_frame_t *f)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) {
        slot_t *s = &MIG.slots[i];
        msg_t *got = s->role == ROLE_SOURCE && s->recording ? mig_cast_messages(s, f) : NULL;
        if (!got) continue;
        msg_t **link = &s->casts;
        while (*link) link = &(*link)->next;
        *link = got;
    }
}

/* ---- timeouts ---- */

/* Before the decision the source waits for answers (replies, ATTACHED)
 * and for its image to leave; it may give up at any moment, since no
 * module has the outcome yet. After it, the bus's verdicts on its own
 * frames move it on: until the interface has END, no module can have
 * started the task, so a RESULT ok that does not go out, a FORWARD that
 * does not end, or END still in the send queue (taken out of it then), in
 * MOTET_MIGRATE_ROUNDS timeouts in a row in which no other frame of this
 * module ended either (frames ahead of ours may take long, each answered
 * busy for a while or stalled, and still end), has the task taken back, as for a
 * destination unreachable. Once the interface has END, only END's verdict
 * says which module runs the task: no clock may (docs/migration.md,
 * "Faults"). */
bool mig_source_waiting(const slot_t *s)
{
    return s->role == ROLE_SOURCE && s->step <= ST_FORWARDING;
}

uint32_t mig_source_budget(const slot_t *s)
{
    uint32_t chunks = (mig_image_total(s) + MOTET_MIGRATE_CHUNK - 1u) / MOTET_MIGRATE_CHUNK;
    uint32_t answers = 2u * MOTET_MIGRATE_ROUNDS * MIG_TIMEOUT_TICKS;
    uint32_t per = TIMER_MS(MOTET_MIGRATE_FRAME_MS);
    uint32_t most = UINT32_MAX / 2u; /* a kernel time difference stays exact */
    if (per && chunks > (most - answers) / per) return most;
    return answers + chunks * per;
}

/* END taken out of the send queue, if the interface never had it: the
 * destination cannot have it. */
static bool end_withdrawn(const slot_t *s)
{
    uint8_t d[2] = {s->pid, s->id};
    return bus_withdraw_waiting(MT_PID_MIGRATOR, MIG_MSG_END, d, sizeof d);
}

void mig_source_tick(slot_t *s)
{
    if (!mig_source_waiting(s)) return;
    if (s->step <= ST_ATTACHING && timer_now() - s->clock >= mig_source_budget(s)) {
        /* Out of time, the image maybe half-sent: the task resumes here,
         * and the failed outcome tells the destination to drop what it
         * received; an ATTACHED that still comes is answered ABORT. */
        mig_source_fail(s, MT_ERR_TIMEOUT);
        return;
    }
    if (s->step == ST_SENDING || timer_now() - s->since < MIG_TIMEOUT_TICKS) return;
    s->since = timer_now();
    bool decided = s->step == ST_DECIDED || s->step == ST_FORWARDING;
    if (decided && s->tx_ends != MIG.tx_ends) {
        /* Another frame of this module ended meanwhile (not the
         * migrator's): the send queue moves, and ours, behind slow
         * frames, with it; only a wait without any progress counts. */
        s->tx_ends = MIG.tx_ends;
        s->rounds = 0;
    }
    if (++s->rounds > MOTET_MIGRATE_ROUNDS) {
        if (!decided)
            mig_source_fail(s, MT_ERR_BUS_DOWN);
        else if (!s->end_out || end_withdrawn(s))
            take_back(s, MT_ERR_TIMEOUT); /* END never left: the task comes back here */
        else
            s->rounds = 0; /* the interface has END: its verdict alone decides */
        return;
    }
    if (decided) {
        /* RESULT ok once more: the first may have been dropped (the
         * control queue full) or given up (a multicast's end is reported
         * only when it went out); a second changes nothing anywhere. */
        if (s->step == ST_DECIDED) announce(s, MT_OK);
        return;
    }
    uint8_t d[5] = {s->pid, s->id, bus_self(), s->dest, (uint8_t) s->prio};
    if (s->step == ST_ATTACHING) {
        mig_ctrl(MIG_MSG_PING, s->dest, MIG_CTRL_PRIO, d, 2);
        return;
    }
    for (mt_module_t m = 0; m < MOTET_BUS_MODULES; m++)
        if (s->waiting & mig_bit(m)) mig_ctrl(MIG_MSG_FREEZE, m, MIG_CTRL_PRIO, d, 5);
}

#endif /* MOTET_BUS */
