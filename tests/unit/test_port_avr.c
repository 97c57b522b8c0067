/* SPDX-License-Identifier: MIT */
/*
 * The test-port interface on the AVR port (ATmega128 in simavr).
 *
 * The stepped clock. Test images link the port built with
 * PORT_AVR_TEST_CLOCK=1 (ports/avr/avr.h): Timer1, the kernel's counter,
 * is clocked only while the CPU sleeps or while tport_busy() declares work,
 * and every interrupt stops it on entry. Code then takes no ticks, as on the
 * native port's simulated clock, so the tests' exact tick counts hold; the
 * hardware still does the counting, the compare matching and the waking.
 * tport_busy() starts the clock and stops it the moment the counter has
 * moved by the ticks asked (a tight poll, far inside one 256-cycle tick);
 * ticks that nested work (a handler preempting it) declared are not its own.
 *
 * Time since boot extends TCNT1 with its overflow interrupt (TOIE1), which
 * only the tests enable. Such port-internal interrupts end no sleep:
 * port_sleep() returns only after a PORT_AVR_ISR has run.
 *
 * Lines 0..7 are the external interrupts INT0..7 (PD0..3, PE4..7), falling
 * edge. Their pins are outputs: the ATmega128 takes INTn from its own pin
 * too, the datasheet's way of making a software interrupt. A line due at a
 * tick is raised by the OCR1B compare (same counter, so exact) at that tick;
 * lines due together run in vector order (INT0 first).
 */
#include <string.h>

#include "avr.h"
#include "motet/motet.h"
#include "test_port.h"

#define SCHEDULE_MAX 8
#define BUSY_STEP    0x4000u /* ticks per poll, well inside the 16-bit range */
#define LINES_D      0x0Fu   /* INT3:0 on PD3:0 */
#define LINES_E      0xF0u   /* INT7:4 on PE7:4 */

typedef struct scheduled {
    uint64_t at;
    uint8_t line;
} scheduled_t;

static tport_isr_fn line_isr[TPORT_IRQ_LINES];
static scheduled_t schedule[SCHEDULE_MAX]; /* by time, then scheduling order */
static uint8_t schedule_len;

static volatile uint32_t wraps; /* Timer1 overflows since boot */
static uint16_t boot_count;
static uint64_t busy_nested; /* ticks declared by busy calls, see tport_busy() */

static bool asleep; /* the clock runs for a sleep */
static uint64_t sleep_began;
static uint32_t sleep_count;
static uint64_t sleep_ticks;

/* --------------------------------------------------------------- the clock */

static uint16_t tcnt1(void)
{
    uint8_t sreg = SREG;
    cli();
    uint16_t c = TCNT1;
    SREG = sreg;
    return c;
}

/* TCNT1 extended by the overflows, a wrap not yet taken included. */
static uint64_t ext_now(void)
{
    uint8_t sreg = SREG;
    cli();
    uint16_t c = TCNT1;
    uint32_t w = wraps;
    if (TIFR & _BV(TOV1)) {
        c = TCNT1;
        w++;
    }
    SREG = sreg;
    return ((uint64_t) w << 16) | c;
}

uint64_t tport_time(void)
{
    return ext_now() - boot_count;
}

/* Run the clock until the counter has moved n ticks, then stop it. */
static void spin(uint16_t n)
{
    uint8_t before = TCCR1B;
    uint16_t start = tcnt1();
    TCCR1B = PORT_AVR_TIMER1_CS;
    while ((uint16_t) (tcnt1() - start) < n) {
    }
    TCCR1B = before;
}

/* Ticks elapse only here and in sleep. Preempting work that declares its own
 * ticks (a handler run at interrupt exit) advances the counter too; those
 * are subtracted, as the native port does not count preemption as the
 * caller's work. */
void tport_busy(uint32_t ticks)
{
    uint64_t t0 = ext_now();
    uint64_t nested0 = busy_nested;
    for (;;) {
        uint64_t own = ext_now() - t0 - (busy_nested - nested0);
        if (own >= ticks) break;
        uint32_t left = ticks - (uint32_t) own;
        spin(left > BUSY_STEP ? BUSY_STEP : (uint16_t) left);
    }
    busy_nested = nested0 + (ext_now() - t0);
}

/* An interrupt stopped the clock; if it ran for a sleep, that sleep ends
 * here and the clock stays off after the interrupt. */
uint8_t tport_avr_isr_enter(uint8_t clock_select)
{
    if (!asleep) return clock_select;
    asleep = false;
    sleep_ticks += ext_now() - sleep_began;
    return 0;
}

void tport_avr_sleep_enter(void)
{
    sleep_count++;
}

/* Something must be able to end the sleep: the kernel's compare, a
 * scheduled line, or a line already raised (a scheduled one is raised from
 * the compare interrupt, and taken only once interrupts are on again); the
 * overflow interrupt alone never does. Otherwise stop, as the native port
 * does. */
void tport_avr_sleep_begin(void)
{
    bool line_pending = (EIFR & EIMSK) != 0;
    if (!(TIMSK & _BV(OCIE1A)) && schedule_len == 0 && !line_pending) {
        static const char msg[] = "avr test: idle with nothing scheduled, stopping\n";
        port_console_write(msg, sizeof msg - 1);
        port_halt(0);
    }
    sleep_began = ext_now();
    asleep = true;
    TCCR1B = PORT_AVR_TIMER1_CS;
}

void tport_avr_sleep_end(void)
{
    if (!asleep) return;
    TCCR1B = 0;
    asleep = false;
    sleep_ticks += ext_now() - sleep_began;
}

