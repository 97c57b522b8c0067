/* SPDX-License-Identifier: MIT */
/*
 * Thread contexts of the AVR port (ATmega128, avr-gcc ABI): the two hooks
 * of port.h.
 *
 * A suspended context is its stack pointer. Below it, on its own stack,
 * lie the 18 call-saved registers (r2-r17, r28, r29) and the 2-byte return
 * address of its port_context_switch() call: 20 bytes. Everything else the
 * ABI lets a call clobber, so the compiler has saved what it needs. SREG is
 * not saved: both sides of a switch run with interrupts off (port.h), and
 * the flags are call-clobbered. r1 is zero on both sides (ABI). Parts with
 * more than 128 KB of flash (3-byte return addresses, EIND) are not
 * supported: the ATmega128 is the port's only target.
 *
 * A new context returns into port_avr_context_start, which clears r1 (a
 * fresh context has no reason to hold zero there), passes arg in r25:r24
 * and calls entry through Z; entry never returns (the kernel's thread
 * start exits the thread), so what follows the call only stops the core
 * if that contract is ever broken.
 */
#include "motet/port.h"

#if MOTET_THREADS

#if defined(__AVR_3_BYTE_PC__)
#error "port_avr_context.c: 3-byte return addresses are not supported"
#endif

void port_avr_context_start(void);

__asm__(".text\n"
        ".global port_context_switch\n"
        ".type port_context_switch, @function\n"
        "port_context_switch:\n"
        "    push r2\n    push r3\n    push r4\n    push r5\n"
        "    push r6\n    push r7\n    push r8\n    push r9\n"
        "    push r10\n   push r11\n   push r12\n   push r13\n"
        "    push r14\n   push r15\n   push r16\n   push r17\n"
        "    push r28\n   push r29\n"
        /* from (r25:r24)->sp = SP */
        "    movw r30, r24\n"
        "    in r0, __SP_L__\n"
        "    st Z, r0\n"
        "    in r0, __SP_H__\n"
        "    std Z+1, r0\n"
        /* SP = to (r23:r22)->sp; interrupts are off, so the two writes
         * need no protection */
        "    movw r30, r22\n"
        "    ld r26, Z\n"
        "    ldd r27, Z+1\n"
        "    out __SP_L__, r26\n"
        "    out __SP_H__, r27\n"
        "    pop r29\n    pop r28\n"
        "    pop r17\n    pop r16\n    pop r15\n    pop r14\n"
        "    pop r13\n    pop r12\n    pop r11\n    pop r10\n"
        "    pop r9\n     pop r8\n     pop r7\n     pop r6\n"
        "    pop r5\n     pop r4\n     pop r3\n     pop r2\n"
        "    ret\n"
        ".size port_context_switch, .-port_context_switch\n"
        ".global port_avr_context_start\n"
        ".type port_avr_context_start, @function\n"
        "port_avr_context_start:\n"
        "    clr r1\n"
        "    movw r24, r14\n" /* arg */
        "    movw r30, r16\n" /* entry */
        "    icall\n"
        "    cli\n"
        "1:  sleep\n"
        "    rjmp 1b\n"
        ".size port_avr_context_start, .-port_avr_context_start\n");

/* Frame offsets above the saved SP (pops are pre-increment): 1 r29, 2 r28,
 * 3 r17, 4 r16, 5 r15, 6 r14, 7..18 r13..r2, 19 return PC high byte,
 * 20 its low byte (the return address is stored big-endian). */
#define FRAME_BYTES 20u

void port_context_init(port_context_t *ctx, void *stack, size_t size, void (*entry)(void *),
                       void *arg)
{
    uint8_t *top = (uint8_t *) stack + size - 1u;
    uint8_t *sp = top - FRAME_BYTES;
    /* A function pointer is a word address on avr-gcc: what RET expects. */
    uint16_t start = (uint16_t) (uintptr_t) port_avr_context_start;
    uint16_t e = (uint16_t) (uintptr_t) entry;
    uint16_t a = (uint16_t) (uintptr_t) arg;
    for (uint8_t i = 1; i <= FRAME_BYTES; i++) sp[i] = 0;
    sp[3] = (uint8_t) (e >> 8); /* r17 */
    sp[4] = (uint8_t) e;        /* r16 */
    sp[5] = (uint8_t) (a >> 8); /* r15 */
    sp[6] = (uint8_t) a;        /* r14 */
    sp[19] = (uint8_t) (start >> 8);
    sp[20] = (uint8_t) start;
    ctx->sp = sp;
}

#endif /* MOTET_THREADS */
