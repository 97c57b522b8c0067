/* SPDX-License-Identifier: MIT */
/*
 * Cortex-M3 port constants (QEMU mps2-an385, see cortex_m.h).
 *
 * The tick is 100 us: the 25 MHz APB timer clock divided by 2,500 in
 * software. Why not the raw clock: under `-icount shift=0` the emulated core
 * executes 40 instructions per timer clock, so a kernel path of a few
 * hundred instructions would span many clocks and no timer could fire on
 * the tick it was set for, as the kernel tests demand. A tick must outlast
 * the longest path from an event (boot, an interrupt, the end of declared
 * work) to the handler that reads the time: the kernel tests' longest is
 * about 22,000 instructions (at 10 us, 10,000 instructions a tick, they
 * failed by one tick), and a tick is 100,000 instructions here (2,500 on a
 * real 25 MHz Cortex-M3, i.e. 100 us either way).
 */
#ifndef PORT_CONFIG_H
#define PORT_CONFIG_H

#define PORT_NAME    "cortex-m"
#define PORT_HAS_BUS 1 /* bus.c, with MOTET_BUS, on a device under QEMU */
/* Instruction-set properties (port.h). */
#define PORT_HAS_CLZ          1
#define PORT_CALL_SAVES_PAIR  1
#define PORT_COUNTER_BITS     32
#define PORT_TICKS_PER_SECOND 10000u
/* Waits longer than 2 ms may use the deep sleep mode. */
#define PORT_SLEEP_DEEP_MIN_TICKS 20u

/* The mps2-an385 system and APB timer clock, and timer clocks per tick. */
#define PORT_CM_CLOCK_HZ        25000000u
#define PORT_CM_CLOCKS_PER_TICK (PORT_CM_CLOCK_HZ / PORT_TICKS_PER_SECOND)

#if PORT_CM_CLOCK_HZ % PORT_TICKS_PER_SECOND != 0
#error "PORT_TICKS_PER_SECOND must divide the 25 MHz timer clock"
#endif

/* Threads (context.c): a suspended context is its stack pointer and the
 * CONTROL value that selects it; threads run on PSP, the kernel stack and
 * every interrupt body on MSP. What an interrupt leaves on the stack of the
 * thread it interrupts is therefore only its exit dispatch (irq.c), per
 * nesting level:
 *   the hardware frame F_T           32 B, +4 when the processor realigns
 *   below it, one after the other    the fabricated frame (32 B,
 *   in the same bytes                unstacked on entry to the trampoline),
 *                                    the trampoline's calls up to the switch
 *                                    to another context (port_context_switch's
 *                                    36 B included), NMI's frame (32 B)
 * `motet stack` finds 80 B of calls there with the fixed-priority, FIFO
 * and MANTIS policies (ctest stack_hello_cortex_m), and
 * bench/cortex-m/bench_threads.c measures 72 B; 160 B are allowed. Policies
 * that charge and re-arm kernel timers at the exit (RR slices, RETOS and
 * VOP quanta: thread_isr_exit -> ... -> timer_kernel_start ->
 * timer_service, which may post an expiry) go to 312 B (ctests
 * stack_thread_{rr,retos,vop}_cortex_m), and get that. No second
 * interrupt lands there: the trampoline runs with interrupts masked from
 * the exit's choice to NMI unless it runs a handler, and it never runs one on a
 * thread's stack (irq.c). MIN is what a guarded thread of unknown need
 * gets. */
#define PORT_HAS_THREADS 1
/* Between two threads, both on PSP, the switch leaves CONTROL alone
 * (context.c, port_context_switch_threads). */
#define PORT_HAS_THREAD_SWITCH 1
typedef struct port_context {
    void *sp;
    uint32_t control;
    uint32_t guard_rbar; /* the MPU guard of its stack (guard.c); K's: 0 */
    uint32_t guard_rasr;
} port_context_t;
/* Every thread stack is guarded by the MPU (guard.c): a 32-byte no-access
 * region at a 32-byte boundary above a 36-byte landing zone for a partly
 * refused exception frame, up to 99 bytes of the stack. */
#define PORT_HAS_MPU_STACK_GUARD      1
#define PORT_CM_GUARD_REGION          7u
#define PORT_CM_GUARD_BYTES           104u
#define PORT_CM_EXIT_FRAME_BYTES      36u
#define PORT_CM_EXIT_PATH_BYTES       160u
#define PORT_CM_EXIT_TIMED_PATH_BYTES 312u
#define PORT_CM_ISR_NESTING           1u
#define PORT_CM_THREAD_EXTRA                                                                       \
    (PORT_CM_GUARD_BYTES +                                                                         \
     PORT_CM_ISR_NESTING * (PORT_CM_EXIT_FRAME_BYTES + PORT_CM_EXIT_PATH_BYTES))
#define PORT_CM_THREAD_EXTRA_TIMED                                                                 \
    (PORT_CM_GUARD_BYTES +                                                                         \
     PORT_CM_ISR_NESTING * (PORT_CM_EXIT_FRAME_BYTES + PORT_CM_EXIT_TIMED_PATH_BYTES))
#if MOTET_THREAD_TIMED
#define PORT_THREAD_STACK_EXTRA PORT_CM_THREAD_EXTRA_TIMED
#else
#define PORT_THREAD_STACK_EXTRA PORT_CM_THREAD_EXTRA
#endif
#define PORT_THREAD_STACK_MIN 1024u

/* Interrupt primitives inline (port.h, PORT_IRQ_INLINE): each is one or
 * two instructions, less than the call that would wrap it. */
#define PORT_IRQ_INLINE 1
/* PRIMASK as it was, interrupts masked from here on. */
static MT_INLINE uint32_t port_cm_primask_mask(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n"
                   "cpsid i"
                   : "=r"(primask)
                   :
                   : "memory");
    return primask;
}
/* PRIMASK put back in one instruction: for the counter reads, which need
 * no ISB after it. */
