/* SPDX-License-Identifier: MIT */
/*
 * Interrupts of the Cortex-M port: the table of interrupt bodies on the
 * spare lines, and the exit dispatch (rule 3, docs/architecture.md) through
 * PendSV, a thread-mode trampoline and NMI (the PRIMASK lock is inline,
 * port_config.h). cortex_m.h explains why the handlers run in thread mode
 * and not inside PendSV.
 *
 * The exit dispatch, step by step, for thread code T on either stack: K on
 * MSP, or a thread on PSP (context.c); interrupt bodies always run on MSP:
 *
 *   1. Thread code T runs; interrupt X comes. The hardware stacks frame F_T
 *      (r0-r3, r12, lr, pc, xPSR of T) and runs X's body through
 *      cm_kernel_isr(), which pends PendSV if the exit has work
 *      (sched_isr_exit_due(): something outranks T, or may take a
 *      thread T's CPU);
 *      otherwise X returns to T directly and the steps below are left out.
 *   2. When no interrupt body is left to run, PendSV (lowest priority)
 *      tail-chains with F_T still stacked. It pushes a fabricated frame F_X
 *      (pc = cm_exit_trampoline, xPSR = Thumb only) below F_T, on T's stack
 *      (EXC_RETURN bit 2 says MSP or PSP), masks interrupts (PRIMASK) and
 *      returns: the hardware unstacks F_X and enters the trampoline in
 *      thread mode, interrupts masked, its stack pointer just below F_T.
 *   3. The trampoline calls sched_isr_exit(): queued handlers that
 *      outrank the interrupted one run here with interrupts on, preemptible
 *      by any interrupt; with nothing to run, interrupts stay masked, so no
 *      second exit dispatch nests on this one unless it runs a handler of a
 *      higher level (at most one per priority level on the stack). If T is
 *      a thread, the trampoline may switch to another context instead
 *      (thread_isr_exit); it carries on from here, on T's stack, only when
 *      T is resumed, so steps 3 and 4 of different contexts never mix.
 *   4. It then pends NMI, which PRIMASK does not mask. NMI stacks the
 *      trampoline's frame, discards it (32 bytes off the stack it came
 *      from), unmasks interrupts (T ran with them on: it was interrupted)
 *      and returns through F_T: T resumes with every register and its
 *      flags as they were.
 *
 * Frame alignment: F_T starts 8-byte aligned (CCR.STKALIGN); F_X is 32
 * bytes with xPSR bit 9 clear, so the trampoline starts on the same aligned
 * stack pointer, keeps it, and NMI's frame is then exactly 32 bytes (no
 * alignment padding to account for).
 */
#include "motet/port.h"
#include "motet/sched.h"
#include "motet/thread.h"
#include "mps2.h"
#include "port_cm_internal.h"

#define PRIO_PENDSV    0xFFu /* lowest: runs only on the way back to thread mode */
#define NVIC_WORD(irq) ((irq) / 32u)
#define NVIC_BIT(irq)  (1u << ((irq) % 32u))

static port_cm_isr_fn line_isr[IRQ_COUNT];
static uint32_t line_direct[IRQ_COUNT / 32u]; /* bit set: body runs without the kernel */
static volatile uint32_t kernel_irqs;
static volatile uint32_t exit_dispatches;

/* ------------------------------------------------------------ lines */

static void check_spare(uint8_t irq)
{
    if (irq < PORT_CM_SPARE_IRQ_FIRST || irq >= PORT_CM_SPARE_IRQ_FIRST + PORT_CM_SPARE_IRQS)
        cm_fatal("not a spare interrupt line:", irq);
}

static void attach(uint8_t irq, port_cm_isr_fn isr, bool direct)
{
    check_spare(irq);
    port_irq_state_t s = port_irq_save();
    line_isr[irq] = isr;
    if (direct)
        line_direct[NVIC_WORD(irq)] |= NVIC_BIT(irq);
    else
        line_direct[NVIC_WORD(irq)] &= ~NVIC_BIT(irq);
    if (isr) {
        NVIC_IPR(irq) = PORT_CM_PRIO_LINE;
        NVIC_ISER(NVIC_WORD(irq)) = NVIC_BIT(irq);
    } else {
        NVIC_ICER(NVIC_WORD(irq)) = NVIC_BIT(irq);
    }
    port_irq_restore(s);
}

void port_cm_irq_attach(uint8_t irq, port_cm_isr_fn isr)
{
    attach(irq, isr, false);
}

void port_cm_irq_attach_direct(uint8_t irq, port_cm_isr_fn isr)
{
    attach(irq, isr, true);
}

void port_cm_irq_set_priority(uint8_t irq, uint8_t prio)
{
    check_spare(irq);
    /* A body must be more urgent than PendSV, or PendSV could find a handler
     * below it instead of thread code. */
    if (prio > PORT_CM_PRIO_LOWEST) cm_fatal("line priority below the allowed range:", prio);
    NVIC_IPR(irq) = prio;
}

void port_cm_irq_raise(uint8_t irq)
{
    check_spare(irq);
    NVIC_ISPR(NVIC_WORD(irq)) = NVIC_BIT(irq);
    /* Make the pending state visible, then let it in (if enabled) before
     * the caller's next instruction. */
    __asm volatile("dsb\n"
                   "isb" ::
                       : "memory");
}

