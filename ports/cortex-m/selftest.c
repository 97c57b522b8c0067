/* SPDX-License-Identifier: MIT */
/*
 * Tests of the Cortex-M port itself: what the kernel's tests (tests/unit,
 * which run on this port too) cannot see from the outside. The exit
 * dispatch nests and coalesces as rule 3 needs, starts from PendSV when
 * the last body to return had no exit of its own, and gives the interrupted
 * code back every register and flag; the clock stays continuous across an
 * epoch wrap seen with interrupts off; queued messages keep their order
 * while interrupts land anywhere in a drain; compares land on their exact tick at
 * every distance, including beyond one TIMER0 load and one epoch; wake-ups
 * for the port's own bookkeeping do not end a sleep; the stack painting
 * measures; threads run on PSP, interrupt bodies on MSP, and a thread
 * preempted at an interrupt exit gets every register back; a thread that
 * overflows its stack is stopped by the MPU guard and ended, the module
 * going on.
 */
#include <string.h>

#include <cmocka.h>

#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "mps2.h"

#define LINE_LOW        (PORT_CM_SPARE_IRQ_FIRST + 0u)
#define LINE_HIGH       (PORT_CM_SPARE_IRQ_FIRST + 1u)
#define TICKS_PER_EPOCH (0xFFFFFFFFu / PORT_CM_CLOCKS_PER_TICK)

enum {
    PID_LOW = 0x20,
    PID_HIGH,
    PID_TIMED,
    PID_TICKER,
    PID_DISPATCHER,
    PID_WORKER /* .. PID_WORKER + WORKERS - 1 */
};
#define WORKERS      5u
#define STRESS_TICKS 1000u

static char trace[64];
static uint8_t high_depth;
static bool low_in_isr, high_in_isr;
static bool raise_high_in_low; /* the low task's handler raises LINE_HIGH */
static uint64_t timed_at;      /* port_cm_time() when PID_TIMED's timer fired */

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

/* ---- tasks and interrupt bodies ---- */

static mt_err_t low_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    note("L(");
    low_in_isr = port_in_isr();
    if (raise_high_in_low) port_cm_irq_raise(LINE_HIGH);
    note(")L ");
    return MT_OK;
}

static mt_err_t high_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    note("H ");
    high_depth = sched_stack_depth();
    high_in_isr = port_in_isr();
    return MT_OK;
}

static mt_err_t timed_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_TIMEOUT0) timed_at = port_cm_time();
    return MT_OK;
}

static void isr_post_low(void)
{
    note("isrL ");
    assert_int_equal(sched_post_isr(PID_LOW, PORT_0, NULL, 0, 0), MT_OK);
}

static void isr_post_high(void)
{
    note("isrH ");
    assert_int_equal(sched_post_isr(PID_HIGH, PORT_0, NULL, 0, 0), MT_OK);
}

/* The low line's body raises the high line, whose NVIC priority is more
 * urgent: the high body preempts the low body. */
static void isr_low_raises_high(void)
{
    note("isrL( ");
    port_cm_irq_raise(LINE_HIGH);
    assert_int_equal(sched_post_isr(PID_LOW, PORT_0, NULL, 0, 0), MT_OK);
    note(")isrL ");
}

/* The low line's body, without the kernel's hooks, raises the high line:
 * the high body preempts it and posts, returning to a handler. */
