/* SPDX-License-Identifier: MIT */
/*
 * The floor of a dispatch on the Cortex-M3: the operations the dispatch
 * rules need for an immediate send, a queued one and a round trip, written
 * straight in one place with no kernel around them, and measured exactly as
 * bench_kernel.c measures Motet: the same timed loops, the same driver,
 * tasks, priorities and counting handlers, the same `op <name> <n>
 * <clocks>` lines (tools/motetlib/port_cortex_m.py). What Motet spends
 * above these figures is its own structure; what a target asks below them
 * no structure reaches without dropping a rule.
 *
 * What each operation keeps, and why (docs/architecture.md, the rules):
 *   - a send names its task's control block (a route; Motet's
 *     sched_send_to() also finds it by pid, which the floor does not);
 *   - the test of rules 1 and 4 is one byte, the task's gate, against the
 *     running priority;
 *   - the frame (the task below, its priority, the sender) lives in the
 *     control block, pushed and popped with interrupts off: a handler run
 *     at an interrupt's exit may kill a task, or run it, between the test
 *     and the push, or see a half-popped frame;
 *   - the handler gets state, port, payload and length as arguments;
 *   - after the handler, the queue's top level is compared with the
 *     priority restored (rule 5), and what outranks it is run;
 *   - a message that must wait takes a block from a free list and joins
 *     its level's FIFO (rule 2: priority, then creation order), marked in a
 *     bitmap whose top level is one CLZ.
 *   - an interrupt's post (irq_queued) is that queueing from the line's
 *     body, and the test at its exit of whether anything now outranks the
 *     interrupted frame; the line's dispatch is the port's, for a body
 *     without the kernel's hooks (the Super-Simple-Tasker floor).
 * Nothing else: no payload, no ownership, no event log, no thread,
 * migration or kill state, no argument checks (the driver checks the runs
 * instead), no error paths.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cortex_m.h"
#include "floor_dispatch.h"
#include "motet/port.h"

#define N1     1000u
#define N2     2000u
#define WARMUP 16u
#define LEVELS 8u
#define BLOCKS 4u

static uint32_t queue_bits; /* bit p: level p holds a message */
static floor_msg_t *level_head[LEVELS], *level_tail[LEVELS];
static floor_msg_t blocks[BLOCKS];
static floor_msg_t *free_blocks;

static int8_t queue_top(void)
{
    return (int8_t) (31 - __builtin_clz(queue_bits << 1 | 1u)) - 1;
}

static void drain(int8_t floor);

/* Pop the top frame; irq off. */
static void pop_frame(void)
{
    floor_task_t *t = current;
    current = t->below;
    running_prio = t->below_prio;
    t->gate = t->prio;
}

/* Run t's handler on a frame pushed over the running one (rules 1 and 4
 * checked by the caller), pop it, and run what now outranks the sender. */
__attribute__((noinline)) static int run_on_frame(floor_task_t *t, uint8_t port, void *data,
                                                  uint16_t len)
{
    t->handler(t->state, port, data, len);
    port_irq_state_t s = port_irq_save();
    pop_frame();
    port_irq_restore(s);
    if (queue_top() > running_prio) drain(running_prio);
    return 0;
}

/* Queue a message for t (rule 2); interrupts off. */
__attribute__((noinline)) static int enqueue(floor_task_t *t, uint8_t port, port_irq_state_t s)
{
    floor_msg_t *m = free_blocks;
    free_blocks = m->next;
    m->next = 0;
    m->task = t;
    m->data = 0;
    m->len = 0;
    m->port = port;
    m->src = current->pid;
    uint8_t level = (uint8_t) t->prio;
    if (level_tail[level])
        level_tail[level]->next = m;
    else
        level_head[level] = m;
    level_tail[level] = m;
    queue_bits |= 1u << level;
    port_irq_restore(s);
    return 0;
}

static int floor_send(floor_task_t *t, uint8_t port)
{
    port_irq_state_t s = port_irq_save();
    if (t->gate >= running_prio) {
        push_frame(t, current->pid);
        port_irq_restore(s);
        return run_on_frame(t, port, 0, 0);
    }
    return enqueue(t, port, s);
}

/* Rule 5: run queued messages that outrank `floor`, highest first. */
static void drain(int8_t floor)
{
    (void) port_irq_save();
    for (int8_t top; (top = queue_top()) > floor;) {
        floor_msg_t *m = level_head[top];
        level_head[top] = m->next;
        if (!m->next) {
            level_tail[top] = 0;
            queue_bits &= ~(1u << top);
        }
        floor_task_t *t = m->task;
        push_frame(t, m->src);
        port_irq_enable();
        t->handler(t->state, m->port, m->data, m->len);
        (void) port_irq_save();
        pop_frame();
        m->next = free_blocks;
        free_blocks = m;
    }
    port_irq_enable();
}

/* ---- the measured tasks, as in bench_kernel.c ---- */

enum {
    PID_DRIVER = 0x20,
    PID_IMMEDIATE,
    PID_CARRIER,
    PID_LOW,
    PID_PING,
    PID_PONG,
    PID_IRQ_CARRIER,
    PID_LAST
};
/* The spare line of irq_queued: a body without the kernel's hooks, which
 * is the floor's interrupt (the port's line dispatch, no more). */
#define LINE_QUEUED (PORT_CM_SPARE_IRQ_FIRST + 3u)
static volatile unsigned exits_due;
enum { PRIO_DRIVER = 1, PRIO_LOW = 2, PRIO_PINGPONG = 3, PRIO_NESTED = 4 };

