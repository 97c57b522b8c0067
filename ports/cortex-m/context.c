/* SPDX-License-Identifier: MIT */
/*
 * Thread contexts of the Cortex-M port (ARMv7-M, AAPCS): the three hooks of
 * port.h, and where each context's stack pointer lives.
 *
 * Two stack pointers. K, the kernel stack (boot, sched_run(), every message
 * handler), runs on MSP, and so does every exception: the processor always
 * uses MSP in handler mode. Threads run in privileged thread mode on PSP
 * (CONTROL.SPSEL = 1). While a thread runs, MSP keeps the value K had when
 * it was suspended, so an interrupt that comes then stacks its hardware
 * frame (32 bytes, 36 with the alignment word) on the thread's stack, PSP,
 * and runs its body on K's stack below K's saved registers. That is the
 * point of the choice: interrupt bodies, timer_isr_compare() and whatever
 * they post never touch a thread's small stack (FreeRTOS, QXK and the
 * ARMv7-M exception model itself do the same). The exit dispatch still runs
 * on the interrupted context's stack (irq.c): it must, since that is where
 * the interrupted frame waits and where the context is suspended if the
 * exit switches away. port_config.h counts what that costs a thread stack.
 *
 * A suspended context is {sp, control, its MPU guard}: below sp, on its own stack, the
 * callee-saved r4-r11 and the return address (lr) of its
 * port_context_switch() call, 36 bytes; control says which stack pointer
 * the context runs on. Everything else AAPCS lets a call clobber, so the
 * compiler has saved it; the Cortex-M3 has no FPU state. Switches run with
 * PRIMASK set (port.h), so nothing can take an exception between the write
 * of CONTROL and that of the new stack pointer.
 *
 * A new context pops its initial frame and "returns" into cm_thread_start
 * with r4 = entry, r5 = arg and sp at the 8-byte aligned top of its stack
 * (AAPCS at a public interface); entry never returns (the kernel's thread
 * start exits the thread).
 */
#include "motet/port.h"
#include "mps2.h"
#include "port_cm_internal.h"

#if MOTET_THREADS

void cm_thread_start(void);

_Static_assert((MPU_RBAR_VALID | PORT_CM_GUARD_REGION) == 0x17u, "the guard region in the switch");

__asm__(".syntax unified\n"
        ".thumb\n"
        ".text\n"
        ".global port_context_switch\n"
        ".type port_context_switch, %function\n"
        ".thumb_func\n"
        "port_context_switch:\n" /* r0 = from, r1 = to */
        "    push {r4-r11, lr}\n"
        "    mrs r3, control\n"
        "    str sp, [r0]\n" /* SP as a load's or store's register: Thumb-2 allows it */
        "    str r3, [r0, #4]\n"
        /* Point the guard region at the new context's stack (guard.c):
         * RBAR then RASR, adjacent, with one STM. */
        "    ldrd r2, r3, [r1, #8]\n"
        "    orr r2, r2, #0x17\n"    /* MPU_RBAR_VALID | PORT_CM_GUARD_REGION */
        "    ldr r12, =0xE000ED9C\n" /* MPU_RBAR, then MPU_RASR */
        "    stm r12, {r2, r3}\n"
        "    dsb\n"
        "    ldr r3, [r1, #4]\n"
        /* Select the new context's stack pointer, then load it: the ISB
         * makes `sp` below name the register CONTROL now selects. */
        "    msr control, r3\n"
        "    isb\n"
        "    ldr sp, [r1]\n"
        "    pop {r4-r11, pc}\n"
        ".ltorg\n"
        ".size port_context_switch, .-port_context_switch\n"
        /* The same between two threads: both run on PSP, so CONTROL stays
         * as it is and needs neither saving nor the ISB. */
        ".global port_context_switch_threads\n"
        ".type port_context_switch_threads, %function\n"
        ".thumb_func\n"
        "port_context_switch_threads:\n"
        "    push {r4-r11, lr}\n"
        "    str sp, [r0]\n"
        "    ldrd r2, r3, [r1, #8]\n"
        "    orr r2, r2, #0x17\n"
        "    ldr r12, =0xE000ED9C\n"
        "    stm r12, {r2, r3}\n"
        "    dsb\n"
        "    ldr sp, [r1]\n"
        "    pop {r4-r11, pc}\n"
        ".ltorg\n"
        ".size port_context_switch_threads, .-port_context_switch_threads\n"
        ".global cm_thread_start\n"
        ".type cm_thread_start, %function\n"
        ".thumb_func\n"
        "cm_thread_start:\n"
        "    mov r0, r5\n"
        "    blx r4\n"
        "1:  b 1b\n"
        ".size cm_thread_start, .-cm_thread_start\n");

/* Initial frame, from the saved sp up: r4 (entry), r5 (arg), r6-r11, then
 * the address pop loads into pc (cm_thread_start, Thumb bit set). */
#define FRAME_WORDS 9u
#define CONTROL_PSP 0x2u /* SPSEL = 1, nPRIV = 0: privileged thread mode on PSP */

void port_context_init(port_context_t *ctx, void *stack, size_t size, void (*entry)(void *),
                       void *arg)
{
    uintptr_t top = ((uintptr_t) stack + size) & ~(uintptr_t) 7u;
    uint32_t *sp = (uint32_t *) top - FRAME_WORDS;
    for (unsigned i = 0; i < FRAME_WORDS; i++) sp[i] = 0u;
    sp[0] = (uint32_t) (uintptr_t) entry;
    sp[1] = (uint32_t) (uintptr_t) arg;
    sp[8] = (uint32_t) (uintptr_t) cm_thread_start;
    ctx->sp = sp;
    ctx->control = CONTROL_PSP;
    cm_guard_context(ctx, stack);
}

#endif /* MOTET_THREADS */