static void direct_raises_high(void)
{
    note("dir( ");
    port_cm_irq_raise(LINE_HIGH);
    note(")dir ");
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static int setup(void **state)
{
    (void) state;
    port_cm_set_counter_start(0);
    motet_boot();
    memset(trace, 0, sizeof trace);
    raise_high_in_low = false;
    make_task(PID_LOW, 2, low_task);
    make_task(PID_HIGH, 5, high_task);
    make_task(PID_TIMED, 3, timed_task);
    port_cm_irq_attach(LINE_LOW, isr_post_low);
    port_cm_irq_attach(LINE_HIGH, isr_post_high);
    return 0;
}

/* ---- the exit dispatch ---- */

static void test_handler_at_exit_is_preempted_by_a_higher_one(void **state)
{
    (void) state;
    raise_high_in_low = true;
    port_cm_irq_raise(LINE_LOW);
    /* H ran at the exit of the second interrupt, above L, before L's raise
     * returned: each exit dispatch nests on the stack it interrupted. */
    assert_string_equal(trace, "isrL L(isrH H )L ");
    assert_int_equal(high_depth, 2);
    assert_false(low_in_isr);
    assert_false(high_in_isr);
    assert_int_equal(port_cm_exit_dispatches(), 2);
}

static void test_nested_bodies_share_one_exit_dispatch(void **state)
{
    (void) state;
    port_cm_irq_attach(LINE_LOW, isr_low_raises_high);
    port_cm_irq_set_priority(LINE_HIGH, 0x40u);
    port_cm_irq_raise(LINE_LOW);
    /* Both bodies ran first (the high one inside the low one), then one
     * PendSV ran both handlers, the higher first. */
    assert_string_equal(trace, "isrL( isrH )isrL H L()L ");
    assert_int_equal(port_cm_exit_dispatches(), 1);
    assert_int_equal(port_cm_kernel_irqs(), 2);
}

static void test_exit_under_a_body_without_hooks_runs_from_pendsv(void **state)
{
    (void) state;
    port_cm_irq_attach_direct(LINE_LOW, direct_raises_high);
    port_cm_irq_set_priority(LINE_HIGH, 0x40u);
    port_cm_irq_raise(LINE_LOW);
    /* The high body returned to the direct one, which has no exit of its
     * own: PendSV decided once both had returned, and H ran at that exit,
     * in thread mode. */
    assert_string_equal(trace, "dir( isrH )dir H ");
    assert_int_equal(high_depth, 1);
    assert_false(high_in_isr);
    assert_int_equal(port_cm_exit_dispatches(), 1);
    assert_int_equal(port_cm_kernel_irqs(), 1);
}

/* Load r0-r3, r12 and the flags, pend the low line (its handler runs at the
 * exit and clobbers them, being C), then read them all back. */
static void run_interrupted_code(uint32_t flags, uint32_t out[6])
{
    uint32_t flags_after;
    __asm volatile("movw r0, #0x1111\n"
                   "movt r0, #0x1010\n"
                   "movw r1, #0x2222\n"
                   "movt r1, #0x2020\n"
                   "movw r2, #0x3333\n"
                   "movt r2, #0x3030\n"
                   "movw r3, #0x4444\n"
                   "movt r3, #0x4040\n"
                   "movw r12, #0x5555\n"
                   "movt r12, #0x5050\n"
                   "msr APSR_nzcvq, %[flags]\n"
                   "str %[bit], [%[ispr]]\n"
                   "dsb\n"
                   "isb\n" /* the interrupt and its exit dispatch run here */
                   "mrs %[after], APSR\n"
                   "str r0, [%[out], #0]\n"
                   "str r1, [%[out], #4]\n"
                   "str r2, [%[out], #8]\n"
                   "str r3, [%[out], #12]\n"
                   "str r12, [%[out], #16]\n"
                   : [after] "=&r"(flags_after)
                   : [flags] "r"(flags), [bit] "r"(1u << (LINE_LOW % 32u)),
                     [ispr] "r"(&NVIC_ISPR(LINE_LOW / 32u)), [out] "r"(out)
                   : "r0", "r1", "r2", "r3", "r12", "cc", "memory");
    out[5] = flags_after & 0xF8000000u;
}

static void test_interrupted_code_gets_its_registers_and_flags_back(void **state)
{
    (void) state;
    static const uint32_t flag_sets[] = {0xF8000000u, 0x50000000u, 0u};
    for (unsigned i = 0; i < 3; i++) {
        uint32_t out[6];
        trace[0] = '\0';
        run_interrupted_code(flag_sets[i], out);
        assert_string_equal(trace, "isrL L()L "); /* it did run in between */
        assert_int_equal(out[0], 0x10101111u);
        assert_int_equal(out[1], 0x20202222u);
        assert_int_equal(out[2], 0x30303333u);
        assert_int_equal(out[3], 0x40404444u);
        assert_int_equal(out[4], 0x50505555u);
        assert_int_equal(out[5], flag_sets[i]);
    }
}

/* ---- queue order under interrupts ---- */

static unsigned next_worker, order_errors, worker_runs, stress_ticks;

/* Queues one message for each worker (below it): they run from the queue. */
static mt_err_t dispatcher_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0 || stress_ticks >= STRESS_TICKS) return MT_OK;
    for (unsigned i = 0; i < WORKERS; i++)
        assert_int_equal(sched_send_to((mt_pid_t) (PID_WORKER + i), PORT_0, NULL, 0, 0), MT_OK);
    return MT_OK;
}

