/* SPDX-License-Identifier: MIT */
/*
 * Application descriptions across modules (see bus.h).
 *
 * The loader broadcasts a description; every module, the loader included
 * once its frame has been acknowledged, hands it to its application manager in the
 * order the bus carried it, so every module maps relative ids to the same
 * device ids. Each manager creates its part (stage one) and reports the
 * outcome in a broadcast; every module counts the reports in bus order and,
 * once every module of the device has reported, gives its manager the same
 * verdict: MT_OK (initialise) or the first error reported (undo), with the
 * task and module it is about. No task is initialised, so none can send,
 * before every module has created its tasks and its remote control blocks.
 * The verdict is never lost for want of a message block: one is set aside
 * for it when the description comes, or this module takes no part.
 *
 * A load is named by its loader (the DESC frame's sender) and the loader's
 * number for it (the DESC frame's port byte); every outcome names the load
 * it is about, and a module counts only the outcomes of the load it takes
 * part in. A module takes part in one load at a time, the first whose
 * description reaches it (a loader's own, from the moment it starts it):
 * a description of another load meanwhile is refused, logged, and that
 * refusal is this module's outcome of it (MT_ERR_STATE), so that the other
 * load fails on every module, and its loader learns why, rather than mix
 * with the first. A load whose outcomes the bus lost would keep modules
 * busy for ever: a loader's description given up ends its load there
 * (bus_app_given_up()), a newer load of the same loader supersedes the
 * one a module waits on (supersede()), and a module that lacks outcomes
 * after the verdict deadline asks for them again, then gives the load up
 * (bus_app_deadline()), so every load ends (docs/bus.md, Lost frames).
 * Our failure of a load ended here that the transmit queue refused, or
 * the bus gave up, is sent again at the deadline's next expiries (owe()).
 */
#include <string.h>

#include "bus_internal.h"
#include "motet/appmgr.h"
#include "motet/log.h"
#include "motet/port.h"
#include "motet/timer.h"
#include "sched_internal.h"
#include "timer_internal.h"

#if MOTET_BUS

/* Our latest failure of a load ended here (failed_here()): every module
 * has it, a copy of it is on its way, or one was lost and it is owed. */
enum { FAILED_SETTLED, FAILED_OPEN, FAILED_OWED };

/* An earlier failure of ours, replaced by a newer one while copies of it
 * were still to go, followed to their end (follow()): its outcome, the
 * load's loader and number, and its copies still to end (0: a free place). */
typedef struct {
    uint8_t err, loader, number, copies;
} followed_t;

static struct {
    bool busy;                             /* taking part in a load, until its verdict */
    mt_module_t loader;                    /* the load's: its loader */
    uint8_t number;                        /* and the loader's number for it */
    uint8_t last_number;                   /* this module's number for its latest load */
    bool outcome_given;                    /* our outcome of it has gone: `mine` */
    uint8_t mine[BUS_APP_OUTCOME_SIZE];    /* which, kept to send again when asked */
    uint8_t asks;                          /* asks for missing outcomes sent so far */
    bool ask_waiting;                      /* an ASK of ours still waits to end */
    uint8_t mine_queued;                   /* copies of `mine` still waiting to end */
    uint32_t since;                        /* kernel time of its start or last ask */
    bool deadline_on;                      /* started: the description is here */
    uint8_t expiries_owed;                 /* its timer's (timer_counted_start()) */
    uint32_t reported;                     /* modules whose outcome has come */
    bool committed;                        /* its verdict, MT_OK, went to our manager */
    uint32_t disagreeing;                  /* modules that failed it after that */
    uint8_t verdict[BUS_APP_OUTCOME_SIZE]; /* MT_OK or the first error reported */
    msg_t *verdict_block;                  /* set aside for the verdict to our manager */
    uint8_t failed[BUS_APP_CREATED_SIZE];  /* our latest failure of a load ended here */
    uint8_t failed_state;                  /* FAILED_SETTLED, _OPEN or _OWED */
    uint8_t failed_sends;                  /* sends of it left, should it be lost */
    uint8_t failed_copies;                 /* its copies still waiting to end */
    followed_t older[MOTET_BUS_FOLLOWED];  /* earlier failures followed, oldest first */
} A;