static volatile unsigned runs[PID_LAST - PID_DRIVER];
static volatile unsigned failures;
static int status;

static void check(bool ok)
{
    if (!ok) failures++;
}

/* sched_current_pid()'s work, a call as there. */
__attribute__((noinline)) static uint8_t floor_current_pid(void)
{
    return current ? current->pid : 0;
}

static uint8_t count_task(void *state, uint8_t port, void *data, uint16_t len);
static uint8_t carrier_task(void *state, uint8_t port, void *data, uint16_t len);
static uint8_t ping_task(void *state, uint8_t port, void *data, uint16_t len);
static uint8_t pong_task(void *state, uint8_t port, void *data, uint16_t len);
static uint8_t irq_carrier_task(void *state, uint8_t port, void *data, uint16_t len);

static floor_task_t driver = {0, 0, 0, PRIO_IDLE, 0, GATE_SHUT, PRIO_DRIVER, PID_DRIVER};
static floor_task_t immediate = {count_task, 0, 0, 0, 0, PRIO_NESTED, PRIO_NESTED, PID_IMMEDIATE};
static floor_task_t carrier = {carrier_task, 0, 0, 0, 0, PRIO_NESTED, PRIO_NESTED, PID_CARRIER};
static floor_task_t low = {count_task, 0, 0, 0, 0, PRIO_LOW, PRIO_LOW, PID_LOW};
static floor_task_t ping = {ping_task, 0, 0, 0, 0, PRIO_PINGPONG, PRIO_PINGPONG, PID_PING};
static floor_task_t pong = {pong_task, 0, 0, 0, 0, PRIO_PINGPONG, PRIO_PINGPONG, PID_PONG};
static floor_task_t irq_carrier = {irq_carrier_task, 0, 0, 0, 0, PRIO_NESTED, PRIO_NESTED,
                                   PID_IRQ_CARRIER};

static uint8_t count_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == 0) runs[floor_current_pid() - PID_DRIVER]++;
    return 0;
}

static uint8_t carrier_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == 0) check(floor_send(&low, 0) == 0);
    return 0;
}

static uint8_t ping_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == 0) check(floor_send(&pong, 0) == 0);
    if (port == 1) runs[PID_PING - PID_DRIVER]++;
    return 0;
}

static uint8_t pong_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == 0) check(floor_send(&ping, 1) == 0);
    return 0;
}

static uint8_t irq_carrier_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == 0) port_cm_irq_raise(LINE_QUEUED);
    return 0;
}

/* The line's body: a bare post to `low`, which waits (rule 3: below the
 * interrupted carrier), and the exit's test, which finds nothing above the
 * interrupted frame (counted if it did: the run fails). */
static void isr_post_low(void)
{
    check(enqueue(&low, 0, port_irq_save()) == 0);
    if (queue_top() > running_prio) exits_due++;
}

__attribute__((noinline)) static void op_empty(void)
{
    __asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void op_immediate(void)
{
    check(floor_send(&immediate, 0) == 0);
}

__attribute__((noinline)) static void op_chain(void)
{
    check(floor_send(&carrier, 0) == 0);
}

__attribute__((noinline)) static void op_roundtrip(void)
{
    check(floor_send(&ping, 0) == 0);
}

__attribute__((noinline)) static void op_irq_queued(void)
{
    check(floor_send(&irq_carrier, 0) == 0);
}

typedef struct floor_op {
    const char *name;
    void (*fn)(void);
    volatile unsigned *count; /* runs expected once per call, or NULL */
} floor_op_t;

static const floor_op_t ops[] = {
    {"empty", op_empty, NULL},
    {"immediate", op_immediate, &runs[PID_IMMEDIATE - PID_DRIVER]},
    {"chain", op_chain, &runs[PID_LOW - PID_DRIVER]},
    {"roundtrip", op_roundtrip, &runs[PID_PING - PID_DRIVER]},
    {"irq_queued", op_irq_queued, &runs[PID_LOW - PID_DRIVER]},
};

__attribute__((noinline)) static uint32_t timed_loop(void (*fn)(void), unsigned n)
{
    uint32_t start = port_cycles();
    for (unsigned i = 0; i < n; i++) fn();
    return port_cycles() - start;
}

static void run_op(const floor_op_t *op)
{
    unsigned before = op->count ? *op->count : 0;
    timed_loop(op->fn, WARMUP);
    uint32_t c1 = timed_loop(op->fn, N1);
    uint32_t c2 = timed_loop(op->fn, N2);
    unsigned ran = op->count ? *op->count - before : WARMUP + N1 + N2;
    if (failures || exits_due || ran != WARMUP + N1 + N2) {
        printf("FAILED %s: %u of %u handler runs\n", op->name, ran, WARMUP + N1 + N2);
        status = 1;
        return;
    }
    printf("op %s %u %lu\n", op->name, N1, (unsigned long) c1);
    printf("op %s %u %lu\n", op->name, N2, (unsigned long) c2);
}

int main(void)
{
    port_init();
    for (unsigned i = 0; i < BLOCKS; i++) {
        blocks[i].next = free_blocks;
        free_blocks = &blocks[i];
    }
    printf("floor_cm: %s\n", PORT_NAME);
    port_cm_irq_attach_direct(LINE_QUEUED, isr_post_low);
    port_irq_enable();
    /* The driver runs as a task of priority 1, as in bench_kernel.c. */
    push_frame(&driver, 0);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) run_op(&ops[i]);
    printf("floor_cm: %s\n", status ? "FAILED" : "done");
    return status;
}
