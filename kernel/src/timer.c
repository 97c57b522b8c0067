/* SPDX-License-Identifier: MIT */
/*
 * The time manager (see timer.h): a delta list of virtual timers on the one
 * hardware compare, its expiry and the calls that start and stop timers.
 * A timer's phase, read and restored, is timer_phase.c's (the entries it
 * shares: timer_list.h); run budgets are timer_budget.c's.
 *
 * Time. Kernel time is the port counter extended to 32 bits: every read adds
 * the (counter-width) distance since the previous read (timer_clock.h: with
 * a 32-bit counter that is the counter itself). While a timer runs,
 * the compare fires at least every PORT_COUNTER_HALF-1 ticks, so no counter
 * wrap goes unseen (a 16-bit counter needs a read once per wrap less 256
 * ticks). With no timer running nothing reads the counter, so a 16-bit
 * port loses whole wraps of idle time; that is the price of having no tick.
 *
 * The list, in the counter's own width. list_base is a counter value at or
 * before every deadline; the head fires `delta` ticks after it, each later
 * entry `delta` ticks after the one before. No entry lies more than SPAN
 * (half the counter's range, less one) beyond the time it was linked, so
 * the compare interrupt's steps are counter-wide (16-bit on an 8-bit core).
 * A longer wait is one entry linked in turn: its `rest` remains beyond the
 * deadline it is linked at (TIMER_SPLITS, counters narrower than 32 bits);
 * those deadlines are the wake-ups the wrap rule needs anyway. Expiry moves
 * list_base to the expired deadline, so a periodic timer keeps its phase
 * however late the interrupt ran; a start moves it up to now (never past
 * the head's deadline).
 *
 * Every list operation holds interrupts off: tasks start and stop timers,
 * the compare interrupt expires them.
 *
 * Kernel timers (threads: sleeps, slices, ticks) are ordinary entries whose
 * owner is MT_PID_NONE; their expiry calls thread_timer_fired(index) in the
 * interrupt instead of posting a message.
 *
 * A task timer's block carries its expiry's message: an expiry queues it
 * rather than a block from the message pool. If the timer fires again
 * before the handler has run, that expiry takes a pool block as before, so
 * none is lost or merged. A block stopped (or a one-shot expired) while its
 * message still waits is retired: out of the delta list, freed once its
 * message is released (timer_expiry_release_irq_off(), timer_internal.h);
 * a restart of the same timer meanwhile takes it back, so a waiting expiry
 * costs no second block where the handler restarts its own timer. A
 * system task's counted timer (timer_counted_start(), TIMER_KEPT) has a
 * block of its own, never the slab's: no start of it takes a block from
 * the slab, so none can fail.
 *
 * Run budgets (MOTET_TASK_BUDGET=1, timer_budget.c): while one is set and
 * work runs or waits, the compare also fires for the budget check, which
 * each compare interrupt calls.
 *
 * Periodic mode (MOTET_TIMER_PERIODIC=1), kept to measure what tickless
 * saves: the compare fires every MOTET_TICK_US whether anything is due or
 * not, and each tick expires the timers whose deadline it has reached, so
 * timers keep their tick-granular phase but fire up to a tick late. Starting
 * or stopping a timer then never touches the compare.
 */
#include "timer_internal.h"

#include <string.h>

#include "log_ring.h"
#include "motet/config.h"
#include "motet/log.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "queue_internal.h"
#include "sched_internal.h"
#include "slab.h"
#include "thread_internal.h"
#include "timer_clock.h"
#include "timer_list.h"

/* Periodic mode: the tick in port ticks. */
#define TICK TIMER_US(MOTET_TICK_US)

#if MOTET_TIMER_PERIODIC &&                                                                        \
    (MOTET_TICK_US * PORT_TICKS_PER_SECOND / 1000000u >= (1u << (PORT_COUNTER_BITS - 1)))
#error "MOTET_TICK_US must be shorter than half the port counter's range"
#endif

