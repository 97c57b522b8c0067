/* SPDX-License-Identifier: MIT */
/*
 * The time manager (see timer.h): a delta list of virtual timers on the one
 * hardware compare.
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
 * message is released (timer_expiry_release_irq_off(), sched_internal.h); a restart of the
 * same timer meanwhile takes it back, so a waiting expiry costs no second
 * block where the handler restarts its own timer.
 *
 * Run budgets (MOTET_TASK_BUDGET=1, timer_set_budget()): the compare
 * interrupt samples the task on top of the stack (docs/architecture.md,
 * "Configuration", says how, and what sampling misses).
 *
 * Periodic mode (MOTET_TIMER_PERIODIC=1), kept to measure what tickless
 * saves: the compare fires every MOTET_TICK_US whether anything is due or
 * not, and each tick expires the timers whose deadline it has reached, so
 * timers keep their tick-granular phase but fire up to a tick late. Starting
 * or stopping a timer then never touches the compare.
 */
#include "timer_internal.h"

#include <stddef.h>

#include "log_ring.h"
#include "motet/config.h"
#include "motet/log.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "motet/slab.h"
#include "sched_internal.h"
#include "thread_internal.h"
#include "timer_clock.h"

/* Longest distance an entry lies beyond the time it is linked, and so the
 * longest wait programmed into the compare (counter-wrap safety). */
#define SPAN ((port_counter_t) (PORT_COUNTER_HALF - 1u))
/* A counter narrower than 32 bits cannot hold every timer length (up to
 * TIMER_TICKS_LIMIT-1) in one entry: longer waits are linked in turn. */
#define TIMER_SPLITS (PORT_COUNTER_BITS < 32)
/* Periodic mode: the tick in port ticks. */
#define TICK TIMER_US(MOTET_TICK_US)

#if MOTET_TIMER_PERIODIC &&                                                                        \
    (MOTET_TICK_US * PORT_TICKS_PER_SECOND / 1000000u >= (1u << (PORT_COUNTER_BITS - 1)))
#error "MOTET_TICK_US must be shorter than half the port counter's range"
#endif

typedef struct timer_block timer_block_t;
struct timer_block {
    msg_t expiry; /* first: its msg_t * is the block's; flags != 0 while in use */
    timer_block_t *next;
    port_counter_t delta; /* ticks after the previous entry (head: after list_base) */
#if TIMER_SPLITS
    uint32_t rest; /* ticks still to wait once this entry's deadline is reached */
#endif
    uint32_t period; /* 0: one-shot */
    mt_pid_t owner;
    uint8_t index; /* 0 .. TIMERS_PER_TASK-1 */
    uint8_t kind;  /* TIMER_*: what the expiry does, tested in one byte */
};

/* A timer's kind: periodic, with a period over SPAN, waiting out a `rest`
 * (the last two only with TIMER_SPLITS). */
#define TIMER_PERIODIC    1u
#define TIMER_LONG_PERIOD 2u
#define TIMER_RESTING     4u

_Static_assert(offsetof(timer_block_t, expiry) == 0, "a timer's msg_t * must be its block's");

SLAB_DEFINE(timer_cache, timer_block_t, MOTET_MAX_TIMERS);

static timer_block_t *timer_head;
timer_block_t *timer_retired; /* out of the list, their expiry still waiting */
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
/* The check's period, within what the compare may be armed ahead. */
#define BUDGET_CHECK                                                                               \
    ((port_counter_t) (TIMER_US(MOTET_BUDGET_CHECK_US) > SPAN ? SPAN                               \
                                                              : TIMER_US(MOTET_BUDGET_CHECK_US)))

static struct {
    mt_pid_t pid; /* MT_PID_NONE: a free entry */
    uint32_t ticks;
} budgets[MOTET_BUDGET_TASKS];
static uint8_t budgets_set;
static uint16_t sleeps; /* timer_next_deadline() calls: one before every sleep */
static struct {
    const task_t *task; /* on top at the last check, NULL: none */
    uint32_t since;     /* kernel time of the first check that saw this run */
    uint16_t sleeps;    /* `sleeps` then: a sleep since ends the run */
    bool logged;
} watch;

/* True while the budget check keeps the compare armed: a budget is set, a handler runs or waits. */
static void timer_service(void);

static bool budget_wanted(void)
{
    return budgets_set &&
           (sched.current != &task_none || queue_top_prio() >= 0 || isr_slot_waiting());
}