static mt_err_t worker_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    unsigned i = (unsigned) (sched_current_pid() - PID_WORKER);
    if (i != next_worker) order_errors++;
    next_worker = (i + 1u) % WORKERS;
    worker_runs++;
    if (i == WORKERS - 1u) /* the next round */
        assert_int_equal(sched_send_to(PID_DISPATCHER, PORT_0, NULL, 0, 0), MT_OK);
    return MT_OK;
}

static mt_err_t ticker_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_TIMEOUT0) stress_ticks++;
    return MT_OK;
}

/* A periodic timer's exit dispatches land at every phase of the workers'
 * drain, between two handlers and between taking a message off the queue
 * and starting its handler included. None may run a later message of the
 * level first (rule 2), nor take the drain over, nested, holding the
 * interrupted drain's message: under this steady load that would nest
 * again at every such interrupt, exhausting the stack and the message pool. */
static void test_queue_drain_keeps_order_and_depth_under_interrupts(void **state)
{
    (void) state;
    next_worker = order_errors = worker_runs = stress_ticks = 0;
    make_task(PID_DISPATCHER, 3, dispatcher_task);
    for (unsigned i = 0; i < WORKERS; i++) make_task((mt_pid_t) (PID_WORKER + i), 2, worker_task);
    make_task(PID_TICKER, 6, ticker_task);
    port_cm_stack_repaint();
    uint32_t base = port_cm_stack_high_water();
    assert_int_equal(timer_start_for(PID_TICKER, 0, 1, true), MT_OK);
    assert_int_equal(sched_send_to(PID_DISPATCHER, PORT_0, NULL, 0, 0), MT_OK);
    assert_int_equal(timer_stop_for(PID_TICKER, 0), MT_OK);
    assert_int_equal(stress_ticks, STRESS_TICKS);
    assert_int_equal(order_errors, 0);
    assert_true(worker_runs > 50u * STRESS_TICKS);
    /* A worker, the dispatcher above it, the ticker at an interrupt's exit. */
    assert_in_range(port_cm_stack_high_water() - base, 0, 1024);
}

/* ---- the clock and the compare ---- */

static void wake(void)
{
}

/* Wait in WFI, interrupts on, until port_cm_time() reaches `at`. */
static void wait_until(uint64_t at)
{
    while (port_cm_time() < at) {
        port_cm_alarm_set(at, wake);
        __asm volatile("wfi" ::: "memory");
    }
}

static void test_clock_is_continuous_across_an_epoch_wrap_with_irq_off(void **state)
{
    (void) state;
    wait_until(TICKS_PER_EPOCH - 2u);
    port_irq_state_t s = port_irq_save();
    uint64_t last = port_cm_time();
    uint32_t last_counter = port_counter_read();
    while (last < TICKS_PER_EPOCH + 2u) { /* the wrap's interrupt stays pending */
        uint64_t now = port_cm_time();
        uint32_t counter = port_counter_read();
        uint64_t clocks = port_cm_clocks();
        assert_in_range(now - last, 0, 1); /* never back, never a jump */
        assert_in_range(counter - last_counter, 0, 1);
        assert_in_range(clocks / PORT_CM_CLOCKS_PER_TICK - now, 0, 1);
        last = now;
        last_counter = counter;
    }
    assert_true(port_counter_read() >= TICKS_PER_EPOCH); /* the wrap was counted */
    port_irq_restore(s);                                 /* its interrupt runs now */
    assert_in_range(port_cm_time() - last, 0, 1);
    assert_in_range(port_counter_read() - last_counter, 0, 1);
}

/* With interrupts on, the epoch's interrupt runs amid back-to-back reads:
 * they never step back or jump across the wrap. (Under QEMU it did not
 * run while the value was still 0; clock.c waits that clock out anyway.) */
