/* SPDX-License-Identifier: MIT */
/*
 * The floor of a dispatch on the ATmega128: the operations the dispatch
 * rules need for an immediate send and for a round trip, written straight
 * in one place with no kernel around them, measured exactly as bench_avr.c
 * measures Motet (same markers, handlers, compiler and flags). What Motet
 * spends above these figures is its own structure; what the targets ask
 * below them no structure can reach without dropping a rule.
 *
 * What each operation keeps, and why (docs/architecture.md, the rules):
 *   - a route names its task's control block and port (no lookup);
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
 *     bitmap whose top level is kept.
 * Nothing else: no payload ownership, no event log, no thread or migration
 * state, no error paths (the driver checks the runs instead). Built a
 * second time with FLOOR_UNLOCKED, without the interrupt lock, to show
 * what the lock itself costs, and a third time with FLOOR_LOG, with the
 * least an event log needs to give back a dispatch's slice, its causality
 * and its times: at the start the receiver, the sender and the port, at
 * the end the task and the handler's result, each with the counter's
 * 16 bits (2 cycles to read), in 6-byte slots of a ring whose laps are
 * counted, written inside the critical sections the dispatch has anyway;
 * and with FLOOR_LOG_ONE, one 9-byte slot a dispatch written at its end
 * (both times, the task, sender and port, how far back its start goes
 * among the records in between), the start's time, ring offset and port
 * kept in the frame meanwhile.
 *
 *   PA0 empty       the baseline: SBI, call of an empty function, CBI
 *   PA1 immediate   a send along a route to a higher-priority task
 *   PA3 round trip  as bench_avr.c: raised in PING's handler before it
 *                   sends to its partner, lowered in PING's handler for the
 *                   partner's answer (queued, PING being on the stack)
 *   PC7 done        raised when the measurements are over
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <stdbool.h>
#include <stdint.h>

#include "avr.h"
#include "floor_dispatch.h"

#define REPEAT 16u
#define LEVELS 8u
#define BLOCKS 4u

#define MARK_UP(port, bit)                                                                         \
    __asm__ volatile("sbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")
#define MARK_DOWN(port, bit)                                                                       \
    __asm__ volatile("cbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")

/* The interrupt lock: SREG's I bit saved and cleared, then restored. */
static inline uint8_t lock(void)
{
#ifdef FLOOR_UNLOCKED
    return 0;
#else
    uint8_t saved = SREG;
    cli();
    return saved;
#endif
}

static inline void unlock(uint8_t saved)
{
#ifdef FLOOR_UNLOCKED
    (void) saved;
#else
    SREG = saved;
#endif
}

static inline void irq_off(void)
{
#ifndef FLOOR_UNLOCKED
    cli();
#endif
}

static inline void irq_on(void)
{
#ifndef FLOOR_UNLOCKED
    sei();
#endif
}

enum { LOG_RUN = 14, LOG_START = 2, LOG_END = 3 }; /* as motet/log.h */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#if defined(FLOOR_LOG)
/* Two 6-byte slots a dispatch: at the start, and at the end. */
typedef struct {
    uint16_t stamp;
    uint8_t type, pid, a, b;
} log_slot_t;
#elif defined(FLOOR_LOG_ONE)
/* One 9-byte slot a dispatch, at its end: both times, and how far back in
 * the ring its start goes among the records its handler caused. */
typedef struct {
    uint16_t start, end;
    uint8_t type, pid, sender, port, back;
} log_slot_t;
#endif

#if defined(FLOOR_LOG) || defined(FLOOR_LOG_ONE)
#define LOG_SLOTS 28u
static log_slot_t log_ring[LOG_SLOTS];
static uint8_t log_at; /* byte offset of the next slot */
static uint8_t log_laps;

/* The slot at the write position, and the position stepped; irq off. */
ALWAYS_INLINE log_slot_t *log_take(void)
{
    log_slot_t *r = (log_slot_t *) ((uint8_t *) log_ring + log_at);
    uint8_t next = (uint8_t) (log_at + sizeof *r);
    if (next == sizeof log_ring) {
        next = 0;
        log_laps++;
    }
    log_at = next;
    return r;
}
#endif