/* Every line without a device of its own enters here. */
void cm_line_isr(void)
{
    uint32_t irq = cm_ipsr() - 16u;
    port_cm_isr_fn body = irq < IRQ_COUNT ? line_isr[irq] : NULL;
    if (!body) cm_fatal("interrupt on a line with no body:", irq);
    if (line_direct[NVIC_WORD(irq)] & NVIC_BIT(irq))
        body();
    else
        cm_kernel_isr(body);
}

void cm_kernel_isr(port_cm_isr_fn body)
{
    sched_isr_enter();
    body();
    kernel_irqs++; /* a nested interrupt may lose an increment: it only
                    * has to change, for port_sleep() */
    /* Nothing outranks the interrupted code (the usual case for a post to
     * a task below or equal to it): no PendSV, trampoline and NMI. */
    if (sched_isr_exit_due()) SCB_ICSR = ICSR_PENDSVSET;
}

uintptr_t port_cm_interrupted_sp(void)
{
    uint32_t sp;
    /* Interrupted thread mode (the only active exception) runs on PSP
     * exactly while a thread is the current context (context.c). */
#if MOTET_THREADS
    if ((SCB_ICSR & ICSR_RETTOBASE) && thread_self()) {
        __asm volatile("mrs %0, psp" : "=r"(sp));
        return sp;
    }
#endif
    __asm volatile("mrs %0, msp" : "=r"(sp));
    return sp;
}

uint32_t port_cm_kernel_irqs(void)
{
    return kernel_irqs;
}

uint32_t port_cm_exit_dispatches(void)
{
    return exit_dispatches;
}

/* ------------------------------------------------------------ exit dispatch */

/* Step 3, in thread mode with interrupts masked. */
void cm_exit_dispatch(void);
void cm_exit_dispatch(void)
{
    exit_dispatches++;
    sched_isr_exit();
}

/* Steps 3 and 4: never returns; NMI takes the way back. */
__attribute__((naked, noreturn)) void cm_exit_trampoline(void);
__attribute__((naked, noreturn)) void cm_exit_trampoline(void)
{
    __asm volatile("bl cm_exit_dispatch\n"
                   "movw r0, #0xED04\n" /* SCB_ICSR */
                   "movt r0, #0xE000\n"
                   "mov r1, #0x80000000\n" /* NMIPENDSET */
                   "str r1, [r0]\n"
                   "dsb\n"
                   "isb\n"
                   "1: b 1b\n");
}

/* Step 2: fabricate the frame that returns into the trampoline, on the
 * stack the interrupted code ran on. That is always thread code (PendSV
 * cannot preempt a handler), so lr holds EXC_RETURN 0xFFFFFFF9 (MSP: K) or,
 * with threads, 0xFFFFFFFD (PSP: a thread, context.c) and stays valid; bit 2
 * tells which. The trampoline then runs on the interrupted context's own
 * stack. Without threads everything is on MSP and the test is left out. */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm volatile("movw r0, #:lower16:cm_exit_trampoline\n"
                   "movt r0, #:upper16:cm_exit_trampoline\n"
                   "bic r0, r0, #1\n"      /* a stacked pc has bit 0 clear */
                   "mov r1, #0x01000000\n" /* xPSR: Thumb state only */
#if MOTET_THREADS
                   "tst lr, #4\n"
                   "bne 1f\n"
#endif
                   "sub sp, sp, #32\n"
                   "str r0, [sp, #24]\n"
                   "str r1, [sp, #28]\n"
                   "cpsid i\n"
                   "bx lr\n"
#if MOTET_THREADS
                   "1: mrs r2, psp\n"
                   "sub r2, r2, #32\n"
                   "str r0, [r2, #24]\n"
                   "str r1, [r2, #28]\n"
                   "msr psp, r2\n"
                   "cpsid i\n"
                   "bx lr\n"
#endif
    );
}

/* Step 4: drop the trampoline's frame from the stack it was pushed on and
 * unmask interrupts; the exception return then unstacks the frame of the
 * interrupted code. */
__attribute__((naked)) void NMI_Handler(void)
{
    __asm volatile("cpsie i\n"
#if MOTET_THREADS
                   "tst lr, #4\n"
                   "bne 1f\n"
#endif
                   "add sp, sp, #32\n"
                   "bx lr\n"
#if MOTET_THREADS
                   "1: mrs r0, psp\n"
                   "add r0, r0, #32\n"
                   "msr psp, r0\n"
                   "bx lr\n"
#endif
    );
}

/* ------------------------------------------------------------ start-up */

void cm_irq_init(void)
{
    for (uint32_t w = 0; w < IRQ_COUNT / 32u; w++) {
        NVIC_ICER(w) = 0xFFFFFFFFu;
        NVIC_ICPR(w) = 0xFFFFFFFFu;
    }
    for (uint32_t w = 0; w < IRQ_COUNT / 32u; w++) line_direct[w] = 0u;
    for (uint32_t irq = 0; irq < IRQ_COUNT; irq++) {
        line_isr[irq] = NULL;
        NVIC_IPR(irq) = PORT_CM_PRIO_LINE;
    }
    SCB_ICSR = ICSR_PENDSVCLR;
    SCB_SHPR3 = (SCB_SHPR3 & ~(0xFFu << 16)) | (PRIO_PENDSV << 16);
    SYST_CSR = 0u;
    kernel_irqs = 0;
    exit_dispatches = 0;
}
