/* SPDX-License-Identifier: MIT */
/*
 * Thread-Metric's suite with threads, following its definitions, on the
 * Cortex-M port (bench_tm.c is the same suite with message tasks):
 *
 *   cooperative     five threads of one level, each counting and yielding
 *                   (thread_yield()) in turn; as Thread-Metric does, the
 *                   counts are checked once, at the interval's end
 *   preemptive      five threads of rising levels: each counts and resumes
 *                   the next higher (thread_resume(), which switches to it
 *                   at once), and the highest, then each below it in turn,
 *                   suspends itself (thread_suspend())
 *   interrupt       a thread pends a spare line; the interrupt posts a
 *                   semaphore (sem_post_isr()), which the thread then takes
 *   interrupt_preemption  a low thread pends a line; the interrupt resumes
 *                   a higher thread (thread_resume_isr()), which runs at the
 *                   interrupt's exit, counts and suspends itself
 *   message         one thread sends a 16-byte message to a queue and
 *                   receives it back (msgq_send(), msgq_receive())
 *   synchronisation one thread takes and gives a semaphore
 *                   (sem_try_wait(), sem_post())
 *   memory          one thread allocates and frees a 128-byte block from a
 *                   pool (pool_alloc(), pool_free())
 *
 * Boot code creates each scenario's threads with THREAD_START_AT_RUN and
 * starts sched_run(); a one-shot timer into a top-level task ends the
 * interval (TM_INTERVAL ticks), after which every thread ends. Each prints
 *     tmt <name> <iterations> <clocks>
 * (the harness divides the interval by the count). The threads have no
 * analyser figure (stack_need 0): the port's minimum stack and its guard,
 * checked at every switch, as for any thread the analyser did not size.
 * Each scenario checks its own rules (order, counts, message contents);
 * a violation prints FAILED and the program exits with status 1.
 */
#include <stdio.h>
#include <string.h>

#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/port.h"

#ifndef TM_INTERVAL
#define TM_INTERVAL 1000u /* ticks */
#endif

#define PID_STOP  0x20
#define PRIO_TOP  (MOTET_PRIO_LEVELS - 1)
#define N_THREADS 5u
#define MSG_BYTES 16u
#define BLOCK     128u
#define LINE      (PORT_CM_SPARE_IRQ_FIRST + 0u)
#define STACK     THREAD_STACK_BYTES(0)

static uint8_t stacks[N_THREADS][STACK];
static thread_t *th[N_THREADS];
static volatile bool stop;
static unsigned counts[N_THREADS + 1]; /* [N_THREADS]: the interrupt's */
static unsigned violations;
static unsigned first_violation;
static int status;

static sem_t sem;
static msgq_t queue;
static uint32_t queue_buf[4 * MSG_BYTES / 4];
POOL_DEFINE(blocks, BLOCK, 4);

static void expect_at(bool ok, unsigned line)
{
    if (ok) return;
    if (!violations++) first_violation = line;
}
#define expect(ok) expect_at((ok), __LINE__)

static unsigned index_of(void *arg)
{
    return (unsigned) (uintptr_t) arg;
}

static mt_err_t stop_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_TIMEOUT0) {
        stop = true;
        sched_stop();
    }
    return MT_OK;
}

/* ---- cooperative ---- */

/* Thread-Metric's loop: count and yield, the order checked at the end of the
 * interval (coop_in_turn()); test_threads checks it at every step. */
static void coop(void *arg)
{
    unsigned i = index_of(arg);
    while (!stop) {
        counts[i]++;
        thread_yield();
    }
}

/* Round robin among equals: each ran once before any ran again, so the
 * counts fall by at most one from thread 0 to the last, and only once. */
static bool coop_in_turn(void)
{
    for (unsigned i = 1; i < N_THREADS; i++)
        if (counts[i] > counts[i - 1]) return false;
    return counts[0] - counts[N_THREADS - 1] <= 1u;
}

/* ---- preemptive ---- */

static void ladder(void *arg)
{
    unsigned i = index_of(arg);
    for (;;) {
        counts[i]++;
        if (stop) return;
        if (i + 1u < N_THREADS) {
            expect(thread_resume(th[i + 1u]) == MT_OK); /* runs it now, to its suspension */
            expect(counts[i + 1u] == counts[i]);
        }
        if (i > 0) thread_suspend(thread_self());
    }
}

/* ---- interrupt ---- */

static void isr_posts(void)
{
    counts[N_THREADS]++;
    sem_post_isr(&sem);
}

static void irq_taker(void *arg)
{
    (void) arg;
    while (!stop) {
        port_cm_irq_raise(LINE);
        expect(sem_wait(&sem) == MT_OK);
        counts[0]++;
        expect(counts[0] == counts[N_THREADS]);
    }
}

/* ---- interrupt preemption ---- */

static void isr_resumes(void)
{
    counts[N_THREADS]++;
    thread_resume_isr(th[1]);
}

static void irq_low(void *arg)
{
    (void) arg;
    while (!stop) {
        port_cm_irq_raise(LINE);
        expect(counts[1] == counts[N_THREADS]); /* the high thread ran at the exit */
        counts[0]++;
    }
    if (thread_suspended(th[1])) thread_resume(th[1]); /* lets it see the stop */
}

