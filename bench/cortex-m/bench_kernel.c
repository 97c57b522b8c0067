/* SPDX-License-Identifier: MIT */
/*
 * Kernel operations on the Cortex-M port, in instructions, under QEMU
 * `-icount shift=0` (one instruction per ns; the 25 MHz port_cycles() clock
 * advances once per 40 instructions). Run by `motet bench`
 * (tools/motetlib/port_cortex_m.py), which turns the raw clocks printed
 * here into instructions per operation.
 *
 * Loop operations: a driver task (priority 1) calls bench_op_<name>() 16
 * times as a warm-up, then N1 and N2 times, reading port_cycles() around
 * each loop and printing
 *     op <name> <n> <clocks>
 * The harness takes (clocks(N2) - clocks(N1)) * 40 / (N2 - N1): the loop's
 * fixed costs cancel, and the 40-instruction grain of the clock shrinks to
 * 40 * 2 / (N2 - N1) per operation.
 *
 *   empty       nothing: the baseline of the loop and the call
 *   immediate   sched_signal() (a message without payload) along a route
 *               to a higher-priority local task, run nested (rule 1)
 *   immediate_pid  the same with sched_signal_to(), which finds the task by
 *               its pid
 *   immediate_send  the same as immediate with sched_send(), its payload's
 *               arguments (none) passed and tested
 *   chain       send to a higher-priority carrier that sends to a task below
 *               it but above the driver: queued, run when the carrier
 *               returns (rules 2, 5)
 *   roundtrip   send to PING, which sends to PONG (equal priority, nested),
 *               which replies to PING (on the stack: queued, rule 4); PING
 *               handles the reply when it has returned
 * The sends of immediate, chain and roundtrip go along routes, as
 * bench/avr/bench_avr.c's do.
 *   irq         pend a spare line; its body posts to a task above the
 *               driver, which runs at interrupt exit (rule 3): the frame
 *               into the thread-mode trampoline, the handler, NMI back
 *   irq_queued  send to a higher-priority carrier that pends a line whose
 *               body posts to a task below the carrier but above the
 *               driver: the post waits (rule 3), the exit finds nothing to
 *               run, and the carrier's return runs it (rule 5); the shape
 *               of Thread-Metric's interrupt scenario as message tasks run
 *               it (bench_tm.c), less its checks
 *   irq_nopost  the same interrupt path with a body that posts nothing
 *   irq_direct  a line whose body runs in the interrupt without the kernel:
 *               the Super-Simple-Tasker floor (the ISR is the task)
 *   mem         mem_alloc(32) + mem_free()
 *   slab        slab_alloc() + slab_free() of a 16-byte object
 *
 * Timer expiry, by stolen time: the driver spins in a loop of exactly four
 * instructions per iteration while a periodic one-tick timer expires K times
 * into a priority-5 task; it prints
 *     steal timer <K> <clocks> <iterations>
 * for K = K1 and K2. Each expiry's cost (compare interrupt, delta-list
 * expiry and re-arm, post, exit dispatch, handler, return) is what the loop
 * did not get: (40 * dclocks - 4 * diterations) / (K2 - K1).
 *
 * Every target handler counts its runs and the driver checks them after
 * each loop, still on the stack: an immediate dispatch that queued, or an
 * interrupt whose handler did not run at its exit, fails the program
 * (status 1) instead of producing a figure.
 */
#include <stdio.h>

#include "bench_spin.h"
#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "slab.h"

enum {
    PID_DRIVER = 0x20,
    PID_IMMEDIATE,
    PID_CARRIER,
    PID_LOW,
    PID_PING,
    PID_PONG,
    PID_IRQ,
    PID_IRQ_CARRIER,
    PID_TIMER,
    PID_LAST = PID_TIMER
};

/* The output ports of the tasks that send. */
enum { DRIVER_TO_IMMEDIATE, DRIVER_TO_CARRIER, DRIVER_TO_PING, DRIVER_TO_IRQ_CARRIER };
enum { CARRIER_TO_LOW = 0 };
enum { PING_TO_PONG = 0 };
enum { PONG_TO_PING = 0 };
static const route_t driver_routes[] = {[DRIVER_TO_IMMEDIATE] = {PID_IMMEDIATE, PORT_0},
                                        [DRIVER_TO_CARRIER] = {PID_CARRIER, PORT_0},
                                        [DRIVER_TO_PING] = {PID_PING, PORT_0},
                                        [DRIVER_TO_IRQ_CARRIER] = {PID_IRQ_CARRIER, PORT_0}};
static const route_t carrier_routes[] = {[CARRIER_TO_LOW] = {PID_LOW, PORT_0}};
static const route_t ping_routes[] = {[PING_TO_PONG] = {PID_PONG, PORT_0}};
static const route_t pong_routes[] = {[PONG_TO_PING] = {PID_PING, PORT_0 + 1}};

enum { PRIO_DRIVER = 1, PRIO_LOW = 2, PRIO_PINGPONG = 3, PRIO_NESTED = 4, PRIO_EVENT = 5 };

