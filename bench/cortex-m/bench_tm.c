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
 * mark during the scenario (the stack is repainted before each).
 *
 * An iteration is Thread-Metric's unit of work in message-task form: each
 * task counts its runs in its own state, as each of Thread-Metric's threads
 * has its counter, and the iterations are those counts summed at the end.
 * What Thread-Metric's thread checks each time (a call's result, the
 * message's contents) is checked each time here. The benchmark's own checks
 * of the rules the scenario exercises (who preempted whom, stack depth,
 * the queue, the turn order, the lock's holder) are made in each task's
 * first FIRST_ROUNDS runs, and the counts at the interval's end (in turn,
 * within one), as the thread versions check theirs (bench_tm_threads.c);
 * test_sched_rules checks the same rules at every step, on every port. A
 * violation prints FAILED and the program exits with status 1.
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
#define PID_BASE   0x21 /* scenario tasks: PID_BASE + 0 .. MAX_TASKS - 1 */
#define PRIO_TOP   (MOTET_PRIO_LEVELS - 1)
#define RING       5u
#define MAX_TASKS  6u /* per scenario */
#define MSG_BYTES  16u
#define HEAP_BYTES 128u
#define LINE       (PORT_CM_SPARE_IRQ_FIRST + 0u)
/* Each task's first runs, in which the benchmark checks the rules. */
#define FIRST_ROUNDS 2u

enum { PORT_KICK = PORT_0, PORT_REPLY, PORT_GRANT, PORT_RELEASE };

static volatile bool stop;
static unsigned isr_count; /* the interrupt's own counter, as Thread-Metric's */
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

/* A scenario task's state: its count of runs, as each Thread-Metric thread
 * has its counter, and the task it hands its turn to, which its INIT names. */
typedef struct worker {
    unsigned count;
    mt_pid_t next;
} worker_t;

static worker_t *workers[MAX_TASKS]; /* each task's state, for the checks */

/* Every message but the scenario's: at INIT, the state published for the
 * checks and the next task taken from INIT's data. Out of line, so that the
 * handlers' measured way saves no registers for it. */
static MT_NOINLINE mt_err_t worker_other(worker_t *w, mt_port_t port, const void *data,
                                         uint16_t len)
{
    if (port != PORT_INIT) return MT_OK;
    workers[index_of()] = w;
    expect(len == sizeof w->next);
    if (len == sizeof w->next) memcpy(&w->next, data, len);
    return MT_OK;
}

static unsigned count_of(unsigned i)
{
    expect(workers[i] != NULL);
    return workers[i] ? workers[i]->count : 0u;
}

/* Tasks first .. last took turns in that order: each ran once before any ran
 * again, so the counts fall by at most one from the first to the last, and
 * only once. */
static void expect_in_turn(unsigned first, unsigned last)
{
    for (unsigned i = first + 1u; i <= last; i++) expect(count_of(i) <= count_of(i - 1u));
    expect(count_of(first) - count_of(last) <= 1u);
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

/* The first rounds' turns come in order (FIFO within the level), each
 * alone on the stack with the other four queued. */
static void coop_check_turn(void)
{
    unsigned i = index_of();
    expect(i == next_worker && sched_stack_depth() == 1u && sched_queued_count() == RING - 1u);
    next_worker = i == RING ? 1u : i + 1u;
}

/* One hand-over, Thread-Metric's count and relinquish: this worker's turn
 * counted, then its next one queued behind the others' (it is on the
 * stack). The turn order is checked in the first rounds, the counts at the
 * end (coop_check()). */
static mt_err_t coop_worker(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    if (w->count < FIRST_ROUNDS) coop_check_turn();
    w->count++;
    if (!stop) expect(sched_signal_to(w->next, PORT_KICK) == MT_OK);
    return MT_OK;
}

static void coop_check(void)
{
    expect_in_turn(1, RING);
}

/* ---- preemptive: a ring of five rising priorities ---- */

/* This task's run counted, the token passed on: to the next higher at
 * once, nested (the stack's depth checked in the first rounds), or from the
 * top one to the bottom one, which is on the stack and waits. */
static mt_err_t ring_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    if (w->count < FIRST_ROUNDS) expect(sched_stack_depth() == index_of() + 1u);
    w->count++;
    if (!stop) expect(sched_signal_to(w->next, PORT_KICK) == MT_OK);
    return MT_OK;
}

static void ring_check(void)
{
    expect_in_turn(0, RING - 1u);
}

/* ---- interrupt, interrupt preemption ---- */

static void isr_to_self(void)
{
    isr_count++;
    expect(sched_post_isr(pid(0), PORT_KICK, NULL, 0, 0) == MT_OK);
}

