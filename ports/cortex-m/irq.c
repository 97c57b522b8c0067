/* SPDX-License-Identifier: MIT */
/*
 * Interrupts of the Cortex-M port: the table of interrupt bodies on the
 * spare lines, and the exit dispatch (rule 3, docs/architecture.md) through
 * a frame fabricated by the interrupt's own entry (or by PendSV), a
 * thread-mode trampoline and NMI (the PRIMASK lock is inline,
 * port_config.h). cortex_m.h explains why the handlers run in thread mode
 * and not inside PendSV.
 *
 * The exit dispatch, step by step, for thread code T on either stack: K on
 * MSP, or a thread on PSP (context.c); interrupt bodies always run on MSP:
 *
 *   1. Thread code T runs; interrupt X comes. The hardware stacks frame F_T
 *      (r0-r3, r12, lr, pc, xPSR of T) and X's entry (CM_KERNEL_BODY) runs
 *      its body, then, interrupts masked, asks the kernel once what the
 *      exit must run (sched_isr_exit_choice()): nothing (nothing outranks
 *      T, and a thread T may not lose the CPU), the queued handlers' drain,
 *      or the thread side's reschedule. Nothing: it unmasks and returns to T
 *      directly, and the steps below are left out.
 *   2. If X returns to T (no other interrupt under it), its entry pushes a
 *      fabricated frame F_X below F_T, on T's stack (EXC_RETURN bit 2 says
 *      MSP or PSP): r0 = the choice, pc = cm_exit_trampoline, xPSR = Thumb
 *      only; and returns, interrupts still masked: the hardware unstacks F_X
 *      and enters the trampoline in thread mode, its stack pointer just
 *      below F_T. If X returns to another interrupt's body instead, it
 *      pends PendSV (lowest priority) and unmasks; whichever entry returns
 *      to T last decides again and does the same, or PendSV does, for an
 *      entry that is not the kernel's (the choice sees everything the
 *      bodies posted). No PendSV in the usual case: one exception less.
 *   3. The trampoline calls the choice, which runs what it was chosen to
 *      run with nothing changed since: queued handlers that outrank the
 *      interrupted one, with interrupts on, preemptible by any interrupt
 *      (only on K's stack), or, if T is a thread, the switch to another
 *      context (thread_isr_exit); it carries on from here, on T's stack,
 *      only when T is resumed, so steps 3 and 4 of different contexts never
 *      mix. Interrupts stay masked otherwise, so no second exit dispatch
 *      nests on this one unless it runs a handler of a higher level (at
 *      most one per priority level on the stack).
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

/* A spare line's body, in one table per kind, so that the line's entry
 * (cm_line_isr, below) tells a kernel line by the one load it needs
 * anyway, and a direct line costs two. */
#define SPARE(irq) ((irq) -PORT_CM_SPARE_IRQ_FIRST)
port_cm_isr_fn cm_line_kernel[PORT_CM_SPARE_IRQS]; /* between the kernel's hooks */
port_cm_isr_fn cm_line_direct[PORT_CM_SPARE_IRQS]; /* without them */
_Static_assert(PORT_CM_SPARE_IRQ_FIRST == 16u && PORT_CM_SPARE_IRQS == 16u,
               "cm_line_isr's bounds (16 + 16, 16)");
volatile uint32_t cm_kernel_irqs;     /* by the kernel entries (CM_KERNEL_BODY) */
volatile uint32_t cm_exit_dispatches; /* with MOTET_STATS, by the trampoline */

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
    cm_line_kernel[SPARE(irq)] = direct ? NULL : isr;
    cm_line_direct[SPARE(irq)] = direct ? isr : NULL;
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

/* A line without a body, or one no spare line: a port invariant broke. */
void cm_line_stray(void);
void cm_line_stray(void)
{
    cm_fatal("interrupt on a line with no body:", cm_ipsr() - 16u);
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
    return cm_kernel_irqs;
}

uint32_t port_cm_exit_dispatches(void)
{
    return cm_exit_dispatches;
}

/* ------------------------------------------------------------ exit dispatch */

/* cm_isr_exit: the end of every kernel interrupt entry (CM_KERNEL_BODY),
 * with r0 = the exit's choice and lr = EXC_RETURN; interrupts are masked
 * exactly when r0 is not NULL.
 *   - NULL: unmask and return to the interrupted code.
 *   - Returning to thread mode (EXC_RETURN bit 3): step 2 at once, with no
 *     PendSV; .Lcm_exit_fabricate pushes F_X below F_T on the interrupted
 *     stack (bit 2: PSP, a thread (context.c), or MSP, K) with r0 = the
 *     choice, pc = the trampoline (a stacked pc has bit 0 clear: the local
 *     label, not the Thumb function symbol), xPSR = Thumb only, and returns
 *     into it, interrupts still masked. Without threads everything is on
 *     MSP and the bit-2 test is left out.
 *   - Returning to another handler: that one, or PendSV after the last,
 *     decides; pend PendSV, unmask.
 * PendSV_Handler: decide again, under the mask (what the bodies that ran
 * since posted is there to see), and fabricate F_X, or return. Being the
 * lowest priority, it always returns to thread mode.
 * cm_exit_trampoline: step 3, then step 4's pend of NMI. The store needs
 * no barrier: the branch to itself below it waits for the NMI, which never
 * returns there. */
