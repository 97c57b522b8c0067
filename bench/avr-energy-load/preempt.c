/* SPDX-License-Identifier: MIT */
/*
 * The high-load preemption benchmark of the value-of-preemption paper
 * (section 5.4) on the ATmega128, run by tools/motetlib/bench_energy_load.py
 * under motet-simavr.
 *
 * The paper runs four copies of the tree-position benchmark at once, one
 * per neighbour. Each copy here is what the MANTIS benchmark runs on a
 * node: a sensing job of PRELOAD_LS_CYCLES every second from a periodic
 * kernel timer, and a packet job of PRELOAD_LP_CYCLES per packet, the
 * packets being a Poisson stream of low pulses on the copy's own external
 * interrupt line (INT0..INT3, injected by the harness). So eight jobs: four
 * long sensing jobs released together every second, four streams of short
 * packet jobs.
 *
 * PRELOAD_THREADS = 0: the jobs are Motet message tasks (no context
 * switch); 1: threads bound to the same pids under the kernel's policy.
 * PRELOAD_EQUAL = 1 puts all eight on one priority level (the paper's
 * setting: MOS round robin among equals), 0 ranks packets above sensing.
 * PRELOAD_RR = 1 makes the threads of class RR.
 *
 * Eight thread stacks and the message pool (255 blocks, which the busiest
 * policies need at n = 7) do not fit beside the kernel in the 4 KB of
 * internal SRAM: the images enable the external SRAM (PORT_AVR_XMEM) and
 * keep both in its section .xmem (ports/avr/xmem.ld); the kernel stack
 * and the other static data stay inside.
 *
 * Counting is the kernel's (thread_switch_stats()). As a cross-check the
 * jobs count preemptions themselves: a job that starts while another is
 * part-way through its work has preempted it.
 *
 * A pulse on INT6, before the first packet, marks the start: the switches
 * of boot are left out. PB0 toggles at the end of each packet job, and
 * PB4 + i at the end of each of copy i's, PB1 at the end of each sensing
 * job. A pulse on INT7 ends the run: the firmware
 * prints "preload <switches> <voluntary> <involuntary> <to an equal>
 * <from the kernel stack> <jobs started over another> <lost>" counted since
 * the mark and, for the thread images, "to <packet> <sensing>": the
 * involuntary switches that gave a packet thread, or a sensing thread, the
 * CPU (thread_cuts_to()); then it halts (status 2 if a post found the pool
 * full).
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
#define PRELOAD_LS_CYCLES 300000UL
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
#define COPIES               4u

/* Copy i: sensing job PID_SENSE0 + i, packet job PID_PACKET0 + i. */
enum { PID_SENSE0 = 0x20, PID_PACKET0 = 0x28 };
enum { PRIO_SENSE = 2, PRIO_PACKET = PRELOAD_EQUAL ? 2 : 4 };

static volatile uint8_t lost;
static volatile uint8_t in_work;    /* jobs part-way through their work */
static volatile uint32_t preempted; /* job starts while another was working */
static uint32_t mark_preempted;

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

/* The pins a packet job of copy i toggles at its end: PB0 for every copy
 * (the count), PB4 + i for its own (its packets' times, line by line). */
static uint8_t packet_pins(uint8_t copy)
{
    return (uint8_t) (_BV(0) | _BV(4 + copy));
}