/* The test port's own interrupts stop the clock as their first act and keep
 * their work in a separate function, so that the entry (which saves only
 * the registers a call may clobber) stays well inside one 256-cycle tick. */
#define CLOCKED_ISR(vector, body)                                                                  \
    ISR(vector)                                                                                    \
    {                                                                                              \
        uint8_t clock_select = TCCR1B;                                                             \
        TCCR1B = 0;                                                                                \
        TCCR1B = body(tport_avr_isr_enter(clock_select));                                          \
    }

__attribute__((noinline)) static uint8_t count_wrap(uint8_t clock_select)
{
    wraps++;
    return clock_select;
}
CLOCKED_ISR(TIMER1_OVF_vect, count_wrap)

/* ---------------------------------------------------------- external lines */

static void lines_init(void)
{
    EIMSK = 0;
    PORTD |= LINES_D;
    DDRD |= LINES_D;
    PORTE |= LINES_E;
    DDRE |= LINES_E;
    EICRA = 0xAA; /* ISCn1:0 = 10: falling edge, each line */
    EICRB = 0xAA;
    EIFR = 0xFF;
    EIMSK = 0xFF;
}

/* A falling edge on the line's own pin sets its flag; back high at once. */
static void line_pulse(uint8_t line)
{
    uint8_t sreg = SREG;
    cli();
    if (line < 4) {
        PORTD &= (uint8_t) ~_BV(line);
        PORTD |= _BV(line);
    } else {
        PORTE &= (uint8_t) ~_BV(line);
        PORTE |= _BV(line);
    }
    SREG = sreg; /* enabled: taken after the next instruction */
    __asm__ volatile("nop" ::: "memory");
}

static void line_run(uint8_t line)
{
    if (line_isr[line]) line_isr[line]();
}

#define LINE_ISR(n)                                                                                \
    PORT_AVR_ISR(INT##n##_vect)                                                                    \
    {                                                                                              \
        line_run(n);                                                                               \
    }
LINE_ISR(0)
LINE_ISR(1)
LINE_ISR(2)
LINE_ISR(3)
LINE_ISR(4)
LINE_ISR(5)
LINE_ISR(6)
LINE_ISR(7)

void tport_irq_attach(uint8_t line, tport_isr_fn isr)
{
    if (line < TPORT_IRQ_LINES) line_isr[line] = isr;
}

void tport_irq_raise(uint8_t line)
{
    if (line < TPORT_IRQ_LINES) line_pulse(line);
}

/* --------------------------------------------------------- scheduled lines */

/* OCR1B for the earliest scheduled line: set one below its count, as the
 * flag sets when the counter steps past OCR1B (see port_avr_timer.c). If it
 * is more than a wrap away, the compare comes once per wrap until due. */
static void schedule_arm(void)
{
    if (schedule_len == 0) {
        TIMSK &= (uint8_t) ~_BV(OCIE1B);
        return;
    }
    OCR1B = (uint16_t) (schedule[0].at + boot_count - 1u);
    TIFR = _BV(OCF1B);
    TIMSK |= _BV(OCIE1B);
}

__attribute__((noinline)) static uint8_t raise_due_lines(uint8_t clock_select)
{
    uint64_t now = tport_time();
    while (schedule_len && schedule[0].at <= now) {
        uint8_t line = schedule[0].line;
        schedule_len--;
        memmove(&schedule[0], &schedule[1], schedule_len * sizeof schedule[0]);
        line_pulse(line); /* its interrupt follows this one's */
    }
    schedule_arm();
    return clock_select;
}
CLOCKED_ISR(TIMER1_COMPB_vect, raise_due_lines)

void tport_irq_schedule(uint8_t line, uint64_t at)
{
    if (line >= TPORT_IRQ_LINES) return;
    if (at <= tport_time()) {
        tport_irq_raise(line);
        return;
    }
    port_irq_state_t s = port_irq_save();
    if (schedule_len == SCHEDULE_MAX) {
        static const char msg[] = "avr test: too many scheduled lines\n";
        port_console_write(msg, sizeof msg - 1);
        port_halt(2);
    }
    uint8_t i = schedule_len;
    while (i > 0 && schedule[i - 1].at > at) {
        schedule[i] = schedule[i - 1];
        i--;
    }
    schedule[i] = (scheduled_t){.at = at, .line = line};
    schedule_len++;
    schedule_arm();
    port_irq_restore(s);
}

/* --------------------------------------------------------- boot, statistics */

void tport_boot(uint32_t counter_start)
{
    cli();
    memset(line_isr, 0, sizeof line_isr);
    schedule_len = 0;
    wraps = 0;
    busy_nested = 0;
    asleep = false;
    sleep_count = 0;
    sleep_ticks = 0;
    /* A 16-bit counter keeps the low half of a 32-bit start. */
    port_avr_counter_preset = (uint16_t) counter_start;
    boot_count = port_avr_counter_preset;
    motet_boot(); /* the clock stays stopped: PORT_AVR_TEST_CLOCK */
    port_irq_state_t s = port_irq_save();
    port_avr_sleep_limit(PORT_SLEEP_IDLE); /* Timer1's extra interrupts wake */
    lines_init();
    TIFR = _BV(TOV1) | _BV(OCF1B);
    TIMSK |= _BV(TOIE1);
    port_irq_restore(s);
}

uint32_t tport_sleep_count(void)
{
    return sleep_count;
}

uint64_t tport_sleep_ticks(void)
{
    return sleep_ticks;
}

/* Interrupts run on the interrupted stack: the stack pointer is there. */
uintptr_t tport_interrupted_stack(void)
{
    return (uintptr_t) SP;
}
