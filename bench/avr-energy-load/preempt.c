/* SPDX-License-Identifier: MIT */
/*
 * The high-load preemption benchmark (value-of-preemption paper, section
 * 5.4) on the ATmega128, run by tools/motetlib/bench_energy_load.py under
 * motet-simavr.
 *
 * Four neighbours send packets: each is a Poisson stream of low pulses on
 * its own external interrupt line (INT0..INT3, injected by the harness),
 * and each line posts to its own packet job (PRELOAD_LP_CYCLES of work per
 * packet). Beside them one long sensing job (PRELOAD_LS_CYCLES of work)
 * runs every PRELOAD_PERIOD_TICKS from a periodic kernel timer.
 *
 * PRELOAD_THREADS = 0: the five jobs are Motet message tasks (stack
 * preemption, no context switch); 1: they are threads bound to the same
 * pids, under the kernel's policy. PRELOAD_EQUAL = 1 puts every job on one
 * priority level (the paper's round-robin setting), 0 ranks packets above
 * sensing. PRELOAD_RR = 1 makes the threads of class RR.
 *
 * Counting, from the application side (the kernel only counts all
 * switches, thread_switch_count()): a switch is voluntary when the thread
 * it leaves is blocked in its receive, so each thread compares the switch
 * count before and after every receive: if it moved, this thread left the
 * CPU there, voluntarily, once. Every other switch is involuntary. As a
 * cross-check the jobs count preemptions directly: a job that starts while
 * another job is part-way through its work has preempted it.
 *
 * A pulse on INT6, before the first packet, marks the start: the switches
 * of boot (into each new thread) are left out. PB0 toggles at the end of
 * each packet job, PB1 at the end of each sensing job. A pulse on INT7
 * ends the run: the firmware prints "preload total vol started-over lost"
 * counted since the mark on the console and halts (status 2 if a post
 * found the pool full).
 */
#include <avr/io.h>
#include <stdio.h>
#include <util/delay_basic.h>

#include "avr.h"
#include "motet/motet.h"
#if PRELOAD_THREADS
#include "motet/thread.h"
#endif

#ifndef PRELOAD_LS_CYCLES
#define PRELOAD_LS_CYCLES 3000000UL
#endif
#ifndef PRELOAD_LP_CYCLES
#define PRELOAD_LP_CYCLES 4000UL
#endif
#ifndef PRELOAD_EQUAL
#define PRELOAD_EQUAL 0
#endif
#ifndef PRELOAD_RR
#define PRELOAD_RR 0
#endif
#define PRELOAD_PERIOD_TICKS ((uint32_t) PORT_TICKS_PER_SECOND)
#define NEIGHBOURS           4u

enum { PID_SENSE = 0x20, PID_PACKET0 = 0x21 };
enum { PRIO_SENSE = 2, PRIO_PACKET = PRELOAD_EQUAL ? 2 : 4 };

static volatile uint8_t lost;
static volatile uint8_t in_work;    /* jobs part-way through their work */
static volatile uint32_t preempted; /* job starts while another was working */
static volatile uint32_t voluntary; /* receives that switched their thread out */
static uint32_t mark_total, mark_voluntary, mark_preempted;

static uint32_t switches(void)
{
#if PRELOAD_THREADS
    return thread_switch_count();
#else
    return 0;
#endif
}

/* Busy work of `cycles` (a multiple of 4), interruptible everywhere. */
static void work(uint32_t cycles)
{
    while (cycles >= 4UL * 60000UL) {
        _delay_loop_2(60000u);
        cycles -= 4UL * 60000UL;
    }
    if (cycles >= 4u) _delay_loop_2((uint16_t) (cycles / 4u));
}

static void job(uint32_t cycles, uint8_t pin)
{
    uint8_t sreg = SREG;
    cli();
    if (in_work) preempted++;
    in_work++;
    SREG = sreg;
    work(cycles);
    cli();
    in_work--;
    PORTB ^= pin;
    SREG = sreg;
}

static void post(uint8_t i)
{
    if (sched_post_isr((mt_pid_t) (PID_PACKET0 + i), PORT_0, NULL, 0, 0) != MT_OK) lost = 1;
}

PORT_AVR_ISR(INT0_vect)
{
    post(0);
}
PORT_AVR_ISR(INT1_vect)
{
    post(1);
}
PORT_AVR_ISR(INT2_vect)
{
    post(2);
}
PORT_AVR_ISR(INT3_vect)
{
    post(3);
}

/* The start of the measurement. */
ISR(INT6_vect)
{
    mark_total = switches();
    mark_voluntary = voluntary;
    mark_preempted = preempted;
}