/* The compare interrupt's look at the top of the stack; irq off. */
static void budget_check(void)
{
    const task_t *t = sched.current;
    uint32_t now = timer_now_irq_off();
    if (t != watch.task || sleeps != watch.sleeps) {
        watch.task = t;
        watch.since = now;
        watch.sleeps = sleeps;
        watch.logged = false;
        return;
    }
    if (t == &task_none || watch.logged) return;
    for (uint8_t i = 0; i < MOTET_BUDGET_TASKS; i++) {
        if (budgets[i].pid != t->pid || now - watch.since < budgets[i].ticks) continue;
        uint64_t ms = (uint64_t) (now - watch.since) * 1000u / PORT_TICKS_PER_SECOND;
        log_event(EV_BUDGET, t->pid, (uint16_t) (ms > 0xFFFFu ? 0xFFFFu : ms));
        watch.logged = true;
        return;
    }
}

mt_err_t timer_set_budget(mt_pid_t pid, uint32_t ticks)
{
    if (pid == MT_PID_NONE || ticks >= TIMER_TICKS_LIMIT) return log_error(MT_ERR_INVALID);
    port_irq_state_t s = port_irq_save();
    int8_t slot = -1;
    for (uint8_t i = 0; i < MOTET_BUDGET_TASKS; i++) {
        if (budgets[i].pid == pid) slot = (int8_t) i;
        if (slot < 0 && budgets[i].pid == MT_PID_NONE && ticks) slot = (int8_t) i;
    }
    mt_err_t err = MT_OK;
    if (slot < 0) {
        err = ticks ? MT_ERR_NO_SLAB : MT_OK;
    } else {
        if (budgets[slot].pid == MT_PID_NONE) budgets_set++;
        if (!ticks && budgets[slot].pid != MT_PID_NONE) budgets_set--;
        budgets[slot].pid = ticks ? pid : MT_PID_NONE;
        budgets[slot].ticks = ticks;
        timer_service(); /* the check starts now if there is work */
    }
    port_irq_restore(s);
    return err ? log_error(err) : MT_OK;
}
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

/* Ticks from list_base to now, the clock read as the expiry reads it (in
 * line there); out of line, one copy for a start and the questions. */
static MT_NOINLINE port_counter_t since_list_base(void)
{
    return (port_counter_t) (timer_clock_counter() - list_base);
}

/* Move list_base up to now, but not past the head's deadline. Returns how
 * far now is beyond list_base afterwards (non-zero only if the head is
 * overdue and its interrupt has not run yet). An empty list's base may be
 * wraps old: counter-wide, it still becomes now. */
