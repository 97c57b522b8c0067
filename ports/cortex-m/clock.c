/* SPDX-License-Identifier: MIT */
/*
 * Time on the Cortex-M port: the free-running counter (TIMER1 and its epoch
 * count), the kernel's compare (TIMER0), the port-private alarm (dual timer
 * 1) and the cycle counter. cortex_m.h gives the overall picture.
 *
 * Reading the clock. TIMER1 counts down from EPOCH_CLOCKS-1 to 0 and then
 * reloads; its interrupt flag rises as the value reaches 0, the old epoch's
 * last clock. The epoch count is advanced by that interrupt once the counter
 * has reloaded, or by a reader who sees the flag before the interrupt ran
 * and a value already reloaded (not 0). Either way clocks since the restart
 * are
 *     epoch * EPOCH_CLOCKS + (EPOCH_CLOCKS - 1 - value)
 * with no special case, the rule port_counter_read() follows too.
 *
 * One-shots. A CMSDK down counter loaded with n interrupts n clocks later,
 * give or take one against TIMER1's phase; both are loaded with one clock
 * to spare, and their interrupts compare the clock with the deadline before
 * acting, so they never act early. Waits beyond MAX_LOAD clocks (86 s) are
 * covered by intermediate interrupts that only re-load.
 */
#include <stddef.h>

#include "motet/port.h"
#include "motet/timer.h"
#include "mps2.h"
#include "port_cm_internal.h"

#define CLOCKS_PER_TICK PORT_CM_CLOCKS_PER_TICK
#define TICKS_PER_EPOCH PORT_CM_TICKS_PER_EPOCH
#define EPOCH_CLOCKS    PORT_CM_EPOCH_CLOCKS

_Static_assert(offsetof(cmsdk_timer_t, value) == PORT_CM_COUNTER_VALUE_OFFSET &&
                   offsetof(cmsdk_timer_t, intr) == PORT_CM_COUNTER_INTR_OFFSET,
               "port_counter_read() (port_config.h) reads TIMER1's value and intr");
#define MAX_LOAD 0x80000000u

/* A point in time: epochs and clocks into the epoch (0 .. EPOCH_CLOCKS-1). */
typedef struct clock_point {
    uint32_t epoch;
    uint32_t clocks;
} clock_point_t;

/* A one-shot timer channel driven towards a deadline in clocks. */
typedef struct oneshot {
    uint64_t due; /* clocks since the restart */
    bool armed;
    void (*load)(uint32_t clocks); /* start the hardware for this many clocks */
} oneshot_t;

static volatile uint32_t epoch;
/* The counter at the current epoch's last tick (counter_start plus the
 * epochs' ticks, less one), kept by the epoch interrupt:
 * port_counter_read() (port_config.h), which every log record pays for,
 * then needs no product and no case for the value 0. */
volatile uint32_t port_cm_epoch_last_tick;
static uint32_t counter_start;
static uint32_t next_counter_start;

/* ------------------------------------------------------------ the counter */

/* Interrupts off. Inlined: every kernel path that logs or touches a timer
 * reads the clock, several times over. */
static inline __attribute__((always_inline)) clock_point_t clock_read_locked(void)
{
    uint32_t e = epoch;
    uint32_t v = CM_TIMER1->value;
    if (CM_TIMER1->intr) { /* reached 0, the interrupt not yet run */
        v = CM_TIMER1->value;
        if (v != 0u) e++; /* reloaded: the next epoch */
    }
    return (clock_point_t){.epoch = e, .clocks = EPOCH_CLOCKS - 1u - v};
}

/* Any context: PRIMASK saved and put back around the read. */
static inline __attribute__((always_inline)) clock_point_t clock_read(void)
{
    uint32_t primask = port_cm_primask_mask();
    clock_point_t p = clock_read_locked();
    port_cm_primask_put(primask);
    return p;
}

static uint64_t point_clocks(clock_point_t p)
{
    return (uint64_t) p.epoch * EPOCH_CLOCKS + p.clocks;
}

static uint64_t point_ticks(clock_point_t p)
{
    return (uint64_t) p.epoch * TICKS_PER_EPOCH + p.clocks / CLOCKS_PER_TICK;
}