/* The verdict deadline's wait, in ticks (at least one). */
#define VERDICT_WAIT                                                                               \
    (TIMER_MS(MOTET_BUS_VERDICT_TIMEOUT_MS) ? TIMER_MS(MOTET_BUS_VERDICT_TIMEOUT_MS) : 1u)

/* The deadline runs on our manager's timer, so that asking and giving up
 * happen in its task context, in order with its reports and verdicts. A
 * system task's timer, which only the kernel starts and stops (timer.h),
 * and counted (timer_counted_start()): an expiry waits queued while a more
 * important task runs, and the deadline may meanwhile be stopped (a
 * verdict) and started again (a newer load); that expiry is still owed,
 * and the restarted timer's one more. Started and counted under one lock,
 * so that a verdict between the two (an acknowledgement's interrupt) finds
 * them agree. Its block is its own (TIMER_SLOT_DEADLINE): no start fails,
 * whatever timers the applications hold. */
static void arm_deadline(void)
{
    _Static_assert(VERDICT_WAIT < TIMER_TICKS_LIMIT, "the deadline is one timer's wait");
    timer_counted_start(TIMER_SLOT_DEADLINE, MT_PID_APPMGR, BUS_APP_DEADLINE_TIMER, VERDICT_WAIT,
                        &A.expiries_owed);
}

bool bus_app_deadline_expired(void)
{
    return timer_counted_take(MT_PID_APPMGR, BUS_APP_DEADLINE_TIMER, &A.expiries_owed);
}

/* A message to our manager on one of the bus's ports, sent as from the
 * manager itself: no public call sends as it (no task or thread runs as
 * the manager but its own handler), so that it takes nothing else there
 * (appmgr.c). Interrupt context or irq off. */
static mt_err_t to_manager(mt_port_t port, const void *data, uint16_t len)
{
    return sched_post_from(MT_PID_APPMGR, MT_PID_APPMGR, port, data, len);
}

/* The verdict deadline runs from the moment the load's description is
 * here: received, or for its loader, sent to every module. */
static void start_deadline(void)
{
    A.since = timer_now();
    A.deadline_on = true;
    arm_deadline();
}

/* The deadline is not started here: see start_deadline(). */
static void take_part(mt_module_t loader, uint8_t number)
{
    A.busy = true;
    A.loader = loader;
    A.number = number;
    A.outcome_given = false;
    A.asks = 0;
    A.deadline_on = false;
    A.mine_queued = 0; /* an earlier load's that end later are not counted */
    A.reported = 0;
    A.committed = false;
    A.disagreeing = 0;
    A.verdict[0] = MT_OK;
    A.verdict[1] = APPMGR_NO_TASK;
    A.verdict[2] = 0;
}

/* What this module remembers of its last load once ended, so that an ASK
 * for our outcome is answered and a late failure taken for a disagreement:
 * what take_part() replaces. Not its copies still waiting (take_part()
 * forgets them: they could never be seen to end, an ASK would wait). */
typedef struct {
    mt_module_t loader;
    uint8_t number;
    bool outcome_given;
    bool committed;
    uint32_t disagreeing;
} last_load_t;

/* Every load before it is forgotten, the one committed here included: a
 * device restarts whole (no module rejoins the bus after a reset:
 * docs/bus.md), so the modules' numbering of their loads starts again at
 * once, and an outcome of a new load must not be taken for an earlier
 * load's that bore its number. The verdict's block too: after
 * motet_boot(), the pool holds every block. */
void bus_app_reset(void)
{
    memset(&A, 0, sizeof A);
}

/* The load we take part in has waited a whole deadline for outcomes
 * (asked for them, or its expiry is due): stuck, which a newer load of
 * its own loader may end (bus_app_load()). Before that, the outcomes may
 * be on the wire, and a module that has all of them commits it on its
 * own frame's acknowledgement: ending it here then would make the device
 * disagree for a load that was going well. Interrupts off. */
static bool overdue(void)
{
    return A.deadline_on && (A.asks || timer_now() - A.since >= VERDICT_WAIT);
}

static bool is_this_load(mt_module_t loader, uint8_t number)
{
    return loader == A.loader && number == A.number;
}

/* Our outcome of the load we take part in, as its CREATED frame carries
 * it: the outcome, then the load's loader and number. */