static void irq_high(void *arg)
{
    (void) arg;
    for (;;) {
        thread_suspend(thread_self());
        counts[1]++;
        if (stop) return;
    }
}

/* ---- message ---- */

static void messenger(void *arg)
{
    (void) arg;
    uint32_t out[MSG_BYTES / 4] = {0, 1, 2, 3}, in[MSG_BYTES / 4];
    while (!stop) {
        expect(msgq_send(&queue, out, THREAD_FOREVER) == MT_OK);
        expect(msgq_receive(&queue, in, THREAD_FOREVER) == MT_OK);
        expect(in[0] == out[0] && in[3] == out[3]);
        out[0]++;
        out[3]++;
        counts[0]++;
    }
}

/* ---- synchronisation ---- */

static void synchroniser(void *arg)
{
    (void) arg;
    while (!stop) {
        expect(sem_try_wait(&sem) == MT_OK);
        expect(sem_post(&sem) == MT_OK);
        counts[0]++;
    }
}

/* ---- memory ---- */

static void allocator(void *arg)
{
    (void) arg;
    while (!stop) {
        uint8_t *p = pool_alloc(&blocks);
        expect(p != NULL);
        if (p) p[0] = 0xA5;
        expect(pool_free(&blocks, p) == MT_OK);
        counts[0]++;
    }
}

/* ---- running a scenario ---- */

typedef struct scenario {
    const char *name;
    thread_entry_t entries[N_THREADS];
    mt_prio_t prios[N_THREADS];
    uint8_t start[N_THREADS]; /* THREAD_START_AT_RUN unless said */
    void (*isr)(void);
    bool (*check_at_end)(void); /* the rule checked once the interval is over */
    bool count_all;             /* iterations: every thread's count, else thread 0's */
} scenario_t;

static const scenario_t scenarios[] = {
    {.name = "cooperative",
     .entries = {coop, coop, coop, coop, coop},
     .prios = {2, 2, 2, 2, 2},
     .check_at_end = coop_in_turn,
     .count_all = true},
    {.name = "preemptive",
     .entries = {ladder, ladder, ladder, ladder, ladder},
     .prios = {1, 2, 3, 4, 5},
     .start = {0, THREAD_START_SUSPENDED, THREAD_START_SUSPENDED, THREAD_START_SUSPENDED,
               THREAD_START_SUSPENDED},
     .count_all = true},
    {.name = "interrupt", .entries = {irq_taker}, .prios = {2}, .isr = isr_posts},
    {.name = "interrupt_preemption",
     .entries = {irq_low, irq_high},
     .prios = {2, 4},
     .isr = isr_resumes},
    {.name = "message", .entries = {messenger}, .prios = {2}},
    {.name = "synchronisation", .entries = {synchroniser}, .prios = {2}},
    {.name = "memory", .entries = {allocator}, .prios = {2}},
};
#define NUM_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

static void create_thread(const scenario_t *s, unsigned i)
{
    thread_spec_t spec = {.entry = s->entries[i],
                          .arg = (void *) (uintptr_t) i,
                          .stack = stacks[i],
                          .stack_size = STACK,
                          .prio = s->prios[i],
                          .start = s->start[i] ? s->start[i] : THREAD_START_AT_RUN};
    if (thread_create(&spec, &th[i]) != MT_OK) {
        printf("FAILED: cannot create thread %u of %s\n", i, s->name);
        port_halt(1);
    }
}

/* A fresh kernel per scenario; sched_run() returns after the interval. */
static void run(const scenario_t *s)
{
    motet_boot();
    stop = false;
    violations = 0;
    memset(counts, 0, sizeof counts);
    sem_init(&sem, s->isr ? 0 : 1);
    expect(msgq_init(&queue, queue_buf, MSG_BYTES, 4) == MT_OK);
    pool_init(&blocks);
    task_spec_t spec = {.pid = PID_STOP, .prio = PRIO_TOP, .handler = stop_task};
    expect(sched_task_create(&spec) == MT_OK && sched_task_init(PID_STOP, NULL, 0) == MT_OK);
    for (unsigned i = 0; i < N_THREADS && s->entries[i]; i++) create_thread(s, i);
    if (s->isr) port_cm_irq_attach(LINE, s->isr);
    uint32_t start = port_cycles();
    expect(timer_start_for(PID_STOP, 0, TM_INTERVAL, false) == MT_OK);
    sched_run();
    uint32_t clocks = port_cycles() - start;
    unsigned iterations = counts[0];
    if (s->count_all)
        for (unsigned i = 1; i < N_THREADS; i++) iterations += counts[i];
    expect(stop && iterations > 0);
    if (s->check_at_end) expect(s->check_at_end());
    if (violations) {
        printf("FAILED %s: %u rule violations, the first at line %u\n", s->name, violations,
               first_violation);
        status = 1;
    }
    printf("tmt %s %u %lu\n", s->name, iterations, (unsigned long) clocks);
}

int main(void)
{
    printf("bench_tm_threads: %s, event log %s, interval %u ticks\n", PORT_NAME,
           MOTET_EVENT_LOG ? "on" : "off", TM_INTERVAL);
    for (size_t i = 0; i < NUM_SCENARIOS; i++) run(&scenarios[i]);
    printf("bench_tm_threads: %s\n", status ? "FAILED" : "done");
    return status;
}
