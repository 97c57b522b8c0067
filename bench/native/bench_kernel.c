/* SPDX-License-Identifier: MIT */
/*
 * Kernel micro-benchmarks on the native port, counted in instructions by
 * valgrind's callgrind (driven by `motet bench`, tools/motetlib/bench.py).
 *
 * Each operation is one noinline function bench_op_<name>() that a driver
 * task calls `n` times in a loop from its INIT handler, after a warm-up:
 *
 *   empty      nothing: the baseline of the loop and the call
 *   immediate  send to a higher-priority local task, which runs at once,
 *              nested on the shared stack (rule 1)
 *   chain      send to a higher-priority carrier whose handler sends to a
 *              task below it but above the driver: the message is queued
 *              and runs from the queue when the carrier returns (rules 2, 5)
 *   irq        raise an external interrupt line; the ISR posts to a task
 *              above the driver, which runs at interrupt exit (rule 3)
 *   busy       declare 100 ticks of work with no timer due (baseline)
 *   timer      the same 100 ticks with a periodic 100-tick timer running:
 *              one compare interrupt, delta-list expiry and re-arm, post to
 *              TIMEOUT0 and the handler, per call
 *   mem        mem_alloc(32) + mem_free() on a quiet heap
 *   slab       slab_alloc() + slab_free() of a 16-byte object
 *
 * Every target handler counts its runs; after the loop the driver checks
 * that each operation really did its work while the driver was on the stack
 * (an immediate dispatch that silently queued would fail here). The program
 * prints one line per operation and exits non-zero on any mismatch.
 *
 * Usage: bench_kernel [--list] [OP|all] [N]   (default: all 1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "motet/motet.h"
#include "motet/port.h"
#include "native.h"
#include "slab.h"

enum {
    PID_DRIVER = 0x20,
    PID_IMMEDIATE,
    PID_CARRIER,
    PID_LOW,
    PID_IRQ,
    PID_TIMER,
};

enum {
    PRIO_DRIVER = 1,
    PRIO_LOW = 2, /* above the driver, below the carrier */
    PRIO_NESTED = 4,
    PRIO_EVENT = 5,
};

#define BENCH_IRQ_LINE    0
#define BENCH_BUSY_TICKS  100u
#define BENCH_WARMUP      16u
#define BENCH_DEFAULT_N   1000u
#define BENCH_ALLOC_BYTES 32u

typedef struct bench_obj {
    uint32_t word[4];
} bench_obj_t;

SLAB_DEFINE(bench_cache, bench_obj_t, 4);

/* Handler runs per target task (index: pid - PID_DRIVER), failed API calls. */
static volatile unsigned runs[PID_TIMER - PID_DRIVER + 1];
static volatile unsigned failures;

/* ---- target tasks ---- */

static mt_err_t count_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) port;
    (void) data;
    (void) len;
    (void) state;
    runs[sched_current_pid() - PID_DRIVER]++;
    return MT_OK;
}

static mt_err_t carrier_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0 && sched_send_to(PID_LOW, PORT_0, NULL, 0, 0) != MT_OK) failures++;
    return MT_OK;
}

static void bench_isr(void)
{
    if (sched_post_isr(PID_IRQ, PORT_0, NULL, 0, 0) != MT_OK) failures++;
}

/* ---- the operations ---- */

