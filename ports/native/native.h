/* SPDX-License-Identifier: MIT */
/*
 * Native port extras: the controls a host program, a test or a benchmark
 * uses to drive a native module. Portable kernel code never includes this.
 *
 * A native module is a Linux process. Interrupts are POSIX signals that
 * really interrupt whatever is running (SIGALRM for the compare, SIGUSR1 for
 * external lines); disabling interrupts is a flag, and a signal that arrives
 * while it is set is held and taken when interrupts are enabled again, as a
 * microcontroller holds a pending interrupt.
 *
 * Two clocks. Simulated (default): the counter moves only when the module
 * sleeps (it jumps to the next event) or when a handler declares work with
 * port_native_busy(); runs are deterministic for a given seed. Real: the
 * counter is CLOCK_MONOTONIC in microseconds and sleep blocks the process.
 */
#ifndef PORT_NATIVE_H
#define PORT_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#define NATIVE_IRQ_LINES 8

typedef void (*native_isr_fn)(void);

typedef struct native_options {
    bool realtime;          /* real clock instead of the simulated one */
    uint64_t seed;          /* seed of port_native_random() */
    uint64_t until_ticks;   /* sim: halt(0) when the clock reaches it; 0 = never */
    uint32_t counter_start; /* initial counter value (to exercise the wrap) */
    const char *log_path;   /* event log dump file (event_dump.c), NULL: none */
} native_options_t;

/* Parse --sim, --realtime, --seed N, --until SECONDS, --counter-start N, --log FILE
 * (decimal or 0x hex; also --name=VALUE) from argv into *opt, which starts
 * from the defaults; exits with a usage message on a bad argument. Unknown
 * arguments are left for the caller (returns argc of the remaining ones,
 * argv[0] included, compacted into argv). */
int port_native_parse_args(int argc, char **argv, native_options_t *opt);
/* Apply options; call before motet_boot() (defaults: sim, seed 1, start 0). */
void port_native_configure(const native_options_t *opt);

/* Module time: 64-bit ticks since configure or boot (never wraps). */
uint64_t port_native_time(void);
/* Declare `ticks` of computation by the running code. Sim: the clock
 * advances and every interrupt that falls due meanwhile is delivered at its
 * exact tick, preempting the caller; time spent preempted does not count as
 * the caller's ticks. Real: spins for that long (wall clock). */
void port_native_busy(uint32_t ticks);
/* Total ticks spent in port_sleep() since configure or boot. */
uint64_t port_native_sleep_ticks(void);
/* Number of times port_sleep() was entered since configure or boot. */
uint32_t port_native_sleep_count(void);

/* Attach an interrupt service routine to external line 0..7. */
void port_native_irq_attach(uint8_t line, native_isr_fn isr);
/* Raise line now: a real signal, taken at once unless interrupts are off. */
void port_native_irq_raise(uint8_t line);
/* Raise line when the clock reaches `at` (absolute ticks; at once if it
 * has). Sim: exact. Real: polled by port_sleep() and port_native_busy(). */
void port_native_irq_schedule(uint8_t line, uint64_t at);

/* Open the event dump file (truncating it); NULL closes dumping. */
void native_event_dump_open(const char *path);
/* Drain the kernel's event ring into the dump file, if one is open. */
void native_event_dump_flush(void);
/* Flush and close the dump file. */
void native_event_dump_close(void);

/* Deterministic pseudo-random numbers (xorshift64*), seeded by options. */
uint64_t port_native_random(void);

#endif /* PORT_NATIVE_H */
