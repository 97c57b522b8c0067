/* SPDX-License-Identifier: MIT */
/*
 * The no-OS floor of the tree-position energy benchmark: energy.c's
 * workload on the bare ATmega128, plain avr-libc, no Motet. What a node
 * without any operating system still loses in idle time per packet bounds
 * what any kernel can reach (bench_energy.py shows it as "no OS (floor)").
 *
 * The same jobs, pins and pulses as energy.c:
 *   sensing  ENERGY_LS_CYCLES of work once a second, due by a Timer1
 *            compare in CTC mode (F_CPU / 256 / 1 Hz: 15,625 counts at
 *            4 MHz, 31,250 at 8 MHz, both exact and within 16 bits);
 *   packet   ENERGY_LP_CYCLES of work per falling edge on INT0 (PD0).
 * PB2 toggles at the entry of every INT0 interrupt, PB0 at the end of every
 * packet job, PB1 at the end of every sensing job; a falling edge on INT1
 * (PD1) ends the run with the harness's halt convention
 * (docs/simavr-harness.md): interrupts off, the "MT" mailbox in r21:r20,
 * the status in r25:r24, then sleep.
 *
 * Design. Packets outrank sensing, and a 100 ms sensing job must not hold a
 * 1 ms packet job back; without a scheduler the only preemption there is is
 * an interrupt. Most packets find the core asleep, though, and a job run
 * from an interrupt makes the compiler save and restore every register a
 * C call may clobber (17 pushes and pops, about 70 cycles per packet).
 * So INT0 does the least: it toggles PB2 and counts the packet. The main
 * loop serves the count in arrival order, then a due sensing job, then
 * sleeps in idle mode: it checks with interrupts off and sleeps in the one
 * instruction after SEI, which runs before any interrupt (no lost wake-up).
 * Only a packet that comes while the sensing job runs needs preemption:
 * INT0 then raises INT4 in software (PE4 is an output and INT4 fires on
 * any change of it, the ATmega128's documented software interrupt), and
 * INT4 serves the count with interrupts on, above the sensing job. Packets
 * that come meanwhile only raise the count, so they are served in order
 * and none is lost to a latched edge. Timer1 only marks sensing due. This
 * is about the least any kernel can pay per packet: an interrupt that
 * notes the event, and a dispatch of the job from the idle loop.
 *
 * A count that would overflow (more than 255 packets waiting) is not
 * taken: the run then halts with status 2 at its end, as energy.c does
 * when its message pool is full.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#include "energy_work.h"

#if defined(__has_include)
#if __has_include(<avr/avr_mcu_section.h>)
/* simavr reads the MCU and its clock from this section of the image. */
#include <avr/avr_mcu_section.h>
AVR_MCU(F_CPU, "atmega128");
#endif
#endif

#ifndef ENERGY_LS_CYCLES
#define ENERGY_LS_CYCLES 4000UL
#endif
#define ENERGY_LP_CYCLES 4000UL

#define SENSE_TIMER_PRESCALE 256UL
#define SENSE_TIMER_COUNTS   (F_CPU / SENSE_TIMER_PRESCALE) /* 1/f_s = 1 s */
#if SENSE_TIMER_COUNTS > 65536UL || SENSE_TIMER_COUNTS * SENSE_TIMER_PRESCALE != F_CPU
#error "F_CPU must be a multiple of 256 Hz below 16.8 MHz for a 1 Hz Timer1 period"
#endif

/* The harness's halt mailbox (ports/avr/port_avr_boot.c). */
#define HALT_MAGIC        0x4D54u
#define HALT_OK           0
#define HALT_PACKET_COUNT 2 /* more packets waiting than the counter holds */

/* Packets received and not yet served, the one in service included. */
static volatile uint8_t packets_pending;
static volatile uint8_t packet_lost;
static volatile uint8_t sense_due;
/* The main loop is in the sensing job: a packet must preempt it. */
static volatile uint8_t sensing;

/* Stop here with `status` in the mailbox; the stack mark is not measured. */
static void __attribute__((noreturn)) halt(uint16_t status)
{
    cli();
    set_sleep_mode(SLEEP_MODE_PWR_DOWN);
    sleep_enable();
    register uint16_t st __asm__("r24") = status;
    register uint16_t used __asm__("r22") = 0;
    register uint16_t magic __asm__("r20") = HALT_MAGIC;
    for (;;) __asm__ volatile("sleep" ::"r"(st), "r"(used), "r"(magic));
}

/* Inline: a call and return would cost every packet 8 cycles more. */
static inline __attribute__((always_inline)) void packet_job(void)
{
    sei();
    energy_work(ENERGY_LP_CYCLES);
    /* Off again: INT0 writes PORTB and the count. */
    cli();
    PORTB ^= _BV(0);
}

ISR(INT0_vect)
{
    PORTB ^= _BV(2); /* this edge was taken: a packet the node really received */
    uint8_t pending = packets_pending;
    if (pending == UINT8_MAX) {
        packet_lost = 1;
        return;
    }
    packets_pending = ++pending;
    if (pending == 1 && sensing) PORTE ^= _BV(4); /* INT4: serve it above sensing */
}

/* Raised by INT0 only: serves every packet waiting, above the sensing job. */
ISR(INT4_vect)
{
    do packet_job();
    while (--packets_pending != 0);
}

ISR(TIMER1_COMPA_vect)
{
    sense_due = 1;
}

ISR(INT1_vect)
{
    halt(packet_lost ? HALT_PACKET_COUNT : HALT_OK);
}

static void start_pins_and_timer(void)
{
    DDRB |= _BV(0) | _BV(1) | _BV(2);
    /* INT0 (PD0) packets and INT1 (PD1) end: inputs, pulled up, falling
     * edge, as energy.c sets them. */
    DDRD &= (uint8_t) ~(_BV(0) | _BV(1));
    PORTD |= _BV(0) | _BV(1);
    EICRA = (uint8_t) ((EICRA & ~(_BV(ISC01) | _BV(ISC00) | _BV(ISC11) | _BV(ISC10))) | _BV(ISC01) |
                       _BV(ISC11));
    /* INT4 (PE4), an output: any change the firmware makes raises it. The
     * sense first: PE4 driven low while INT4 was still in the reset's
     * low-level mode left INT4 raised in simavr after the switch, a storm
     * of nested INT4s from boot on. */
    EICRB = (uint8_t) ((EICRB & ~(_BV(ISC41) | _BV(ISC40))) | _BV(ISC40));
    DDRE |= _BV(4);
    EIFR = _BV(INTF0) | _BV(INTF1) | _BV(INTF4);
    EIMSK |= _BV(INT0) | _BV(INT1) | _BV(INT4);
    /* Timer1 CTC on OCR1A, clock / 256: a compare every second. */
    OCR1A = (uint16_t) (SENSE_TIMER_COUNTS - 1u);
    TCCR1A = 0;
    TCCR1B = _BV(WGM12) | _BV(CS12);
    TIFR = _BV(OCF1A);
    TIMSK |= _BV(OCIE1A);
}

int main(void)
{
    start_pins_and_timer();
    set_sleep_mode(SLEEP_MODE_IDLE);
    sleep_enable();
    for (;;) {
        cli();
        if (packets_pending) {
            packet_job();
            packets_pending--;
        } else if (sense_due) {
            sense_due = 0;
            sensing = 1;
            sei();
            energy_work(ENERGY_LS_CYCLES);
            cli(); /* PB1 shares PORTB with the packet jobs */
            sensing = 0;
            PORTB ^= _BV(1);
        } else {
            sei();
            sleep_cpu();
        }
    }
}