__attribute__((noinline)) static void bench_op_empty(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void bench_op_immediate(void)
{
    if (sched_send_to(PID_IMMEDIATE, PORT_0, NULL, 0, 0) != MT_OK) failures++;
}

__attribute__((noinline)) static void bench_op_chain(void)
{
    if (sched_send_to(PID_CARRIER, PORT_0, NULL, 0, 0) != MT_OK) failures++;
}

__attribute__((noinline)) static void bench_op_irq(void)
{
    port_native_irq_raise(BENCH_IRQ_LINE);
}

__attribute__((noinline)) static void bench_op_busy(void)
{
    port_native_busy(BENCH_BUSY_TICKS);
}

__attribute__((noinline)) static void bench_op_timer(void)
{
    port_native_busy(BENCH_BUSY_TICKS);
}

__attribute__((noinline)) static void bench_op_mem(void)
{
    void *p = mem_alloc(BENCH_ALLOC_BYTES);
    if (p == NULL || mem_free(p) != MT_OK) failures++;
}

__attribute__((noinline)) static void bench_op_slab(void)
{
    void *obj = slab_alloc(&bench_cache);
    if (obj == NULL || slab_free(&bench_cache, obj) != MT_OK) failures++;
}

/* ---- set-up, check and tear-down per operation ---- */

static void timer_setup(void)
{
    if (timer_start_for(PID_TIMER, 0, BENCH_BUSY_TICKS, true) != MT_OK) failures++;
    /* Put the expiries in the middle of each busy period, never on an edge. */
    port_native_busy(BENCH_BUSY_TICKS / 2);
}

static void timer_teardown(void)
{
    if (timer_stop_for(PID_TIMER, 0) != MT_OK) failures++;
}

typedef struct bench_op {
    const char *name;
    void (*fn)(void);
    void (*setup)(void);
    void (*teardown)(void);
    mt_pid_t target; /* task expected to run once per call, or MT_PID_NONE */
} bench_op_t;

static const bench_op_t ops[] = {
    {"empty", bench_op_empty, NULL, NULL, MT_PID_NONE},
    {"immediate", bench_op_immediate, NULL, NULL, PID_IMMEDIATE},
    {"chain", bench_op_chain, NULL, NULL, PID_LOW},
    {"irq", bench_op_irq, NULL, NULL, PID_IRQ},
    {"busy", bench_op_busy, NULL, NULL, MT_PID_NONE},
    {"timer", bench_op_timer, timer_setup, timer_teardown, PID_TIMER},
    {"mem", bench_op_mem, NULL, NULL, MT_PID_NONE},
    {"slab", bench_op_slab, NULL, NULL, MT_PID_NONE},
};
#define NUM_OPS (sizeof(ops) / sizeof(ops[0]))

static const bench_op_t *current_op;
static unsigned current_n;
static int current_status;

__attribute__((noinline)) static void bench_loop(void (*fn)(void), unsigned n)
{
    for (unsigned i = 0; i < n; i++) fn();
}

static void run_current_op(void)
{
    const bench_op_t *op = current_op;
    unsigned calls = BENCH_WARMUP + current_n;
    bool counted = op->target != MT_PID_NONE;
    unsigned before = counted ? runs[op->target - PID_DRIVER] : 0;
    unsigned failed_before = failures;

    if (op->setup) op->setup();
    bench_loop(op->fn, BENCH_WARMUP);
    bench_loop(op->fn, current_n);
    /* Still inside the driver's handler: anything that was queued instead
     * of run at once has not run yet and shows up here. */
    unsigned ran = counted ? runs[op->target - PID_DRIVER] - before : calls;
    if (op->teardown) op->teardown();

    if (failures != failed_before || ran != calls) {
        fprintf(stderr, "bench_kernel: %s: FAILED: %u of %u handler runs, %u API errors\n",
                op->name, ran, calls, failures - failed_before);
        current_status = 1;
        return;
    }
    printf("bench_kernel: %-9s n=%u ok\n", op->name, current_n);
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) run_current_op();
    return MT_OK;
}

/* ---- main ---- */

static void create_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    mt_err_t err = sched_task_create(&spec);
    if (err == MT_OK) err = sched_task_init(pid, NULL, 0);
    if (err != MT_OK) {
        fprintf(stderr, "bench_kernel: cannot create task 0x%02x: %s\n", pid, mt_strerror(err));
        exit(1);
    }
}

static int run_op(const bench_op_t *op, unsigned n)
{
    current_op = op;
    current_n = n;
    current_status = 0;
    create_task(PID_DRIVER, PRIO_DRIVER, driver_task);
    sched_run_pending();
    mt_err_t err = sched_task_kill(PID_DRIVER);
    sched_run_pending();
    if (err != MT_OK) {
        fprintf(stderr, "bench_kernel: cannot kill the driver: %s\n", mt_strerror(err));
        return 1;
    }
    return current_status;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_kernel [--list] [OP|all] [N]\noperations:");
    for (size_t i = 0; i < NUM_OPS; i++) fprintf(stderr, " %s", ops[i].name);
    fprintf(stderr, "\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    unsigned n = BENCH_DEFAULT_N;

    if (strcmp(which, "--list") == 0) {
        for (size_t i = 0; i < NUM_OPS; i++) printf("%s\n", ops[i].name);
        return 0;
    }
    if (argc > 3) usage();
    if (argc > 2) {
        char *end;
        unsigned long v = strtoul(argv[2], &end, 10);
        if (*end != '\0' || v == 0 || v > 10000000ul) usage();
        n = (unsigned) v;
    }

    native_options_t opt = {.realtime = false, .seed = 1, .until_ticks = 0, .counter_start = 0};
    port_native_configure(&opt);
    motet_boot();
    slab_init(&bench_cache);
    create_task(PID_IMMEDIATE, PRIO_NESTED, count_task);
    create_task(PID_CARRIER, PRIO_NESTED, carrier_task);
    create_task(PID_LOW, PRIO_LOW, count_task);
    create_task(PID_IRQ, PRIO_EVENT, count_task);
    create_task(PID_TIMER, PRIO_EVENT, count_task);
    sched_run_pending();
    port_native_irq_attach(BENCH_IRQ_LINE, bench_isr);
    /* Boot leaves interrupts off; sched_run() is not used here, so turn
     * them on as a main loop would. */
    port_irq_enable();

    int status = 0;
    bool found = false;
    for (size_t i = 0; i < NUM_OPS; i++) {
        if (strcmp(which, "all") != 0 && strcmp(which, ops[i].name) != 0) continue;
        found = true;
        status |= run_op(&ops[i], n);
    }
    if (!found) usage();
    return status;
}
