/* SPDX-License-Identifier: MIT */
/*
 * Kernel benchmarks on the ATmega128, in cycles, measured by the simavr
 * harness from GPIO edges (tools/motetlib/port_avr.py bench).
 *
 * Each operation runs between two marker instructions on its own pin: SBI
 * raises the pin, the operation runs, CBI lowers it. The harness stamps each
 * edge with the cycle at which the writing instruction starts, so a window
 * is the SBI (2 cycles) plus everything up to the CBI. Operations are
 * noinline functions called the same way as an empty one; subtracting the
 * empty window leaves the operation itself (call and return excluded).
 *
 *   PA0 empty       the baseline: SBI, call of an empty function, CBI
 *   PA1 immediate   sched_signal() (a message without payload) along a
 *                   route to a higher-priority task, nested (rule 1)
 *   PA2 chain       send to a higher carrier that sends to a task between it
 *                   and the driver: queued, run at the carrier's return
 *   PA3 round trip  raised in PING's handler right before it sends to its
 *                   partner, lowered first thing in PING's handler for the
 *                   partner's answer
 *   PA4 mem         mem_alloc(32) + mem_free() on a quiet heap
 *   PA5 slab        slab_alloc() + slab_free() of a 16-byte object
 *   PA6 irq task    raised first thing in the handler of the task an
 *                   external interrupt (INT0, injected by the harness) posts to
 *   PA7 timer task  raised first thing in the handler of a periodic timer
 *   PB5 OC1A        toggled by Timer1 itself at every compare match
 *   PC0 irq body    raised first thing in the INT0 interrupt body
 *   PC1 by pid      sched_signal_to() by pid to the same task as PA1
 *   PC2 send        sched_send() with its payload's arguments (none) along
 *                   PA1's route
 *   PC7 ready       raised when the module waits (asleep) for the injections
 *
 * Every target handler counts its runs; the driver checks after each
 * operation that it produced exactly the runs it should (an immediate
 * dispatch that queued would fail), and the module halts with status 1 on
 * any mismatch. The console prints the configuration and the TCB size.
 */
#include <avr/io.h>
#include <stdio.h>
#include <string.h>

#include "avr.h"
#include "motet/motet.h"
#include "sched_internal.h"
#include "slab.h"

#define REPEAT       16u /* runs of each operation (after one warm-up) */
#define IRQ_EVENTS   16u /* injected interrupts the module waits for */
#define TIMER_PERIOD 1000u
#define ALLOC_BYTES  32u

/* Seven tasks: the slab holds MOTET_MAX_TASKS (8), the manager takes one. */
enum {
    PID_DRIVER = 0x20,
    PID_IMMEDIATE,
    PID_SERVER, /* the chain's carrier on PORT_0, PING's partner on PORT_0 + 1 */
    PID_LOW,
    PID_PING,
    PID_IRQ,
    PID_TIMER,
};

enum { PRIO_DRIVER = 1, PRIO_LOW = 2, PRIO_PING = 3, PRIO_NESTED = 4, PRIO_EVENT = 5 };

#define MARK_UP(port, bit)                                                                         \
    __asm__ volatile("sbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")
#define MARK_DOWN(port, bit)                                                                       \
    __asm__ volatile("cbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")

typedef struct bench_obj {
    uint32_t word[4];
} bench_obj_t;

SLAB_DEFINE(bench_cache, bench_obj_t, 2);

static volatile uint16_t runs[PID_TIMER - PID_DRIVER + 1];
static volatile uint8_t failures;

static void fail(const char *what)
{
    static const char head[] = "bench_avr: FAILED: ";
    port_console_write(head, sizeof head - 1);
    port_console_write(what, strlen(what));
    port_console_write("\n", 1);
    port_halt(1);
}

/* ---- target tasks ---- */

/* The output ports (routes) of the tasks that send. */
enum { DRIVER_TO_IMMEDIATE, DRIVER_TO_CARRIER, DRIVER_TO_PING };
enum { SERVER_TO_LOW, SERVER_TO_PING };
enum { PING_TO_SERVER };

/* A task that only counts its messages: the least a handler does. */
#define COUNTING_TASK(name, pid)                                                                   \
    static mt_err_t name(void *state, mt_port_t port, void *data, uint16_t len)                    \
    {                                                                                              \
        (void) state;                                                                              \
        (void) port;                                                                               \
        (void) data;                                                                               \
        (void) len;                                                                                \
        runs[(pid) -PID_DRIVER]++;                                                                 \
        return MT_OK;                                                                              \
    }
COUNTING_TASK(immediate_task, PID_IMMEDIATE)
COUNTING_TASK(low_task, PID_LOW)

