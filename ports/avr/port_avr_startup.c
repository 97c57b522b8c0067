/* SPDX-License-Identifier: MIT */
/*
 * AVR port: the start-up code that runs before main(), and the stack's
 * paint that it lays and port_halt() reads. The .init sections used here
 * run inline in avr-libc's start-up sequence:
 *
 *   .init3  with PORT_AVR_XMEM: enable external SRAM (MCUCR.SRE) before
 *           .data and .bss, which may lie there, are initialised;
 *   .init8  paint the free RAM between the static data and the stack.
 *
 * A file of its own: avr-gcc 5.4 cannot size a naked function's frame
 * (-fstack-usage fails on it under -Werror), so this is the one port file
 * built without -fstack-usage (motet_avr_port_frames(), port.cmake). The
 * naked functions are never called; the paint's two readers are leaves.
 */
#include <avr/io.h>

#include "avr.h"

#ifndef PORT_AVR_XMEM
#define PORT_AVR_XMEM 0
#endif

#define STACK_PAINT 0xA5u

extern uint8_t __heap_start; /* end of .data, .bss and .noinit (linker) */
extern uint8_t __stack;      /* top of the stack (avr-libc, linker) */

/* Naked .init code runs inline in the start-up sequence: no prologue, no
 * return; r1 is already zero and SP is set. */
__attribute__((naked, used, section(".init3"))) static void enable_xmem(void)
{
    if (PORT_AVR_XMEM) MCUCR |= _BV(SRE); /* 60 KB at 0x1100, no wait states */
}

__attribute__((naked, used, section(".init8"))) static void paint_stack(void)
{
    /* Below SP nothing is live yet; main() has not been called. */
    uint8_t *p = &__heap_start;
    uint8_t *sp = (uint8_t *) SP;
    while (p < sp) *p++ = STACK_PAINT;
}

uint16_t port_avr_stack_size(void)
{
    return (uint16_t) (&__stack - &__heap_start + 1);
}

/* Two bytes a step, then the last one: every halt scans the unused stack
 * (a few KB), a benchmark's halt too, whose cycles it counts. */
uint16_t port_avr_stack_used(void)
{
    const uint8_t *p = &__heap_start;
    const uint8_t *end = &__stack + 1;
    const uint8_t *pairs_end = end - ((uint16_t) (end - p) & 1u);
    while (p != pairs_end && p[0] == STACK_PAINT && p[1] == STACK_PAINT) p += 2;
    while (p != end && *p == STACK_PAINT) p++;
    return (uint16_t) (end - p);
}
