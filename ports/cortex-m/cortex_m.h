/* SPDX-License-Identifier: MIT */
/*
 * The Cortex-M port: a Motet module on an ARM Cortex-M3, the mps2-an385
 * board as QEMU 7.2 emulates it. This header is the port's extras for
 * tests, benchmarks and firmware mains; portable code never includes it.
 *
 * Running it. tools/motetlib/port_cortex_m.py starts
 *     qemu-system-arm -M mps2-an385 -icount shift=0,align=off,sleep=off
 *         -semihosting-config enable=on,target=native -serial stdio -kernel ELF
 * UART0 is the console; port_halt(status) leaves QEMU through semihosting
 * SYS_EXIT_EXTENDED, so QEMU's exit status is the program's. With -icount
 * every run is identical: one instruction is 1 ns of virtual time, the
 * 25 MHz timers count once per 40 instructions, and a WFI jumps virtual
 * time to the next timer event at once.
 *
 * Files. startup.c: vector table, reset (data, bss, stack painting, the MPU
 * making code memory read-only, so that a stray write through a null pointer
 * faults instead of corrupting the vector table), faults, port_init and
 * port_halt, semihosting, the system calls newlib-nano wants (its heap, for
 * printf's streams only, is the RAM above the static data).
 * console.c: UART0. irq.c: PRIMASK save/restore, the interrupt table and
 * the exit dispatch. clock.c: the counter, the compare, the alarm, cycles.
 * sleep.c: port_sleep and its statistics. link.ld: memory map.
 *
 * Time. A tick is 100 us, 2,500 clocks of the 25 MHz timer clock
 * (port_config.h says why). TIMER1 runs freely from that clock, reloading
 * every "epoch" of CLOCKS_PER_TICK * floor(2^32 / CLOCKS_PER_TICK) clocks
 * (171.8 s); its wrap interrupt counts epochs. Ticks are epochs times ticks
 * per epoch plus the clocks into the epoch / CLOCKS_PER_TICK (a 32-bit
 * division by a constant), so the tick counter is 64 bits wide and the
 * port counter (32 bits) is its low word plus the counter start. The clock is
 * restarted by port_init(), so a fresh module always boots at the start of
 * tick 0 and the counter reads the start value set with
 * port_cm_set_counter_start() (the hardware counter cannot be preset to an
 * arbitrary tick, hence the offset).
 *
 * The compare is TIMER0, loaded with the number of clocks to the deadline
 * (at most 2^31, re-armed inside the port for longer waits). Its interrupt
 * checks that the deadline tick has really been reached (a one-shot that
 * starts between two counter clocks may end one clock early) before it calls
 * timer_isr_compare(). A deadline already passed pends the interrupt at once.
 *
 * Interrupts and the exit dispatch (rule 3, docs/architecture.md). Every
 * interrupt that may post runs its body between sched_isr_enter() and the
 * exit's one decision, made with interrupts masked
 * (sched_isr_exit_choice()): nothing to run, the queued handlers' drain, or
 * the thread side's reschedule. With nothing, it returns to the interrupted
 * code at once. Otherwise, if it is the last interrupt on the way back to
 * thread mode, its entry pushes a fabricated exception frame whose return
 * address is the exit trampoline and returns into it; if not, it pends
 * PendSV (lowest priority), which decides again once every body has
 * finished. The trampoline therefore runs in thread mode, on the
 * interrupted stack, with no exception active and interrupts masked until
 * the drain finds a handler to run: it runs the handlers there with
 * interrupts on, any interrupt can preempt them (its own exit dispatch
 * nests above), port_in_isr() (IPSR != 0) is false, and a failed test
 * assertion can longjmp out of a handler. Back from the choice, the
 * trampoline pends NMI; the NMI handler unmasks interrupts, drops its own
 * frame and returns through the frame that the hardware stacked when the
 * first interrupt came, restoring every register of the interrupted code,
 * xPSR included (QK and Super-Simple Tasker return the same way). NMI is
 * reserved for this. Running the handlers inside an exception instead
 * would leave them in handler mode, where a later interrupt could not start
 * a higher handler above them and port_in_isr() would be true.
 *
 * Priorities (lower number = more urgent): TIMER1 epoch 0x00, compare and
 * alarm 0x40, spare lines 0x80 by default, PendSV 0xFF. PRIMASK masks them
 * all; port_irq_save() returns the old PRIMASK.
 *
 * Sleep. port_sleep() executes WFI with PRIMASK set (it wakes on any pending
 * interrupt without taking it), measures the sleep, then opens PRIMASK so the
 * interrupt and its exit dispatch run. Wake-ups that only concern the port
 * (an epoch wrap, an intermediate compare, the alarm) go back to sleep, so
 * the kernel sees one sleep per event it cares about. All modes use WFI:
 * QEMU models no deeper state. Before each WFI the port records when it
 * sleeps and when its next timer wakes it and calls an empty function, so
 * that a device's lock-step adapter, which cannot see WFI, sees the sleep
 * (sleep.c; docs/bus.md, "Emulated modules"). Caveat: QEMU's SysTick runs
 * at half rate across a WFI under -icount sleep=off; the CMSDK timers used
 * here do not.
 *
 * Cycles. port_cycles() is the 25 MHz timer clock (what DWT->CYCCNT, which
 * QEMU does not implement, would count on a 25 MHz board). Under
 * `-icount shift=S` one clock is 40 / 2^S instructions, so at shift 0 a
 * benchmark converts clocks to instructions by multiplying by 40.
 *
 * Stack. The kernel stack, MSP, at the bottom of RAM (an overflow faults
 * instead of overwriting data): boot, every handler and every interrupt body
 * run there. Reset paints it; port_cm_stack_high_water() finds the deepest
 * word written since reset (or the last port_cm_stack_repaint()), and
 * port_halt() prints it: "cortex-m: stack high-water N of M bytes". Threads
 * (context.c) run on stacks of their own through PSP; an interrupt leaves
 * only its hardware frame and the exit dispatch on them (port_config.h).
 */
