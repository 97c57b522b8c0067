/* SPDX-License-Identifier: MIT */
/*
 * AVR port constants: an ATmega128 at F_CPU = 4 or 8 MHz (CMake cache
 * variable MOTET_AVR_F_CPU, passed to every file as F_CPU).
 *
 * The counter is Timer/Counter1, free running in normal mode from the
 * system clock through the /256 prescaler; OCR1A is the kernel's compare.
 *
 *   F_CPU   tick    ticks/s   counter wraps   longest compare (half range)
 *   8 MHz   32 us    31250    every 2.10 s    1.05 s
 *   4 MHz   64 us    15625    every 4.19 s    2.10 s
 *
 * Why /256: the kernel re-arms the compare at least every half range to see
 * every wrap, so a module waiting on a long timer wakes every 1.05 s (8 MHz)
 * rather than every 262 ms at /64 or 33 ms at /8; a timer of up to a second
 * costs one interrupt per expiry. A tick also stays far longer than the
 * port's interrupt entry (about 45 cycles), which the unit tests' stepped
 * clock relies on (avr.h).
 */
#ifndef PORT_CONFIG_H
#define PORT_CONFIG_H

#ifndef F_CPU
#error "the AVR port needs F_CPU (set by ports/avr/port.cmake)"
#endif

#define PORT_NAME    "avr"
#define PORT_HAS_BUS 1 /* port_avr_bus.c, with MOTET_BUS */
/* Instruction-set properties (port.h). */
#define PORT_SHIFT_LOOPS  1
#define PORT_COUNTER_BITS 16
/* Timer1 prescaler and the clock-select bits (CS12:0) that choose it. */
#define PORT_AVR_PRESCALER    256u
#define PORT_AVR_TIMER1_CS    0x04u
#define PORT_TICKS_PER_SECOND (F_CPU / PORT_AVR_PRESCALER) /* usable in #if */
/* Timer1 stops in every mode below idle, so DEEP would be idle too (see
 * port_sleep()): no deep mode, and no clock read per sleep to pick one. */
#define PORT_SLEEP_DEEP_MIN_TICKS PORT_SLEEP_NO_DEEP

/* Threads (port_avr_context.c): a suspended context is its stack pointer,
 * with 20 bytes below it (18 call-saved registers, the return address).
 * Interrupts land on whatever stack is current, so a thread stack also
 * holds what an interrupt puts there: its frame, its body and its exit up
 * to the switch away (another 20 bytes). EXTRA is the stack analyser's
 * figure for that, over the port's interrupt entries (ports/avr/stack.annot):
 * `motet stack` reports it as "interrupts on a thread". The AVR test
 * stack_thread_prio_log_avr fails if EXTRA falls below it in the default
 * kernel's image core_avr_full.elf (90 B, the event log on); the tests
 * stack_thread_<policy>_avr do the same on the energy benchmark's image of
 * each policy (log off). Policies that charge and re-arm kernel timers at
 * the interrupt exit (RR slices, RETOS and VOP quanta) go deeper (115-119 B)
 * and get the TIMED figure (docs/threads.md, "Thread stacks"). MIN is what
 * a guarded thread of unknown need gets. */
#define PORT_HAS_THREADS 1
typedef struct port_context {
    uint8_t *sp;
} port_context_t;
#define PORT_AVR_THREAD_EXTRA       112u
#define PORT_AVR_THREAD_EXTRA_TIMED 144u
#if MOTET_THREAD_TIMED
#define PORT_THREAD_STACK_EXTRA PORT_AVR_THREAD_EXTRA_TIMED
#else
#define PORT_THREAD_STACK_EXTRA PORT_AVR_THREAD_EXTRA
#endif
#define PORT_THREAD_STACK_MIN 256u

/* Constant tables stay in flash (port.h, PORT_CONST_TABLE), read with LPM:
 * 4 KB of SRAM holds no copy of them. */
#include <avr/pgmspace.h>
#define PORT_CONST_TABLE PROGMEM
static MT_INLINE uint16_t port_const_u16(const uint16_t *p)
{
    return pgm_read_word(p);
}

