/* SPDX-License-Identifier: MIT */
/*
 * The floor of a timer expiry on the ATmega128: what a tickless timer list
 * and the dispatch rules need from a compare match to the first
 * instruction of the handler of the task whose timer expired, written
 * straight in one place with no kernel around it and measured as
 * bench_avr.c measures Motet's "timer expiry to handler": a periodic
 * 1000-tick timer (Timer1 at clk/256) whose compare matches toggle an
 * output pin, PA7 raised first thing in the handler, the core idle in
 * between; the same compiler and flags. Timer1's compare B stands in for
 * the port's compare A, whose vector the port library (linked for
 * port_halt()) defines: the same counter, match and interrupt entry.
 *
 * What it keeps, and why:
 *   - the compare interrupt calls the handler at its exit, so it saves the
 *     registers a call may clobber, unless it came at the idle loop's
 *     SLEEP, where nothing lives in them: the port's own entry
 *     (PORT_AVR_ENTRY_EXIT, avr.h) and idle loop (port_sleep()), as
 *     Motet's compare interrupt has them;
 *   - the counter is read once for the pass, and its top byte compared
 *     with the last read's: kernel time is the 16-bit counter extended to
 *     32 bits, and the compare interrupt is the read that sees each wrap;
 *   - timers are a delta list on the counter: the head fires `delta` ticks
 *     after the list's base; an expiry pops the head, moves the base to
 *     its deadline (a periodic timer keeps its phase however late the
 *     interrupt ran) and links a periodic timer again a period later;
 *   - the compare is armed for the new head, and the counter read again
 *     after arming: a deadline that passed meanwhile would never interrupt;
 *   - the expiry's message waits for the interrupt's exit (rule 3) in a
 *     slot, after the test that its task's gate is above the interrupted
 *     code and everything queued and that the slot is free;
 *   - the exit pushes the task's frame with interrupts off, turns them on
 *     (the handler runs outside the interrupt) and calls the handler with
 *     state, port, payload and length; after it, the frame is popped and
 *     the queue's top level compared with the priority restored (rule 5).
 * Nothing else: no kernel timers, long waits or retired blocks, no event
 * log, statistics, thread or migration state, no error paths (a message
 * that could not wait in the slot halts the image: this run has none).
 *
 *   PA7 timer task  raised first thing in the handler
 *   PB6 OC1B        toggled by Timer1 itself at every compare match
 *   PC7 done        raised when the measurements are over
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <stdbool.h>
#include <stdint.h>

#include "avr.h"
#include "floor_dispatch.h"

#define REPEAT 16u
#define PERIOD 1000u /* ticks, as bench_avr.c's TIMER_PERIOD */

#define MARK_UP(port, bit)                                                                         \
    __asm__ volatile("sbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")
#define MARK_DOWN(port, bit)                                                                       \
    __asm__ volatile("cbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")

typedef struct floor_timer {
    struct floor_timer *next;
    uint16_t delta;  /* ticks after the previous entry (head: after list_base) */
    uint16_t period; /* 0: one-shot */
    floor_task_t *task;
    uint8_t port;
} floor_timer_t;

static floor_timer_t *timer_head;
static uint16_t list_base;
static uint8_t last_top;
static uint16_t wraps; /* kernel time's high half */
static int8_t queue_top = PRIO_IDLE;
static struct {
    floor_task_t *task;
    uint8_t port;
    bool waiting;
} slot;

/* Queued messages would run here (rule 5); this run queues none. */
__attribute__((noinline)) static void drain(int8_t floor)
{
    (void) floor;
    port_halt(1);
}

static uint16_t counter_read(void)
{
    uint16_t now = TCNT1;
    uint8_t top = (uint8_t) (now >> 8);
    if (top < last_top) wraps++;
    last_top = top;
    return now;
}

/* Link t `rel` ticks after list_base; equal deadlines keep their order. */
static void list_insert(floor_timer_t *t, uint16_t rel)
{
    floor_timer_t **link = &timer_head;
    while (*link && rel >= (*link)->delta) {
        rel = (uint16_t) (rel - (*link)->delta);
        link = &(*link)->next;
    }
    t->delta = rel;
    t->next = *link;
    if (t->next) t->next->delta = (uint16_t) (t->next->delta - rel);
    *link = t;
}

/* The expiry's message, left for the exit; irq off. */
static void post(floor_timer_t *t)
{
    floor_task_t *task = t->task;
    if (task->gate > running_prio && task->gate > queue_top && !slot.waiting) {
        slot.task = task;
        slot.port = t->port;
        slot.waiting = true;
        return;
    }
    port_halt(1); /* it would queue: not measured here */
}

/* The interrupt's body and exit, entered through the port's entry. */
__attribute__((used, noinline, noclone)) static void floor_compare(void)
{
    port_avr_woken = 1; /* the idle loop looks again: done? */
    uint16_t now = counter_read();
    while (timer_head) {
        floor_timer_t *t = timer_head;
        uint16_t elapsed = (uint16_t) (now - list_base);
        if (elapsed >= t->delta) {
            timer_head = t->next;
            list_base = (uint16_t) (list_base + t->delta);
            post(t);
            if (t->period) list_insert(t, t->period);
            continue;
        }
        uint16_t wait = (uint16_t) (t->delta - elapsed);
        OCR1B = (uint16_t) (now + wait - 1u);
        TIFR = _BV(OCF1B);
        TIMSK |= _BV(OCIE1B);
        if ((uint16_t) (TCNT1 - now) < wait) break;
        now = counter_read();
    }
    if (!timer_head) TIMSK &= (uint8_t) ~_BV(OCIE1B);
    if (!slot.waiting) return;
    slot.waiting = false;
    floor_task_t *t = slot.task;
    push_frame(t, 0);
    sei();
    t->handler(t->state, slot.port, 0, 0);
    cli();
    current = t->below;
    running_prio = t->below_prio;
    t->gate = t->prio;
    if (queue_top > running_prio) drain(running_prio);
}

ISR(TIMER1_COMPB_vect, ISR_NAKED)
{
    __asm__ volatile(PORT_AVR_ENTRY_EXIT("floor_compare"));
}

static volatile uint8_t runs;

static uint8_t timer_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != 4) return 0; /* PORT_TIMEOUT0 */
    MARK_UP(PORTA, 7);
    MARK_DOWN(PORTA, 7);
    runs++;
    return 0;
}

static floor_task_t idle = {.below_prio = PRIO_IDLE, .gate = GATE_SHUT, .prio = PRIO_IDLE};
static floor_task_t timer_owner = {.handler = timer_task, .gate = 3, .prio = 3, .pid = 0x26};
static floor_timer_t timer = {.period = PERIOD, .task = &timer_owner, .port = 4};

int main(void)
{
    DDRA = 0xFF;
    PORTA = 0;
    DDRC = 0xFF;
    PORTC = 0;
    DDRB |= _BV(6);
    TCCR1A = _BV(COM1B0); /* OC1B toggles at every compare match */
    TCCR1B = _BV(CS12);   /* clk/256, as the port's counter */
    current = &idle;
    running_prio = PRIO_IDLE;
    cli();
    list_base = counter_read();
    list_insert(&timer, PERIOD);
    OCR1B = (uint16_t) (list_base + PERIOD - 1u);
    TIFR = _BV(OCF1B);
    TIMSK |= _BV(OCIE1B);
    while (runs < REPEAT + 1) port_sleep(PORT_SLEEP_IDLE);
    TIMSK &= (uint8_t) ~_BV(OCIE1B);
    MARK_UP(PORTC, 7);
    port_halt(0);
    return 1;
}
