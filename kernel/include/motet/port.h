/* SPDX-License-Identifier: MIT */
/*
 * The port interface: everything the portable kernel needs from a processor.
 *
 * A port is a directory ports/<name>/ holding port_config.h (the types and
 * constants below) and the C implementation of every function declared here.
 * Portable code includes only this header, never a port's private files.
 * A port that lacks a constant fails to compile (#error below); a port that
 * lacks a function fails to link. ports/template/ is the empty starting point.
 *
 * Calling context is part of each contract: "any" means task or interrupt
 * context; "irq off" means the caller holds interrupts disabled.
 *
 * Hooks the port calls back into the kernel:
 *   timer_isr_compare()  from the compare interrupt (a port whose
 *   interrupt bodies run with interrupts held off may say so by defining
 *   PORT_ISR_IRQ_OFF in port_config.h: the kernel then takes no lock of its
 *   own there);
 *   sched_isr_enter() / sched_isr_exit() around every interrupt that may
 *   post messages; sched_isr_exit(), called with interrupts off, runs
 *   higher-priority handlers at interrupt exit, turning interrupts on only
 *   for them (rule 3, docs/architecture.md); a port whose exit dispatch
 *   costs more than a test (Cortex-M: it leaves the interrupt through a
 *   frame of its own and NMI) calls sched_isr_exit_choice() instead, with
 *   interrupts off, at the body's end, and runs what it returns, if
 *   anything, with them still off;
 *   with MOTET_BUS, from the bus interrupt (between enter and exit):
 *   bus_isr_rx() for each frame received, bus_isr_tx_done() once the frame
 *   given to port_bus_send() is finished (bus.h).
 */
#ifndef MOTET_PORT_H
#define MOTET_PORT_H

#include "motet/config.h"
#include "motet/types.h"
#include "port_config.h"

#ifndef PORT_NAME
#error "port_config.h must define PORT_NAME (a string)"
#endif
#ifndef PORT_COUNTER_BITS
#error "port_config.h must define PORT_COUNTER_BITS (16 or 32)"
#endif
#ifndef PORT_TICKS_PER_SECOND
#error "port_config.h must define PORT_TICKS_PER_SECOND"
#endif
#ifndef PORT_SLEEP_DEEP_MIN_TICKS
#error "port_config.h must define PORT_SLEEP_DEEP_MIN_TICKS"
#endif
/* PORT_SLEEP_DEEP_MIN_TICKS of a port whose PORT_SLEEP_DEEP is no deeper
 * than PORT_SLEEP_IDLE: the kernel then never reads the clock to choose
 * between them (it says IDLE whenever a timer runs). */
#define PORT_SLEEP_NO_DEEP 0xFFFFFFFFu
#if MOTET_BUS && !defined(PORT_HAS_BUS)
#error "MOTET_BUS=1 needs a bus driver: PORT_HAS_BUS in port_config.h and port_bus_send()"
#endif
#if MOTET_THREADS && !defined(PORT_HAS_THREADS)
#error "MOTET_THREADS=1 needs thread contexts: PORT_HAS_THREADS in port_config.h (port.h)"
#endif
#if PORT_COUNTER_BITS == 16
typedef uint16_t port_counter_t;
#elif PORT_COUNTER_BITS == 32
typedef uint32_t port_counter_t;
#else
#error "PORT_COUNTER_BITS must be 16 or 32"
#endif

/* Largest distance the kernel programs the compare ahead: half the counter
 * range, so that it always sees the counter before it wraps past a deadline. */
#define PORT_COUNTER_HALF ((port_counter_t) 1u << (PORT_COUNTER_BITS - 1))

/* The interrupt state port_irq_save() returns: a byte, unless the port's
 * own is a word (PORT_IRQ_STATE_WORD: port_config.h defines the type),
 * which its calls then pass on without a zero extension. */
#ifndef PORT_IRQ_STATE_WORD
typedef uint8_t port_irq_state_t;
#endif

/* Properties of the instruction set that change how the kernel's hot
 * paths are best written, each defined (to 1) in port_config.h or not:
 *   PORT_HAS_CLZ      a count-leading-zeros instruction: the highest
 *                     ready priority level is one instruction, not a search;
 *   PORT_SHIFT_LOOPS  a shift by a variable count is a loop of one bit per
 *                     step (8-bit cores): the kernel reads single bits from
 *                     tables instead;
 *   PORT_CALL_SAVES_PAIR  a function that calls another saves its return
 *                     address with a second, call-saved register (ARM: lr
 *                     and r4, the stack kept 8-byte aligned): a value kept
 *                     across that call costs no save of its own, so that a
 *                     small callee is best put in line (dispatch.c). */

/* Constant tables on a hot path (the CRC's, MOTET_CRC_TABLE): a port
 * whose constants live apart from its RAM (a Harvard core, where const
 * data is copied into RAM at boot unless it stays in program memory)
 * defines in port_config.h PORT_CONST_TABLE, the attribute that keeps a
 * table there, and port_const_u16(p), the read of one 16-bit entry. */
