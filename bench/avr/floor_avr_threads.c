/* SPDX-License-Identifier: MIT */
/*
 * The floor of a thread switch on the ATmega128: what a yield to an equal
 * and a semaphore hand-off to a higher thread need, written straight in one
 * file with no kernel around them, and measured exactly as
 * bench_avr_threads.c measures Motet (same markers, windows, compiler,
 * flags and the port's own context switch). What Motet spends above these
 * figures is its own structure; what a target asks below them no structure
 * reaches without dropping a rule.
 *
 * What each operation keeps, and why (docs/costs.md, "Thread switches"):
 *   - a thread is its saved stack pointer, its level, its state and a link;
 *   - the ready threads are a FIFO per level and a bitmap of non-empty
 *     levels, the best one a bit search away (the kernel's own
 *     queue_highest_bit() and queue_bit(), this core having no CLZ);
 *   - tasks share the priority space: a thread gives the CPU to a ready
 *     one only if the kernel stack's claim (its top frame, its queued
 *     messages: one byte here) is below that one's level;
 *   - everything between the decision and the switch runs with interrupts
 *     off (an interrupt may make a thread ready, or post a message);
 *   - the switch is the port's port_context_switch(): the 18 registers the
 *     ABI has a callee keep, and the stack pointer;
 *   - yield: nobody higher can be ready while a thread runs, so the next
 *     thread is the head of the yielder's own level (no bit search); it
 *     runs unless the kernel stack claims that level, and the yielder goes
 *     behind its equals (both in one step: the level stays non-empty);
 *   - post: the wait list is kept best first, so the waker takes its head;
 *     a waiter above the poster, above every ready thread and above the
 *     kernel stack's claim runs at once, the poster first among its equals.
 * Nothing else: no switch counter, no stack canary, no timeouts, no
 * suspension, no policy options, no error paths (the driver checks the
 * runs instead).
 *
 *   PA1 yield switch       as bench_avr_threads.c
 *   PA2 semaphore hand-off as bench_avr_threads.c
 *
 * Each runs REPEAT + 1 times per thread (the first window is a warm-up the
 * harness drops). A wrong turn or hand-off halts with status 1, success
 * with 0.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <stdbool.h>
#include <stdint.h>

#include "motet/port.h"
#include "queue_internal.h" /* queue_highest_bit(): the kernel's own bit search */

#define REPEAT 16u
#define STACK  192u

#define MARK_UP(port, bit)                                                                         \
    __asm__ volatile("sbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")
#define MARK_DOWN(port, bit)                                                                       \
    __asm__ volatile("cbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")

enum { READY, RUNNING, BLOCKED };

typedef struct fthread {
    port_context_t ctx;
    struct fthread *next;
    int8_t prio;
    uint8_t state;
} fthread_t;

typedef struct {
    fthread_t *head;
    fthread_t *tail;
} level_t;

static fthread_t threads[2];
static fthread_t boot; /* the kernel stack's place: main() */
static fthread_t *current;
static level_t ready[MOTET_PRIO_LEVELS];
static queue_bits_t ready_map;
static volatile int8_t k_claim = -1; /* the kernel stack's claim (an interrupt may raise it) */
static fthread_t *waiters;           /* the semaphore's wait list, best first */
static uint8_t count;                /* and its count */
static uint8_t stacks[2][STACK];

static volatile uint8_t turns[2];
static volatile uint8_t last = 0xFF;
static volatile uint8_t handed;
static volatile uint8_t failures;

static inline __attribute__((always_inline)) fthread_t *best_ready(void)
{
    return ready_map ? ready[queue_highest_bit(ready_map)].head : NULL;
}

static void push_last(fthread_t *t)
{
    level_t *l = &ready[(uint8_t) t->prio];
    t->next = NULL;
    if (l->head) {
        l->tail->next = t;
    } else {
        l->head = t;
        ready_map |= queue_bit(t->prio);
    }
    l->tail = t;
    t->state = READY;
}

