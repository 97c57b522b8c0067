/* SPDX-License-Identifier: MIT */
/*
 * The tree-position energy benchmark (MANTIS kernel paper, section 3) on
 * the ATmega128, run by tools/motetlib/bench_energy.py under motet-simavr.
 *
 * A node at tree position n runs two jobs:
 *   sensing  ENERGY_LS_CYCLES of work every 1/f_s (a periodic kernel timer,
 *            ENERGY_PERIOD_TICKS long);
 *   packet   ENERGY_LP_CYCLES of work per packet; packets are low pulses on
 *            INT0 that the harness injects at Poisson times of rate
 *            (2^n - 1) f_s, and the interrupt posts one message per packet.
 * Packets outrank sensing (the paper gives forwarding the higher priority);
 * ENERGY_ONE_LEVEL = 1 puts both threads on one level instead, for a policy
 * that orders them itself (event boosting).
 *
 * ENERGY_THREADS = 0: both jobs are Motet message tasks; the packet post
 * preempts a running sensing handler at interrupt exit (stack preemption,
 * nested on the one stack). ENERGY_THREADS = 1: both jobs are threads bound
 * to the same pids, under the kernel's policy (MOTET_THREAD_POLICY); the
 * messages go to their mailboxes.
 *
 * What the harness measures: PB2 toggles at the entry of every INT0
 * interrupt and PB0 at the end of every packet job; each packet job end,
 * paired in order with the pulse whose interrupt was taken, gives E_t. (A
 * pulse that comes while the previous edge still waits for its interrupt,
 * interrupts being off, is one edge to the chip: that packet is lost, and
 * pairing ends with pulses would shift every later latency by one packet.)
 * PB1 toggles at the end of every sensing job; the cycles the core sleeps
 * give I_t. A
 * pulse on INT1 ends the experiment: the module halts with status 0, or 2
 * if a packet post found the message pool full (a lost packet would break
 * the pairing of arrivals and ends).
 */
#include <avr/io.h>

#include "avr.h"
#include "energy_work.h"
#include "motet/motet.h"
#if ENERGY_THREADS
#include "motet/thread.h"
#endif

#ifndef ENERGY_LS_CYCLES
#define ENERGY_LS_CYCLES 4000UL
#endif
#define ENERGY_LP_CYCLES 4000UL
/* 1/f_s in kernel ticks: one second. */
#define ENERGY_PERIOD_TICKS ((uint32_t) PORT_TICKS_PER_SECOND)

#ifndef ENERGY_ONE_LEVEL
#define ENERGY_ONE_LEVEL 0
#endif

enum { PID_SENSE = 0x20, PID_PACKET = 0x21 };
enum { PRIO_SENSE = 2, PRIO_PACKET = ENERGY_ONE_LEVEL ? PRIO_SENSE : 4 };

static volatile uint8_t lost;

/* Flip one marker pin with interrupts held off: the packet job preempts
 * the sensing job, and a preemption between the read and the write of an
 * open PORTB ^= would let the sensing job write back a stale PB0, an extra
 * edge that shifts every later packet's pairing with its arrival. */
static void toggle_marker(uint8_t pin)
{
    uint8_t sreg = SREG;
    cli();
    PORTB ^= pin;
    SREG = sreg;
}

static void sense_job(void)
{
    energy_work(ENERGY_LS_CYCLES);
    toggle_marker(_BV(1));
}

static void packet_job(void)
{
    energy_work(ENERGY_LP_CYCLES);
    toggle_marker(_BV(0));
}

PORT_AVR_ISR(INT0_vect)
{
    PORTB ^= _BV(2); /* this edge was taken: a packet the node really received */
    if (sched_post_isr(PID_PACKET, PORT_0, NULL, 0, 0) != MT_OK) lost = 1;
}

/* The end of the experiment: halt where we are; the harness has the rest. */
ISR(INT1_vect)
{
    port_halt(lost ? 2 : 0);
}

#if !ENERGY_THREADS

static mt_err_t sense_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) return timer_start(0, ENERGY_PERIOD_TICKS, true);
    if (port == PORT_TIMEOUT0) sense_job();
    return MT_OK;
}

static mt_err_t packet_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) packet_job();
    return MT_OK;
}

static void start_jobs(void)
{
    static const task_spec_t specs[] = {
        {.pid = PID_SENSE, .prio = PRIO_SENSE, .handler = sense_handler},
        {.pid = PID_PACKET, .prio = PRIO_PACKET, .handler = packet_handler},
    };
    for (uint8_t i = 0; i < 2; i++) {
        if (sched_task_create(&specs[i]) != MT_OK ||
            sched_task_init(specs[i].pid, NULL, 0) != MT_OK)
            port_halt(1);
    }
}

#else /* ENERGY_THREADS */

/* Both jobs are plain loops, so their frames are small and known; the
 * analyser is not run here, so each stack is the guarded minimum. */
static uint8_t sense_stack[THREAD_STACK_BYTES(0)];
static uint8_t packet_stack[THREAD_STACK_BYTES(0)];

static void sense_thread(void *arg)
{
    (void) arg;
    if (timer_start(0, ENERGY_PERIOD_TICKS, true) != MT_OK) port_halt(1);
    for (;;) {
        msg_t *m = thread_receive_ev(THREAD_EV_TIMER);
        if (m && m->port == PORT_TIMEOUT0) sense_job();
    }
}

static void packet_thread(void *arg)
{
    (void) arg;
    for (;;) {
        msg_t *m = thread_receive_ev(THREAD_EV_RADIO);
        if (m && m->port == PORT_0) packet_job();
    }
}

static void start_jobs(void)
{
    thread_spec_t sense = {.entry = sense_thread,
                           .stack = sense_stack,
                           .stack_size = sizeof sense_stack,
                           .prio = PRIO_SENSE,
                           .pid = PID_SENSE};
    thread_spec_t packet = {.entry = packet_thread,
                            .stack = packet_stack,
                            .stack_size = sizeof packet_stack,
                            .prio = PRIO_PACKET,
                            .pid = PID_PACKET};
    if (thread_create(&packet, NULL) != MT_OK || thread_create(&sense, NULL) != MT_OK) port_halt(1);
}

#endif /* ENERGY_THREADS */

int main(void)
{
    motet_boot();
    DDRB |= _BV(0) | _BV(1) | _BV(2);
    /* INT0 (PD0) packets and INT1 (PD1) end: inputs, pulled up, falling edge
     * (edge sense on INT3:0 also wakes the core from power-save). */
    DDRD &= (uint8_t) ~(_BV(0) | _BV(1));
    PORTD |= _BV(0) | _BV(1);
    EIMSK &= (uint8_t) ~(_BV(INT0) | _BV(INT1));
    EICRA = (uint8_t) ((EICRA & ~(_BV(ISC01) | _BV(ISC00) | _BV(ISC11) | _BV(ISC10))) | _BV(ISC01) |
                       _BV(ISC11));
    EIFR = _BV(INTF0) | _BV(INTF1);
    EIMSK |= _BV(INT0) | _BV(INT1);
    start_jobs();
    sched_run();
    return 1;
}