/* PORT_0: the chain's carrier, sends to LOW (queued below it). PORT_0 + 1:
 * PING's partner, answers PING (queued: PING is on the stack). */
static mt_err_t server_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    mt_err_t err = MT_OK;
    if (port == PORT_0)
        err = sched_signal(SERVER_TO_LOW);
    else if (port == PORT_0 + 1)
        err = sched_signal(SERVER_TO_PING);
    if (err != MT_OK) failures++;
    return MT_OK;
}

/* PING starts a round trip on PORT_0; the answer comes back on PORT_0 + 1,
 * run when PING's first handler has returned. */
static mt_err_t ping_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0 + 1) {
        MARK_DOWN(PORTA, 3);
        runs[PID_PING - PID_DRIVER]++;
    } else if (port == PORT_0) {
        MARK_UP(PORTA, 3);
        if (sched_signal(PING_TO_SERVER) != MT_OK) failures++;
    }
    return MT_OK;
}

static mt_err_t irq_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    MARK_UP(PORTA, 6);
    MARK_DOWN(PORTA, 6);
    if (++runs[PID_IRQ - PID_DRIVER] == IRQ_EVENTS) port_halt(failures ? 1 : 0);
    return MT_OK;
}

static mt_err_t timer_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_TIMEOUT0) return MT_OK;
    MARK_UP(PORTA, 7);
    MARK_DOWN(PORTA, 7);
    runs[PID_TIMER - PID_DRIVER]++;
    return MT_OK;
}

/* The injected interrupt: INT0 (PD0), falling edge, which also wakes the
 * chip from power-save. */
PORT_AVR_ISR(INT0_vect)
{
    MARK_UP(PORTC, 0);
    MARK_DOWN(PORTC, 0);
    if (sched_post_isr(PID_IRQ, PORT_0, NULL, 0, 0) != MT_OK) failures++;
}

/* ---- the operations ---- */

__attribute__((noinline)) static void op_empty(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void op_immediate(void)
{
    if (sched_signal(DRIVER_TO_IMMEDIATE) != MT_OK) failures++;
}

__attribute__((noinline)) static void op_by_pid(void)
{
    if (sched_signal_to(PID_IMMEDIATE, PORT_0) != MT_OK) failures++;
}

__attribute__((noinline)) static void op_send(void)
{
    if (sched_send(DRIVER_TO_IMMEDIATE, NULL, 0, 0) != MT_OK) failures++;
}

__attribute__((noinline)) static void op_chain(void)
{
    if (sched_signal(DRIVER_TO_CARRIER) != MT_OK) failures++;
}

__attribute__((noinline)) static void op_mem(void)
{
    void *p = mem_alloc(ALLOC_BYTES);
    if (p == NULL || mem_free(p) != MT_OK) failures++;
}

__attribute__((noinline)) static void op_slab(void)
{
    void *obj = slab_alloc(&bench_cache);
    if (obj == NULL || slab_free(&bench_cache, obj) != MT_OK) failures++;
}

/* One marked call each: SBI, CALL, CBI and nothing else in between. */
#define MEASURED(name, bit)                                                                        \
    __attribute__((noinline)) static void measure_##name(void)                                     \
    {                                                                                              \
        MARK_UP(PORTA, bit);                                                                       \
        op_##name();                                                                               \
        MARK_DOWN(PORTA, bit);                                                                     \
    }
MEASURED(empty, 0)
MEASURED(immediate, 1)
MEASURED(chain, 2)
MEASURED(mem, 4)
MEASURED(slab, 5)

__attribute__((noinline)) static void measure_by_pid(void)
{
    MARK_UP(PORTC, 1);
    op_by_pid();
    MARK_DOWN(PORTC, 1);
}

__attribute__((noinline)) static void measure_send(void)
{
    MARK_UP(PORTC, 2);
    op_send();
    MARK_DOWN(PORTC, 2);
}

static void start_round_trip(void)
{
    if (sched_signal(DRIVER_TO_PING) != MT_OK) failures++;
}

typedef struct bench_op {
    const char *name;
    void (*run)(void);
    mt_pid_t target; /* task that must run once per call, or MT_PID_NONE */
} bench_op_t;

static const bench_op_t ops[] = {
    {"empty", measure_empty, MT_PID_NONE},     {"immediate", measure_immediate, PID_IMMEDIATE},
    {"by pid", measure_by_pid, PID_IMMEDIATE}, {"send", measure_send, PID_IMMEDIATE},
    {"chain", measure_chain, PID_LOW},         {"roundtrip", start_round_trip, PID_PING},
    {"mem", measure_mem, MT_PID_NONE},         {"slab", measure_slab, MT_PID_NONE},
};

/* Warm-up, then REPEAT measured runs; still in the driver's handler, so
 * anything queued instead of run shows up as missing runs. */
static void run_op(const bench_op_t *op)
{
    unsigned before = op->target ? runs[op->target - PID_DRIVER] : 0;
    uint8_t failed_before = failures;
    for (unsigned i = 0; i < REPEAT + 1; i++) op->run();
    unsigned ran = op->target ? runs[op->target - PID_DRIVER] - before : REPEAT + 1;
    if (failures != failed_before || ran != REPEAT + 1) fail(op->name);
}

/* After the timer runs: wait asleep for the injected interrupts. */
static void wait_for_interrupts(void)
{
    if (timer_stop_for(PID_TIMER, 0) != MT_OK) fail("timer stop");
    if (runs[PID_TIMER - PID_DRIVER] < REPEAT) fail("timer");
    DDRD &= (uint8_t) ~_BV(0); /* INT0 input, pulled up, falling edge */
    PORTD |= _BV(0);
    EIMSK &= (uint8_t) ~_BV(INT0);
    EICRA = (uint8_t) ((EICRA & ~(_BV(ISC01) | _BV(ISC00))) | _BV(ISC01));
    EIFR = _BV(INTF0);
    EIMSK |= _BV(INT0);
    MARK_UP(PORTC, 7); /* the harness injects from here on */
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) {
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) run_op(&ops[i]);
        /* Timer expiry: a periodic timer whose compare matches toggle OC1A. */
        TCCR1A |= _BV(COM1A0);
        DDRB |= _BV(5);
        if (timer_start_for(PID_TIMER, 0, TIMER_PERIOD, true) != MT_OK) fail("timer start");
    } else if (port == PORT_0) {
        wait_for_interrupts();
    }
    return MT_OK;
}