SLAB_DEFINE(timer_cache, timer_block_t, MOTET_MAX_TIMERS);
#if MOTET_BUS
/* The system tasks' counted timers' blocks, one per slot (timer_internal.h),
 * besides the slab's (config.h, MOTET_MAX_TIMERS). */
static timer_block_t counted_blocks[TIMER_COUNTED_SLOTS];
#endif

timer_block_t *timer_head;
timer_block_t *timer_retired; /* out of the list: their expiry waits */
static port_counter_t list_base;
bool sleep_choice_stale;
uint8_t timer_clock_last_top;
uint16_t timer_clock_wraps;
#if MOTET_STATS
static uint32_t compare_interrupts;
#endif
#if MOTET_TIMER_PERIODIC
static uint32_t tick_base; /* kernel time of the last tick */
#endif

#if MOTET_TASK_BUDGET
/* The budget check's period (timer_budget.c), within what the compare may
 * be armed ahead. */
#define BUDGET_CHECK                                                                               \
    ((port_counter_t) (TIMER_US(MOTET_BUDGET_CHECK_US) > SPAN ? SPAN                               \
                                                              : TIMER_US(MOTET_BUDGET_CHECK_US)))
#endif

/* ------------------------------------------------------------------ time */

uint32_t timer_now_irq_off(void)
{
    return timer_clock_extend();
}

void timer_clock_wrapped(void)
{
    timer_clock_wraps++;
    log_time_base_irq_off(timer_clock_wraps);
}

uint32_t timer_now(void)
{
    port_irq_state_t s = port_irq_save();
    uint32_t now = timer_now_irq_off();
    port_irq_restore(s);
    return now;
}

/* ------------------------------------------------------------- the list */

/* Link `t` to fire `rel` ticks after list_base; equal deadlines keep their
 * start order. Returns true if it became the head. */
static bool list_insert(timer_block_t *t, port_counter_t rel)
{
    timer_block_t **link = &timer_head;
    while (*link && rel >= (*link)->delta) {
        rel -= (*link)->delta;
        link = &(*link)->next;
    }
    t->delta = rel;
    t->next = *link;
    if (t->next) t->next->delta -= rel;
    *link = t;
    return link == &timer_head;
}

/* Unlink timer `index` of `owner`; NULL if it is not running. */
static timer_block_t *list_remove(mt_pid_t owner, uint8_t index, bool *was_head)
{
    for (timer_block_t **link = &timer_head; *link; link = &(*link)->next) {
        timer_block_t *t = *link;
        if (t->owner != owner || t->index != index) continue;
        *was_head = link == &timer_head;
        *link = t->next;
        if (t->next) t->next->delta += t->delta;
        return t;
    }
    return NULL;
}

MT_NOINLINE port_counter_t timer_since_base(void)
{
    return (port_counter_t) (timer_clock_counter() - list_base);
}

/* Move list_base up to now, but not past the head's deadline. Returns how
 * far now is beyond list_base afterwards (non-zero only if the head is
 * overdue and its interrupt has not run yet). An empty list's base may be
 * wraps old: counter-wide, it still becomes now. */
static port_counter_t list_rebase(void)
{
    port_counter_t elapsed = timer_since_base();
    port_counter_t step = elapsed;
    if (timer_head) {
        if (step > timer_head->delta) step = timer_head->delta;
        timer_head->delta -= step;
    }
    list_base += step;
    return (port_counter_t) (elapsed - step);
}

/* Link `t` for a wait of `ticks` from `from` ticks after list_base: SPAN at
 * most now, the rest later; true if it became the head. Out of line: the
 * 32-bit length would take registers the compare interrupt saves. */
static MT_NOINLINE bool list_link_wait(timer_block_t *t, port_counter_t from, uint32_t ticks)
{
#if TIMER_SPLITS
    port_counter_t first = ticks > SPAN ? SPAN : (port_counter_t) ticks;
    t->rest = ticks - first;
    t->kind = (uint8_t) ((t->kind & ~TIMER_RESTING) | (t->rest ? TIMER_RESTING : 0u));
    return list_insert(t, (port_counter_t) (from + first));
#else
    return list_insert(t, (port_counter_t) (from + ticks));
#endif
}