static mt_err_t irq_self_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    w->count++;
    if (stop) return MT_OK;
    port_cm_irq_raise(LINE);
    /* In the first rounds: the interrupt ran at once, and its post waits
     * (equal priority, and this task is on the stack). */
    if (w->count <= FIRST_ROUNDS) expect(isr_count == w->count && sched_queued_count() == 1u);
    return MT_OK;
}

/* Every run but the last raised the line, whose post ran the next. */
static void irq_self_check(void)
{
    expect(isr_count + 1u == count_of(0));
}

static void isr_to_high(void)
{
    isr_count++;
    expect(sched_post_isr(pid(1), PORT_KICK, NULL, 0, 0) == MT_OK);
}

static mt_err_t irq_low_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    w->count++;
    if (stop) return MT_OK;
    port_cm_irq_raise(LINE);
    /* In the first rounds: the high task ran at the interrupt's exit. */
    if (w->count <= FIRST_ROUNDS) expect(count_of(1) == w->count);
    return MT_OK;
}

static mt_err_t irq_high_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    /* In the first rounds: above the low task, out of the interrupt body. */
    if (w->count < FIRST_ROUNDS) expect(!port_in_isr() && sched_stack_depth() == 2u);
    w->count++;
    /* The low task is on the stack: waits. */
    expect(sched_signal_to(w->next, PORT_KICK) == MT_OK);
    return MT_OK;
}

/* Each interrupt ran the high task at its exit, and each of the low task's
 * runs but the last raised one. */
static void irq_high_check(void)
{
    expect(isr_count == count_of(1) && count_of(1) + 1u == count_of(0));
}

/* ---- message: 16 bytes there and back ---- */

static uint32_t next_word;

#if MOTET_THREADS
/* Thread-Metric's unit: one item into a queue and back out, by one task. */
static uint32_t msgq_slots[2][MSG_BYTES / 4];
static msgq_t msg_queue;

static mt_err_t msgq_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    expect(msgq_init(&msg_queue, msgq_slots, MSG_BYTES, 2) == MT_OK);
    while (!stop) {
        uint32_t out[MSG_BYTES / 4] = {next_word, next_word + 1u, next_word + 2u, next_word + 3u};
        uint32_t in[MSG_BYTES / 4];
        expect(msgq_send(&msg_queue, out, 0) == MT_OK);
        expect(msgq_receive(&msg_queue, in, 0) == MT_OK);
        expect(in[0] == next_word && in[3] == next_word + 3u);
        next_word += 4u;
        w->count++;
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
    worker_t *w = state;
    if (port == PORT_REPLY) {
        uint32_t words[MSG_BYTES / 4];
        expect(len == MSG_BYTES);
        memcpy(words, data, MSG_BYTES);
        expect(words[0] == next_word && words[3] == next_word + 3u);
        next_word += 4u;
        w->count++;
    }
    if (port != PORT_KICK && port != PORT_REPLY) return worker_other(w, port, data, len);
    if (stop) return MT_OK;
    uint32_t words[MSG_BYTES / 4] = {next_word, next_word + 1u, next_word + 2u, next_word + 3u};
    send(1, PORT_KICK, words, MSG_BYTES); /* lower priority: queued, copied */
    return MT_OK;
}

static mt_err_t msg_low_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    if (port != PORT_KICK) return worker_other(state, port, data, len);
    expect(len == MSG_BYTES && data); /* queued: a copy of the sender's words */
    send(0, PORT_REPLY, data, len);   /* higher: runs nested */
    return MT_OK;
}
#endif

/* ---- synchronisation ---- */

#if MOTET_THREADS
/* Thread-Metric's unit: one try-take and one give of a semaphore. */
static sem_t sync_sem;

static mt_err_t sem_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    sem_init_binary(&sync_sem, true);
    while (!stop) {
        expect(sem_try_wait(&sync_sem) == MT_OK);
        if (w->count < FIRST_ROUNDS) expect(sem_count(&sync_sem) == 0); /* held: ours alone */
        w->count++;
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
    if (port == PORT_INIT) return worker_other(state, port, data, len);
    if (port == PORT_KICK) { /* acquire */
        expect(lock_owner == MT_PID_NONE);
        lock_owner = sched_sender();
        expect(sched_signal_to(sched_sender(), PORT_GRANT) == MT_OK);
    } else if (port == PORT_RELEASE) {
        expect(lock_owner == sched_sender());
        lock_owner = MT_PID_NONE;
    }
    return MT_OK;
}