static void test_counter_is_continuous_while_the_epoch_interrupt_runs(void **state)
{
    (void) state;
    wait_until(TICKS_PER_EPOCH - 2u);
    const uint32_t first = port_counter_read();
    uint32_t last = first;
    while (last - first < 4u) {
        uint32_t counter = port_counter_read();
        assert_in_range(counter - last, 0, 1);
        last = counter;
    }
    assert_true(port_cm_time() >= TICKS_PER_EPOCH); /* the wrap was passed */
}

static void test_timers_land_on_their_tick_at_every_distance(void **state)
{
    (void) state;
    /* Short, one TIMER0 load (2^31 clocks) and beyond, an epoch and beyond. */
    static const uint32_t lengths[] = {1u, 2u, 17u, 2500u, 858993u, 858994u, 1800000u};
    for (unsigned i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        uint64_t start = port_cm_time();
        timed_at = 0;
        assert_int_equal(timer_start_for(PID_TIMED, 0, lengths[i], false), MT_OK);
        uint32_t before = timer_interrupt_count();
        wait_until(start + lengths[i] + 1u);
        assert_int_equal(timed_at, start + lengths[i]);
        assert_int_equal(timer_interrupt_count() - before, 1); /* no early or extra one */
    }
}

/* ---- sleep ---- */

static void raise_low(void)
{
    port_cm_irq_raise(LINE_LOW);
}

static void alarm_then_line(void)
{
    port_cm_alarm_set(port_cm_time() + 10u, raise_low);
}

static void test_port_wake_ups_do_not_end_a_sleep(void **state)
{
    (void) state;
    uint64_t start = port_cm_time();
    port_cm_alarm_set(start + 10u, alarm_then_line); /* a wake-up for the port */
    port_irq_state_t s = port_irq_save();
    port_sleep(PORT_SLEEP_IDLE);
    port_irq_restore(s);
    assert_string_equal(trace, "isrL L()L ");
    assert_int_equal(port_cm_time(), start + 20u);
    assert_int_equal(port_cm_sleep_count(), 1);
    assert_int_equal(port_cm_sleep_ticks(), 20);
}

/* ---- threads (context.c): PSP for threads, MSP for everything else ---- */

#if MOTET_THREADS
#define THREAD_STACK THREAD_STACK_BYTES(0)

static uint8_t stack_a[THREAD_STACK], stack_b[THREAD_STACK];
static sem_t wake_b;
static uint32_t control_in_a, control_in_b;
static uintptr_t sp_in_a, body_sp, interrupted_sp;

static bool in_stack(uintptr_t p, const uint8_t *stack)
{
    return p >= (uintptr_t) stack && p < (uintptr_t) stack + THREAD_STACK;
}

static uint32_t read_control(void)
{
    uint32_t control;
    __asm volatile("mrs %0, control" : "=r"(control));
    return control;
}

static void isr_wakes_b(void)
{
    volatile uint8_t here = 0;
    body_sp = (uintptr_t) &here;
    interrupted_sp = port_cm_interrupted_sp();
    note("isrB ");
    sem_post_isr(&wake_b);
}

/* Higher than A: preempts it at the exit of each interrupt. */
static void thread_b(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&wake_b);
        control_in_b = read_control();
        note("B ");
    }
}

/* Loads r4-r11 (less the frame pointer r7), pends the line whose body wakes
 * B, and reads them back: B and K run in between, on other stacks. */
static void callee_saved_across_a_switch(uint32_t out[7])
{
    __asm volatile(
        "movw r4, #0x4444\n"
        "movw r5, #0x5555\n"
        "movw r6, #0x6666\n"
        "movw r8, #0x8888\n"
        "movw r9, #0x9999\n"
        "movw r10, #0xAAAA\n"
        "movw r11, #0xBBBB\n"
        "str %[bit], [%[ispr]]\n"
        "dsb\n"
        "isb\n" /* interrupt, exit dispatch, B, K: then back here */
        "str r4, [%[out], #0]\n"
        "str r5, [%[out], #4]\n"
        "str r6, [%[out], #8]\n"
        "str r8, [%[out], #12]\n"
        "str r9, [%[out], #16]\n"
        "str r10, [%[out], #20]\n"
        "str r11, [%[out], #24]\n"
        :
        : [bit] "r"(1u << (LINE_LOW % 32u)), [ispr] "r"(&NVIC_ISPR(LINE_LOW / 32u)), [out] "r"(out)
        : "r4", "r5", "r6", "r8", "r9", "r10", "r11", "memory");
}