/* Raised as the value reaches 0, the old epoch's last clock: the epoch is
 * counted once the counter has reloaded (a clock later at most), so that
 * no reader sees the value 0 with the next epoch counted. */
void cm_epoch_isr(void)
{
    while (CM_TIMER1->value == 0u) continue;
    CM_TIMER1->intr = 1u;
    epoch++;
    port_cm_epoch_last_tick += TICKS_PER_EPOCH;
}

uint64_t port_cm_time(void)
{
    return point_ticks(clock_read());
}

uint64_t port_cm_clocks(void)
{
    return point_clocks(clock_read());
}

uint32_t port_cycles(void)
{
    return (uint32_t) point_clocks(clock_read());
}

void port_cm_set_counter_start(uint32_t start)
{
    next_counter_start = start;
}

/* ------------------------------------------------------------ one-shots */

/* Load the channel for the rest of its wait; interrupts off. */
static void oneshot_program(const oneshot_t *t, uint64_t now)
{
    uint64_t wait = t->due > now ? t->due - now : 0u;
    t->load(wait >= MAX_LOAD ? MAX_LOAD : (uint32_t) wait + 1u);
}

/* In the channel's interrupt: true once the deadline has come (and the
 * channel is then disarmed), else re-load for the rest. */
static bool oneshot_expired(oneshot_t *t)
{
    if (!t->armed) return false; /* cancelled after it fired */
    uint64_t now = point_clocks(clock_read());
    if (now < t->due) {
        oneshot_program(t, now);
        return false;
    }
    t->armed = false;
    return true;
}

/* ------------------------------------------------------------ the compare */

static void timer0_load(uint32_t clocks)
{
    CM_TIMER0->ctrl = 0u;
    CM_TIMER0->reload = 0xFFFFFFFFu; /* stopped by the interrupt long before */
    CM_TIMER0->value = clocks;
    CM_TIMER0->intr = 1u;
    CM_TIMER0->ctrl = TIMER_CTRL_EN | TIMER_CTRL_IE;
}

static oneshot_t compare = {.load = timer0_load};

static void timer0_stop(void)
{
    CM_TIMER0->ctrl = 0u;
    CM_TIMER0->intr = 1u;
    NVIC_ICPR(0) = 1u << IRQ_TIMER0; /* a fired, untaken compare is replaced */
}

void port_compare_set(port_counter_t at)
{
    timer0_stop();
    clock_point_t now = clock_read();
    uint64_t now_ticks = point_ticks(now);
    uint32_t distance = (uint32_t) (at - (counter_start + (uint32_t) now_ticks));
    compare.armed = true;
    if (distance == 0u || distance >= PORT_COUNTER_HALF) { /* due: take it now */
        compare.due = point_clocks(now);
        NVIC_ISPR(0) = 1u << IRQ_TIMER0;
        return;
    }
    compare.due = (now_ticks + distance) * CLOCKS_PER_TICK;
    oneshot_program(&compare, point_clocks(now));
}

void port_compare_disable(void)
{
    timer0_stop();
    compare.armed = false;
}

/* The compare's interrupt, acknowledged; its body, timer_isr_compare, if
 * the deadline tick has been reached, else NULL. */
port_cm_isr_fn cm_compare_due(void);
port_cm_isr_fn cm_compare_due(void)
{
    CM_TIMER0->ctrl = 0u;
    CM_TIMER0->intr = 1u;
    return oneshot_expired(&compare) ? timer_isr_compare : NULL;
}

/* Its entry: a kernel entry (CM_KERNEL_BODY) when the deadline is there. */
__asm__(".syntax unified\n"
        ".thumb\n"
        ".text\n"
        ".global cm_compare_isr\n"
        ".type cm_compare_isr, %function\n"
        ".thumb_func\n"
        "cm_compare_isr:\n"
        "    push {r0, lr}\n"
        "    bl cm_compare_due\n"
        "    cbnz r0, 1f\n"
        "    pop {r1, pc}\n"
        "1:\n" CM_KERNEL_BODY "    b cm_isr_exit\n"
        ".ltorg\n"
        ".size cm_compare_isr, .-cm_compare_isr\n");

/* ------------------------------------------------------------ the alarm */