#if MOTET_THREADS
#define CM_EXIT_FABRICATE_PSP                                                                      \
    "    tst lr, #4\n"                                                                             \
    "    bne 1f\n"
#define CM_EXIT_FABRICATE_PSP_TAIL                                                                 \
    "1:  mrs r3, psp\n"                                                                            \
    "    sub r3, r3, #32\n"                                                                        \
    "    str r0, [r3]\n"                                                                           \
    "    str r1, [r3, #24]\n"                                                                      \
    "    str r2, [r3, #28]\n"                                                                      \
    "    msr psp, r3\n"                                                                            \
    "    bx lr\n"
#else
#define CM_EXIT_FABRICATE_PSP      ""
#define CM_EXIT_FABRICATE_PSP_TAIL ""
#endif
#if MOTET_STATS
#define CM_EXIT_COUNT                                                                              \
    "    ldr r1, =cm_exit_dispatches\n"                                                            \
    "    ldr r2, [r1]\n"                                                                           \
    "    adds r2, #1\n"                                                                            \
    "    str r2, [r1]\n"
#else
#define CM_EXIT_COUNT ""
#endif

__asm__(".syntax unified\n"
        ".thumb\n"
        ".text\n"
        /* Every line without a device of its own enters here. A direct
         * line's body is jumped to, with lr = EXC_RETURN: its return is
         * the interrupt's. A kernel line runs CM_KERNEL_BODY and falls
         * through into cm_isr_exit: no branch on the most common entry. */
        ".global cm_line_isr\n"
        ".type cm_line_isr, %function\n"
        ".thumb_func\n"
        "cm_line_isr:\n"
        "    mrs r3, ipsr\n"
        "    sub r3, r3, #32\n" /* 16 exceptions, then the first spare line */
        "    cmp r3, #16\n"
        "    bhs 8f\n"
        "    ldr r1, =cm_line_kernel\n"
        "    ldr r0, [r1, r3, lsl #2]\n"
        "    cbnz r0, 6f\n"
        "    ldr r1, =cm_line_direct\n"
        "    ldr r1, [r1, r3, lsl #2]\n"
        "    cbz r1, 8f\n"
        "    bx r1\n"
        "8:  b cm_line_stray\n"
        ".ltorg\n"
        "6:  push {r0, lr}\n" CM_KERNEL_BODY ".size cm_line_isr, .-cm_line_isr\n"
        ".global cm_isr_exit\n"
        ".type cm_isr_exit, %function\n"
        ".thumb_func\n"
        "cm_isr_exit:\n"
        "    cbz r0, 3f\n"
        "    tst lr, #8\n"
        "    beq 2f\n"
        ".Lcm_exit_fabricate:\n"
        "    adr r1, .Lcm_exit_trampoline_pc\n"
        "    mov r2, #0x01000000\n" /* xPSR: Thumb state only */
        CM_EXIT_FABRICATE_PSP "    sub sp, sp, #32\n"
        "    str r0, [sp]\n"
        "    str r1, [sp, #24]\n"
        "    str r2, [sp, #28]\n"
        "    bx lr\n" CM_EXIT_FABRICATE_PSP_TAIL "2:  ldr r1, =0xE000ED04\n" /* SCB_ICSR */
        "    mov r2, #0x10000000\n"                                          /* PENDSVSET */
        "    str r2, [r1]\n"
        "3:  cpsie i\n"
        "    bx lr\n"
        ".ltorg\n"
        ".size cm_isr_exit, .-cm_isr_exit\n"

        ".global PendSV_Handler\n"
        ".type PendSV_Handler, %function\n"
        ".thumb_func\n"
        "PendSV_Handler:\n"
        "    push {r0, lr}\n"
        "    cpsid i\n"
        "    bl sched_isr_exit_choice\n"
        "    pop {r1, lr}\n"
        "    cmp r0, #0\n"
        "    bne .Lcm_exit_fabricate\n"
        "    cpsie i\n"
        "    bx lr\n"
        ".size PendSV_Handler, .-PendSV_Handler\n"

        ".global cm_exit_trampoline\n"
        ".type cm_exit_trampoline, %function\n"
        ".thumb_func\n"
        "cm_exit_trampoline:\n"
        ".Lcm_exit_trampoline_pc:\n" CM_EXIT_COUNT "    blx r0\n"
        "    ldr r0, =0xE000ED04\n" /* SCB_ICSR */
        "    mov r1, #0x80000000\n" /* NMIPENDSET */
        "    str r1, [r0]\n"
        "1:  b 1b\n"
        ".ltorg\n"
        ".size cm_exit_trampoline, .-cm_exit_trampoline\n");

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
    for (uint32_t line = 0; line < PORT_CM_SPARE_IRQS; line++) {
        cm_line_kernel[line] = NULL;
        cm_line_direct[line] = NULL;
    }
    for (uint32_t irq = 0; irq < IRQ_COUNT; irq++) NVIC_IPR(irq) = PORT_CM_PRIO_LINE;
    SCB_ICSR = ICSR_PENDSVCLR;
    SCB_SHPR3 = (SCB_SHPR3 & ~(0xFFu << 16)) | (PRIO_PENDSV << 16);
    SYST_CSR = 0u;
    cm_kernel_irqs = 0;
    cm_exit_dispatches = 0;
}
