/* SPDX-License-Identifier: MIT */
/*
 * AVR port: the console on USART0 (TXD0 = PE1), 8N1, polled.
 *
 * 38400 baud by default (PORT_AVR_BAUD) in double-speed mode: UBRR0 = 25 at
 * 8 MHz and 12 at 4 MHz, both 0.16 % fast, well inside a receiver's margin.
 */
#include <avr/pgmspace.h>

#include "avr.h"
#include "port_avr_internal.h"

#ifndef PORT_AVR_BAUD
#define PORT_AVR_BAUD 38400ul
#endif
#define UBRR_VALUE ((F_CPU + 4ul * PORT_AVR_BAUD) / (8ul * PORT_AVR_BAUD) - 1ul)

static bool sent_any; /* TXC0 only ever sets after a byte was sent */

void port_avr_console_init(void)
{
    /* Already on (a second boot, as each unit test does): leave it as it is
     * rather than disturb a byte still shifting out. */
    if (UCSR0B & _BV(TXEN0)) return;
    UBRR0H = (uint8_t) (UBRR_VALUE >> 8);
    UBRR0L = (uint8_t) UBRR_VALUE;
    UCSR0A = _BV(U2X0) | _BV(TXC0); /* writing TXC0 clears it */
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(TXEN0);
    sent_any = false;
}

static void put_byte(uint8_t c)
{
    while (!(UCSR0A & _BV(UDRE0))) {
    }
    /* Clear TXC0 with the write, so that flush waits for this byte. A plain
     * store, not a read-modify-write: that would write back UDRE0 as 1,
     * which the chip ignores but simavr 1.6 takes as clearing it. */
    UCSR0A = _BV(U2X0) | _BV(TXC0);
    UDR0 = c;
}

void port_console_write(const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++) put_byte((uint8_t) text[i]);
    if (n) sent_any = true;
}

void port_avr_console_write_P(const char *text)
{
    for (char c; (c = (char) pgm_read_byte(text)) != '\0'; text++) put_byte((uint8_t) c);
    sent_any = true;
}

void port_avr_console_flush(void)
{
    if (!sent_any) return;
    while (!(UCSR0A & _BV(TXC0))) {
    }
}