static mt_err_t client_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    worker_t *w = state;
    if (port == PORT_INIT) return worker_other(w, port, data, len);
    if (port == PORT_GRANT) {
        if (w->count < FIRST_ROUNDS) expect(lock_owner == pid(1)); /* the lock is ours alone */
        w->count++;
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
    worker_t *w = state;
    if (port != PORT_KICK) return worker_other(w, port, data, len);
    pool_init(&tm_pool);
    while (!stop) {
        uint8_t *p = pool_alloc(&tm_pool);
        expect(p != NULL);
        if (p) p[0] = 0xA5; /* used, as Thread-Metric's test does */
        expect(pool_free(&tm_pool, p) == MT_OK);
        w->count++;
    }
    expect(pool_in_use(&tm_pool) == 0);
    return MT_OK;
}

/* ---- running a scenario ---- */

typedef struct scenario {
    const char *name;
    task_handler_t handlers[MAX_TASKS];
    mt_prio_t prios[MAX_TASKS];
    uint8_t next[MAX_TASKS]; /* the task each hands its turn to, by index */
    void (*isr)(void);
    void (*check)(void); /* the counts at the interval's end */
    uint8_t kick;        /* the task the scenario starts with */
    uint8_t counted;     /* the tasks whose counts are the iterations, a bit each */
} scenario_t;

static const scenario_t scenarios[] = {
    {.name = "cooperative",
     .handlers = {coop_starter, coop_worker, coop_worker, coop_worker, coop_worker, coop_worker},
     .prios = {3, 2, 2, 2, 2, 2},
     .next = {0, 1, 2, 3, 4, 5}, /* each worker its own next turn */
     .check = coop_check,
     .counted = 0x3e},
    {.name = "preemptive",
     .handlers = {ring_task, ring_task, ring_task, ring_task, ring_task},
     .prios = {1, 2, 3, 4, 5},
     .next = {1, 2, 3, 4, 0},
     .check = ring_check,
     .counted = 0x1f},
    {.name = "interrupt",
     .handlers = {irq_self_task},
     .prios = {2},
     .isr = isr_to_self,
     .check = irq_self_check,
     .counted = 0x01},
    {.name = "interrupt_preemption",
     .handlers = {irq_low_task, irq_high_task},
     .prios = {2, 4},
     .isr = isr_to_high,
     .check = irq_high_check,
     .counted = 0x02},
#if MOTET_THREADS
    {.name = "message", .handlers = {msgq_task}, .prios = {2}, .counted = 0x01},
    {.name = "synchronisation", .handlers = {sem_task}, .prios = {2}, .counted = 0x01},
#else
    {.name = "message",
     .handlers = {msg_high_task, msg_low_task},
     .prios = {4, 2},
     .counted = 0x01},
    {.name = "synchronisation",
     .handlers = {lock_task, client_task},
     .prios = {4, 2},
     .kick = 1,
     .counted = 0x02},
#endif
    {.name = "memory", .handlers = {memory_task}, .prios = {2}, .counted = 0x01},
};
#define NUM_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

/* The task, with its state, and its INIT naming the task it hands its turn
 * to (it runs at once: nothing is on the stack). */
static void create(mt_pid_t p, mt_prio_t prio, task_handler_t handler, mt_pid_t next)
{
    task_spec_t spec = {.pid = p, .prio = prio, .handler = handler, .state_size = sizeof(worker_t)};
    if (sched_task_create(&spec) != MT_OK || sched_task_init(p, &next, sizeof next) != MT_OK) {
        printf("FAILED: cannot create task 0x%02x\n", p);
        port_halt(1);
    }
}

/* A fresh kernel per scenario; the kick runs it all, nested in this call. */
static void run(const scenario_t *s)
{
    motet_boot();
    stop = false;
    isr_count = violations = 0;
    memset(workers, 0, sizeof workers);
#if !MOTET_THREADS
    lock_owner = MT_PID_NONE;
#endif
    next_word = 0;
    next_worker = 1;
    create(PID_STOP, PRIO_TOP, stop_task, PID_STOP);
    for (unsigned i = 0; i < MAX_TASKS && s->handlers[i]; i++)
        create(pid(i), s->prios[i], s->handlers[i], pid(s->next[i]));
    if (s->isr) port_cm_irq_attach(LINE, s->isr);
    port_cm_stack_repaint();
    uint32_t start = port_cycles();
    expect(timer_start_for(PID_STOP, 0, TM_INTERVAL, false) == MT_OK);
    signal_task(s->kick, PORT_KICK);
    sched_run_pending();
    uint32_t clocks = port_cycles() - start;
    if (s->check) s->check();
    unsigned iterations = 0;
    for (unsigned i = 0; i < MAX_TASKS; i++)
        if (s->counted & 1u << i) iterations += count_of(i);
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