/* A handler of t about to run for `port` (its frame just pushed) and one
 * just ended; interrupts off. */
#if defined(FLOOR_LOG)
ALWAYS_INLINE void log_started(floor_task_t *t, uint8_t type, uint8_t port)
{
    log_slot_t *r = log_take();
    r->stamp = TCNT1;
    r->type = type;
    r->pid = t->pid;
    r->a = port;
    r->b = t->sender;
}

ALWAYS_INLINE void log_ended(floor_task_t *t, uint8_t result)
{
    log_slot_t *r = log_take();
    r->stamp = TCNT1;
    r->type = LOG_END;
    r->pid = t->pid;
    r->a = result;
    r->b = 0;
}
#elif defined(FLOOR_LOG_ONE)
ALWAYS_INLINE void log_started(floor_task_t *t, uint8_t type, uint8_t port)
{
    (void) type;
    t->log_start = TCNT1;
    t->log_mark = log_at;
    t->log_port = port;
}

ALWAYS_INLINE void log_ended(floor_task_t *t, uint8_t result)
{
    (void) result; /* a failure would be a record of its own */
    uint8_t mark = t->log_mark;
    log_slot_t *r = log_take();
    r->start = t->log_start;
    r->end = TCNT1;
    r->type = LOG_END;
    r->pid = t->pid;
    r->sender = t->sender;
    r->port = t->log_port;
    r->back = (uint8_t) ((uint8_t *) r - (uint8_t *) log_ring - mark);
}
#else
ALWAYS_INLINE void log_started(floor_task_t *t, uint8_t type, uint8_t port)
{
    (void) t;
    (void) type;
    (void) port;
}

ALWAYS_INLINE void log_ended(floor_task_t *t, uint8_t result)
{
    (void) t;
    (void) result;
}
#endif

typedef struct floor_route {
    floor_task_t *task;
    uint8_t port;
} floor_route_t;

static int8_t queue_top = PRIO_IDLE;
static uint8_t queue_bits;
static floor_msg_t *level_head[LEVELS], *level_tail[LEVELS];
static floor_msg_t blocks[BLOCKS];
static floor_msg_t *free_blocks;

/* Out of line, as Motet's (dispatch_end_drain()): the immediate send does
 * not pay for the registers the drain's loop would take. */
__attribute__((noinline)) static void drain(int8_t floor);

/* Run t's handler on a frame pushed over the running one (rules 1 and 4
 * checked by the caller), pop it, and run what now outranks the sender. */
static void run_on_frame(floor_task_t *t, uint8_t port, void *data, uint16_t len)
{
    uint8_t result = t->handler(t->state, port, data, len);
    uint8_t s = lock();
    t = current;
    log_ended(t, result);
    current = t->below;
    running_prio = t->below_prio;
    t->gate = t->prio;
    unlock(s);
    if (queue_top > running_prio) drain(running_prio);
}

/* Queue a message for t (rule 2); interrupts off. */
static void enqueue(floor_task_t *t, uint8_t port, uint8_t src)
{
    floor_msg_t *m = free_blocks;
    free_blocks = m->next;
    m->next = 0;
    m->task = t;
    m->data = 0;
    m->len = 0;
    m->port = port;
    m->src = src;
    uint8_t level = (uint8_t) t->prio;
    if (level_tail[level])
        level_tail[level]->next = m;
    else
        level_head[level] = m;
    level_tail[level] = m;
    queue_bits |= (uint8_t) (1u << level);
    if (t->prio > queue_top) queue_top = t->prio;
}

static void floor_send(const floor_route_t *r)
{
    uint8_t s = lock();
    floor_task_t *t = r->task;
    if (t->gate >= running_prio) {
        push_frame(t, current->pid);
        log_started(t, LOG_RUN, r->port);
        unlock(s);
        run_on_frame(t, r->port, 0, 0);
        return;
    }
    enqueue(t, r->port, current->pid);
    unlock(s);
}