/* The timer task tells the driver when it has run REPEAT + 1 times. */
static mt_err_t timer_then_driver(void *state, mt_port_t port, void *data, uint16_t len)
{
    timer_task(state, port, data, len);
    if (runs[PID_TIMER - PID_DRIVER] == REPEAT + 1 &&
        sched_send_to(PID_DRIVER, PORT_0, NULL, 0, 0) != MT_OK)
        failures++;
    return MT_OK;
}

/* ---- main ---- */

static void create_routed(mt_pid_t pid, mt_prio_t prio, task_handler_t handler,
                          const route_t *routes, uint8_t n_routes)
{
    task_spec_t spec = {
        .pid = pid, .prio = prio, .handler = handler, .routes = routes, .n_routes = n_routes};
    if (sched_task_create(&spec) != MT_OK || sched_task_init(pid, NULL, 0) != MT_OK)
        fail("task creation");
}

static void create_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    create_routed(pid, prio, handler, NULL, 0);
}

static const route_t driver_routes[] = {
    [DRIVER_TO_IMMEDIATE] = {PID_IMMEDIATE, PORT_0},
    [DRIVER_TO_CARRIER] = {PID_SERVER, PORT_0},
    [DRIVER_TO_PING] = {PID_PING, PORT_0},
};
static const route_t server_routes[] = {
    [SERVER_TO_LOW] = {PID_LOW, PORT_0},
    [SERVER_TO_PING] = {PID_PING, PORT_0 + 1},
};
static const route_t ping_routes[] = {[PING_TO_SERVER] = {PID_SERVER, PORT_0 + 1}};

static void report_config(void)
{
    char line[96];
    int n = snprintf(line, sizeof line, "bench_avr: F_CPU %lu, log %d, tcb %u B, msg %u B\n",
                     (unsigned long) F_CPU, MOTET_EVENT_LOG, (unsigned) sizeof(task_t),
                     (unsigned) sizeof(msg_t));
    if (n > 0) port_console_write(line, (size_t) n);
}

int main(void)
{
    motet_boot();
    DDRA = 0xFF; /* markers */
    PORTA = 0;
    DDRC = 0xFF;
    PORTC = 0;
    slab_init(&bench_cache);
    report_config();
    create_task(PID_IMMEDIATE, PRIO_NESTED, immediate_task);
    create_routed(PID_SERVER, PRIO_NESTED, server_task, server_routes, 2);
    create_task(PID_LOW, PRIO_LOW, low_task);
    create_routed(PID_PING, PRIO_PING, ping_task, ping_routes, 1);
    create_task(PID_IRQ, PRIO_EVENT, irq_task);
    create_task(PID_TIMER, PRIO_EVENT, timer_then_driver);
    create_routed(PID_DRIVER, PRIO_DRIVER, driver_task, driver_routes, 3);
    sched_run(); /* the driver runs, then the timer, then the interrupts */
    return 1;
}