#define N1           1000u
#define N2           2000u
#define K1           200u
#define K2           1000u
#define WARMUP       16u
#define ALLOC_BYTES  32u
#define LINE_POST    (PORT_CM_SPARE_IRQ_FIRST + 0u)
#define LINE_NOPOST  (PORT_CM_SPARE_IRQ_FIRST + 1u)
#define LINE_DIRECT  (PORT_CM_SPARE_IRQ_FIRST + 2u)
#define LINE_QUEUED  (PORT_CM_SPARE_IRQ_FIRST + 3u)
#define TIMER_PERIOD 1u /* ticks: 100 us, 100,000 instructions */

typedef struct bench_obj {
    uint32_t word[4];
} bench_obj_t;

SLAB_DEFINE(bench_cache, bench_obj_t, 4);

static volatile unsigned runs[PID_LAST - PID_DRIVER + 1];
static volatile unsigned direct_runs;
static volatile unsigned failures;
static volatile uint32_t timer_goal;
static volatile uint32_t timer_done;
static int status;

static void check(bool ok)
{
    if (!ok) failures++;
}

/* ---- target tasks and interrupt bodies ---- */

static mt_err_t count_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) runs[sched_current_pid() - PID_DRIVER]++;
    return MT_OK;
}

static mt_err_t carrier_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) check(sched_signal(CARRIER_TO_LOW) == MT_OK);
    return MT_OK;
}

/* PORT_0: start a round trip; PORT_1: its reply (counted). */
static mt_err_t ping_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) check(sched_signal(PING_TO_PONG) == MT_OK);
    if (port == PORT_0 + 1) runs[PID_PING - PID_DRIVER]++;
    return MT_OK;
}

static mt_err_t pong_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) check(sched_signal(PONG_TO_PING) == MT_OK);
    return MT_OK;
}

static mt_err_t irq_carrier_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) port_cm_irq_raise(LINE_QUEUED);
    return MT_OK;
}

static mt_err_t timer_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_TIMEOUT0) return MT_OK;
    if (++runs[PID_TIMER - PID_DRIVER] == timer_goal) timer_done = 1;
    return MT_OK;
}

static void isr_post(void)
{
    check(sched_post_isr(PID_IRQ, PORT_0, NULL, 0, 0) == MT_OK);
}

static void isr_post_low(void)
{
    check(sched_post_isr(PID_LOW, PORT_0, NULL, 0, 0) == MT_OK);
}

static void isr_nopost(void)
{
}

static void isr_direct(void)
{
    direct_runs++;
}

/* ---- the operations ---- */