/* ------------------------------------------------------- retired blocks */

/* A block leaving the list goes now, or once its expiry message is
 * released if that still waits; a counted timer's is its own for good
 * (counted_blocks), never the slab's, and nothing needs to find it out of
 * the list; irq off. */
static void retire(timer_block_t *t)
{
    if (t->kind & TIMER_KEPT) return;
    if (!t->expiry.flags) {
        (void) slab_free(&timer_cache, t);
        return;
    }
    t->next = timer_retired;
    timer_retired = t;
}

/* Unlink the retired block `want`, or with `want` NULL timer `index` of
 * `owner`'s (one at most: a start takes it back before the timer can be
 * retired again); NULL if none. Out of line: in start(), on the deepest
 * interrupt path (a slice timer armed at an interrupt's exit), it would
 * widen start()'s frame. */
static MT_NOINLINE timer_block_t *retired_unlink(const timer_block_t *want, mt_pid_t owner,
                                                 uint8_t index)
{
    for (timer_block_t **link = &timer_retired; *link; link = &(*link)->next) {
        timer_block_t *t = *link;
        if (want ? t != want : t->owner != owner || t->index != index) continue;
        *link = t->next;
        return t;
    }
    return NULL;
}

void timer_free_if_retired(msg_t *m)
{
    /* m may be the interrupt slot's block, no timer's: compared, never read. */
    timer_block_t *t = retired_unlink((timer_block_t *) (void *) m, MT_PID_NONE, 0);
    if (t) retire(t); /* its message released: freed */
}

/* ------------------------------------------------------------ expiry */

/* Pop the due head, tell its owner, re-insert it if periodic. True if it
 * was a kernel timer: the thread policy that its expiry ran may have
 * started or stopped a timer, moving list_base up to a newer clock read. */
static bool expire_head(void)
{
    timer_block_t *t = timer_head;
    timer_head = t->next;
    list_base += t->delta; /* now the expired deadline */
    /* A long wait's step: linked again for the rest. */
    if (TIMER_SPLITS && (t->kind & TIMER_RESTING)) {
        (void) list_link_wait(t, 0, timer_wait_rest(t));
        return false;
    }
    bool kernel_timer = MOTET_THREADS && t->owner == MT_PID_NONE;
    if (kernel_timer) { /* its TIMER here; a task timer's post writes its own */
        log_event(EV_TIMER, MT_PID_NONE, t->index);
        thread_timer_fired(t->index);
    } else { /* in its own block unless the last expiry's message still waits there */
        sched_post_timer_expiry(&t->expiry);
    }
    if (!(t->kind & TIMER_PERIODIC)) {
        retire(t);
    } else if (!timer_head && !(t->kind & TIMER_LONG_PERIOD)) {
        /* list_insert() into an empty list, without the call */
        t->delta = (port_counter_t) t->period;
        t->next = NULL;
        timer_head = t;
    } else {
        (void) list_link_wait(t, 0, t->period);
    }
    return kernel_timer;
}

#if MOTET_TIMER_PERIODIC
/* Expire every head whose deadline the last tick has reached. */
static void expire_at_tick(void)
{
    while (timer_head && (port_counter_t) (timer_clock_counter_at(tick_base) - list_base -
                                           timer_head->delta) < PORT_COUNTER_HALF)
        (void) expire_head();
}

/* Take every tick that is due, then arm the compare for the next; irq off. */
static void tick_service(void)
{
    sleep_choice_stale = true;
    for (;;) {
        uint32_t now = timer_now_irq_off();
        uint32_t since = now - tick_base;
        if (since >= TICK) {
            tick_base += TICK;
            expire_at_tick();
            continue;
        }
        uint32_t wait = TICK - since;
        port_counter_t armed_at = timer_clock_counter_at(now);
        port_compare_set((port_counter_t) (armed_at + wait));
        if ((uint32_t) (port_counter_t) (port_counter_read_irq_off() - armed_at) < wait) return;
    }
}
#endif

