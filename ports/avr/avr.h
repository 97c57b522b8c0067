/* SPDX-License-Identifier: MIT */
/*
 * AVR port extras: what an ATmega128 application, a test or a benchmark
 * uses beyond motet/port.h. Portable kernel code never includes this.
 *
 * Interrupts that may post messages are written with PORT_AVR_ISR, which
 * wraps the body in the kernel's interrupt hooks and runs the exit dispatch
 * at the tail, still in the interrupt's frame on the one stack (rule 3,
 * docs/architecture.md):
 *
 *     PORT_AVR_ISR(INT4_vect)
 *     {
 *         sched_post_isr(PID_RADIO, PORT_0, NULL, 0, 0);
 *     }
 *
 * port_in_isr() is true in the body and false in the tail. An interrupt
 * that wakes the module from port_sleep() ends the sleep only if its exit
 * left the main loop something to decide (sched_isr_exit()); otherwise the
 * core sleeps on from where it was, without the way back through the main
 * loop. The tail turns
 * interrupts on only while it runs a handler that outranks the interrupted
 * one (sched_isr_exit()); interrupts that arrive then nest (each
 * runs its own body and tail), and a tail with nothing to run returns
 * without letting one in, so at most one interrupt per priority level
 * plus one sits on the stack (ports/avr/stack.annot). An
 * interrupt that posts nothing may use plain ISR() from <avr/interrupt.h>;
 * it then neither ends a sleep (port_sleep() goes back to sleep) nor
 * dispatches anything. "Posts" means every *_isr call, not only
 * sched_post_isr(): sem_post_isr(), thread_resume_isr(), msgq_send_isr(),
 * events_set_isr() and pool_free() from an interrupt make a thread ready
 * or queue a message, and only PORT_AVR_ISR's exit decides who runs next;
 * under plain ISR() the woken thread or task waits for the interrupted
 * context's next scheduling point, or for ever.
 *
 * Unit tests (tests/unit/test_port_avr.c) build the port with
 * PORT_AVR_TEST_CLOCK=1: Timer1 is then clocked only while the CPU sleeps or
 * while a test declares work with tport_busy(), so code takes no ticks, as on
 * the native port's simulated clock; each interrupt stops the clock on entry
 * and puts it back on exit. The test port supplies the tport_avr_ hooks.
 */
#ifndef PORT_AVR_H
#define PORT_AVR_H

#include <avr/interrupt.h>
#include <avr/io.h>
#include <stdint.h>

#include "motet/port.h"
#include "motet/sched.h"

#ifndef PORT_AVR_TEST_CLOCK
#define PORT_AVR_TEST_CLOCK 0
#endif

/* 1 while a PORT_AVR_ISR body runs (port_in_isr()). Bodies never nest:
 * the hardware enters every interrupt with the I bit clear and a body
 * keeps it so (port.h); only the tails, where it is 0, let others in. So a
 * flag, stored, not a depth counted up and down. */
extern volatile uint8_t port_avr_in_body;
/* Set by a PORT_AVR_ISR whose exit says the main loop must look again
 * (sched_isr_exit()): until then port_sleep() sleeps on. Set after the exit
 * dispatch: only the sleep loop reads it, once the interrupt has returned
 * to it. */
extern volatile uint8_t port_avr_woken;

/* Test-clock hooks, defined by the test port and called only when
 * PORT_AVR_TEST_CLOCK is 1. An interrupt entry stops Timer1 first thing and
 * hands over the clock-select bits it found; the hook returns what to put
 * back on exit (0 when the clock was running for a sleep). */
uint8_t tport_avr_isr_enter(uint8_t clock_select);
void tport_avr_sleep_enter(void);
void tport_avr_sleep_begin(void);
void tport_avr_sleep_end(void);

#if PORT_AVR_TEST_CLOCK
#define PORT_AVR_CLOCK_ENTER()                                                                     \
    uint8_t port_avr_clock_ = TCCR1B;                                                              \
    TCCR1B = 0;                                                                                    \
    port_avr_clock_ = tport_avr_isr_enter(port_avr_clock_)