static void mine_as_sent(uint8_t out[BUS_APP_CREATED_SIZE])
{
    memcpy(out, A.mine, BUS_APP_OUTCOME_SIZE);
    out[BUS_APP_OUTCOME_SIZE] = A.loader;
    out[BUS_APP_OUTCOME_SIZE + 1] = A.number;
}

static void copy_ended(const uint8_t *created, bool sent);

/* Whether `created` is our latest failure of a load ended here. */
static bool is_failed_latest(const uint8_t *created)
{
    return created[0] != MT_OK && memcmp(created, A.failed, sizeof A.failed) == 0;
}

/* A copy of `created` about to be queued counts as waiting from now (it can
 * end before bus_send_frame() returns): `mine`, of our outcome of the load
 * we take part in; `latest`, of our latest failure. Interrupts off. */
static void count_copy(const uint8_t *created, bool *mine, bool *latest)
{
    *mine = is_this_load(created[BUS_APP_OUTCOME_SIZE], created[BUS_APP_OUTCOME_SIZE + 1]);
    if (*mine) A.mine_queued++;
    *latest = is_failed_latest(created);
    if (*latest) A.failed_copies++;
}

/* A copy counted (count_copy()) broadcast. One the transmit queue refuses
 * (logged; the others cannot know) is counted as a frame's would be, in
 * interrupt context; a failure of ours lost as if given up (copy_ended()). */
static void send_counted(const uint8_t created[BUS_APP_CREATED_SIZE], bool mine, bool latest)
{
    if (bus_send_frame(BUS_FRAME_CREATED, BUS_BROADCAST, MT_PID_APPMGR, BUS_APPMGR_PORT_VERDICT,
                       BUS_PRIO_SYSTEM, created, BUS_APP_CREATED_SIZE) == MT_OK)
        return;
    port_irq_state_t s = port_irq_save();
    mine = mine && is_this_load(created[BUS_APP_OUTCOME_SIZE], created[BUS_APP_OUTCOME_SIZE + 1]);
    if (mine && A.mine_queued) A.mine_queued--;
    bus_app_report(bus_self(), created);
    port_irq_restore(s);
    if (latest) copy_ended(created, false);
}

/* This module's outcome of a load, broadcast as its CREATED frame carries
 * it; any context. `manager_report`: our manager's, decided before the
 * lock, sent only if that load is still the one we take part in and its
 * outcome still ours to give (a newer description may have ended it, its
 * failure broadcast: an MT_OK after that would count at a module that
 * lost the failure, and under a name come round as ours of the newer). */
static void report_outcome(const uint8_t created[BUS_APP_CREATED_SIZE], bool manager_report)
{
    bool mine = false, latest = false;
    port_irq_state_t s = port_irq_save();
    bool gone = manager_report &&
                !(A.outcome_given &&
                  is_this_load(created[BUS_APP_OUTCOME_SIZE], created[BUS_APP_OUTCOME_SIZE + 1]));
    if (!gone) count_copy(created, &mine, &latest);
    port_irq_restore(s);
    if (!gone) send_counted(created, mine, latest);
}

/* A failure of ours never to be sent (owe()), logged naming its load: one
 * a module that committed it may never hear failed. */
static void drop_owed(mt_module_t loader, uint8_t number)
{
    log_event(EV_UNSENT, MT_PID_NONE, (uint16_t) (loader << 8 | number));
}

/* The failure followed in place `i` is followed no more: the places in
 * use stay first, oldest first. Interrupts off. */
static void unfollow(uint8_t i)
{
    memmove(&A.older[i], &A.older[i + 1], (MOTET_BUS_FOLLOWED - 1u - i) * sizeof A.older[0]);
    A.older[MOTET_BUS_FOLLOWED - 1u].copies = 0;
}

/* Our earlier failure `created`, replaced while `copies` copies of it are
 * still to end, is followed to their end (copy_ended()), so that it is
 * logged unsent exactly when none reached every module. After the others;
 * with no place free, the oldest is followed no more, and logged as such
 * (EV_UNTRACKED): whether it reached every module will not be known.
 * Interrupts off. */

