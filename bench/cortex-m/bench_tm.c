/* SPDX-License-Identifier: MIT */
/*
 * Thread-Metric's suite, in its spirit, for Motet's message tasks on the
 * Cortex-M port. Thread-Metric (Express Logic) counts how many times a
 * small scenario completes in a fixed interval; these seven scenarios keep
 * its names and shapes, written with messages instead of threads:
 *
 *   cooperative     five equal-priority workers take turns from the
 *                   queue: each runs to completion and sends itself its
 *                   next turn, which waits behind the other four (it is on
 *                   the stack: rule 4; FIFO within a level: rule 2), as
 *                   Thread-Metric's threads relinquish to the next of
 *                   their level; a starter above them queues the first
 *                   five turns once
 *   preemptive      five tasks of rising priority pass a token round a
 *                   ring: each send preempts at once, nested (rule 1); the
 *                   top one's send to the bottom one, on the stack, waits
 *   interrupt       a task pends a spare line; the interrupt posts back to
 *                   that task, which is on the stack, so it waits (rule 3:
 *                   no preemption by an equal priority)
 *   interrupt_preemption  a low task pends a line; the interrupt posts to a
 *                   high task, which preempts at interrupt exit and sends
 *                   back to the low one
 *   message         with threads in the kernel, a task sends a 16-byte item
 *                   to a message queue (msgq.h) and receives it back, as
 *                   Thread-Metric's thread does; without threads (no
 *                   message queues), 16-byte messages there and back
 *                   between two tasks: down to the lower one queued
 *                   (payload copied), back up nested
 *   synchronisation with threads in the kernel, a task try-takes and gives
 *                   a semaphore; without threads (no semaphores), a lock
 *                   server task grants and takes back a token by message
 *                   handshake
 *   memory          a task allocates and frees a 128-byte pool block
 *                   (pool.h)
 *
 * Each scenario runs for INTERVAL ticks (100 ms of virtual time, 10^8
 * instructions under `-icount shift=0`), stopped by a one-shot timer into a
 * top-priority task, and prints
 *     tm <name> <iterations> <clocks> <stack bytes>
 * where clocks is the measured interval (the harness divides to get
 * instructions per iteration) and stack bytes the shared stack's high-water
 * mark during the scenario (the stack is repainted before each). Every
 * scenario checks its own rules as it runs (who preempted whom, stack depth,
 * payload contents, lock ownership); a violation prints FAILED and the
 * program exits with status 1.
 */
#include <stdio.h>
#include <string.h>

#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/msgq.h"
#include "motet/pool.h"
#include "motet/port.h"

#ifndef TM_INTERVAL
#define TM_INTERVAL 1000u /* ticks */
#endif

#define PID_STOP   0x20
#define PID_BASE   0x21 /* scenario tasks: PID_BASE + 0 .. 4 */
#define PRIO_TOP   (MOTET_PRIO_LEVELS - 1)
#define RING       5u
#define MAX_TASKS  6u /* per scenario */
#define MSG_BYTES  16u
#define HEAP_BYTES 128u
#define LINE       (PORT_CM_SPARE_IRQ_FIRST + 0u)

enum { PORT_KICK = PORT_0, PORT_REPLY, PORT_GRANT, PORT_RELEASE };

static volatile bool stop;
static unsigned iterations;
static unsigned counts[MAX_TASKS];
static unsigned violations;
static int status;

static unsigned first_violation; /* source line of the first one */

static void expect_at(bool ok, unsigned line)
{
    if (ok) return;
    if (!violations++) first_violation = line;
}
#define expect(ok) expect_at((ok), __LINE__)

static mt_pid_t pid(unsigned i)
{
    return (mt_pid_t) (PID_BASE + i);
}

static unsigned index_of(void)
{
    return (unsigned) (sched_current_pid() - PID_BASE);
}

/* A message without payload, as an application sends one. */
static void signal_task(unsigned i, mt_port_t port)
{
    expect(sched_signal_to(pid(i), port) == MT_OK);
}

static mt_err_t stop_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_TIMEOUT0) stop = true;
    return MT_OK;
}

/* ---- cooperative: run to completion from the queue ---- */

static unsigned next_worker;

/* Queues the five workers' first turns (they are below it), once. */
static mt_err_t coop_starter(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    for (unsigned i = 1; i <= RING; i++) signal_task(i, PORT_KICK);
    expect(sched_queued_count() == RING);
    return MT_OK;
}

/* One hand-over: this worker's turn, then its next one queued behind the
 * others'. The rules are checked in the first rounds only: the stack walk
 * and the queue count are the benchmark's costs, not the scenario's. */
static mt_err_t coop_worker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    unsigned i = index_of();
    expect(i == next_worker); /* FIFO, in turn */
    if (iterations < 2u * RING)
        expect(sched_stack_depth() == 1u && sched_queued_count() == RING - 1u);
    next_worker = i == RING ? 1u : i + 1u;
    counts[i]++;
    iterations++;
    if (!stop) signal_task(i, PORT_KICK); /* on the stack: it waits its turn */
    return MT_OK;
}