/* Preempted by B at two interrupt exits: once with r0-r3, r12 and the
 * flags live (they come back through the hardware frame on A's stack),
 * once with the callee-saved registers live (the switch's frame). */
static void thread_a(void *arg)
{
    uint32_t *out = arg;
    control_in_a = read_control();
    sp_in_a = (uintptr_t) &arg;
    run_interrupted_code(0xF8000000u, out);
    callee_saved_across_a_switch(out + 6);
    note("A ");
}

static void test_threads_run_on_psp_and_get_every_register_back(void **state)
{
    (void) state;
    static const uint32_t want[13] = {
        0x10101111u, 0x20202222u, 0x30303333u, 0x40404444u, 0x50505555u, 0xF8000000u, 0x4444u,
        0x5555u,     0x6666u,     0x8888u,     0x9999u,     0xAAAAu,     0xBBBBu};
    uint32_t out[13] = {0};
    thread_t *ta, *tb;
    trace[0] = '\0';
    sem_init(&wake_b, 0);
    port_cm_irq_attach(LINE_LOW, isr_wakes_b);
    thread_spec_t b = {
        .entry = thread_b, .stack = stack_b, .stack_size = sizeof stack_b, .prio = 4};
    assert_int_equal(thread_create(&b, &tb), MT_OK); /* runs, waits for the interrupt */
    thread_spec_t a = {
        .entry = thread_a, .arg = out, .stack = stack_a, .stack_size = sizeof stack_a, .prio = 2};
    assert_int_equal(thread_create(&a, &ta), MT_OK); /* runs to its exit */
    assert_string_equal(trace, "isrB B isrB B A ");
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(control_in_a & 3u, 2u); /* privileged, PSP */
    assert_int_equal(control_in_b & 3u, 2u);
    assert_int_equal(read_control() & 3u, 0u); /* K: MSP */
    assert_true(in_stack(sp_in_a, stack_a));
    /* The hardware frame went to A's stack, the body ran on the kernel's. */
    assert_true(in_stack(interrupted_sp, stack_a));
    assert_false(in_stack(body_sp, stack_a) || in_stack(body_sp, stack_b));
    assert_true(thread_stack_guard_ok(ta) && thread_stack_guard_ok(tb));
}

/* ---- the MPU stack guard (guard.c) ---- */

#define PID_DIGGER 0x40

/* The digger's stack, and memory just below it that must not change. */
static struct {
    uint8_t below[64];
    uint8_t stack[THREAD_STACK_BYTES(0)];
} dig_mem;
#define stack_dig dig_mem.stack
static uint8_t stack_wait[THREAD_STACK_BYTES(0)];
static mutex_t dig_lock;
static sem_t dig_go;
static volatile bool keep_digging;
static volatile unsigned dig_depth;
static mt_err_t waiter_got;

/* Small frames, each written from its lowest byte up: no store skips the
 * 32-byte guard. */
__attribute__((noinline)) static void dig(void)
{
    volatile uint8_t pad[16];
    for (unsigned i = 0; i < sizeof pad; i++) pad[i] = (uint8_t) dig_depth;
    dig_depth++;
    if (keep_digging) dig();
    pad[0] = 0; /* keeps the call from becoming a jump */
}

static void digger(void *arg)
{
    (void) arg;
    assert_int_equal(mutex_lock(&dig_lock, THREAD_FOREVER), MT_OK);
    sem_wait(&dig_go);
    note("dig ");
    dig(); /* never returns: the guard ends the thread */
    note("survived ");
}

static void lock_waiter(void *arg)
{
    (void) arg;
    waiter_got = mutex_lock(&dig_lock, THREAD_FOREVER);
    note("waiter ");
    assert_int_equal(mutex_unlock(&dig_lock), MT_OK);
}

static unsigned logged_overflows(mt_pid_t pid)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES), found = 0;
    for (unsigned i = 0; i < n; i++)
        if (rec[i].type == EV_ERROR && rec[i].arg == MT_ERR_STACK && rec[i].pid == pid) found++;
    return found;
}

/* A thread that recurses without end while holding a mutex: the MPU stops
 * its first store into its guard, the kernel logs the overflow for its pid
 * and ends it, its mutex goes to the waiter (MT_ERR_OWNER_DEAD), not one
 * byte below its stack (nor in the guard) changed, and the module goes
 * on. */