/* Expire everything due, then arm the compare for what is left; irq off.
 * Normally runs in the compare interrupt; in task context only when a
 * deadline passed while interrupts were held off. Periodic: the next tick
 * does it all.
 *
 * One clock read serves every expiry of a pass: a deadline at or before it
 * is due, and list_base never passes it (it moves to expired deadlines
 * only). A deadline that falls due while the pass runs shows once the
 * compare is armed: the counter, read afresh, is then past it, and the
 * loop reads the clock again. The compare is armed at most half the
 * counter's range after a clock read, as the time extension needs (a
 * kernel timer's expiry may move list_base to a newer read: read again). */
static void timer_service(void)
{
    sleep_choice_stale = true;
    if (MOTET_TIMER_PERIODIC) return;
    port_counter_t now = 0;
    for (bool read = true;;) { /* one copy of the read, in line: at the top */
        if (read) now = timer_clock_counter();
        read = false;
        if (!timer_head) break;
        port_counter_t elapsed = (port_counter_t) (now - list_base);
        if (elapsed >= timer_head->delta) {
            read = expire_head();
            continue;
        }
        /* At most SPAN: no entry lies further beyond the time it was linked. */
        port_counter_t wait = (port_counter_t) (timer_head->delta - elapsed);
#if MOTET_TASK_BUDGET
        if (wait > BUDGET_CHECK && timer_budget_wanted()) wait = BUDGET_CHECK;
#endif
        port_compare_set((port_counter_t) (now + wait));
        /* The counter got there while we armed: no interrupt; look again. */
        if ((port_counter_t) (port_counter_read_irq_off() - now) < wait) return;
        read = true;
    }
#if MOTET_TASK_BUDGET
    /* No timer left: the check alone, while there is work. A check that
     * falls due as it is armed is simply the next one. */
    if (timer_budget_wanted()) {
        port_compare_set((port_counter_t) (now + BUDGET_CHECK));
        return;
    }
#endif
    port_compare_disable();
}

/* The compare interrupt's work; irq off. */
static MT_INLINE void compare_service(void)
{
#if MOTET_STATS
    compare_interrupts++;
#endif
#if MOTET_TASK_BUDGET
    timer_budget_check();
#endif
#if MOTET_TIMER_PERIODIC
    tick_service();
#else
    timer_service();
#endif
}

void timer_isr_compare(void)
{
#ifdef PORT_ISR_IRQ_OFF /* the port calls it with interrupts held off */
    compare_service();
#else
    port_irq_state_t s = port_irq_save();
    compare_service();
    port_irq_restore(s);
#endif
}

#if MOTET_TASK_BUDGET
void timer_rearm_irq_off(void)
{
    timer_service();
}
#endif

#if MOTET_STATS
uint32_t timer_interrupt_count(void)
{
    return compare_interrupts;
}
#endif

/* ------------------------------------------------------------ the API */

void timer_init(void)
{
    port_irq_state_t s = port_irq_save();
    slab_init(&timer_cache);
    timer_head = NULL;
    timer_retired = NULL;
#if MOTET_BUS
    memset(counted_blocks, 0, sizeof counted_blocks);
    for (uint8_t slot = 0; slot < TIMER_COUNTED_SLOTS; slot++)
        counted_blocks[slot].kind = TIMER_KEPT;
#endif
#if MOTET_STATS
    compare_interrupts = 0;
#endif
#if MOTET_TASK_BUDGET
    timer_budget_reset();
#endif
    /* Kernel time starts at the counter (timer_clock.h). */
    port_counter_t start = port_counter_read();
    timer_clock_last_top = timer_clock_top(start);
    timer_clock_wraps = 0;
    list_base = start;
    port_compare_disable();
#if MOTET_TIMER_PERIODIC
    tick_base = start;
    tick_service(); /* the first tick */
#endif
    port_irq_restore(s);
}