#ifndef PORT_CONST_TABLE
#define PORT_CONST_TABLE
static MT_INLINE uint16_t port_const_u16(const uint16_t *p)
{
    return *p;
}
#endif

/* The message pool (MOTET_MAX_QUEUED_MSGS blocks) is the kernel's largest
 * array: a port whose fast internal RAM is small beside a slower external
 * one defines in port_config.h PORT_POOL_RAM, the attribute that places
 * the pool in the external RAM, for images that ask for it. */
#ifndef PORT_POOL_RAM
#define PORT_POOL_RAM
#endif

typedef enum {
    PORT_SLEEP_IDLE,    /* short wait: wake on any interrupt, fast wake-up */
    PORT_SLEEP_DEEP,    /* long wait: only the compare timer and external wake */
    PORT_SLEEP_NONE_DUE /* nothing due at all: deepest mode, no timer armed */
} port_sleep_mode_t;

/* ---- start-up and shutdown ---- */

/* Bring up clocks, console and the counter; called once, first, irq off. */
void port_init(void);
/* Stop the module with an exit status (emulator exit, process exit). */
void port_halt(int status);
/* A port whose programs have a command line (native: a process) defines
 * PORT_HAS_COMMAND_LINE in port_config.h and brings its own module_main()
 * (module.h), which reads the options first; the kernel's
 * (kernel/src/module_main.c) is a firmware image's, which has none. */

/* ---- interrupts ----
 *
 * The kernel's hot paths take the lock and test the context several times
 * per message. A port whose port_irq_save(), port_irq_restore() and
 * port_in_isr() are a few instructions may define those three as static
 * inline functions in port_config.h
 * and define PORT_IRQ_INLINE; they are then not declared here. */

#ifndef PORT_IRQ_INLINE
/* Disable interrupts and return the previous state; any context. */
port_irq_state_t port_irq_save(void);
/* Restore the state returned by port_irq_save(); any context. */
void port_irq_restore(port_irq_state_t state);
/* True while an interrupt handler (not the exit dispatch) is running. */
bool port_in_isr(void);
#endif
#ifndef PORT_IRQ_ENABLE_INLINE /* port_config.h may define it inline instead */
/* Enable interrupts unconditionally; task context only. */
void port_irq_enable(void);
#endif
#ifndef PORT_IRQ_DISABLE_INLINE
/* Disable interrupts, for a caller that wants no state to restore (it
 * enabled them itself); task context only. A port whose save reads the
 * state in an instruction of its own defines it in port_config.h without
 * that read, and PORT_IRQ_DISABLE_INLINE. */
static MT_INLINE void port_irq_disable(void)
{
    (void) port_irq_save();
}
#endif

/* ---- time: one free-running counter and one compare ---- */

/* Current value of the free-running counter; any context. A port whose
 * read is a few instructions may define it as a static inline function in
 * port_config.h, returning a uint16_t or uint32_t of PORT_COUNTER_BITS, and
 * define PORT_COUNTER_INLINE: every event record reads the counter. */
#ifndef PORT_COUNTER_INLINE
port_counter_t port_counter_read(void);
#endif
#ifndef PORT_COUNTER_IRQ_OFF_INLINE
/* The counter for a caller holding irq off; port_config.h may supply a cheaper inline one. */
static MT_INLINE port_counter_t port_counter_read_irq_off(void)
{
    return port_counter_read();
}
#endif
/* Interrupt once when the counter reaches `at`; replaces any earlier
 * compare; irq off. A deadline already passed may fire late or not at all:
 * the kernel re-reads the counter after arming. A port whose arming is a
 * few register writes may define it as a static inline function in
 * port_config.h and define PORT_COMPARE_INLINE: every compare interrupt
 * arms the next. */
#ifndef PORT_COMPARE_INLINE
void port_compare_set(port_counter_t at);
#endif
/* Cancel the compare interrupt; irq off. */
void port_compare_disable(void);

/* ---- power ---- */

/* Called with irq off when nothing is runnable: enable interrupts and sleep
 * in `mode` atomically, return with irq off after the wake-up interrupt ran. */
void port_sleep(port_sleep_mode_t mode);

/* ---- console ---- */

/* Write n bytes to the console (blocking, polled); task context. */
void port_console_write(const char *text, size_t n);

/* ---- measurement ---- */

/* Free-running cycle or instruction counter for benchmarks (wraps). */
uint32_t port_cycles(void);

/* ---- bus: frame I/O (only referenced by the kernel with MOTET_BUS) ---- */