static void follow(const uint8_t created[BUS_APP_CREATED_SIZE], uint8_t copies)
{
    uint8_t i = 0;
    while (i < MOTET_BUS_FOLLOWED && A.older[i].copies) i++;
    if (i == MOTET_BUS_FOLLOWED) {
        log_event(EV_UNTRACKED, MT_PID_NONE,
                  (uint16_t) (A.older[0].loader << 8 | A.older[0].number));
        unfollow(0);
        i = MOTET_BUS_FOLLOWED - 1u;
    }
    A.older[i] = (followed_t){created[0], created[BUS_APP_OUTCOME_SIZE],
                              created[BUS_APP_OUTCOME_SIZE + 1], copies};
}

/* Our failure `created` of the load just ended here (given up, superseded)
 * goes now (broadcast, or in `copies` waiting copies of our outcome
 * rewritten to it, fail_mine()). A module that committed the load on our
 * MT_OK learns of it from this broadcast alone: it is remembered until a
 * copy reaches every module, owed if one is lost (owe()). The latest only:
 * an earlier failure is sent no more, dropped (drop_owed()) with no copy
 * left to go, else followed to its copies' end (follow()). Irq off. */
static void failed_here(const uint8_t created[BUS_APP_CREATED_SIZE], uint8_t copies)
{
    const uint8_t *was = A.failed;
    bool earlier = memcmp(was, created, sizeof A.failed) != 0;
    if (earlier && A.failed_state != FAILED_SETTLED) {
        if (A.failed_copies)
            follow(was, A.failed_copies);
        else
            drop_owed(was[BUS_APP_OUTCOME_SIZE], was[BUS_APP_OUTCOME_SIZE + 1]);
    }
    memcpy(A.failed, created, sizeof A.failed);
    A.failed_state = FAILED_OPEN;
    A.failed_sends = MOTET_BUS_RETRIES;
    A.failed_copies = copies;
}

/* Our failure `created` (failed_here()) is lost, refused by the transmit
 * queue or given up by the bus (each logged): owed, sent again at the
 * verdict deadline's next expiry (pay_owed()), MOTET_BUS_RETRIES times at
 * most; dropped (drop_owed()) once none is left and no other copy is still
 * to end; nothing more if a copy has reached every module. Irq off. */
static void owe(const uint8_t created[BUS_APP_CREATED_SIZE])
{
    if (A.failed_state == FAILED_SETTLED) return;
    if (A.failed_sends) {
        A.failed_state = FAILED_OWED;
        /* A running deadline pays it at its expiry: started again, it would
         * put off the ask or give-up of a load in progress by a whole wait. */
        if (!timer_remaining(MT_PID_APPMGR, BUS_APP_DEADLINE_TIMER, NULL)) arm_deadline();
    } else if (!A.failed_copies) {
        A.failed_state = FAILED_SETTLED;
        drop_owed(created[BUS_APP_OUTCOME_SIZE], created[BUS_APP_OUTCOME_SIZE + 1]);
    } /* else the last copy still to end decides */
}

/* A copy of an outcome has ended: `sent`, it reached every module; or lost
 * (given up by the bus, or refused by the transmit queue). Our latest
 * failure is settled by a copy sent, owed for one lost (owe()); an earlier
 * one followed (follow()) settled by a copy sent, dropped unsent once its
 * last copy is lost (only the latest is sent again). Any context. */
static void copy_ended(const uint8_t *created, bool sent)
{
    port_irq_state_t s = port_irq_save();
    if (is_failed_latest(created)) {
        if (A.failed_copies) A.failed_copies--;
        if (sent)
            A.failed_state = FAILED_SETTLED;
        else
            owe(created);
        port_irq_restore(s);
        return;
    }
    for (uint8_t i = 0; i < MOTET_BUS_FOLLOWED; i++) {
        followed_t *f = &A.older[i];
        if (!f->copies || f->err != created[0] || f->loader != created[BUS_APP_OUTCOME_SIZE] ||
            f->number != created[BUS_APP_OUTCOME_SIZE + 1])
            continue;
        f->copies = sent ? 0 : (uint8_t) (f->copies - 1u);
        if (!sent && !f->copies) drop_owed(f->loader, f->number);
        if (!f->copies) unfollow(i);
        break;
    }
    port_irq_restore(s);
}

/* At an expiry of the verdict deadline, task context: the failure owed
 * (owe()), if any, sent again. Its copy counted under the lock that opens
 * it: a description before it is queued (interrupt, supersede()) must
 * find it waiting, or failed_here() would log it unsent while it goes. */