static void coop_check(void)
{
    for (unsigned i = 2; i <= RING; i++) expect(counts[i] + 1u >= counts[1]);
}

/* ---- preemptive: a ring of five rising priorities ---- */

static mt_err_t ring_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    unsigned i = index_of();
    counts[i]++;
    iterations++;
    expect(sched_stack_depth() == i + 1u); /* each one nested on the one below */
    if (!stop) signal_task((i + 1u) % RING, PORT_KICK);
    return MT_OK;
}

static void ring_check(void)
{
    for (unsigned i = 1; i < RING; i++) expect(counts[i] + 1u >= counts[0]);
}

/* ---- interrupt, interrupt preemption ---- */

static void isr_to_self(void)
{
    counts[1]++;
    expect(sched_post_isr(pid(0), PORT_KICK, NULL, 0, 0) == MT_OK);
}

static mt_err_t irq_self_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    counts[0]++;
    iterations++;
    if (stop) return MT_OK;
    unsigned isr_before = counts[1];
    port_cm_irq_raise(LINE);
    /* The interrupt ran at once; its post waits (equal priority, and this
     * task is on the stack). The queue is counted in the first round only
     * (see coop_worker()). */
    expect(counts[1] == isr_before + 1u && (iterations > 1 || sched_queued_count() == 1u));
    return MT_OK;
}

static void isr_to_high(void)
{
    expect(sched_post_isr(pid(1), PORT_KICK, NULL, 0, 0) == MT_OK);
}

static mt_err_t irq_low_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    counts[0]++;
    if (stop) return MT_OK;
    unsigned high_before = counts[1];
    port_cm_irq_raise(LINE);
    expect(counts[1] == high_before + 1u); /* the high task ran at interrupt exit */
    return MT_OK;
}

static mt_err_t irq_high_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    /* Above the low task, out of the interrupt body; the stack walked in
     * the first rounds only (see coop_worker()). */
    expect(!port_in_isr() && (iterations > 2u || sched_stack_depth() == 2u));
    counts[1]++;
    iterations++;
    signal_task(0, PORT_KICK); /* the low task is on the stack: waits */
    return MT_OK;
}

/* ---- message: 16 bytes there and back ---- */

static uint32_t next_word;

#if MOTET_THREADS
/* Thread-Metric's unit: one item into a queue and back out, by one task. */
static uint32_t msgq_slots[2][MSG_BYTES / 4];
static msgq_t msg_queue;

static mt_err_t msgq_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    expect(msgq_init(&msg_queue, msgq_slots, MSG_BYTES, 2) == MT_OK);
    while (!stop) {
        uint32_t out[MSG_BYTES / 4] = {next_word, next_word + 1u, next_word + 2u, next_word + 3u};
        uint32_t in[MSG_BYTES / 4];
        expect(msgq_send(&msg_queue, out, 0) == MT_OK);
        expect(msgq_receive(&msg_queue, in, 0) == MT_OK);
        expect(in[0] == next_word && in[3] == next_word + 3u);
        next_word += 4u;
        iterations++;
    }
    return MT_OK;
}
#else
static void send(unsigned i, mt_port_t port, void *data, uint16_t len)
{
    expect(sched_send_to(pid(i), port, data, len, 0) == MT_OK);
}

/* No message queues without threads: messages between two tasks, down to
 * the lower one queued (payload copied), back up nested (borrowed). */
static mt_err_t msg_high_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_REPLY) {
        uint32_t words[MSG_BYTES / 4];
        expect(len == MSG_BYTES);
        memcpy(words, data, MSG_BYTES);
        expect(words[0] == next_word && words[3] == next_word + 3u);
        next_word += 4u;
        iterations++;
    }
    if (port != PORT_KICK && port != PORT_REPLY) return MT_OK;
    if (stop) return MT_OK;
    uint32_t words[MSG_BYTES / 4] = {next_word, next_word + 1u, next_word + 2u, next_word + 3u};
    send(1, PORT_KICK, words, MSG_BYTES); /* lower priority: queued, copied */
    return MT_OK;
}

static mt_err_t msg_low_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    expect(len == MSG_BYTES && data); /* queued: a copy of the sender's words */
    send(0, PORT_REPLY, data, len);   /* higher: runs nested */
    return MT_OK;
}
#endif

/* ---- synchronisation ---- */

static bool in_critical;

#if MOTET_THREADS
/* Thread-Metric's unit: one try-take and one give of a semaphore. */
static sem_t sync_sem;

static mt_err_t sem_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    sem_init_binary(&sync_sem, true);
    while (!stop) {
        expect(sem_try_wait(&sync_sem) == MT_OK && !in_critical);
        in_critical = true;
        iterations++;
        in_critical = false;
        expect(sem_post(&sync_sem) == MT_OK);
    }
    expect(sem_count(&sync_sem) == 1);
    return MT_OK;
}
#else
/* No semaphores without threads: a lock server grants and takes back a
 * token by message handshake (acquire, grant, release). */
static mt_pid_t lock_owner = MT_PID_NONE;