/* How a frame given to port_bus_send() ended, as bus_isr_tx_done() reports. */
typedef enum {
    PORT_BUS_SENT,       /* every receiver acknowledged it */
    PORT_BUS_REJECTED,   /* a receiver found it corrupt (NACK): send it again */
    PORT_BUS_UNREACHABLE /* its destination is absent, dead or not answering */
} port_bus_result_t;

/* Hand one encoded frame (bus.h) to the bus interface; task or interrupt
 * context, irq on. The interface sends it in this module's arbitration slot,
 * waits while a receiver is busy (flow control, nothing is dropped) and
 * calls bus_isr_tx_done() from its interrupt when every receiver answered.
 * `frame` stays valid until then. A polled copy into the interface spends
 * its CPU time here, blocking the caller. A time-sync frame
 * (bus_frame_is_sync()) must carry, via bus_frame_stamp(), the sender's
 * counter at the instant the frame is complete at the receivers (driver or
 * interface hardware). Returns false while the interface still holds one. */
bool port_bus_send(const uint8_t *frame, uint16_t n);

/* Firmware ports on a device (AVR, Cortex-M; the native port has
 * port_native_bus_start()): join the bus as the module the bus interface
 * names, with the device's modules it names; task context, after
 * motet_boot(). MT_ERR_STATE without an interface linked to a hub. */
mt_err_t port_bus_join(void);
/* True on the module the bus interface names as the application's loader. */
bool port_bus_loader(void);

/* ---- threads: contexts (only with MOTET_THREADS; docs/threads.md) ----
 *
 * port_config.h of a port with threads defines PORT_HAS_THREADS, the type
 * port_context_t (what a suspended context keeps outside its stack, usually
 * just the stack pointer), PORT_THREAD_STACK_EXTRA (bytes a thread stack
 * needs beyond the thread's own frames: its saved registers, plus the
 * frames of interrupts if they run on the interrupted stack) and
 * PORT_THREAD_STACK_MIN. The kernel stack is the stack the module booted
 * on; a thread never runs message handlers. */
#if MOTET_THREADS
/* Prepare *ctx so that the first port_context_switch() to it calls
 * entry(arg) on the stack [stack, stack + size) with irq off; entry never
 * returns. Task context. */
void port_context_init(port_context_t *ctx, void *stack, size_t size, void (*entry)(void *),
                       void *arg);
/* Save the running context (callee-saved registers, stack pointer) in
 * *from and resume *to; returns when some context switches back to *from.
 * irq off on both sides; may be called at interrupt exit (in
 * sched_isr_exit()), where the interrupted frames stay on the stack. */
void port_context_switch(port_context_t *from, port_context_t *to);

/* A port whose port_config.h sets PORT_HAS_THREAD_SWITCH has a cheaper
 * switch for when both contexts are threads' (never the kernel stack's),
 * which it knows share what port_context_switch() otherwise selects (a
 * stack pointer register, a processor mode); the kernel uses it on the
 * switches between two threads. Contract of port_context_switch(). */
#ifndef PORT_HAS_THREAD_SWITCH
#define PORT_HAS_THREAD_SWITCH 0
#endif
#if PORT_HAS_THREAD_SWITCH
void port_context_switch_threads(port_context_t *from, port_context_t *to);
#endif

/* A port whose port_config.h sets PORT_HAS_MPU_STACK_GUARD guards every
 * thread stack in hardware: port_context_init() places a no-access region
 * at the bottom of the stack (PORT_THREAD_STACK_EXTRA counts its bytes)
 * and port_context_switch() points the region at the next context's, so
 * an overflow faults at its first store instead of damaging memory; the
 * kernel then checks no canary. On such a fault in a thread, with
 * interrupts enabled, the port resumes the thread in
 * thread_stack_fault_exit() on a fresh frame below thread_stack_fault_top();
 * anything else halts. */
#ifndef PORT_HAS_MPU_STACK_GUARD
#define PORT_HAS_MPU_STACK_GUARD 0
#endif

/* A port whose kernel stack runs in a processor state of its own, which
 * neither a thread nor an interrupt body shares (a stack-pointer select and
 * a mode, say), defines PORT_KERNEL_CONTEXT_INLINE and, static inline in
 * port_config.h, port_in_kernel_context(): true exactly where
 * port_in_isr() is false and no thread runs, read from the registers in
 * one test. Every fast send asks it; without it the kernel tests the
 * running thread and port_in_isr() one after the other. */
#if PORT_HAS_MPU_STACK_GUARD
/* The first byte above the guard region of a thread stack at `stack`:
 * the lowest the thread may use (the port). */
const uint8_t *port_stack_guard_end(const void *stack);
/* The top of the running thread's stack, NULL if no thread runs. */
void *thread_stack_fault_top(void);
/* Logs MT_ERR_STACK for the thread, says so on the console and
 * ends it (thread_exit()); the fault handler's return lands here. */
void thread_stack_fault_exit(void) __attribute__((noreturn));
#endif
#endif

#endif /* MOTET_PORT_H */