static void pay_owed(void)
{
    uint8_t owed[BUS_APP_CREATED_SIZE];
    bool mine = false, latest = false;
    port_irq_state_t s = port_irq_save();
    bool due = A.failed_state == FAILED_OWED;
    if (due) {
        A.failed_state = FAILED_OPEN; /* owed again if this copy is lost */
        A.failed_sends--;
        memcpy(owed, A.failed, sizeof owed);
        count_copy(owed, &mine, &latest);
    }
    port_irq_restore(s);
    if (due) send_counted(owed, mine, latest); /* lost: owed again (copy_ended()) */
}

void bus_app_outcome_ended(const uint8_t *outcome, bool sent)
{
    bool mine = is_this_load(outcome[BUS_APP_OUTCOME_SIZE], outcome[BUS_APP_OUTCOME_SIZE + 1]);
    if (mine && A.mine_queued) A.mine_queued--;
    if (sent) bus_app_report(bus_self(), outcome);
    copy_ended(outcome, sent);
}

/* Our outcome of the load we take part in, broadcast, and kept to send
 * again to a module that asks for it. */
static void report_mine(mt_err_t err, uint8_t task, mt_module_t module)
{
    port_irq_state_t s = port_irq_save(); /* an ASK reads them in interrupt context */
    A.mine[0] = (uint8_t) err;
    A.mine[1] = task;
    A.mine[2] = module;
    A.outcome_given = true;
    uint8_t created[BUS_APP_CREATED_SIZE];
    mine_as_sent(created);
    port_irq_restore(s);
    report_outcome(created, true);
}

/* The load ends here: its verdict to our manager, in the block set aside
 * for it when our manager took its description, posted as it is: the
 * pool is not asked, and nothing else can refuse it (the manager always
 * exists). */
static void give_verdict(void)
{
    _Static_assert(BUS_APP_OUTCOME_SIZE <= MSG_INLINE_BYTES, "a verdict travels in its block");
    port_irq_state_t s = port_irq_save(); /* a description may come, and reset A */
    A.busy = false;
    msg_t *m = A.verdict_block;
    A.verdict_block = NULL;
    if (m) queue_copy_into_block(m, A.verdict, sizeof A.verdict);
    A.committed = m && A.verdict[0] == MT_OK;
    /* Nothing left to wait for (a failure owed aside): its timer entry is
     * freed now, not held until it expires for nothing. */
    if (A.failed_state != FAILED_OWED)
        timer_counted_stop(MT_PID_APPMGR, BUS_APP_DEADLINE_TIMER, &A.expiries_owed);
    port_irq_restore(s);
    if (!m) return;
    m->flags = MSG_FROM_ISR; /* sent as from the manager, as to_manager()'s */
    sched_post_block(MT_PID_APPMGR, MT_PID_APPMGR, BUS_APPMGR_PORT_VERDICT, m);
}

/* The load we take part in ends here short of its verdict (`why`: given
 * up, superseded), and our outcome of it becomes that failure, so that
 * the modules still waiting fail it too and one that committed it logs
 * the disagreement; unless our outcome is a failure already: that cause
 * stays ours, the one an ASK is answered with. A copy of our MT_OK still
 * waiting to go becomes the failure: sent as it was, it would go out
 * first, and a module that lacked only ours would commit the load ended
 * here. One the interface has goes first; the failure follows it. The
 * copies waiting that carry our failure: none, and it is to be broadcast;
 * interrupts off. */
static uint8_t fail_mine(mt_err_t why)
{
    if (A.outcome_given && A.mine[0] != MT_OK) return A.mine_queued;
    uint8_t was[BUS_APP_CREATED_SIZE], now[BUS_APP_CREATED_SIZE];
    mine_as_sent(was);
    bool copies = A.outcome_given && A.mine_queued;
    A.mine[0] = (uint8_t) why;
    A.mine[1] = APPMGR_NO_TASK;
    A.mine[2] = bus_self();
    A.outcome_given = true;
    mine_as_sent(now);
    return copies ? bus_rewrite_waiting(BUS_FRAME_CREATED, was, now, sizeof now, A.mine_queued) : 0;
}