static mt_err_t lock_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_KICK) { /* acquire */
        expect(lock_owner == MT_PID_NONE);
        lock_owner = sched_sender();
        expect(sched_signal_to(sched_sender(), PORT_GRANT) == MT_OK);
    } else if (port == PORT_RELEASE) {
        expect(lock_owner == sched_sender() && !in_critical);
        lock_owner = MT_PID_NONE;
    }
    return MT_OK;
}

static mt_err_t client_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_GRANT) {
        expect(lock_owner == pid(1) && !in_critical);
        in_critical = true;
        iterations++;
        in_critical = false;
        signal_task(0, PORT_RELEASE);
    }
    if ((port == PORT_KICK || port == PORT_GRANT) && !stop)
        signal_task(0, PORT_KICK); /* acquire: the grant waits for us to return */
    return MT_OK;
}
#endif

/* ---- memory: Thread-Metric's unit, a 128-byte pool block taken and freed ---- */

POOL_DEFINE(tm_pool, HEAP_BYTES, 4);

static mt_err_t memory_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_KICK) return MT_OK;
    pool_init(&tm_pool);
    while (!stop) {
        uint8_t *p = pool_alloc(&tm_pool);
        expect(p != NULL);
        if (p) p[0] = 0xA5; /* used, as Thread-Metric's test does */
        expect(pool_free(&tm_pool, p) == MT_OK);
        iterations++;
    }
    expect(pool_in_use(&tm_pool) == 0);
    return MT_OK;
}

/* ---- running a scenario ---- */

typedef struct scenario {
    const char *name;
    task_handler_t handlers[MAX_TASKS];
    mt_prio_t prios[MAX_TASKS];
    void (*isr)(void);
    void (*check)(void);
    uint8_t kick; /* the task the scenario starts with */
} scenario_t;

static const scenario_t scenarios[] = {
    {.name = "cooperative",
     .handlers = {coop_starter, coop_worker, coop_worker, coop_worker, coop_worker, coop_worker},
     .prios = {3, 2, 2, 2, 2, 2},
     .check = coop_check},
    {.name = "preemptive",
     .handlers = {ring_task, ring_task, ring_task, ring_task, ring_task},
     .prios = {1, 2, 3, 4, 5},
     .check = ring_check},
    {.name = "interrupt", .handlers = {irq_self_task}, .prios = {2}, .isr = isr_to_self},
    {.name = "interrupt_preemption",
     .handlers = {irq_low_task, irq_high_task},
     .prios = {2, 4},
     .isr = isr_to_high},
#if MOTET_THREADS
    {.name = "message", .handlers = {msgq_task}, .prios = {2}},
    {.name = "synchronisation", .handlers = {sem_task}, .prios = {2}},
#else
    {.name = "message", .handlers = {msg_high_task, msg_low_task}, .prios = {4, 2}},
    {.name = "synchronisation", .handlers = {lock_task, client_task}, .prios = {4, 2}, .kick = 1},
#endif
    {.name = "memory", .handlers = {memory_task}, .prios = {2}},
};
#define NUM_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

static void create(mt_pid_t p, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = p, .prio = prio, .handler = handler};
    if (sched_task_create(&spec) != MT_OK || sched_task_init(p, NULL, 0) != MT_OK) {
        printf("FAILED: cannot create task 0x%02x\n", p);
        port_halt(1);
    }
}

/* A fresh kernel per scenario; the kick runs it all, nested in this call. */
static void run(const scenario_t *s)
{
    motet_boot();
    stop = false;
    iterations = violations = 0;
    memset(counts, 0, sizeof counts);
#if !MOTET_THREADS
    lock_owner = MT_PID_NONE;
#endif
    in_critical = false;
    next_word = 0;
    next_worker = 1;
    create(PID_STOP, PRIO_TOP, stop_task);
    for (unsigned i = 0; i < MAX_TASKS && s->handlers[i]; i++)
        create(pid(i), s->prios[i], s->handlers[i]);
    if (s->isr) port_cm_irq_attach(LINE, s->isr);
    port_cm_stack_repaint();
    uint32_t start = port_cycles();
    expect(timer_start_for(PID_STOP, 0, TM_INTERVAL, false) == MT_OK);
    signal_task(s->kick, PORT_KICK);
    sched_run_pending();
    uint32_t clocks = port_cycles() - start;
    if (s->check) s->check();
    expect(stop && iterations > 0);
    if (violations) {
        printf("FAILED %s: %u rule violations, the first at line %u\n", s->name, violations,
               first_violation);
        status = 1;
    }
    printf("tm %s %u %lu %lu\n", s->name, iterations, (unsigned long) clocks,
           (unsigned long) port_cm_stack_high_water());
}

int main(void)
{
    printf("bench_tm: %s, event log %s, interval %u ticks\n", PORT_NAME,
           MOTET_EVENT_LOG ? "on" : "off", TM_INTERVAL);
    for (size_t i = 0; i < NUM_SCENARIOS; i++) run(&scenarios[i]);
    printf("bench_tm: %s\n", status ? "FAILED" : "done");
    return status;
}