/* A call, as the API's is. */
__attribute__((noinline)) static void yield(void)
{
    uint8_t sreg = SREG;
    cli();
    fthread_t *cur = current;
    level_t *l = &ready[(uint8_t) cur->prio];
    fthread_t *next = l->head;
    if (next && k_claim < cur->prio) {
        cur->next = NULL;
        l->tail->next = cur; /* next itself if it was alone */
        l->tail = cur;
        l->head = next->next;
        next->next = NULL;
        cur->state = READY;
        next->state = RUNNING;
        current = next;
        port_context_switch(&cur->ctx, &next->ctx);
    }
    SREG = sreg;
}

__attribute__((noinline)) static void post(void)
{
    uint8_t sreg = SREG;
    cli();
    fthread_t *w = waiters;
    if (!w) {
        count++;
    } else {
        waiters = w->next;
        w->next = NULL;
        fthread_t *cur = current, *best = best_ready();
        if (w->prio > cur->prio && k_claim < w->prio && !(best && best->prio >= w->prio)) {
            level_t *l = &ready[(uint8_t) cur->prio];
            cur->next = l->head; /* first among its equals: it was preempted */
            if (!l->head) {
                l->tail = cur;
                ready_map |= queue_bit(cur->prio);
            }
            l->head = cur;
            cur->state = READY;
            w->state = RUNNING;
            current = w;
            port_context_switch(&cur->ctx, &w->ctx);
        } else {
            push_last(w);
        }
    }
    SREG = sreg;
}

/* Run the best ready thread; from a thread that blocked or from boot. */
static void run_best(fthread_t *cur)
{
    fthread_t *next = best_ready();
    level_t *l = &ready[(uint8_t) next->prio];
    l->head = next->next;
    if (!l->head) ready_map &= (queue_bits_t) ~queue_bit(next->prio);
    next->next = NULL;
    next->state = RUNNING;
    current = next;
    port_context_switch(&cur->ctx, &next->ctx);
}

static void wait(void)
{
    uint8_t sreg = SREG;
    cli();
    if (count) {
        count--;
    } else {
        fthread_t *cur = current, **link = &waiters;
        while (*link && (*link)->prio >= cur->prio) link = &(*link)->next;
        cur->next = *link;
        *link = cur;
        cur->state = BLOCKED;
        run_best(cur); /* the poster is ready: it runs */
    }
    SREG = sreg;
}

static uint8_t yielders_done;

static void yielder(void *arg)
{
    uint8_t i = (uint8_t) (uintptr_t) arg;
    sei();
    for (uint8_t n = 0; n <= REPEAT; n++) {
        MARK_UP(PORTA, 1);
        yield();
        MARK_DOWN(PORTA, 1); /* ends the other one's yield */
        if (last == i) failures++;
        last = i;
        turns[i]++;
    }
    cli();
    fthread_t *cur = current;
    cur->state = BLOCKED;
    if (++yielders_done < 2) run_best(cur); /* the other one is in its last yield */
    if (turns[0] != REPEAT + 1u || turns[1] != REPEAT + 1u) port_halt(1);
    current = &boot; /* back to main(): the hand-off */
    port_context_switch(&cur->ctx, &boot.ctx);
}

static void taker(void *arg)
{
    (void) arg;
    sei();
    for (;;) {
        wait();
        MARK_DOWN(PORTA, 2);
        handed++;
    }
}

static void poster(void *arg)
{
    (void) arg;
    sei();
    for (uint8_t n = 0; n <= REPEAT; n++) {
        MARK_UP(PORTA, 2);
        post(); /* the taker runs now, lowers the pin and waits again */
        if (handed != n + 1u) failures++;
    }
    port_halt(failures ? 1 : 0);
}

static void create(uint8_t i, void (*entry)(void *), int8_t prio)
{
    fthread_t *t = &threads[i];
    port_context_init(&t->ctx, stacks[i], STACK, entry, (void *) (uintptr_t) i);
    t->prio = prio;
    push_last(t);
}

int main(void)
{
    DDRA = 0xFF; /* markers */
    PORTA = 0;
    boot.prio = 0;
    current = &boot;
    cli();
    create(0, yielder, 1);
    create(1, yielder, 1);
    run_best(&boot); /* back when both yielders are done */
    create(0, taker, 2);
    create(1, poster, 1);
    run_best(&boot); /* the poster halts the core */
    port_halt(1);
    return 1;
}
