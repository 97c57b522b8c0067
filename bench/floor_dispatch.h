/* SPDX-License-Identifier: MIT */
/*
 * What the floor images of the ports (bench/avr/floor_avr.c,
 * bench/cortex-m/floor_cm.c) share: the task's control block with its
 * frame, a queued message, the top frame and the running priority, and the
 * frame push. The lock, the queue's top and the measuring are each port's
 * own. An image includes this once.
 */
#ifndef MOTET_BENCH_FLOOR_DISPATCH_H
#define MOTET_BENCH_FLOOR_DISPATCH_H

#include <stdint.h>

#define GATE_SHUT INT8_MIN /* below every priority: rules 1 and 4 refuse */
#define PRIO_IDLE (-1)

typedef uint8_t (*floor_handler_t)(void *state, uint8_t port, void *data, uint16_t len);

typedef struct floor_task {
    floor_handler_t handler;
    void *state;
    struct floor_task *below; /* the frame under this one */
    int8_t below_prio;
    uint8_t sender;
    int8_t gate; /* prio when idle, GATE_SHUT while on the stack */
    int8_t prio;
    uint8_t pid;
#ifdef FLOOR_LOG_ONE    /* bench/avr/floor_avr.c's one log record a dispatch */
    uint16_t log_start; /* the counter when the handler started */
    uint8_t log_mark;   /* the ring's offset then: what came between */
    uint8_t log_port;
#endif
} floor_task_t;

typedef struct floor_msg {
    struct floor_msg *next;
    floor_task_t *task;
    void *data;
    uint16_t len;
    uint8_t port, src;
} floor_msg_t;

static floor_task_t *current;
static int8_t running_prio = PRIO_IDLE;

/* Push t's frame over the running one; interrupts off. */
static void push_frame(floor_task_t *t, uint8_t sender)
{
    t->below = current;
    t->below_prio = running_prio;
    t->sender = sender;
    t->gate = GATE_SHUT;
    current = t;
    running_prio = t->prio;
}

#endif /* MOTET_BENCH_FLOOR_DISPATCH_H */
