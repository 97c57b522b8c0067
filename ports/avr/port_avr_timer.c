/* SPDX-License-Identifier: MIT */
/*
 * AVR port: the free-running counter, the compare, the cycle counter.
 *
 * Counter: Timer/Counter1 in normal mode (counts 0..0xFFFF and wraps), from
 * the system clock through the /256 prescaler (port_config.h). Its overflow
 * interrupt stays off: the kernel extends the count itself (timer.c).
 *
 * Compare: OCR1A, armed inline (port_compare_set() in port_config.h). The
 * hardware sets OCF1A at the timer clock after TCNT1 equals OCR1A, i.e. as
 * TCNT1 steps from OCR1A to OCR1A + 1; so the compare for `at` is OCR1A =
 * at - 1, and the interrupt comes as the counter reaches `at`, neither a
 * tick early nor late.
 *
 * Cycle counter: Timer/Counter3 at the full clock, started by the first
 * call; 32-bit by software extension on each read, so it stays exact as
 * long as it is read at least once every 65536 cycles (8 ms at 8 MHz). It
 * takes no interrupt, which would be a periodic tick.
 */
#include "avr.h"
#include "motet/timer.h"
#include "port_avr_internal.h"

uint16_t port_avr_counter_preset;

static uint16_t cycles_last;
static uint32_t cycles_total;

void port_avr_timer_init(void)
{
    TCCR1B = 0;
    TCCR1A = 0;
    TCCR1C = 0;
    TIMSK &= (uint8_t) ~(_BV(TICIE1) | _BV(OCIE1A) | _BV(OCIE1B) | _BV(TOIE1));
    ETIMSK &= (uint8_t) ~_BV(OCIE1C);
    TCNT1 = port_avr_counter_preset;
    TIFR = _BV(ICF1) | _BV(OCF1A) | _BV(OCF1B) | _BV(TOV1); /* flags clear by writing 1 */
    ETIFR = _BV(OCF1C);
    if (!PORT_AVR_TEST_CLOCK) TCCR1B = PORT_AVR_TIMER1_CS;
}

void port_compare_disable(void)
{
    TIMSK &= (uint8_t) ~_BV(OCIE1A);
    TIFR = _BV(OCF1A);
}

PORT_AVR_ISR(TIMER1_COMPA_vect)
{
    timer_isr_compare();
}

uint32_t port_cycles(void)
{
    uint8_t sreg = SREG;
    cli();
    if ((TCCR3B & 0x07u) == 0) {
        TCCR3A = 0;
        TCNT3 = 0;
        TCCR3B = _BV(CS30); /* clk/1 */
        cycles_last = 0;
    }
    uint16_t now = TCNT3;
    cycles_total += (uint16_t) (now - cycles_last);
    cycles_last = now;
    uint32_t total = cycles_total;
    SREG = sreg;
    return total;
}