/* The end of the experiment: report the counters and halt where we are. */
ISR(INT7_vect)
{
    char line[64];
    int n = snprintf(line, sizeof line, "preload %lu %lu %lu %u\n",
                     (unsigned long) (switches() - mark_total),
                     (unsigned long) (voluntary - mark_voluntary),
                     (unsigned long) (preempted - mark_preempted), (unsigned) lost);
    port_console_write(line, (size_t) n);
    port_halt(lost ? 2 : 0);
}

#if !PRELOAD_THREADS

static mt_err_t sense_handler(void *state, msg_t *msg)
{
    (void) state;
    if (msg->port == PORT_INIT) return timer_start(0, PRELOAD_PERIOD_TICKS, true);
    if (msg->port == PORT_TIMEOUT0) job(PRELOAD_LS_CYCLES, _BV(1));
    return MT_OK;
}

static mt_err_t packet_handler(void *state, msg_t *msg)
{
    (void) state;
    if (msg->port == PORT_0) job(PRELOAD_LP_CYCLES, _BV(0));
    return MT_OK;
}

static void start_jobs(void)
{
    for (uint8_t i = 0; i <= NEIGHBOURS; i++) {
        task_spec_t spec = {.pid = (mt_pid_t) (PID_SENSE + i),
                            .prio = i ? PRIO_PACKET : PRIO_SENSE,
                            .handler = i ? packet_handler : sense_handler};
        if (sched_task_create(&spec) != MT_OK || sched_task_init(spec.pid, NULL, 0) != MT_OK)
            port_halt(1);
    }
}

#else /* PRELOAD_THREADS */

static uint8_t stacks[NEIGHBOURS + 1][THREAD_STACK_BYTES(0)];

/* Receive the next message, counting a voluntary switch if this thread
 * left the CPU while it waited. */
static msg_t *receive(thread_event_t ev)
{
    uint32_t before = thread_switch_count();
    msg_t *m = thread_receive_ev(ev);
    if (thread_switch_count() != before) {
        uint8_t sreg = SREG;
        cli();
        voluntary++;
        SREG = sreg;
    }
    return m;
}

static void sense_thread(void *arg)
{
    (void) arg;
    if (timer_start(0, PRELOAD_PERIOD_TICKS, true) != MT_OK) port_halt(1);
    for (;;) {
        msg_t *m = receive(THREAD_EV_TIMER);
        if (m && m->port == PORT_TIMEOUT0) job(PRELOAD_LS_CYCLES, _BV(1));
    }
}

static void packet_thread(void *arg)
{
    (void) arg;
    for (;;) {
        msg_t *m = receive(THREAD_EV_RADIO);
        if (m && m->port == PORT_0) job(PRELOAD_LP_CYCLES, _BV(0));
    }
}

static void start_jobs(void)
{
    for (uint8_t i = 0; i <= NEIGHBOURS; i++) {
        thread_spec_t spec = {.entry = i ? packet_thread : sense_thread,
                              .stack = stacks[i],
                              .stack_size = sizeof stacks[i],
                              .prio = i ? PRIO_PACKET : PRIO_SENSE,
                              .cls = PRELOAD_RR ? THREAD_CLASS_RR : THREAD_CLASS_DEFAULT,
                              .pid = (mt_pid_t) (PID_SENSE + i)};
        if (thread_create(&spec, NULL) != MT_OK) port_halt(1);
    }
}

#endif /* PRELOAD_THREADS */

int main(void)
{
    motet_boot();
    DDRB |= _BV(0) | _BV(1);
    /* INT0..3 (PD0..3) packets, INT6 (PE6) mark, INT7 (PE7) end: inputs,
     * pulled up, falling edge. */
    DDRD &= (uint8_t) ~0x0Fu;
    PORTD |= 0x0Fu;
    DDRE &= (uint8_t) ~(_BV(6) | _BV(7));
    PORTE |= _BV(6) | _BV(7);
    EIMSK = 0;
    EICRA = _BV(ISC01) | _BV(ISC11) | _BV(ISC21) | _BV(ISC31);
    EICRB = (uint8_t) ((EICRB & ~(_BV(ISC71) | _BV(ISC70) | _BV(ISC61) | _BV(ISC60))) | _BV(ISC71) |
                       _BV(ISC61));
    EIFR = 0xFF;
    EIMSK = _BV(INT0) | _BV(INT1) | _BV(INT2) | _BV(INT3) | _BV(INT6) | _BV(INT7);
    start_jobs();
    sched_run();
    return 1;
}
