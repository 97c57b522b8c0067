/* SPDX-License-Identifier: MIT */
/*
 * The time manager (see timer.h): a delta list of virtual timers on the one
 * hardware compare.
 *
 * Time. Kernel time is the port counter extended to 32 bits: every read adds
 * the (counter-width) distance since the previous read. While a timer runs,
 * the compare fires at least every PORT_COUNTER_HALF-1 ticks, so no counter
 * wrap goes unseen. With no timer running nothing reads the counter, so a
 * 16-bit port loses whole wraps of idle time; that is the price of having no
 * tick.
 *
 * The list. list_base is a kernel time at or before every deadline in the
 * list; the head fires `delta` ticks after list_base, each later entry
 * `delta` ticks after the one before it. Expiry moves list_base to the
 * expired deadline, so a periodic timer re-inserted `period` after it keeps
 * its phase however late the interrupt ran. Starting a timer moves list_base
 * up to now (never past the head's deadline) so that a new deadline of up
 * to 2^31-1 ticks ahead always fits in 32 bits.
 *
 * Every list operation holds interrupts off: tasks start and stop timers,
 * the compare interrupt expires them.
 */
#include "motet/timer.h"
#include "motet/config.h"
#include "motet/log.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "motet/slab.h"

/* Longest wait programmed into the compare (counter-wrap safety). */
#define COMPARE_MAX_AHEAD ((uint32_t) PORT_COUNTER_HALF - 1u)
/* Timer lengths must stay below half the 32-bit kernel time range. */
#define TICKS_LIMIT 0x80000000u

typedef struct timer_block timer_block_t;
struct timer_block {
    timer_block_t *next;
    uint32_t delta;  /* ticks after the previous entry (head: after list_base) */
    uint32_t period; /* 0: one-shot */
    mt_pid_t owner;
    uint8_t index; /* 0 .. TIMERS_PER_TASK-1 */
};

SLAB_DEFINE(timer_cache, timer_block_t, MOTET_MAX_TIMERS);

static timer_block_t *timer_head;
static uint32_t list_base;
static uint32_t kernel_now;
static port_counter_t last_counter;
static uint32_t compare_interrupts;

/* ------------------------------------------------------------------ time */

/* Extend the counter to 32 bits; irq off. */
static uint32_t now_locked(void)
{
    port_counter_t c = port_counter_read();
    kernel_now += (port_counter_t) (c - last_counter);
    last_counter = c;
    return kernel_now;
}

uint32_t timer_now_irq_off(void)
{
    return now_locked();
}

uint32_t timer_now(void)
{
    port_irq_state_t s = port_irq_save();
    uint32_t now = now_locked();
    port_irq_restore(s);
    return now;
}

/* ------------------------------------------------------------- the list */

/* Link `t` to fire `rel` ticks after list_base; equal deadlines keep their
 * start order. Returns true if it became the head. */
static bool list_insert(timer_block_t *t, uint32_t rel)
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

/* Move list_base up to now, but not past the head's deadline. Returns how
 * far now is beyond list_base afterwards (non-zero only if the head is
 * overdue and its interrupt has not run yet). */
static uint32_t list_rebase(void)
{
    uint32_t elapsed = now_locked() - list_base;
    uint32_t step = elapsed;
    if (timer_head) {
        if (step > timer_head->delta) step = timer_head->delta;
        timer_head->delta -= step;
    }
    list_base += step;
    return elapsed - step;
}

/* ------------------------------------------------------------ expiry */

/* Program the compare for the head; true if the head is already due. */
static bool compare_arm(void)
{
    for (;;) {
        if (!timer_head) {
            port_compare_disable();
            return false;
        }
        uint32_t elapsed = now_locked() - list_base;
        if (elapsed >= timer_head->delta) return true;
        uint32_t wait = timer_head->delta - elapsed;
        if (wait > COMPARE_MAX_AHEAD) wait = COMPARE_MAX_AHEAD;
        port_counter_t armed_at = last_counter;
        port_compare_set((port_counter_t) (armed_at + wait));
        /* If the counter got there while we armed, the interrupt may never
         * come: go round and look again. */
        if ((uint32_t) (port_counter_t) (port_counter_read() - armed_at) < wait) return false;
    }
}

