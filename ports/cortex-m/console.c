/* SPDX-License-Identifier: MIT */
/*
 * The console: UART0 of the mps2-an385, transmit only, polled. QEMU hands
 * every byte to the chardev at once (-serial stdio), so the wait for a free
 * transmit buffer is there for real hardware.
 */
#include <stddef.h>

#include "motet/port.h"
#include "mps2.h"
#include "port_cm_internal.h"

void cm_console_init(void)
{
    CM_UART0->bauddiv = 16u; /* the smallest divider QEMU accepts */
    CM_UART0->ctrl = UART_CTRL_TXEN;
}

static void put_byte(char c)
{
    while (CM_UART0->state & UART_STATE_TXFULL) {
    }
    CM_UART0->data = (uint8_t) c;
}

/* Bytes go out as they are: the runner reads a pipe, not a terminal. */
void port_console_write(const char *text, size_t n)
{
    while (n--) put_byte(*text++);
}

void cm_console_puts(const char *s)
{
    while (*s) put_byte(*s++);
}

void cm_console_putu(uint32_t v)
{
    char buf[11];
    char *p = buf + sizeof buf;
    *--p = '\0';
    do {
        *--p = (char) ('0' + v % 10u);
        v /= 10u;
    } while (v);
    cm_console_puts(p);
}

void cm_console_puthex(uint32_t v)
{
    char buf[11] = "0x";
    for (int i = 0; i < 8; i++) buf[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15u];
    buf[10] = '\0';
    cm_console_puts(buf);
}