/* External SRAM as a section: with PORT_AVR_XMEM (the memory interface
 * on), an image linked with ports/avr/xmem.ld (motet_avr_xmem_section())
 * has section .xmem at 0x1100, the first external address, not loaded and
 * not cleared at boot (its users initialise what they keep there). There
 * PORT_AVR_XMEM_POOL = 1 puts the message pool (port.h, PORT_POOL_RAM):
 * 255 blocks of 19 bytes would take more than the 4 KB inside. An external
 * access costs the chip one cycle more than an internal one (no wait
 * states); simavr charges none. */
#define PORT_AVR_XMEM_SECTION __attribute__((section(".xmem")))
#if defined(PORT_AVR_XMEM_POOL) && PORT_AVR_XMEM_POOL
#if !defined(PORT_AVR_XMEM) || !PORT_AVR_XMEM
#error "PORT_AVR_XMEM_POOL needs PORT_AVR_XMEM (the memory interface on)"
#endif
#define PORT_POOL_RAM PORT_AVR_XMEM_SECTION
#endif

/* Interrupt primitives inline (port.h, PORT_IRQ_INLINE): a call costs more
 * than the SREG access it wraps, and the kernel's hot paths take the lock
 * several times. The state is SREG itself, put back whole by one OUT: no
 * mask when saving, no test when restoring (its other flags mean nothing
 * between C statements). */
#include <avr/io.h>
#define PORT_IRQ_INLINE 1
/* An interrupt's body runs with the I bit clear (port.h): the hardware
 * clears it on entry and PORT_AVR_ISR sets it only in the exit dispatch. */
#define PORT_ISR_IRQ_OFF 1
/* 1 while a PORT_AVR_ISR body runs (port_avr_irq.c). */
extern volatile uint8_t port_avr_in_body;
static MT_INLINE uint8_t port_irq_save(void)
{
    uint8_t was = SREG;
    __asm__ volatile("cli" ::: "memory");
    return was;
}
/* The NOP: a pending interrupt comes before the caller's next statement,
 * as it did when SEI (whose next instruction always runs first) was
 * followed by the RET of a call. */
static MT_INLINE void port_irq_restore(uint8_t state)
{
    __asm__ volatile("out __SREG__, %0\n\tnop" ::"r"(state) : "memory");
}
static MT_INLINE bool port_in_isr(void)
{
    return port_avr_in_body != 0;
}
/* Enabling inline too (PORT_IRQ_ENABLE_INLINE): the scheduler's drain loop
 * enables once per message it runs. The NOP as in port_irq_restore(). */
#define PORT_IRQ_ENABLE_INLINE 1
static MT_INLINE void port_irq_enable(void)
{
    __asm__ volatile("sei\n\tnop" ::: "memory");
}
/* Disabling without reading SREG first (PORT_IRQ_DISABLE_INLINE): the
 * drain takes the lock after each handler it ran with interrupts enabled. */
#define PORT_IRQ_DISABLE_INLINE 1
static MT_INLINE void port_irq_disable(void)
{
    __asm__ volatile("cli" ::: "memory");
}

/* The counter inline too (port.h, PORT_COUNTER_INLINE): Timer1 in normal
 * mode (port_avr_timer.c), read through the shared TEMP register, so with
 * interrupts held off; a caller already holding them off skips the SREG
 * save (PORT_COUNTER_IRQ_OFF_INLINE), as every event record does. */
#define PORT_COUNTER_INLINE         1
#define PORT_COUNTER_IRQ_OFF_INLINE 1
static MT_INLINE uint16_t port_counter_read_irq_off(void)
{
    return TCNT1;
}
static MT_INLINE uint16_t port_counter_read(void)
{
    uint8_t sreg = SREG;
    __asm__ volatile("cli" ::: "memory");
    uint16_t now = port_counter_read_irq_off();
    SREG = sreg;
    return now;
}

/* The compare inline too (port.h, PORT_COMPARE_INLINE): OCR1A, whose match
 * sets OCF1A as TCNT1 steps from OCR1A to OCR1A + 1, so the compare for
 * `at` is at - 1 and the interrupt comes as the counter reaches `at`. A
 * flag left from an earlier match would fire at once; a match of the new
 * value cleared here is seen by the kernel's re-read of the counter. */
#define PORT_COMPARE_INLINE 1
static MT_INLINE void port_compare_set(uint16_t at)
{
    OCR1A = (uint16_t) (at - 1u);
    TIFR = _BV(OCF1A);
    TIMSK |= _BV(OCIE1A);
}

#endif /* PORT_CONFIG_H */
