/* SPDX-License-Identifier: MIT */
/*
 * Latencies on the Cortex-M port: instructions from an event to the first
 * statement of the handler it wakes. Run by `motet bench` under QEMU
 * `-icount shift=7`: one instruction per 128 ns, so the 25 MHz clock
 * (40 ns) advances at least three times per instruction and the clocks
 * between two port_cycles() reads give their instruction distance exactly
 * (instructions = round(clocks * 40 / 128)). It prints raw clocks:
 *
 *   read <clocks>        two port_cycles() reads back to back: the cost of
 *                        one read, subtracted from the figures below
 *   irq <clocks>         port_cm_irq_raise() of a spare line whose body posts
 *                        to a priority-5 task, to the first statement of that
 *                        task's handler at interrupt exit (driver at 1)
 *   irq_direct <clocks>  the same to the first statement of a body that
 *                        runs in the interrupt without the kernel (SST floor)
 *   timer <clocks>       the compare deadline (the tick the timer was due)
 *                        to the first statement of its TIMEOUT0 handler
 *
 * Each is measured REPEAT times, each time with the event ring drained first
 * (as a host would keep it), so that every repeat takes the same path; the
 * harness checks that all repeats agree.
 */
#include <stdio.h>

#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/port.h"

enum { PID_DRIVER = 0x20, PID_IRQ, PID_TIMER };

#define REPEAT       8u
#define LINE_POST    (PORT_CM_SPARE_IRQ_FIRST + 0u)
#define LINE_DIRECT  (PORT_CM_SPARE_IRQ_FIRST + 1u)
#define TIMER_LENGTH 20u /* ticks */

static volatile uint32_t stamp; /* port_cycles() at the handler's start */
static volatile uint64_t stamp64;
static int status;

static mt_err_t irq_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) port;
    (void) data;
    (void) len;
    stamp = port_cycles();
    (void) state;
    return MT_OK;
}

static mt_err_t timer_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) port;
    (void) data;
    (void) len;
    stamp64 = port_cm_clocks();
    (void) state;
    return MT_OK;
}

static void isr_post(void)
{
    if (sched_post_isr(PID_IRQ, PORT_0, NULL, 0, 0) != MT_OK) status = 1;
}

static void isr_direct(void)
{
    stamp = port_cycles();
}

static void measure_read(void)
{
    uint32_t a = port_cycles();
    uint32_t b = port_cycles();
    printf("read %lu\n", (unsigned long) (b - a));
}

static void measure_line(const char *name, uint8_t line)
{
    stamp = 0;
    uint32_t start = port_cycles();
    port_cm_irq_raise(line);
    if (stamp == 0) {
        printf("FAILED %s: the handler did not run at interrupt exit\n", name);
        status = 1;
        return;
    }
    printf("%s %lu\n", name, (unsigned long) (stamp - start));
}

/* Start a timer right after a tick begins, so the kernel's reading of the
 * counter and ours agree; the deadline is then known to the clock. */
static void measure_timer(void)
{
    uint64_t t = port_cm_time();
    while (port_cm_time() == t) {
    }
    uint64_t due = (t + 1u + TIMER_LENGTH) * PORT_CM_CLOCKS_PER_TICK;
    stamp64 = 0;
    if (timer_start_for(PID_TIMER, 0, TIMER_LENGTH, false) != MT_OK) status = 1;
    if (port_cm_time() != t + 1u) {
        printf("FAILED timer: a tick passed while starting the timer\n");
        status = 1;
        return;
    }
    while (stamp64 == 0) {
    }
    printf("timer %lu\n", (unsigned long) (stamp64 - due));
}

static void drain_log(void)
{
    log_record_t rec[8];
    while (log_drain(rec, 8) > 0) {
    }
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    for (unsigned i = 0; i < REPEAT; i++) {
        drain_log();
        measure_read();
        measure_line("irq", LINE_POST);
        drain_log();
        measure_line("irq_direct", LINE_DIRECT);
        drain_log();
        measure_timer();
    }
    return MT_OK;
}

static void create_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    if (sched_task_create(&spec) != MT_OK || sched_task_init(pid, NULL, 0) != MT_OK) {
        printf("FAILED: cannot create task 0x%02x\n", pid);
        port_halt(1);
    }
}

int main(void)
{
    motet_boot();
    printf("bench_latency: %s, event log %s\n", PORT_NAME, MOTET_EVENT_LOG ? "on" : "off");
    create_task(PID_IRQ, 5, irq_task);
    create_task(PID_TIMER, 5, timer_task);
    port_cm_irq_attach(LINE_POST, isr_post);
    port_cm_irq_attach_direct(LINE_DIRECT, isr_direct);
    create_task(PID_DRIVER, 1, driver_task);
    printf("bench_latency: %s\n", status ? "FAILED" : "done");
    return status;
}