static port_counter_t list_rebase(void)
{
    port_counter_t elapsed = since_list_base();
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

/* Ticks t waits beyond its entry's deadline. */
static MT_INLINE uint32_t wait_rest(const timer_block_t *t)
{
#if TIMER_SPLITS
    return t->kind & TIMER_RESTING ? t->rest : 0u;
#else
    (void) t;
    return 0;
#endif
}

/* Give t its period (0: one-shot) and the kind that goes with it. */
static void set_period(timer_block_t *t, uint32_t period)
{
    t->period = period;
    t->kind = (uint8_t) ((t->kind & TIMER_RESTING) | (period ? TIMER_PERIODIC : 0u) |
                         (TIMER_SPLITS && period > SPAN ? TIMER_LONG_PERIOD : 0u));
}

/* ------------------------------------------------------- retired blocks */

/* A block leaving the list goes now, or once its expiry message is
 * released if that still waits; irq off. */
static void retire(timer_block_t *t)
{
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
    if (t) (void) slab_free(&timer_cache, t);
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
        (void) list_link_wait(t, 0, wait_rest(t));
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
        if (wait > BUDGET_CHECK && budget_wanted()) wait = BUDGET_CHECK;
#endif
        port_compare_set((port_counter_t) (now + wait));
        /* The counter got there while we armed: no interrupt; look again. */
        if ((port_counter_t) (port_counter_read_irq_off() - now) < wait) return;
        read = true;
    }
#if MOTET_TASK_BUDGET
    /* No timer left: the check alone, while there is work. A check that
     * falls due as it is armed is simply the next one. */
    if (budget_wanted()) {
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
    budget_check();
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
#if MOTET_STATS
    compare_interrupts = 0;
#endif
#if MOTET_TASK_BUDGET
    for (uint8_t i = 0; i < MOTET_BUDGET_TASKS; i++) budgets[i].pid = MT_PID_NONE;
    budgets_set = 0;
    watch.task = NULL;
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

/* Start (or restart) timer `n` of `owner`; arguments checked. */
static mt_err_t start(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic)
{
    port_irq_state_t s = port_irq_save();
    bool was_head = false;
    timer_block_t *t = list_remove(owner, n, &was_head);
    if (!t) t = retired_unlink(NULL, owner, n);
    if (!t) t = slab_alloc(&timer_cache); /* logs MT_ERR_NO_SLAB itself */
    if (!t) {
        port_irq_restore(s);
        return MT_ERR_NO_SLAB;
    }
    t->owner = owner;
    t->index = n;
    set_period(t, periodic ? ticks : 0u);
    /* The expiry goes to the owner's control block, found once here: a
     * kill or a migration stops the task's timers before the block goes.
     * What the expiry message says is known now too, so that the
     * interrupt only stamps and queues it. A block whose last expiry still
     * waits (unretired) is the same owner's and keeps its message. */
    if (!t->expiry.flags) {
        t->expiry.task = owner == MT_PID_NONE ? NULL : sched_find_task(owner);
        sched_expiry_prepare(&t->expiry, owner, (mt_port_t) (PORT_TIMEOUT0 + n));
    }
    port_counter_t late = list_rebase();
    if (list_link_wait(t, late, ticks) || was_head) timer_service();
    port_irq_restore(s);
    return MT_OK;
}

mt_err_t timer_start_for(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    /* A timer belongs to a task: a virtual pid (multicast, time sync) has
     * no timeouts to receive. */
    if (ticks == 0 || ticks >= TIMER_TICKS_LIMIT || owner == MT_PID_NONE ||
        owner == MT_PID_MULTICAST || owner == MT_PID_TIMESYNC)
        return log_error(MT_ERR_INVALID);
    return start(owner, n, ticks, periodic);
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

/* Ticks from now until `rest` ticks after a deadline `rel` ticks after
 * list_base (0 if overdue). */
static uint32_t ticks_until(port_counter_t rel, uint32_t rest)
{
    port_counter_t elapsed = since_list_base();
    uint32_t total = (uint32_t) rel + rest;
    return total > elapsed ? total - elapsed : 0u;
}

bool timer_remaining(mt_pid_t owner, uint8_t n, uint32_t *ticks)
{
    uint32_t remaining, period;
    bool running = timer_info(owner, n, &remaining, &period);
    if (running && ticks) *ticks = remaining;
    return running;
}

/* timer_next_deadline() with the wait asked for, out of line: the clock
 * arithmetic needs registers that the plain question should not save. */
static MT_NOINLINE bool next_deadline_ticks(uint32_t *ticks)
{
    port_irq_state_t s = port_irq_save();
    bool running = timer_head != NULL;
    if (running && ticks) *ticks = ticks_until(timer_head->delta, 0);
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
    sleeps++; /* about to sleep: the run on top, if any, has ended */
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
    return start(MT_PID_NONE, id, ticks, periodic);
}

bool timer_kernel_stop(uint8_t id)
{
    return stop(MT_PID_NONE, id);
}
#endif

/* ---- migration (migrate.c): a timer's phase, read and restored ---- */

bool timer_info(mt_pid_t owner, uint8_t n, uint32_t *remaining, uint32_t *period)
{
    port_irq_state_t s = port_irq_save();
    port_counter_t rel = 0;
    timer_block_t *t = timer_head;
    for (; t; t = t->next) {
        rel += t->delta;
        if (t->owner == owner && t->index == n) break;
    }
    if (t) {
        *remaining = ticks_until(rel, wait_rest(t));
        *period = t->period;
    }
    port_irq_restore(s);
    return t != NULL;
}

mt_err_t timer_start_phase(mt_pid_t owner, uint8_t n, uint32_t first, uint32_t period)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    if (first == 0 || first >= TIMER_TICKS_LIMIT || period >= TIMER_TICKS_LIMIT ||
        owner == MT_PID_NONE)
        return log_error(MT_ERR_INVALID);
    /* Started with `first` as its length, then given its own period, with
     * interrupts off throughout so that it cannot expire in between. */
    port_irq_state_t s = port_irq_save();
    mt_err_t err = start(owner, n, first, period != 0);
    for (timer_block_t *t = timer_head; !err && t; t = t->next)
        if (t->owner == owner && t->index == n) set_period(t, period);
    port_irq_restore(s);
    return err;
}