/* Link block `t`, out of the list, as timer `n` of `owner`, whose control
 * block is `task` (NULL for the kernel's); true if it became the head (the
 * compare follows the head: the caller serves it then, or if the block was
 * the head before this start); irq off. In line: in timer_start_checked()
 * on the deepest interrupt path (a slice timer armed at an interrupt's
 * exit), a call would add its frame. */
static MT_INLINE bool link_started(timer_block_t *t, mt_pid_t owner, task_t *task, uint8_t n,
                                   uint32_t ticks, bool periodic)
{
    t->owner = owner;
    t->index = n;
    timer_set_period(t, periodic ? ticks : 0u);
    /* The expiry goes to the owner's control block, found once here: a
     * kill or a migration stops the task's timers before the block goes.
     * What the expiry message says is known now too, so that the
     * interrupt only stamps and queues it. A block whose last expiry still
     * waits (unretired) is the same owner's and keeps its message. */
    if (!t->expiry.flags) {
        t->expiry.task = task;
        sched_expiry_prepare(&t->expiry, owner, (mt_port_t) (PORT_TIMEOUT0 + n));
    }
    port_counter_t late = list_rebase();
    return list_link_wait(t, late, ticks);
}

mt_err_t timer_start_checked(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic)
{
    port_irq_state_t s = port_irq_save();
    /* A task's timer needs its task here, looked up in the lock that a
     * kill takes it off the table in (task_destroy() stops its timers
     * there): one for an ended, remote or never created pid would expire
     * to no one, each period for good, hold its block, and time out a
     * later task given the pid. */
    task_t *task = owner == MT_PID_NONE ? NULL : sched_find_task(owner);
    if (owner != MT_PID_NONE && !task) {
        port_irq_restore(s);
        return log_error(MT_ERR_NO_TASK);
    }
    bool was_head = false;
    timer_block_t *t = list_remove(owner, n, &was_head);
    if (!t) t = retired_unlink(NULL, owner, n);
    if (!t) t = slab_alloc(&timer_cache); /* logs MT_ERR_NO_SLAB itself */
    if (!t) {
        port_irq_restore(s);
        return MT_ERR_NO_SLAB;
    }
    if (link_started(t, owner, task, n, ticks, periodic) || was_head) timer_service();
    port_irq_restore(s);
    return MT_OK;
}

mt_err_t timer_start_for(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    /* A timer belongs to a task: a virtual pid (multicast, time sync) has
     * no timeouts to receive, and a system task's timers are the kernel's
     * (timer_counted_start()): the application manager's verdict deadline
     * taken early, or never, would decide a load on the device's behalf. */
    if (ticks == 0 || ticks >= TIMER_TICKS_LIMIT || owner == MT_PID_NONE || owner >= MT_PID_SYSTEM)
        return log_error(MT_ERR_INVALID);
    return timer_start_checked(owner, n, ticks, periodic);
}

mt_err_t timer_start(uint8_t n, uint32_t ticks, bool periodic)
{
    mt_pid_t me = sched_current_pid();
    if (me == MT_PID_NONE && n < TIMERS_PER_TASK) return log_error(MT_ERR_STATE);
    return timer_start_for(me, n, ticks, periodic);
}

/* Stop timer n of owner (MT_PID_NONE: the kernel's); false if it was not
 * running. The compare follows the new head. */
static bool stop(mt_pid_t owner, uint8_t n)
{
    port_irq_state_t s = port_irq_save();
    bool was_head = false;
    timer_block_t *t = list_remove(owner, n, &was_head);
    if (t) {
        retire(t);
        if (was_head) timer_service();
    }
    port_irq_restore(s);
    return t != NULL;
}

mt_err_t timer_stop_for(mt_pid_t owner, uint8_t n)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    if (owner >= MT_PID_SYSTEM)
        return log_error(MT_ERR_INVALID); /* the kernel's: timer_start_for() */
    return stop(owner, n) ? MT_OK : log_error(MT_ERR_STATE);
}

mt_err_t timer_stop(uint8_t n)
{
    return timer_stop_for(sched_current_pid(), n);
}