static MT_INLINE void port_cm_primask_put(uint32_t primask)
{
    __asm volatile("msr primask, %0" : : "r"(primask) : "memory");
}
/* The state is PRIMASK as read, a word (port.h, PORT_IRQ_STATE_WORD):
 * passed on to a call, a byte would be zero-extended first. */
#define PORT_IRQ_STATE_WORD 1
typedef uint32_t port_irq_state_t;
static MT_INLINE port_irq_state_t port_irq_save(void)
{
    return port_cm_primask_mask();
}
/* Enabling inline too (PORT_IRQ_ENABLE_INLINE): the scheduler's drain loop
 * enables once per message it runs. The ISB lets a pending interrupt in
 * before the next instruction. */
#define PORT_IRQ_ENABLE_INLINE 1
static MT_INLINE void port_irq_enable(void)
{
    __asm volatile("cpsie i\n"
                   "isb" ::
                       : "memory");
}
/* Disabling without reading PRIMASK first (PORT_IRQ_DISABLE_INLINE): the
 * drain takes the lock after each handler it ran with interrupts enabled. */
#define PORT_IRQ_DISABLE_INLINE 1
static MT_INLINE void port_irq_disable(void)
{
    __asm volatile("cpsid i" ::: "memory");
}
/* PRIMASK put back as it was, without a test, and without an ISB. ARMv7-M
 * makes a lowered PRIMASK certain to be seen only after an ISB, an
 * exception entry or an exception return; without one, an interrupt that
 * became pending meanwhile is still taken, only not necessarily before the
 * next instruction (the Cortex-M3 takes it within its pipeline's next few).
 * Nothing after a restore depends on that instant: a critical section
 * guards data, not timing; a wait for an interrupt goes through
 * port_sleep() (WFI, its own ISB); a raise that must be taken at once
 * has its own barrier (port_cm_irq_raise()); and port_irq_enable() keeps its
 * ISB, the point where the kernel hands the processor to a handler. */
static MT_INLINE void port_irq_restore(port_irq_state_t state)
{
    port_cm_primask_put(state);
}
static MT_INLINE bool port_in_isr(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    return ipsr != 0u;
}
/* The kernel stack's own state (port.h): thread mode (IPSR 0) on MSP
 * (CONTROL.SPSEL 0). A thread runs on PSP (context.c); an interrupt body
 * on MSP, SPSEL cleared by the exception entry, but with IPSR set. Two
 * register reads and one test, where the running thread's pointer costs
 * a literal, a load and a test of its own. */
#define PORT_KERNEL_CONTEXT_INLINE 1
#if defined(__ARM_FP)
/* CONTROL is compared whole: an FPU part's CONTROL.FPCA, set by the first
 * floating-point instruction, would send every fast send the general way. */
#error "port_in_kernel_context() assumes a core without an FPU: test CONTROL.SPSEL alone"
#endif
static MT_INLINE bool port_in_kernel_context(void)
{
    uint32_t ipsr, control;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    __asm volatile("mrs %0, control" : "=r"(control));
    return (ipsr | control) == 0u;
}

/* The counter inline too (port.h, PORT_COUNTER_INLINE): every event record
 * reads it. TIMER1 (a CMSDK down counter, mps2.h) counts clocks down from
 * EPOCH_CLOCKS - 1 to 0 and reloads, the value 0 being the epoch's last
 * clock, so the tick of value v is the epoch's last tick minus v / CPT for
 * every v: no special case. clock.c keeps the counter at the current
 * epoch's last tick; its interrupt, raised as the value reaches 0, moves it
 * on only once the counter has reloaded, and a reader who sees the flag
 * before the interrupt ran adds the epoch to its own result if the counter
 * has reloaded (clock.c's clock_read_locked() follows the same rule).
 * Under a held lock (PORT_COUNTER_IRQ_OFF_INLINE) no PRIMASK is saved. */
#define PORT_COUNTER_INLINE          1
#define PORT_CM_COUNTER_BASE         0x40001000u
#define PORT_CM_COUNTER_VALUE_OFFSET 4u
#define PORT_CM_COUNTER_INTR_OFFSET  12u
#define PORT_CM_TICKS_PER_EPOCH      (0xFFFFFFFFu / PORT_CM_CLOCKS_PER_TICK)
#define PORT_CM_EPOCH_CLOCKS         (PORT_CM_TICKS_PER_EPOCH * PORT_CM_CLOCKS_PER_TICK)
extern volatile uint32_t port_cm_epoch_last_tick;
#define PORT_COUNTER_IRQ_OFF_INLINE 1
static MT_INLINE uint32_t port_counter_read_irq_off(void)
{
    volatile uint32_t *timer = (volatile uint32_t *) PORT_CM_COUNTER_BASE;
    uint32_t last_tick = port_cm_epoch_last_tick;
    uint32_t v = timer[PORT_CM_COUNTER_VALUE_OFFSET / 4u];
    if (timer[PORT_CM_COUNTER_INTR_OFFSET / 4u]) { /* the epoch ended, the interrupt not yet run */
        v = timer[PORT_CM_COUNTER_VALUE_OFFSET / 4u];
        if (v != 0u) last_tick += PORT_CM_TICKS_PER_EPOCH; /* reloaded: the next epoch */
    }
    return last_tick - v / PORT_CM_CLOCKS_PER_TICK;
}
static MT_INLINE uint32_t port_counter_read(void)
{
    uint32_t primask = port_cm_primask_mask();
    uint32_t now = port_counter_read_irq_off();
    port_cm_primask_put(primask);
    return now;
}

#endif /* PORT_CONFIG_H */