/* A newer load (`loader`, `number`) supersedes the one this module waits
 * on, whose verdict may never come (an outcome lost on the bus): it ends
 * here as failed (MT_ERR_BUS_LOST), its part undone, and that is our
 * outcome of it (fail_mine()), unless the newer load bears its name (the
 * loader's number come round): that outcome would count as ours of the
 * newer load. Only once our manager has reported on it, as its report
 * would otherwise go out named as the newer load's. A failure lost (the
 * queue refuses it, or the bus gives it up) is owed (owe()). True if it
 * ended; interrupts off. */
static bool supersede(mt_module_t loader, uint8_t number)
{
    if (!A.busy || A.loader != loader || !A.outcome_given) return false;
    A.verdict[0] = MT_ERR_BUS_LOST; /* logged by our manager as it undoes */
    A.verdict[1] = APPMGR_NO_TASK;
    A.verdict[2] = 0;
    give_verdict();
    if (number == A.number) return true;
    uint8_t copies = fail_mine(MT_ERR_BUS_LOST);
    uint8_t failed[BUS_APP_CREATED_SIZE];
    mine_as_sent(failed);
    failed_here(failed, copies);
    if (!copies) report_outcome(failed, false); /* lost: owed (copy_ended()) */
    return true;
}

mt_err_t bus_app_load(const uint8_t *desc, uint16_t len)
{
    /* The manager's own load, the message appmgr_load() sends (which,
     * the bus started, calls this: no cycle for the stack's bound). */
    if (!bus_active()) return sched_send_to(MT_PID_APPMGR, PORT_0, (void *) desc, len, 0);
    if (len > MOTET_APP_DESC_MAX || (len && !desc)) return log_error(MT_ERR_DESC_LENGTH);
    uint8_t number = (uint8_t) (A.last_number + 1u);
    /* The loader takes part in its load from here on: another's outcome can
     * come before our frame is acknowledged, and before it is queued (a
     * port's interface may take frames in meanwhile, as the native link
     * does) another load's description, which must find this module busy,
     * and see the load whole (interrupts off). */
    port_irq_state_t s = port_irq_save();
    bool busy = A.busy && !(overdue() && supersede(bus_self(), number));
    last_load_t last = {A.loader, A.number, A.outcome_given, A.committed, A.disagreeing};
    if (!busy) take_part(bus_self(), number);
    port_irq_restore(s);
    if (busy) return log_error(MT_ERR_STATE);
    mt_err_t err = bus_send_frame(BUS_FRAME_DESC, BUS_BROADCAST, MT_PID_APPMGR, number,
                                  BUS_PRIO_SYSTEM, desc, len);
    if (!err) {
        A.last_number = number;
        return MT_OK;
    }
    /* Logged. Nothing went: the load remembered is still the last (an ASK
     * for it answered, a failure of it after it committed logged). */
    s = port_irq_save();
    A.busy = false;
    A.loader = last.loader;
    A.number = last.number;
    A.outcome_given = last.outcome_given;
    A.committed = last.committed;
    A.disagreeing = last.disagreeing;
    port_irq_restore(s);
    return err;
}