static void dualtimer_load(uint32_t clocks)
{
    CM_DUALTIMER1->ctrl = 0u;
    CM_DUALTIMER1->intclr = 1u;
    CM_DUALTIMER1->load = clocks;
    CM_DUALTIMER1->ctrl = DUAL_CTRL_EN | DUAL_CTRL_IE | DUAL_CTRL_32BIT | DUAL_CTRL_ONESHOT;
}

static oneshot_t alarm = {.load = dualtimer_load};
static port_cm_isr_fn alarm_fn;

/* The lock-step fence (dual timer 2, below) shares the line: clearing the
 * line's pending bit for the alarm must not lose a fence that fired. */
static void fence_keep(void)
{
    if (CM_DUALTIMER2->mis) NVIC_ISPR(0) = 1u << IRQ_DUALTIMER;
}

static void dualtimer_stop(void)
{
    CM_DUALTIMER1->ctrl = 0u;
    CM_DUALTIMER1->intclr = 1u;
    NVIC_ICPR(0) = 1u << IRQ_DUALTIMER;
    fence_keep();
}

void port_cm_alarm_set(uint64_t at, port_cm_isr_fn fn)
{
    port_irq_state_t s = port_irq_save();
    dualtimer_stop();
    alarm_fn = fn;
    alarm.armed = true;
    alarm.due = at * CLOCKS_PER_TICK;
    uint64_t now = point_clocks(clock_read_locked());
    if (alarm.due <= now)
        NVIC_ISPR(0) = 1u << IRQ_DUALTIMER;
    else
        oneshot_program(&alarm, now);
    port_irq_restore(s);
}

void port_cm_alarm_cancel(void)
{
    port_irq_state_t s = port_irq_save();
    dualtimer_stop();
    alarm.armed = false;
    port_irq_restore(s);
}

void cm_alarm_isr(void)
{
    /* On a device (docs/bus.md, "Emulated modules") the adapter that runs
     * this core in QEMU arms the dual timer's second counter to wake the
     * core from a WFI at the end of a grant, and stops it there before its
     * interrupt is taken; one taken all the same is cleared here, or its
     * line would stay raised. Alone, nothing arms that counter. */
    if (CM_DUALTIMER2->mis) {
        CM_DUALTIMER2->intclr = 1u;
        if (!alarm.armed && !CM_DUALTIMER1->ris) return;
    }
    CM_DUALTIMER1->ctrl = 0u;
    CM_DUALTIMER1->intclr = 1u;
    if (oneshot_expired(&alarm) && alarm_fn) alarm_fn();
}

/* ------------------------------------------------------------ sleep */

uint64_t cm_clock_next_wake(void)
{
    /* The epoch interrupt rises at the epoch's last clock. */
    uint64_t wake = ((uint64_t) epoch + 1u) * EPOCH_CLOCKS - 1u;
    if (compare.armed && compare.due < wake) wake = compare.due;
    if (alarm.armed && alarm.due < wake) wake = alarm.due;
    return wake;
}

/* ------------------------------------------------------------ start-up */

/* Restart the clock: tick 0 begins now, the counter reads the start value. */
void cm_clock_init(void)
{
    timer0_stop();
    compare.armed = false;
    dualtimer_stop();
    alarm.armed = false;
    CM_TIMER1->ctrl = 0u;
    CM_TIMER1->reload = EPOCH_CLOCKS - 1u;
    CM_TIMER1->value = EPOCH_CLOCKS - 1u;
    CM_TIMER1->intr = 1u;
    NVIC_ICPR(0) = 1u << IRQ_TIMER1;
    epoch = 0;
    counter_start = next_counter_start;
    port_cm_epoch_last_tick = counter_start + TICKS_PER_EPOCH - 1u;
    CM_TIMER1->ctrl = TIMER_CTRL_EN | TIMER_CTRL_IE;

    NVIC_IPR(IRQ_TIMER1) = PORT_CM_PRIO_EPOCH;
    NVIC_IPR(IRQ_TIMER0) = PORT_CM_PRIO_COMPARE;
    NVIC_IPR(IRQ_DUALTIMER) = PORT_CM_PRIO_ALARM;
    NVIC_ISER(0) = (1u << IRQ_TIMER0) | (1u << IRQ_TIMER1) | (1u << IRQ_DUALTIMER);
    fence_keep(); /* cm_irq_init() cleared every pending line */
}
