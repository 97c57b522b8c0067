/* SPDX-License-Identifier: MIT */
/*
 * Native (Linux process) port constants. One tick is one microsecond of the
 * module's clock: simulated (deterministic, the default for tests) or real.
 */
#ifndef PORT_CONFIG_H
#define PORT_CONFIG_H

#define PORT_NAME "native"
/* Instruction-set properties (port.h): x86-64 and AArch64 hosts. */
#define PORT_HAS_CLZ          1
#define PORT_COUNTER_BITS     32
#define PORT_TICKS_PER_SECOND 1000000u
/* Waits longer than 2 ms may use the deep sleep mode. */
#define PORT_SLEEP_DEEP_MIN_TICKS 2000u
/* A bus driver: the hub link of bus_native.c (docs/bus.md). */
#define PORT_HAS_BUS 1
/* A command line: module_main() is module_native.c's (port.h). */
#define PORT_HAS_COMMAND_LINE 1

/* Threads (context_native.c): a suspended context is its stack pointer; the
 * callee-saved registers sit on its stack. Interrupts are signals, which
 * Linux delivers on the interrupted stack, so a thread stack also holds the
 * signal frame (up to ~3.5 KB with AVX-512 state) and the interrupt path. */
#define PORT_HAS_THREADS 1
/* Built with AddressSanitizer (GCC says so, Clang answers __has_feature):
 * context switches tell it which stack is live (context_native.c). */
#if defined(__SANITIZE_ADDRESS__)
#define PORT_NATIVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PORT_NATIVE_ASAN 1
#endif
#endif
#ifndef PORT_NATIVE_ASAN
#define PORT_NATIVE_ASAN 0
#endif
typedef struct port_context {
    void *sp; /* first: the switch stores and loads it at offset 0 */
#if PORT_NATIVE_ASAN
    const void *stack; /* the context's stack, as the sanitizer must be told */
    size_t stack_size;
    void (*entry)(void *); /* a new context's entry(arg), started by asan_start() */
    void *arg;
#endif
} port_context_t;
#define PORT_THREAD_STACK_EXTRA 12288u
#define PORT_THREAD_STACK_MIN   16384u

/* Interrupt primitives inline (port.h, PORT_IRQ_INLINE): interrupts are
 * signals, and "disabled" is a flag the signal handler honours
 * (port_native.c), so saving is a load and a store. Enabling may have to
 * take a signal that came meanwhile: port_irq_enable() stays a call. */
#include <signal.h>
#include <stdatomic.h>
#define PORT_IRQ_INLINE 1
/* The interrupt flag and the interrupt-body flag (port_native.c). */
extern volatile sig_atomic_t port_native_irq_disabled;
extern volatile sig_atomic_t port_native_in_isr;
static MT_INLINE uint8_t port_irq_save(void)
{
    uint8_t was = (uint8_t) port_native_irq_disabled;
    port_native_irq_disabled = 1;
    atomic_signal_fence(memory_order_seq_cst);
    return was;
}
/* Interrupts that came while the flag was set (port_native.c), and taking
 * them: enabling is inline, the rare taking is not. */
extern atomic_uint port_native_irq_pending;
void port_native_take_pending(void);
static MT_INLINE void port_irq_restore(uint8_t state)
{
    if (state) return;
    atomic_signal_fence(memory_order_seq_cst);
    port_native_irq_disabled = 0;
    if (atomic_load_explicit(&port_native_irq_pending, memory_order_relaxed) != 0u)
        port_native_take_pending();
}
static MT_INLINE bool port_in_isr(void)
{
    return port_native_in_isr != 0;
}

/* The counter read under a held lock inline (port.h,
 * PORT_COUNTER_IRQ_OFF_INLINE): every event record reads it. The simulated
 * clock's read is three loads and an add; the real clock's stays out of line
 * (port_native.c). */
#define PORT_COUNTER_IRQ_OFF_INLINE 1
extern bool port_native_realtime_counter;
extern uint32_t port_native_counter_start;
extern uint64_t port_native_sim_now;
uint32_t port_native_realtime_counter_read(void);
static MT_INLINE uint32_t port_counter_read_irq_off(void)
{
    if (port_native_realtime_counter) return port_native_realtime_counter_read();
    return port_native_counter_start + (uint32_t) port_native_sim_now;
}

#endif /* PORT_CONFIG_H */