void bus_app_description(const bus_frame_t *f)
{
    bool own = f->src == bus_self();
    /* Ours has gone: the load we take part in from its start
     * (bus_app_load()), which nothing ends before: no deadline is due
     * (A.deadline_on), the outcomes are not whole without ours (our
     * manager has no description yet), another loader's description is
     * refused and our own next load too (nothing to supersede without our
     * outcome). Kept, and logged, should a change break that: a load that
     * has ended must not start again here alone. */
    if (own && !(A.busy && is_this_load(f->src, f->port))) {
        log_error(MT_ERR_STATE);
        return;
    }
    /* Another's is a new load, even one that names the load we take part
     * in: the bus delivers a frame once, so that is its loader's number
     * come round again (docs/bus.md, "A load's name"). */
    if (!own && A.busy && !supersede(f->src, f->port)) {
        log_error(MT_ERR_STATE);
        /* A newer load of our load's loader, which ended ours uncommitted
         * (refused here only because our outcome was not given, which it
         * lacked): its failure, counted here as if its broadcast had come,
         * so that ours fails here whatever frames we missed. */
        if (f->src == A.loader && f->port != A.number) {
            uint8_t ended[BUS_APP_CREATED_SIZE] = {MT_ERR_BUS_LOST, APPMGR_NO_TASK, f->src,
                                                   A.loader, A.number};
            bus_app_report(f->src, ended);
        }
        uint8_t refused[BUS_APP_CREATED_SIZE] = {MT_ERR_STATE, APPMGR_NO_TASK, bus_self(), f->src,
                                                 f->port};
        report_outcome(refused, false);
        return;
    }
    if (!own) take_part(f->src, f->port);
    /* A loader's own included: the time its frame waited to go out (flow
     * control, retransmissions, a slow bus) is no time the others had it. */
    start_deadline();
    /* Two blocks, one for the description and one set aside for the
     * verdict, or none (each failure logged where it failed): this module
     * takes no part, and says so, so that every module undoes its part on
     * the verdict rather than wait for this one's outcome for ever. */
    _Static_assert(BUS_APPMGR_PORT_DESC < PORT_LIMIT, "the manager's ports are ports");
    if (!A.verdict_block) A.verdict_block = sched_msg_alloc();
    mt_err_t err =
        A.verdict_block ? to_manager(BUS_APPMGR_PORT_DESC, f->payload, f->len) : MT_ERR_QUEUE_FULL;
    if (!err) return;
    if (A.verdict_block) sched_msg_free(A.verdict_block);
    A.verdict_block = NULL;
    bus_app_created(err, APPMGR_NO_TASK, bus_self());
}

void bus_app_given_up(const bus_frame_t *f, mt_err_t why)
{
    if (!A.busy || A.loader != bus_self() || A.number != f->port) return;
    A.busy = false; /* our manager never had it: nothing to undo here */
    report_mine(why, APPMGR_NO_TASK, bus_self());
}

/* Our manager's description is the load this module takes part in. */
void bus_app_created(mt_err_t err, uint8_t task, mt_module_t module)
{
    report_mine(err, task, module);
}

/* Module `from` failed the load this module committed (it gave the load
 * up, MT_ERR_TIMEOUT, as our outcome or the verdict never reached it):
 * the device disagrees. Our manager records and logs it, in task context;
 * if the pool has no block for that, it is logged here, as our manager
 * would. Once per module. */
static void disagree(mt_module_t from, const uint8_t *outcome)
{
    uint32_t bit = (uint32_t) 1u << from;
    if (A.disagreeing & bit) return;
    A.disagreeing |= bit;
    uint8_t late[BUS_APP_CREATED_SIZE] = {outcome[0], outcome[1], from, A.loader, A.number};
    if (to_manager(BUS_APPMGR_PORT_DISAGREED, late, sizeof late) == MT_OK) return;
    log_event(EV_DISAGREE, from, (uint16_t) ((uint16_t) (A.loader << 8) | A.number));
    log_error((mt_err_t) outcome[0]);
}

void bus_app_report(mt_module_t from, const uint8_t *outcome)
{
    /* Another load's outcome (one this module refused, or an earlier
     * load's come late) counts for nothing here. */
    bool this_load =
        outcome[BUS_APP_OUTCOME_SIZE] == A.loader && outcome[BUS_APP_OUTCOME_SIZE + 1] == A.number;
    if (from >= MOTET_BUS_MODULES) return;
    if (!A.busy && this_load && A.committed && outcome[0] != MT_OK) {
        disagree(from, outcome);
        return;
    }
    if (!A.busy || !this_load) return;
    uint32_t bit = (uint32_t) 1u << from;
    /* Sent again, asked by a module that lacked it: counted once. But a
     * failure after that module's MT_OK is its give-up, its part undone
     * there: committed here, the load would run without it. */
    if ((A.reported & bit) && (outcome[0] == MT_OK || A.verdict[0] != MT_OK)) return;
    A.reported |= bit;
    if (outcome[0] != MT_OK && A.verdict[0] == MT_OK) memcpy(A.verdict, outcome, sizeof A.verdict);
    if ((A.reported & bus_modules()) == bus_modules()) give_verdict();
}

/* ---- the verdict deadline ---- */