/* Pop the due head, tell its owner, re-insert it if periodic. */
static void expire_head(void)
{
    timer_block_t *t = timer_head;
    timer_head = t->next;
    list_base += t->delta; /* now the expired deadline */
    sched_post_isr(t->owner, (mt_port_t) (PORT_TIMEOUT0 + t->index), NULL, 0, 0);
    log_event(EV_TIMER, t->owner, t->index);
    if (t->period)
        (void) list_insert(t, t->period);
    else
        (void) slab_free(&timer_cache, t);
}

/* Expire everything due, then arm the compare for what is left; irq off.
 * Normally runs in the compare interrupt; in task context only when a
 * deadline passed while interrupts were held off. */
static void timer_service(void)
{
    while (compare_arm()) expire_head();
}

void timer_isr_compare(void)
{
    port_irq_state_t s = port_irq_save();
    compare_interrupts++;
    timer_service();
    port_irq_restore(s);
}

uint32_t timer_interrupt_count(void)
{
    return compare_interrupts;
}

/* ------------------------------------------------------------ the API */

void timer_init(void)
{
    port_irq_state_t s = port_irq_save();
    slab_init(&timer_cache);
    timer_head = NULL;
    compare_interrupts = 0;
    last_counter = port_counter_read();
    kernel_now = last_counter;
    list_base = kernel_now;
    port_compare_disable();
    port_irq_restore(s);
}

mt_err_t timer_start_for(mt_pid_t owner, uint8_t n, uint32_t ticks, bool periodic)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    if (ticks == 0 || ticks >= TICKS_LIMIT || owner == MT_PID_NONE)
        return log_error(MT_ERR_INVALID);

    port_irq_state_t s = port_irq_save();
    bool was_head = false;
    timer_block_t *t = list_remove(owner, n, &was_head);
    if (!t) t = slab_alloc(&timer_cache); /* logs MT_ERR_NO_SLAB itself */
    if (!t) {
        port_irq_restore(s);
        return MT_ERR_NO_SLAB;
    }
    t->owner = owner;
    t->index = n;
    t->period = periodic ? ticks : 0u;
    uint32_t late = list_rebase();
    if (list_insert(t, late + ticks) || was_head) timer_service();
    port_irq_restore(s);
    return MT_OK;
}

mt_err_t timer_start(uint8_t n, uint32_t ticks, bool periodic)
{
    mt_pid_t me = sched_current_pid();
    if (me == MT_PID_NONE && n < TIMERS_PER_TASK) return log_error(MT_ERR_STATE);
    return timer_start_for(me, n, ticks, periodic);
}

mt_err_t timer_stop_for(mt_pid_t owner, uint8_t n)
{
    if (n >= TIMERS_PER_TASK) return log_error(MT_ERR_NO_TIMER);
    port_irq_state_t s = port_irq_save();
    bool was_head = false;
    timer_block_t *t = list_remove(owner, n, &was_head);
    if (t) {
        (void) slab_free(&timer_cache, t);
        if (was_head) timer_service();
    }
    port_irq_restore(s);
    return t ? MT_OK : log_error(MT_ERR_STATE);
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
        (void) slab_free(&timer_cache, t);
        head_changed = head_changed || was_head;
        stopped++;
    }
    if (head_changed) timer_service();
    port_irq_restore(s);
    return stopped;
}

/* Ticks from now to a deadline `rel` ticks after list_base (0 if overdue). */
static uint32_t ticks_until(uint32_t rel)
{
    uint32_t elapsed = now_locked() - list_base;
    return rel > elapsed ? rel - elapsed : 0u;
}

bool timer_remaining(mt_pid_t owner, uint8_t n, uint32_t *ticks)
{
    port_irq_state_t s = port_irq_save();
    uint32_t rel = 0;
    timer_block_t *t = timer_head;
    for (; t; t = t->next) {
        rel += t->delta;
        if (t->owner == owner && t->index == n) break;
    }
    if (t && ticks) *ticks = ticks_until(rel);
    port_irq_restore(s);
    return t != NULL;
}

bool timer_next_deadline(uint32_t *ticks)
{
    port_irq_state_t s = port_irq_save();
    bool running = timer_head != NULL;
    if (running && ticks) *ticks = ticks_until(timer_head->delta);
    port_irq_restore(s);
    return running;
}
