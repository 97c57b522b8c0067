/* SPDX-License-Identifier: MIT */
/*
 * The destination's multicasts (docs/migration.md, "Multicasts").
 *
 * The copy joins the task's groups at the first frame that says the
 * outcome is OK (RESULT ok or, that one missed, a FORWARD or END), noting
 * for every module the number of the last multicast it took from it: the
 * cut. From then until the copy starts, the migrator takes the copy's
 * multicasts from the bus itself, each marked with its frame, as the
 * source records them, so that a forwarded one can be told apart: taken
 * here after joining, or not.
 *
 * Of the forwarded multicasts, the copy keeps those up to the cut, which
 * it took before joining, ahead of everything. Past the cut, it drops
 * those it took itself, and keeps the others in their frame's place among
 * those it took: their frames went by it (stopped, the bus skipped it) or
 * are still on their way. The cut then rises to the one kept, so that its
 * frame, if it comes, is not delivered again; and the copy starts only
 * once no frame it rose to is on its way: taken, or a later one of that
 * link taken, or MOTET_MIGRATE_FRAME_MS after END, by when every frame
 * the source had taken before END has ended here.
 */
#include "bus_internal.h"
#include "migrate_internal.h"
#include "motet/mem.h"

#if MOTET_BUS

void mig_peer_join(slot_t *s)
{
    if (s->joined || (s->step != ST_ATTACHED && s->step != ST_COMMITTED)) return;
    /* Only a copy still here, found in the step that joins (as the
     * source's reclaim()): a kill leaves its groups after its task has left
     * the table, so a copy killed first must join nothing. No heap is
     * touched here: the image is read where it lies and the memberships
     * and cuts are fixed tables, one entry per group and per module; and
     * from the bus interrupt (RESULT ok, a late join at FORWARD or END)
     * this runs with interrupts off in any case. */
    port_irq_state_t st = port_irq_save();
    if (task_find_locked(s->pid)) {
        s->joined = true;
        s->cut_seen = 0;
        for (mt_module_t m = 0; m < MOTET_BUS_MODULES; m++)
            if (bus_cast_last(m, &s->cut[m])) s->cut_seen |= mig_bit(m);
        mig_rejoin(s->pid, s->head, s->head_len);
    }
    port_irq_restore(st);
}

/* Numbered up to origin's cut: taken before the join, or kept forwarded. */
static bool within_cut(const slot_t *s, mt_module_t origin, uint8_t seq)
{
    if (!(s->cut_seen & mig_bit(origin))) return false;
    return mig_seq_after(seq, s->cut[origin]) <= 0;
}

static bool takes_casts(const slot_t *s)
{
    return s->role == ROLE_DEST && s->joined &&
           (s->step == ST_ATTACHED || s->step == ST_COMMITTED || s->step == ST_STARTING);
}

bool mig_peer_takes_casts(mt_pid_t pid)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++)
        if (MIG.slots[i].pid == pid && takes_casts(&MIG.slots[i])) return true;
    return false;
}

bool mig_peer_cuts_ahead(const slot_t *s)
{
    return s->cut_raised != 0;
}

void mig_peer_record_cast(const bus_frame_t *f)
{
    for (uint8_t i = 0; i < MOTET_MIGRATE_SLOTS; i++) {
        slot_t *s = &MIG.slots[i];
        task_t *t = takes_casts(s) ? task_find_locked(s->pid) : NULL;
        if (!t) continue;
        if (!within_cut(s, f->src, f->seq)) {
            msg_t *got = mig_cast_messages(s, f);
            for (msg_t *m = got; m; m = m->next) {
                m->flags |= MSG_CAST; /* the source records it too: never given back */
                m->src = f->src_pid;
            }
            sched_mig_hold_at(t, got, UINT16_MAX);
        }
        if (!(s->cut_raised & mig_bit(f->src)) || mig_seq_after(f->seq, s->cut[f->src]) < 0)
            continue;
        s->cut_raised &= ~mig_bit(f->src); /* that frame, or a later one: it will not come */
        if (s->step == ST_STARTING && !mig_peer_cuts_ahead(s)) {
            uint8_t d[2] = {s->pid, s->id};
            mig_ring_push(MIG_REC_CUTS_ENDED, bus_self(), d, 2); /* the copy may start */
        }
    }
}

void mig_peer_forwarded_cast(slot_t *s, task_t *t, mt_port_t port, const uint8_t *frame,
                             const uint8_t *body, uint16_t n)
{
    mt_module_t origin = frame[0];
    uint8_t seq = frame[1];
    bool first = within_cut(s, origin, seq);
    if (!first && sched_mig_holds_cast(t, (uint16_t) (origin << 8 | seq))) return; /* took it */
    /* In a block set aside at attaching (the payload needs heap: if that
     * is out, lost, logged and reported). */
    mt_err_t why;
    msg_t *m = sched_mig_msg_from(&s->reserved, s->pid, port, body, n, &why);
    if (!m) {
        mig_lost(s->pid, origin, why);
        return;
    }
    if (first) {
        sched_mig_hold_at(t, m, s->fwd_kept++); /* after the ones forwarded before */
        return;
    }
    mig_cast_mark(m, origin, seq);
    m->flags |= MSG_CAST; /* the source kept a copy: never given back */
    sched_mig_hold_cast(t, m);
    s->cut[origin] = seq;
    s->cut_seen |= mig_bit(origin);
    uint8_t last;
    if (!bus_cast_last(origin, &last) || mig_seq_after(seq, last) > 0)
        s->cut_raised |= mig_bit(origin); /* its frame may yet come */
}

#endif /* MOTET_BUS */