static void test_a_thread_overflowing_its_stack_is_caught_and_ended(void **state)
{
    (void) state;
    thread_t *t;
    trace[0] = '\0';
    keep_digging = true;
    dig_depth = 0;
    mutex_init(&dig_lock);
    sem_init(&dig_go, 0);
    (void) logged_overflows(PID_DIGGER); /* drain */
    memset(dig_mem.below, 0x5A, sizeof dig_mem.below);
    thread_spec_t d = {.entry = digger,
                       .stack = stack_dig,
                       .stack_size = sizeof stack_dig,
                       .prio = 2,
                       .pid = PID_DIGGER};
    assert_int_equal(thread_create(&d, &t), MT_OK); /* holds the mutex, waits */
    thread_spec_t w = {
        .entry = lock_waiter, .stack = stack_wait, .stack_size = sizeof stack_wait, .prio = 3};
    assert_int_equal(thread_create(&w, NULL), MT_OK); /* waits for the mutex */
    assert_int_equal(sem_post(&dig_go), MT_OK);       /* the digger runs into its guard */
    assert_string_equal(trace, "dig waiter ");
    assert_int_equal(waiter_got, MT_ERR_OWNER_DEAD);
    assert_null(mutex_owner(&dig_lock));
    assert_true(dig_depth * 16u > sizeof stack_dig / 2u); /* it went deep */
    for (unsigned i = 0; i < sizeof dig_mem.below; i++) assert_int_equal(dig_mem.below[i], 0x5A);
    const uint8_t *floor = port_stack_guard_end(stack_dig); /* the guard itself: paint */
    for (const uint8_t *p = floor - 32; p < floor; p++) assert_int_equal(*p, 0xA5);
    if (MOTET_EVENT_LOG) assert_int_equal(logged_overflows(PID_DIGGER), 1);
    /* The same stack and pid serve a new thread: the bound task went too. */
    keep_digging = false;
    assert_int_equal(thread_create(&d, &t), MT_OK);
    assert_int_equal(sem_post(&dig_go), MT_OK);
    assert_string_equal(trace, "dig waiter dig survived ");
}
#endif

/* ---- the stack ---- */

__attribute__((noinline)) static void use_stack(size_t bytes)
{
    volatile uint8_t buf[2048];
    for (size_t i = 0; i < bytes && i < sizeof buf; i++) buf[i] = (uint8_t) i;
}

static void test_stack_painting_measures_what_runs(void **state)
{
    (void) state;
    port_cm_stack_repaint();
    uint32_t base = port_cm_stack_high_water();
    use_stack(2048);
    uint32_t deep = port_cm_stack_high_water();
    assert_true(deep >= base + 1900u); /* the buffer, less the paint margin */
    assert_true(deep < port_cm_stack_size());
    port_cm_stack_repaint();
    assert_true(port_cm_stack_high_water() < deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_handler_at_exit_is_preempted_by_a_higher_one, setup),
        cmocka_unit_test_setup(test_nested_bodies_share_one_exit_dispatch, setup),
        cmocka_unit_test_setup(test_exit_under_a_body_without_hooks_runs_from_pendsv, setup),
        cmocka_unit_test_setup(test_interrupted_code_gets_its_registers_and_flags_back, setup),
        cmocka_unit_test_setup(test_queue_drain_keeps_order_and_depth_under_interrupts, setup),
        cmocka_unit_test_setup(test_clock_is_continuous_across_an_epoch_wrap_with_irq_off, setup),
        cmocka_unit_test_setup(test_counter_is_continuous_while_the_epoch_interrupt_runs, setup),
        cmocka_unit_test_setup(test_timers_land_on_their_tick_at_every_distance, setup),
        cmocka_unit_test_setup(test_port_wake_ups_do_not_end_a_sleep, setup),
        cmocka_unit_test_setup(test_stack_painting_measures_what_runs, setup),
#if MOTET_THREADS
        cmocka_unit_test_setup(test_threads_run_on_psp_and_get_every_register_back, setup),
        cmocka_unit_test_setup(test_a_thread_overflowing_its_stack_is_caught_and_ended, setup),
#endif
    };
    return cmocka_run_group_tests_name("cortex-m port", tests, NULL, NULL);
}
