/* SPDX-License-Identifier: MIT */
/*
 * The test-port interface on the Cortex-M port (QEMU mps2-an385, see
 * ports/cortex-m/cortex_m.h).
 *
 * Clock: the port's real counter. tport_boot() restarts it at the requested
 * value, so every test begins at the start of tick 0.
 *
 * Lines: test line n is spare NVIC line PORT_CM_SPARE_IRQ_FIRST + n, raised
 * by pending it in the NVIC; its body runs like every interrupt that posts,
 * between sched_isr_enter() and the exit dispatch.
 *
 * Work: tport_busy(n) keeps the caller occupied until the counter has
 * advanced n ticks. With interrupts enabled it waits for the port's alarm in
 * WFI rather than spinning, so that long stretches of work cost no emulation
 * time; to the kernel nothing differs from a spinning loop, since interrupts
 * preempt it at their exact ticks. With interrupts off it spins (a pending
 * interrupt would end every WFI at once). Work is the caller's own ticks,
 * as on the other ports: interrupts, and the handlers or threads they start,
 * run only where the wait loop opens interrupts, after it has counted the
 * ticks it waited, so the time they take does not count.
 *
 * Scheduled lines wait in a list ordered by time; the alarm fires at the
 * earliest and raises it. tport_busy() shares the alarm: it arms it for
 * whichever comes first, its own end or the next scheduled line.
 */
#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "test_port.h"

#define SCHEDULE_MAX 64

typedef struct scheduled_line {
    uint64_t at;
    uint8_t line;
} scheduled_line_t;

static scheduled_line_t schedule[SCHEDULE_MAX]; /* by time, then insertion */
static unsigned schedule_len;

static uint8_t line_irq(uint8_t line)
{
    return (uint8_t) (PORT_CM_SPARE_IRQ_FIRST + line);
}

/* ---- the alarm: scheduled lines ---- */

static void alarm_fired(void);

/* Arm the alarm for `limit` or the next scheduled line, whichever is first
 * (UINT64_MAX: no limit). Interrupts off. */
static void alarm_arm(uint64_t limit)
{
    uint64_t at = limit;
    if (schedule_len && schedule[0].at < at) at = schedule[0].at;
    if (at == UINT64_MAX)
        port_cm_alarm_cancel();
    else
        port_cm_alarm_set(at, alarm_fired);
}

/* Alarm interrupt: raise every line that is due, then wait for the next. */
static void alarm_fired(void)
{
    uint64_t now = port_cm_time();
    unsigned due = 0;
    while (due < schedule_len && schedule[due].at <= now) {
        port_cm_irq_raise(line_irq(schedule[due].line));
        due++;
    }
    for (unsigned i = due; i < schedule_len; i++) schedule[i - due] = schedule[i];
    schedule_len -= due;
    alarm_arm(UINT64_MAX);
}

/* ---- the test-port interface ---- */

void tport_boot(uint32_t counter_start)
{
    schedule_len = 0;
    port_cm_set_counter_start(counter_start);
    motet_boot();
}

uint64_t tport_time(void)
{
    return port_cm_time();
}

static bool irqs_off(void)
{
    port_irq_state_t s = port_irq_save();
    port_irq_restore(s);
    return s != 0;
}

/* Interrupts off: nothing can preempt, so execute instructions until the
 * deadline. Each round spins through about half the clocks left (at one
 * instruction per ns, `-icount shift=0`), so the counter is read only a few
 * dozen times: reading a device register is slow in QEMU's -icount mode. */
static void spin_until(uint64_t end)
{
    uint64_t end_clocks = end * PORT_CM_CLOCKS_PER_TICK;
    for (;;) {
        uint64_t now = port_cm_clocks();
        if (now >= end_clocks) return;
        uint64_t left = end_clocks - now;
        uint32_t loops = left > 0x1000000u ? 0x10000000u : (uint32_t) left * 10u + 1u;
        __asm volatile("1: subs %0, %0, #1\n" /* 2 instructions a loop, 20 a clock */
                       "bne 1b"
                       : "+r"(loops)
                       :
                       : "cc");
    }
}

void tport_busy(uint32_t ticks)
{
    if (irqs_off()) {
        spin_until(port_cm_time() + ticks);
        return;
    }
    uint64_t left = ticks;
    while (left) {
        port_irq_state_t s = port_irq_save();
        uint64_t from = port_cm_time();
        alarm_arm(from + left);
        if (port_cm_time() < from + left) __asm volatile("wfi" ::: "memory");
        /* Counted before the waking interrupt runs: whatever it starts is
         * not the caller's work. */
        uint64_t worked = port_cm_time() - from;
        left -= worked < left ? worked : left;
        port_irq_restore(s); /* the waking interrupt runs here */
    }
    port_irq_state_t s = port_irq_save();
    alarm_arm(UINT64_MAX); /* back to the scheduled lines alone */
    port_irq_restore(s);
}

void tport_irq_attach(uint8_t line, tport_isr_fn isr)
{
    port_cm_irq_attach(line_irq(line), isr);
}

void tport_irq_raise(uint8_t line)
{
    port_cm_irq_raise(line_irq(line));
}

void tport_irq_schedule(uint8_t line, uint64_t at)
{
    if (at <= port_cm_time()) {
        tport_irq_raise(line);
        return;
    }
    port_irq_state_t s = port_irq_save();
    if (schedule_len == SCHEDULE_MAX) port_halt(2); /* a test asked for too much */
    unsigned i = schedule_len++;
    for (; i > 0 && schedule[i - 1].at > at; i--) schedule[i] = schedule[i - 1];
    schedule[i] = (scheduled_line_t){.at = at, .line = line};
    alarm_arm(UINT64_MAX);
    port_irq_restore(s);
}

uint32_t tport_sleep_count(void)
{
    return port_cm_sleep_count();
}

uint64_t tport_sleep_ticks(void)
{
    return port_cm_sleep_ticks();
}

uintptr_t tport_interrupted_stack(void)
{
    return port_cm_interrupted_sp();
}