void bus_app_asked(const bus_frame_t *f)
{
    const uint8_t *p = f->payload;
    uint32_t asked =
        (uint32_t) p[2] | (uint32_t) p[3] << 8 | (uint32_t) p[4] << 16 | (uint32_t) p[5] << 24;
    bool ours = A.outcome_given && p[0] == A.loader && p[1] == A.number;
    if (!ours || !(asked & ((uint32_t) 1u << bus_self()))) return; /* nothing to answer with */
    if (A.mine_queued) return; /* a copy still to go reaches the asker too: a broadcast */
    uint8_t created[BUS_APP_CREATED_SIZE];
    mine_as_sent(created);
    report_outcome(created, false);
}

/* Ask the modules in `missing` for their outcome of load (loader,
 * number) again, in one ASK frame. */
static void ask(mt_module_t loader, uint8_t number, uint32_t missing)
{
    uint8_t asked[BUS_APP_ASK_SIZE] = {loader,
                                       number,
                                       (uint8_t) missing,
                                       (uint8_t) (missing >> 8),
                                       (uint8_t) (missing >> 16),
                                       (uint8_t) (missing >> 24)};
    /* Set before it is queued: the frame can end, and bus_app_ask_ended()
     * clear the flag, before bus_send_frame() returns (an interrupt that
     * holds the CPU while the short frame goes out). */
    A.ask_waiting = true;
    if (bus_send_frame(BUS_FRAME_ASK, BUS_BROADCAST, MT_PID_APPMGR, BUS_APPMGR_PORT_VERDICT,
                       BUS_PRIO_SYSTEM, asked, sizeof asked) != MT_OK) /* logged */
        A.ask_waiting = false;                                         /* nothing was queued */
}

void bus_app_ask_ended(void)
{
    A.ask_waiting = false;
}

void bus_app_deadline(void)
{
    uint32_t me = (uint32_t) 1u << bus_self();
    pay_owed();
    port_irq_state_t s = port_irq_save();
    /* Not due: the load has ended, or this expiry was armed for a load
     * before it, whose own expiry is still to come. */
    bool due = A.busy && A.deadline_on && timer_now() - A.since >= VERDICT_WAIT;
    bool give_up = due && A.asks >= MOTET_BUS_RETRIES;
    uint32_t missing = bus_modules() & ~A.reported;
    /* Ours, if missing: a broadcast of it given up never counted here; but
     * not while a copy still waits to go (a frame ahead of it held), or
     * each deadline would queue one more, and fill the transmit queue. */
    bool again = due && (missing & me) && A.outcome_given && !A.mine_queued;
    mt_module_t loader = A.loader;
    uint8_t number = A.number;
    /* Our manager logs the verdict it undoes (the give-up's MT_ERR_TIMEOUT),
     * or another module's failure, the verdict already: then the give-up
     * is logged here. So is it when our manager holds nothing to undo:
     * it never had the description (no block set aside), or our outcome
     * is a failure, its own stage one's (its record keeps that cause). */
    bool manager_logs = give_up && A.verdict_block && A.verdict[0] == MT_OK &&
                        !(A.outcome_given && A.mine[0] != MT_OK);
    uint8_t copies = 0; /* of our failure at a give-up, waiting (fail_mine()) */
    if (give_up) {
        /* It fails here, undone by our manager, and our outcome is that
         * failure (fail_mine()): the modules still waiting fail it too,
         * those that counted our first outcome included (bus_app_report()),
         * while those that committed keep it and log the disagreement. */
        if (A.verdict[0] == MT_OK) {
            A.verdict[0] = MT_ERR_TIMEOUT;
            A.verdict[1] = APPMGR_NO_TASK;
            A.verdict[2] = 0;
        }
        copies = fail_mine(MT_ERR_TIMEOUT);
        again = !copies;
        give_verdict();
    } else if (due) {
        A.asks++;
        A.since = timer_now();
    }
    uint8_t created[BUS_APP_CREATED_SIZE];
    mine_as_sent(created);
    if (give_up) failed_here(created, copies);
    port_irq_restore(s);
    if (give_up && !manager_logs) log_error(MT_ERR_TIMEOUT);
    if (again) report_outcome(created, false); /* our failure lost: owed (copy_ended()) */
    if (!due || give_up) return;
    /* One ASK at a time: behind a frame that cannot go out (our own DESC
     * unacknowledged), more would only fill the transmit queue. */
    if ((missing & ~me) && !A.ask_waiting) ask(loader, number, missing & ~me);
    arm_deadline();
}

#endif /* MOTET_BUS */