/* Rule 5: run queued messages that outrank `floor`, highest first. */
__attribute__((noinline)) static void drain(int8_t floor)
{
    irq_off();
    while (queue_top > floor) {
        uint8_t level = (uint8_t) queue_top;
        floor_msg_t *m = level_head[level];
        level_head[level] = m->next;
        if (!m->next) {
            level_tail[level] = 0;
            queue_bits &= (uint8_t) ~(1u << level);
            int8_t top = PRIO_IDLE;
            for (uint8_t bits = queue_bits; bits; bits >>= 1) top++;
            queue_top = top;
        }
        floor_task_t *t = m->task;
        push_frame(t, m->src);
        uint8_t port = m->port;
        log_started(t, LOG_START, port);
        m->next = free_blocks;
        free_blocks = m;
        irq_on();
        run_on_frame(t, port, 0, 0);
        irq_off();
    }
    irq_on();
}

/* ---- the measured tasks, as in bench_avr.c ---- */

enum { PID_DRIVER = 0x20, PID_IMMEDIATE, PID_SERVER, PID_PING };
static volatile uint16_t runs[4];

static uint8_t immediate_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) port;
    (void) data;
    (void) len;
    runs[PID_IMMEDIATE - PID_DRIVER]++;
    return 0;
}

static floor_route_t server_to_ping, ping_to_server;

static uint8_t server_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) port;
    (void) data;
    (void) len;
    floor_send(&server_to_ping);
    return 0;
}

static uint8_t ping_task(void *state, uint8_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == 1) {
        MARK_DOWN(PORTA, 3);
        runs[PID_PING - PID_DRIVER]++;
    } else {
        MARK_UP(PORTA, 3);
        floor_send(&ping_to_server);
    }
    return 0;
}

static floor_task_t driver = {
    .below_prio = PRIO_IDLE, .gate = GATE_SHUT, .prio = 1, .pid = PID_DRIVER};
static floor_task_t immediate = {
    .handler = immediate_task, .gate = 4, .prio = 4, .pid = PID_IMMEDIATE};
static floor_task_t server = {.handler = server_task, .gate = 4, .prio = 4, .pid = PID_SERVER};
static floor_task_t ping = {.handler = ping_task, .gate = 3, .prio = 3, .pid = PID_PING};
static const floor_route_t driver_to_immediate = {&immediate, 0};
static const floor_route_t driver_to_ping = {&ping, 0};

__attribute__((noinline)) static void op_empty(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void op_immediate(void)
{
    floor_send(&driver_to_immediate);
}

__attribute__((noinline)) static void measure_empty(void)
{
    MARK_UP(PORTA, 0);
    op_empty();
    MARK_DOWN(PORTA, 0);
}

__attribute__((noinline)) static void measure_immediate(void)
{
    MARK_UP(PORTA, 1);
    op_immediate();
    MARK_DOWN(PORTA, 1);
}

int main(void)
{
    DDRA = 0xFF;
    PORTA = 0;
    DDRC = 0xFF;
    PORTC = 0;
    for (uint8_t i = 0; i < BLOCKS; i++) {
        blocks[i].next = free_blocks;
        free_blocks = &blocks[i];
    }
    server_to_ping = (floor_route_t){&ping, 1};
    ping_to_server = (floor_route_t){&server, 1};
#if defined(FLOOR_LOG) || defined(FLOOR_LOG_ONE)
    TCCR1B = _BV(CS12); /* the counter the slots are stamped with, as the port's */
#endif
    current = &driver; /* the driver runs as a task of priority 1 */
    running_prio = driver.prio;
    sei();
    for (uint8_t i = 0; i < REPEAT + 1; i++) measure_empty();
    for (uint8_t i = 0; i < REPEAT + 1; i++) measure_immediate();
    for (uint8_t i = 0; i < REPEAT + 1; i++) floor_send(&driver_to_ping);
    bool ok =
        runs[PID_IMMEDIATE - PID_DRIVER] == REPEAT + 1 && runs[PID_PING - PID_DRIVER] == REPEAT + 1;
    MARK_UP(PORTC, 7);
    port_halt(ok ? 0 : 1);
    return 1;
}