/* Job i of 0 .. 2 * COPIES - 1: the sensing jobs first, then the packet jobs. */
static mt_pid_t pid_of(uint8_t i)
{
    if (i < COPIES) return (mt_pid_t) (PID_SENSE0 + i);
    return (mt_pid_t) (PID_PACKET0 + (i - COPIES));
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

#if PRELOAD_THREADS

/* Thread stacks in external SRAM, section .xmem (port_config.h,
 * PORT_AVR_XMEM_SECTION), with the message pool. Interrupts land on the
 * running thread's stack and their tails nest (five sources here), deeper
 * than the port's 256-byte guarded minimum allows at the highest rates:
 * twice that, still guarded. The counters' marks follow them there: the
 * internal SRAM left for the kernel stack is the tightest resource. */
#define STACK_BYTES (2 * THREAD_STACK_BYTES(0))
static uint8_t thread_stacks[2 * COPIES][STACK_BYTES] PORT_AVR_XMEM_SECTION;

typedef struct marks {
    thread_switch_stats_t at;   /* the kernel's counts at the mark */
    thread_t *jobs[2 * COPIES]; /* the sensing threads, then the packet threads */
    uint32_t cuts_to[2];        /* to the packet threads, the sensing ones, at the mark */
} marks_t;
static marks_t marks PORT_AVR_XMEM_SECTION;
#define M (&marks)

/* The involuntary switches that gave a packet thread (from COPIES on), or
 * a sensing thread, the CPU from a thread that still had work. */
static uint32_t cuts_to(bool packets)
{
    uint32_t n = 0;
    for (uint8_t i = packets ? COPIES : 0; i < (packets ? 2 * COPIES : COPIES); i++)
        n += thread_cuts_to(M->jobs[i]);
    return n;
}

/* The start of the measurement. */
ISR(INT6_vect)
{
    thread_switch_stats(&M->at);
    mark_preempted = preempted;
    M->cuts_to[0] = cuts_to(true);
    M->cuts_to[1] = cuts_to(false);
}

/* The end of the experiment: report the counters and halt where we are. */
ISR(INT7_vect)
{
    thread_switch_stats_t now;
    thread_switch_stats(&now);
    char line[160];
    int n = snprintf(line, sizeof line, "preload %lu %lu %lu %lu %lu %lu %u to %lu %lu\n",
                     (unsigned long) (now.voluntary + now.involuntary + now.from_kernel -
                                      M->at.voluntary - M->at.involuntary - M->at.from_kernel),
                     (unsigned long) (now.voluntary - M->at.voluntary),
                     (unsigned long) (now.involuntary - M->at.involuntary),
                     (unsigned long) (now.to_equal - M->at.to_equal),
                     (unsigned long) (now.from_kernel - M->at.from_kernel),
                     (unsigned long) (preempted - mark_preempted), (unsigned) lost,
                     (unsigned long) (cuts_to(true) - M->cuts_to[0]),
                     (unsigned long) (cuts_to(false) - M->cuts_to[1]));
    port_console_write(line, (size_t) n);
    port_halt(lost ? 2 : 0);
}

static void sense_thread(void *arg)
{
    (void) arg;
    if (timer_start(0, PRELOAD_PERIOD_TICKS, true) != MT_OK) port_halt(1);
    for (;;) {
        msg_t *m = thread_receive_ev(THREAD_EV_TIMER);
        if (m && m->port == PORT_TIMEOUT0) job(PRELOAD_LS_CYCLES, _BV(1));
    }
}

static void packet_thread(void *arg)
{
    uint8_t pins = packet_pins((uint8_t) (uintptr_t) arg);
    for (;;) {
        msg_t *m = thread_receive_ev(THREAD_EV_RADIO);
        if (m && m->port == PORT_0) job(PRELOAD_LP_CYCLES, pins);
    }
}

static void start_jobs(void)
{
    for (uint8_t i = 0; i < 2 * COPIES; i++) {
        bool sensing = i < COPIES;
        thread_spec_t spec = {.entry = sensing ? sense_thread : packet_thread,
                              .arg = (void *) (uintptr_t) (i - COPIES),
                              .stack = thread_stacks[i],
                              .stack_size = STACK_BYTES,
                              .prio = sensing ? PRIO_SENSE : PRIO_PACKET,
                              .cls = PRELOAD_RR ? THREAD_CLASS_RR : THREAD_CLASS_DEFAULT,
                              .pid = pid_of(i)};
        if (thread_create(&spec, &M->jobs[i]) != MT_OK) port_halt(1);
    }
}

#else /* !PRELOAD_THREADS: message tasks, no switches to count */

ISR(INT6_vect)
{
    mark_preempted = preempted;
}

ISR(INT7_vect)
{
    char line[64];
    int n = snprintf(line, sizeof line, "preload 0 0 0 0 0 %lu %u\n",
                     (unsigned long) (preempted - mark_preempted), (unsigned) lost);
    port_console_write(line, (size_t) n);
    port_halt(lost ? 2 : 0);
}

static mt_err_t sense_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) return timer_start(0, PRELOAD_PERIOD_TICKS, true);
    if (port == PORT_TIMEOUT0) job(PRELOAD_LS_CYCLES, _BV(1));
    return MT_OK;
}

static mt_err_t packet_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0)
        job(PRELOAD_LP_CYCLES, packet_pins((uint8_t) (sched_current_pid() - PID_PACKET0)));
    return MT_OK;
}

static void start_jobs(void)
{
    for (uint8_t i = 0; i < 2 * COPIES; i++) {
        bool sensing = i < COPIES;
        task_spec_t spec = {.pid = pid_of(i),
                            .prio = sensing ? PRIO_SENSE : PRIO_PACKET,
                            .handler = sensing ? sense_handler : packet_handler};
        if (sched_task_create(&spec) != MT_OK || sched_task_init(spec.pid, NULL, 0) != MT_OK)
            port_halt(1);
    }
}

#endif /* PRELOAD_THREADS */

int main(void)
{
    motet_boot();
    DDRB |= _BV(0) | _BV(1) | _BV(4) | _BV(5) | _BV(6) | _BV(7);
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