#define PORT_AVR_CLOCK_EXIT() (TCCR1B = port_avr_clock_)
/* A body kept out of line keeps the entry (and so the clock stop) short. */
#define PORT_AVR_BODY static __attribute__((noinline))
#else
#define PORT_AVR_CLOCK_ENTER() ((void) 0)
#define PORT_AVR_CLOCK_EXIT()  ((void) 0)
#define PORT_AVR_BODY          static inline __attribute__((always_inline))
#endif

/* The watchdog (port_avr_watchdog.c) is stopped while the core sleeps; the
 * first PORT_AVR_ISR after the sleep restarts it before its tail may run a
 * handler, which the watchdog must then see. Later interrupts do not kick
 * it: a handler that never returns is reset however many come. */
#ifdef PORT_AVR_WATCHDOG
extern volatile uint8_t port_avr_watchdog_stopped;
void port_avr_watchdog_wake(void);
#define PORT_AVR_WATCHDOG_RESUME()                                                                 \
    do {                                                                                           \
        if (port_avr_watchdog_stopped) port_avr_watchdog_wake();                                   \
    } while (0)
#else
#define PORT_AVR_WATCHDOG_RESUME() ((void) 0)
#endif

/* Set by port_sleep() with interrupts off right before its SLEEP, cleared
 * after it (port_avr_irq.c). A PORT_AVR_ISR that finds it set came at that
 * SLEEP, where the sleep loop keeps nothing in the registers a call may
 * clobber (its asm names them all), so its entry saves none of them: only
 * SREG and the one register the test needs. It clears the flag before its
 * tail may let another interrupt in. An interrupt of running code saves
 * them all, as any C interrupt routine that calls out does. A plain ISR()
 * must therefore not turn interrupts on: a PORT_AVR_ISR nested in it would
 * take the sleep's entry. */
extern volatile uint8_t port_avr_sleeping;

/* The entry and exit of a PORT_AVR_ISR around `run`, its body and tail as
 * a C function: the two register sets above. (Not with the test clock,
 * whose interrupts must stop Timer1 first thing: they save them all.) */
#ifdef __AVR_HAVE_RAMPZ__
#define PORT_AVR_SAVE_RAMPZ    "in r0, __RAMPZ__\n\tpush r0\n\t"
#define PORT_AVR_RESTORE_RAMPZ "pop r0\n\tout __RAMPZ__, r0\n\t"
#else
#define PORT_AVR_SAVE_RAMPZ    ""
#define PORT_AVR_RESTORE_RAMPZ ""
#endif
#define PORT_AVR_ENTRY_EXIT(run)                                                                   \
    "push r24\n\tin r24, __SREG__\n\tpush r24\n\t"                                                 \
    "lds r24, port_avr_sleeping\n\ttst r24\n\tbrne 1f\n\t"                                         \
    "push r0\n\tpush r1\n\tclr r1\n\t" PORT_AVR_SAVE_RAMPZ                                         \
    "push r18\n\tpush r19\n\tpush r20\n\tpush r21\n\tpush r22\n\tpush r23\n\t"                     \
    "push r25\n\tpush r26\n\tpush r27\n\tpush r30\n\tpush r31\n\t"                                 \
    "call " run "\n\t"                                                                             \
    "pop r31\n\tpop r30\n\tpop r27\n\tpop r26\n\tpop r25\n\t"                                      \
    "pop r23\n\tpop r22\n\tpop r21\n\tpop r20\n\tpop r19\n\tpop r18\n\t" PORT_AVR_RESTORE_RAMPZ    \
    "pop r1\n\tpop r0\n\tpop r24\n\tout __SREG__, r24\n\tpop r24\n\treti\n"                        \
    "1:\tsts port_avr_sleeping, r1\n\t" /* r1 is 0 at the SLEEP */                                 \
    "call " run "\n\t"                                                                             \
    "pop r24\n\tout __SREG__, r24\n\tpop r24\n\treti"

/* A PORT_AVR_ISR's body between the kernel's hooks, then its tail: the
 * exit dispatch, which says whether the main loop must look again. */