#ifndef PORT_CORTEX_M_H
#define PORT_CORTEX_M_H

#include <stdbool.h>
#include <stdint.h>

/* Interrupt lines no device of the board drives (AN385: GPIO pin lines,
 * not modelled by QEMU), free for software-raised interrupts. */
#define PORT_CM_SPARE_IRQ_FIRST 16u
#define PORT_CM_SPARE_IRQS      16u

/* NVIC priorities (lower is more urgent). */
#define PORT_CM_PRIO_EPOCH   0x00u
#define PORT_CM_PRIO_COMPARE 0x40u
#define PORT_CM_PRIO_ALARM   0x40u
#define PORT_CM_PRIO_LINE    0x80u
#define PORT_CM_PRIO_LOWEST  0xC0u /* for a line; PendSV (0xFF) is below all */

typedef void (*port_cm_isr_fn)(void);

/* ---- time ---- */

/* Counter value right after the next port_init() (default 0). */
void port_cm_set_counter_start(uint32_t start);
/* Ticks since port_init(), 64 bits (never wraps); any context. */
uint64_t port_cm_time(void);
/* Timer clocks (25 MHz) since port_init(); any context. */
uint64_t port_cm_clocks(void);

/* ---- interrupt lines ---- */

/* Give spare line `irq` a body that runs between sched_isr_enter() and the
 * exit dispatch, like every interrupt that posts; NULL detaches. Enables the
 * line at PORT_CM_PRIO_LINE. port_init() detaches every line. */
void port_cm_irq_attach(uint8_t irq, port_cm_isr_fn isr);

/* The spare line of the bus interface (bus.c, with MOTET_BUS). */
#define PORT_CM_BUS_IRQ 16u
/* Give spare line `irq` a body that runs in the interrupt without the
 * kernel's hooks: it must not post. The Super-Simple-Tasker floor of a
 * dispatch (the body is the task), for measurements and for drivers. */
void port_cm_irq_attach_direct(uint8_t irq, port_cm_isr_fn isr);
/* NVIC priority of a spare line, 0x00 .. PORT_CM_PRIO_LOWEST in steps of
 * 0x40 (the bits every Cortex-M3 implements). */
void port_cm_irq_set_priority(uint8_t irq, uint8_t prio);
/* Pend the line in the NVIC: taken before the next instruction if
 * interrupts are enabled and nothing more urgent runs, else when they are. */
void port_cm_irq_raise(uint8_t irq);
/* From an interrupt body: the stack pointer of the code it interrupted, on
 * that code's stack (PSP if it was a thread, MSP otherwise); the body
 * itself always runs on MSP. */
uintptr_t port_cm_interrupted_sp(void);
/* Interrupts that ran a body between sched_isr_enter() and the exit
 * dispatch, and exit dispatches run (counted with MOTET_STATS, else 0),
 * since port_init(). */
uint32_t port_cm_kernel_irqs(void);
uint32_t port_cm_exit_dispatches(void);

/* ---- the alarm: a second, port-private compare (dual timer 1) ---- */

/* Call `fn` from an interrupt (PORT_CM_PRIO_ALARM, not a posting one: fn
 * may raise lines but not post) once port_cm_time() reaches `at`; replaces
 * any earlier alarm; at once if `at` has passed. */
void port_cm_alarm_set(uint64_t at, port_cm_isr_fn fn);
void port_cm_alarm_cancel(void);

/* ---- sleep statistics since port_init() ---- */

uint32_t port_cm_sleep_count(void);
uint64_t port_cm_sleep_ticks(void);

/* ---- the watchdog (watchdog.c) ---- */

/* Whether the watchdog reset the machine before this boot. */
bool port_cm_reset_by_watchdog(void);

/* ---- the shared stack ---- */

/* Bytes reserved for the stack, and the most used since reset or the last
 * repaint (stack painting). */
uint32_t port_cm_stack_size(void);
uint32_t port_cm_stack_high_water(void);
/* Paint the free part of the stack again, so that the high-water mark
 * measures only what runs from now on; task context. */
void port_cm_stack_repaint(void);

#endif /* PORT_CORTEX_M_H */