__attribute__((noinline)) static void bench_op_empty(void)
{
    __asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void bench_op_immediate(void)
{
    check(sched_signal(DRIVER_TO_IMMEDIATE) == MT_OK);
}

__attribute__((noinline)) static void bench_op_immediate_pid(void)
{
    check(sched_signal_to(PID_IMMEDIATE, PORT_0) == MT_OK);
}

__attribute__((noinline)) static void bench_op_immediate_send(void)
{
    check(sched_send(DRIVER_TO_IMMEDIATE, NULL, 0, 0) == MT_OK);
}

__attribute__((noinline)) static void bench_op_chain(void)
{
    check(sched_signal(DRIVER_TO_CARRIER) == MT_OK);
}

__attribute__((noinline)) static void bench_op_roundtrip(void)
{
    check(sched_signal(DRIVER_TO_PING) == MT_OK);
}

__attribute__((noinline)) static void bench_op_irq_queued(void)
{
    check(sched_signal(DRIVER_TO_IRQ_CARRIER) == MT_OK);
}

__attribute__((noinline)) static void bench_op_irq(void)
{
    port_cm_irq_raise(LINE_POST);
}

__attribute__((noinline)) static void bench_op_irq_nopost(void)
{
    port_cm_irq_raise(LINE_NOPOST);
}

__attribute__((noinline)) static void bench_op_irq_direct(void)
{
    port_cm_irq_raise(LINE_DIRECT);
}

__attribute__((noinline)) static void bench_op_mem(void)
{
    void *p = mem_alloc(ALLOC_BYTES);
    check(p != NULL && mem_free(p) == MT_OK);
}

__attribute__((noinline)) static void bench_op_slab(void)
{
    void *obj = slab_alloc(&bench_cache);
    check(obj != NULL && slab_free(&bench_cache, obj) == MT_OK);
}

typedef struct bench_op {
    const char *name;
    void (*fn)(void);
    volatile unsigned *count; /* runs expected once per call, or NULL */
} bench_op_t;

static const bench_op_t ops[] = {
    {"empty", bench_op_empty, NULL},
    {"immediate", bench_op_immediate, &runs[PID_IMMEDIATE - PID_DRIVER]},
    {"immediate_pid", bench_op_immediate_pid, &runs[PID_IMMEDIATE - PID_DRIVER]},
    {"immediate_send", bench_op_immediate_send, &runs[PID_IMMEDIATE - PID_DRIVER]},
    {"chain", bench_op_chain, &runs[PID_LOW - PID_DRIVER]},
    {"roundtrip", bench_op_roundtrip, &runs[PID_PING - PID_DRIVER]},
    {"irq", bench_op_irq, &runs[PID_IRQ - PID_DRIVER]},
    {"irq_queued", bench_op_irq_queued, &runs[PID_LOW - PID_DRIVER]},
    {"irq_nopost", bench_op_irq_nopost, NULL},
    {"irq_direct", bench_op_irq_direct, &direct_runs},
    {"mem", bench_op_mem, NULL},
    {"slab", bench_op_slab, NULL},
};
#define NUM_OPS (sizeof ops / sizeof ops[0])

/* ---- measuring ---- */

__attribute__((noinline)) static uint32_t timed_loop(void (*fn)(void), unsigned n)
{
    uint32_t start = port_cycles();
    for (unsigned i = 0; i < n; i++) fn();
    return port_cycles() - start;
}

static void run_op(const bench_op_t *op)
{
    unsigned before = op->count ? *op->count : 0;
    unsigned failed_before = failures;
    timed_loop(op->fn, WARMUP);
    uint32_t c1 = timed_loop(op->fn, N1);
    uint32_t c2 = timed_loop(op->fn, N2);
    /* Still in the driver's handler: a handler that was queued instead of
     * run at once has not run yet and is missing here. */
    unsigned ran = op->count ? *op->count - before : WARMUP + N1 + N2;
    if (failures != failed_before || ran != WARMUP + N1 + N2) {
        printf("FAILED %s: %u of %u handler runs, %u API errors\n", op->name, ran, WARMUP + N1 + N2,
               failures - failed_before);
        status = 1;
        return;
    }
    printf("op %s %u %lu\n", op->name, N1, (unsigned long) c1);
    printf("op %s %u %lu\n", op->name, N2, (unsigned long) c2);
}

static void steal_timer(uint32_t expiries)
{
    runs[PID_TIMER - PID_DRIVER] = 0;
    timer_goal = expiries;
    timer_done = 0;
    uint32_t start = port_cycles();
    check(timer_start_for(PID_TIMER, 0, TIMER_PERIOD, true) == MT_OK);
    uint32_t iterations = spin_until_set(&timer_done);
    check(timer_stop_for(PID_TIMER, 0) == MT_OK);
    uint32_t clocks = port_cycles() - start;
    if (runs[PID_TIMER - PID_DRIVER] != expiries || failures) {
        printf("FAILED timer: %u of %lu expiries\n", runs[PID_TIMER - PID_DRIVER],
               (unsigned long) expiries);
        status = 1;
        return;
    }
    printf("steal timer %lu %lu %lu\n", (unsigned long) expiries, (unsigned long) clocks,
           (unsigned long) iterations);
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    for (size_t i = 0; i < NUM_OPS; i++) run_op(&ops[i]);
    steal_timer(K1);
    steal_timer(K2);
    return MT_OK;
}

/* ---- main ---- */

static void create_routed(mt_pid_t pid, mt_prio_t prio, task_handler_t handler,
                          const route_t *routes, uint8_t n_routes)
{
    task_spec_t spec = {
        .pid = pid, .prio = prio, .handler = handler, .routes = routes, .n_routes = n_routes};
    mt_err_t err = sched_task_create(&spec);
    if (err == MT_OK) err = sched_task_init(pid, NULL, 0);
    if (err != MT_OK) {
        printf("FAILED: cannot create task 0x%02x: %s\n", pid, mt_strerror(err));
        port_halt(1);
    }
}

static void create_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    create_routed(pid, prio, handler, NULL, 0);
}

#define ROUTES(table) (table), (uint8_t) (sizeof(table) / sizeof((table)[0]))

int main(void)
{
    motet_boot();
    printf("bench_kernel: %s, event log %s, %lu clocks per tick\n", PORT_NAME,
           MOTET_EVENT_LOG ? "on" : "off", (unsigned long) PORT_CM_CLOCKS_PER_TICK);
    slab_init(&bench_cache);
    create_task(PID_IMMEDIATE, PRIO_NESTED, count_task);
    create_routed(PID_CARRIER, PRIO_NESTED, carrier_task, ROUTES(carrier_routes));
    create_task(PID_LOW, PRIO_LOW, count_task);
    create_routed(PID_PING, PRIO_PINGPONG, ping_task, ROUTES(ping_routes));
    create_routed(PID_PONG, PRIO_PINGPONG, pong_task, ROUTES(pong_routes));
    create_task(PID_IRQ, PRIO_EVENT, count_task);
    create_task(PID_IRQ_CARRIER, PRIO_NESTED, irq_carrier_task);
    create_task(PID_TIMER, PRIO_EVENT, timer_task);
    port_cm_irq_attach(LINE_POST, isr_post);
    port_cm_irq_attach(LINE_NOPOST, isr_nopost);
    port_cm_irq_attach_direct(LINE_DIRECT, isr_direct);
    port_cm_irq_attach(LINE_QUEUED, isr_post_low);
    create_routed(PID_DRIVER, PRIO_DRIVER, driver_task,
                  ROUTES(driver_routes)); /* runs everything */
    printf("bench_kernel: %s\n", status ? "FAILED" : "done");
    return status;
}