#define PORT_AVR_BODY_AND_TAIL(body)                                                               \
    do {                                                                                           \
        port_avr_in_body = 1;                                                                      \
        sched_isr_enter();                                                                         \
        body();                                                                                    \
        port_avr_in_body = 0;                                                                      \
        PORT_AVR_WATCHDOG_RESUME();                                                                \
        if (sched_isr_exit()) port_avr_woken = 1;                                                  \
    } while (0)

/* Define the service routine of `vector` (an avr-libc name such as
 * TIMER1_COMPA_vect); the braces that follow are its body. */
#if PORT_AVR_TEST_CLOCK
#define PORT_AVR_ISR(vector)                                                                       \
    PORT_AVR_BODY void vector##_body(void);                                                        \
    ISR(vector)                                                                                    \
    {                                                                                              \
        PORT_AVR_CLOCK_ENTER();                                                                    \
        PORT_AVR_BODY_AND_TAIL(vector##_body);                                                     \
        PORT_AVR_CLOCK_EXIT();                                                                     \
    }                                                                                              \
    PORT_AVR_BODY void vector##_body(void)
#else
/* The entry is assembly at file scope, not a naked C function: GCC cannot
 * size a naked function's frame (-fstack-usage fails on it under
 * -Werror), and this entry's frame is its pushes alone, which `motet stack`
 * reads from them; every C function of the file gets an exact frame. The
 * code is the naked function's, in the section it had. */
#define PORT_AVR_ISR_NAME(vector)  PORT_AVR_ISR_NAME_(vector)
#define PORT_AVR_ISR_NAME_(vector) #vector
/* The entry's section, symbol and label; then its size, back in the section
 * GCC was in. */
#define PORT_AVR_ISR_HEAD(name)                                                                    \
    ".section .text." name ",\"ax\",@progbits\n.global " name "\n.type " name ", @function\n" name \
    ":\n\t"
#define PORT_AVR_ISR_TAIL(name) "\n.size " name ", .-" name "\n.previous"
#define PORT_AVR_ISR_ENTRY(name, run)                                                              \
    __asm__(PORT_AVR_ISR_HEAD(name) PORT_AVR_ENTRY_EXIT(run) PORT_AVR_ISR_TAIL(name))
/* avr-libc defines VECTOR_num for every vector name: a misspelled one
 * fails here, where a symbol of that name would link and leave the real
 * vector on BADISR, a halt at run time (ISR() makes the compiler check the
 * name, a symbol at file scope does not). */
#define PORT_AVR_ISR(vector)                                                                       \
    _Static_assert(vector##_num >= 0, #vector " is no avr-libc vector name");                      \
    PORT_AVR_BODY void vector##_body(void);                                                        \
    __attribute__((used, noinline, noclone)) static void vector##_run(void)                        \
    {                                                                                              \
        PORT_AVR_BODY_AND_TAIL(vector##_body);                                                     \
    }                                                                                              \
    PORT_AVR_ISR_ENTRY(PORT_AVR_ISR_NAME(vector), #vector "_run");                                 \
    PORT_AVR_BODY void vector##_body(void)
#endif

/* Counter value port_init() starts Timer1 at (default 0); tests set it to
 * begin near a wrap. */
extern uint16_t port_avr_counter_preset;

/* Deepest mode port_sleep() may use. Power-save stops Timer1 and every
 * clkIO peripheral; lower the limit to PORT_SLEEP_IDLE while such a
 * peripheral (a second timer, a UART receiver) must wake the module. */
void port_avr_sleep_limit(port_sleep_mode_t deepest);

/* Stack discipline: the free RAM between the static data and the top of the
 * stack is painted at start-up; the high-water mark is the painted bytes
 * that were overwritten since. port_halt() reports it to the harness. */
uint16_t port_avr_stack_used(void);
/* Bytes between the end of the static data and the top of the stack. */
uint16_t port_avr_stack_size(void);

/* MCUCSR as the chip's last reset left it (PORF, EXTRF, BORF, WDRF, JTRF):
 * why the module booted (port_avr_watchdog.c). */
uint8_t port_avr_reset_cause(void);

/* Wait until the console has sent its last byte. */
void port_avr_console_flush(void);

#endif /* PORT_AVR_H */
