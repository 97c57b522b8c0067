/* SPDX-License-Identifier: MIT */
/*
 * The MPU guard of thread stacks (port.h, PORT_HAS_MPU_STACK_GUARD).
 *
 * One PMSAv7 region, GUARD_REGION, covers 32 bytes near the bottom of the
 * running thread's stack with no access at all, privileged included: the
 * first 32-byte boundary at least LANDING bytes above the stack's lowest
 * byte. The landing zone below the region is for the hardware: a frame
 * that lowers sp into the guard with one instruction (sub sp) before its
 * first store there faults, and the exception entry then stacks its
 * 32-byte frame (36 realigned) below sp; the words of it outside the
 * region are written (MSTKERR refuses only those inside), and they land
 * in the thread's own stack instead of the memory below it. Each context keeps that region's two
 * register values (RBAR with VALID and the region number, RASR) beside its stack pointer; the
 * context switch stores the next context's pair with one STM (context.c),
 * the only cost a switch pays. K's pair is all zero but for what the
 * switch ORs in: the region is off while K runs (the kernel stack is
 * MSP's, measured by its own paint). The region's number is the highest,
 * so it wins over the code region where they could overlap.
 *
 * A thread that runs into its guard faults at the first store there,
 * before a byte below its stack changes. MemManage is enabled on its own
 * (priority 0), so it is taken in the thread's context unless interrupts
 * were masked (PRIMASK escalates it to HardFault, which halts). From
 * thread mode on PSP, with the fault address inside the guard or the
 * hardware's own stacking refused (MSTKERR, whose frame is then not on the
 * stack), the handler does not return into the thread: it builds a fresh
 * exception frame at the top of the thread's stack (the thread's frames
 * are worthless now) whose pc is the kernel's thread_stack_fault_exit(),
 * which logs MT_ERR_STACK and ends the thread; the module goes on.
 * Any other memory fault reports and halts as before.
 */
#include "motet/port.h"
#include "mps2.h"
#include "port_cm_internal.h"

#if MOTET_THREADS

#define GUARD_LOG2      5u /* 32 bytes: PMSAv7's smallest region */
#define GUARD_BYTES     (1u << GUARD_LOG2)
#define LANDING         36u /* the hardware frame, realigned */
#define GUARD_RASR      (MPU_RASR_XN | MPU_RASR_SIZE(GUARD_LOG2) | MPU_RASR_ENABLE) /* AP 0 */
#define MMFSR_MSTKERR   (1u << 4)
#define MMFSR_MMARVALID (1u << 7)
#define MMFSR_ALL       0xFFu
#define XPSR_THUMB      (1u << 24)
#define FRAME_WORDS     8u /* r0-r3, r12, lr, pc, xPSR */

_Static_assert(PORT_CM_GUARD_BYTES >= LANDING + 2u * GUARD_BYTES - 1u,
               "the landing zone, the guard and its alignment");

void cm_guard_context(port_context_t *ctx, void *stack)
{
    ctx->guard_rbar = (uint32_t) (uintptr_t) (port_stack_guard_end(stack) - GUARD_BYTES);
    ctx->guard_rasr = GUARD_RASR;
}

const uint8_t *port_stack_guard_end(const void *stack)
{
    uintptr_t low = (uintptr_t) stack + LANDING;
    uintptr_t base = (low + GUARD_BYTES - 1u) & ~(uintptr_t) (GUARD_BYTES - 1u);
    return (const uint8_t *) (base + GUARD_BYTES);
}

void cm_guard_enable(void)
{
    SCB_SHCSR |= SHCSR_MEMFAULT;
}

/* The fault hit the running thread's guard. */
static bool hit_guard(uint32_t mmfsr)
{
    if (mmfsr & MMFSR_MSTKERR) return true; /* stacking onto PSP refused */
    if (!(mmfsr & MMFSR_MMARVALID)) return false;
    MPU_RNR = PORT_CM_GUARD_REGION;
    uint32_t base = MPU_RBAR & ~(GUARD_BYTES - 1u);
    return (MPU_RASR & MPU_RASR_ENABLE) && SCB_MMFAR - base < GUARD_BYTES;
}

/* MemManage taken from thread mode on PSP (MemManage_Handler); returns
 * through the EXC_RETURN in lr into thread_stack_fault_exit(). */
void cm_guard_fault(void);
void cm_guard_fault(void)
{
    uint32_t mmfsr = SCB_CFSR & MMFSR_ALL;
    uint8_t *top = thread_stack_fault_top();
    if (!top || !hit_guard(mmfsr)) cm_fatal("memory fault, MMFSR", mmfsr);
    SCB_CFSR = mmfsr; /* write-one-to-clear */
    uint32_t *frame = (uint32_t *) ((uintptr_t) top & ~(uintptr_t) 7u) - FRAME_WORDS;
    for (unsigned i = 0; i < FRAME_WORDS; i++) frame[i] = 0u;
    frame[6] = (uint32_t) (uintptr_t) thread_stack_fault_exit & ~1u; /* pc: no Thumb bit */
    frame[7] = XPSR_THUMB;
    __asm volatile("msr psp, %0" ::"r"(frame) : "memory");
}

/* A fault in K or a handler (MSP) is reported as any other fault. */
__attribute__((naked)) void MemManage_Handler(void)
{
    __asm volatile("tst lr, #4\n"
                   "beq HardFault_Handler\n"
                   "b cm_guard_fault\n");
}

#else

/* Without threads nothing enables MemManage: a memory fault escalates to
 * HardFault, and this entry is never taken. */
void cm_guard_enable(void)
{
}

__attribute__((naked)) void MemManage_Handler(void)
{
    __asm volatile("b HardFault_Handler\n");
}

#endif /* MOTET_THREADS */