unsigned timer_stop_all(mt_pid_t owner)
{
    unsigned stopped = 0;
    port_irq_state_t s = port_irq_save();
    bool head_changed = false;
    for (uint8_t n = 0; n < TIMERS_PER_TASK; n++) {
        bool was_head = false;
        timer_block_t *t = list_remove(owner, n, &was_head);
        if (!t) continue;
        retire(t);
        head_changed = head_changed || was_head;
        stopped++;
    }
    if (head_changed) timer_service();
    port_irq_restore(s);
    return stopped;
}

#if MOTET_BUS
/* ---- a system task's counted timer ---- */

/* Its block is counted_blocks[slot], marked kept once for all in
 * timer_init(), which a start leaves as it is (timer_set_period()) and
 * retire() honours: neither an expiry, nor a stop, nor the release of its
 * message gives it to the slab, and no start needs a block from there, so
 * none can fail. One walk of the list: taken out of it if running (a
 * restart, which owes no expiry more), else its block is out of it. */
void timer_counted_start(uint8_t slot, mt_pid_t owner, uint8_t n, uint32_t ticks, uint8_t *owed)
{
    port_irq_state_t s = port_irq_save();
    bool was_head = false;
    timer_block_t *t = list_remove(owner, n, &was_head);
    if (!t) {
        t = &counted_blocks[slot];
        (*owed)++;
    }
    if (link_started(t, owner, sched_find_task(owner), n, ticks, false) || was_head)
        timer_service();
    port_irq_restore(s);
}

bool timer_counted_stop(mt_pid_t owner, uint8_t n, uint8_t *owed)
{
    port_irq_state_t s = port_irq_save();
    bool running = stop(owner, n); /* its block stays its own */
    if (running) (*owed)--;        /* stopped running: its expiry will not come */
    port_irq_restore(s);
    return running;
}

bool timer_counted_take(mt_pid_t owner, uint8_t n, uint8_t *owed)
{
    if (sched_sender() != MT_PID_NONE) return false; /* a task's send is never the timer's */
    port_irq_state_t s = port_irq_save();
    /* The running timer's expiry is still to come, not this one. */
    bool running = timer_remaining(owner, n, NULL);
    bool taken = *owed > (running ? 1u : 0u);
    if (taken) (*owed)--;
    port_irq_restore(s);
    return taken;
}
#endif

/* timer_next_deadline() with the wait asked for, out of line: the clock
 * arithmetic needs registers that the plain question should not save. */
static MT_NOINLINE bool next_deadline_ticks(uint32_t *ticks)
{
    port_irq_state_t s = port_irq_save();
    bool running = timer_head != NULL;
    if (running && ticks) *ticks = timer_ticks_until(timer_head->delta, 0);
#if MOTET_TIMER_PERIODIC
    /* The module wakes at the next tick, due or not. */
    uint32_t since = timer_now_irq_off() - tick_base;
    uint32_t to_tick = since >= TICK ? 0u : TICK - since;
    if (ticks && (!running || to_tick < *ticks)) *ticks = to_tick;
    running = true;
#endif
    port_irq_restore(s);
    return running;
}

bool timer_next_deadline(uint32_t *ticks)
{
#if MOTET_TASK_BUDGET
    timer_budget_sleeping(); /* about to sleep: the run on top, if any, has ended */
#endif
    if (ticks || MOTET_TIMER_PERIODIC) return next_deadline_ticks(ticks);
    /* Only whether a timer runs: asked before every sleep where the port
     * has no deep mode to choose. */
    port_irq_state_t s = port_irq_save();
    bool running = timer_head != NULL;
    port_irq_restore(s);
    return running;
}

#if MOTET_THREADS
mt_err_t timer_kernel_start(uint8_t id, uint32_t ticks, bool periodic)
{
    if (ticks == 0 || ticks >= TIMER_TICKS_LIMIT) return log_error(MT_ERR_INVALID);
    return timer_start_checked(MT_PID_NONE, id, ticks, periodic);
}

bool timer_kernel_stop(uint8_t id)
{
    return stop(MT_PID_NONE, id);
}
#endif
