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
 * (PD1) ends the run with the harness's halt convention (docs/simavr-
 * harness.md): interrupts off, the "MT" mailbox in r21:r20, the status in
 * r25:r24, then sleep.
 *
 * Design. Packets outrank sensing, and a 100 ms sensing job must not hold a
 * 1 ms packet job back. Without a scheduler the only preemption there is
 * is the interrupt itself, so the packet jobs run in the INT0 interrupt and
 * the sensing job in the main loop. A packet job runs with interrupts on:
 * held off for 1 ms, a second and third pulse would merge into one latched
 * edge and a packet would be lost. A nested INT0 only toggles PB2 and
 * counts the packet; the outermost one serves the count down in arrival
 * order, so E_t pairs as in energy.c. Timer1 only marks sensing due: the
 * main loop runs the job with interrupts on, and sleeps in idle mode when
 * nothing is due, checking with interrupts off and sleeping in the one
 * instruction after SEI, which runs before any interrupt (no lost wake-up).
 * This is the cost any kernel pays at least: an interrupt that saves the
 * registers a C job may clobber, and the return to sleep.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>
#include <util/delay_basic.h>

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
static volatile uint8_t sense_due;

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

/* Busy work of exactly `cycles` (a multiple of 4) in _delay_loop_2's four
 * cycles per turn, interruptible everywhere, as in energy.c. */
static void work(uint32_t cycles)
{
    while (cycles >= 4UL * 60000UL) {
        _delay_loop_2(60000u);
        cycles -= 4UL * 60000UL;
    }
    if (cycles >= 4u) _delay_loop_2((uint16_t) (cycles / 4u));
}

ISR(INT0_vect)
{
    PORTB ^= _BV(2); /* this edge was taken: a packet the node really received */
    uint8_t pending = packets_pending;
    if (pending == UINT8_MAX) halt(HALT_PACKET_COUNT);
    packets_pending = ++pending;
    if (pending > 1) return; /* an outer INT0 is serving: it serves this one too */
    do {
        sei();
        work(ENERGY_LP_CYCLES);
        /* Off again: a nested INT0 writes PORTB and the count. */
        cli();
        PORTB ^= _BV(0);
    } while (--packets_pending != 0);
}

ISR(TIMER1_COMPA_vect)
{
    sense_due = 1;
}

ISR(INT1_vect)
{
    halt(HALT_OK);
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
    EIFR = _BV(INTF0) | _BV(INTF1);
    EIMSK |= _BV(INT0) | _BV(INT1);
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
        if (sense_due) {
            sense_due = 0;
            sei();
            work(ENERGY_LS_CYCLES);
            cli(); /* PB0 shares PORTB with the packet interrupt */
            PORTB ^= _BV(1);
            continue;
        }
        sei();
        sleep_cpu();
    }
}
