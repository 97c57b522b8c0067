/* SPDX-License-Identifier: MIT */
/*
 * The kernel core's footprint on the ATmega128: an application that uses
 * only tasks, messages and timers (and an interrupt that posts to a task),
 * so that its image links exactly what such an application needs. The
 * footprint report (tools/motetlib/port_avr.py) reads its linker maps: the
 * core configuration (every optional subsystem off, config.h) and the
 * port's default configuration, the full kernel, with the same code.
 *
 * It also runs, as a test of the core configuration: a sensor task on a
 * periodic timer sends each reading along a route to a filter above it
 * (run at once) and by pid to a logger below it (queued); the filter
 * passes it on to the logger (queued too). The logger checks the order
 * and count and halts the module with status 0 after READINGS readings, 1
 * on any mismatch.
 */
#include <avr/io.h>

#include "avr.h"
#include "motet/motet.h"

#define READINGS 8u

enum { PID_SENSOR = 0x10, PID_FILTER, PID_LOGGER };
enum { PRIO_LOGGER = 1, PRIO_SENSOR = 2, PRIO_FILTER = 3 };
enum { SENSOR_TO_FILTER };
enum { FILTER_TO_LOGGER };
/* The logger's inputs: the sensor's raw reading, the filter's result. */
enum { LOGGER_RAW = PORT_0, LOGGER_FILTERED };

static volatile uint8_t interrupts;

static void check(bool ok)
{
    if (!ok) port_halt(1);
}

static mt_err_t sensor(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    uint8_t *count = state;
    if (port == PORT_INIT) return timer_start(0, TIMER_MS(2), true);
    if (port != PORT_TIMEOUT0 && port != PORT_0) return MT_OK;
    uint8_t reading = ++*count;
    check(sched_send(SENSOR_TO_FILTER, &reading, 1, 0) == MT_OK);
    return sched_send_to(PID_LOGGER, LOGGER_RAW, &reading, 1, 0);
}

static mt_err_t filter(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0) return MT_OK;
    check(len == 1);
    uint8_t doubled = (uint8_t) (*(uint8_t *) data * 2u);
    return sched_send(FILTER_TO_LOGGER, &doubled, 1, 0);
}

/* Readings come in sensor order; for each, the filter's result is sent
 * before the raw reading (the filter runs inside the sensor's send). */
static mt_err_t logger(void *state, mt_port_t port, void *data, uint16_t len)
{
    uint8_t *seen = state; /* [0]: filtered results, [1]: raw readings */
    if (port != LOGGER_RAW && port != LOGGER_FILTERED) return MT_OK;
    check(len == 1);
    uint8_t value = *(uint8_t *) data;
    if (port == LOGGER_FILTERED) {
        check(value == (uint8_t) ((seen[0] + 1u) * 2u) && seen[0] == seen[1]);
        seen[0]++;
        return MT_OK;
    }
    check(value == seen[1] + 1u && seen[0] == value);
    if (++seen[1] == READINGS) port_halt(interrupts == 0 ? 0 : 1);
    return MT_OK;
}

/* A device interrupt that posts to the sensor (INT0; left disabled: it is
 * here for what it links, the posting and the dispatch at its exit). */
PORT_AVR_ISR(INT0_vect)
{
    interrupts++;
    sched_post_isr(PID_SENSOR, PORT_0, NULL, 0, 0);
}

static const route_t sensor_routes[] = {[SENSOR_TO_FILTER] = {PID_FILTER, PORT_0}};
static const route_t filter_routes[] = {[FILTER_TO_LOGGER] = {PID_LOGGER, LOGGER_FILTERED}};

static void create(mt_pid_t pid, mt_prio_t prio, task_handler_t handler, uint16_t state_size,
                   const route_t *routes, uint8_t n_routes)
{
    task_spec_t spec = {.pid = pid,
                        .prio = prio,
                        .handler = handler,
                        .state_size = state_size,
                        .routes = routes,
                        .n_routes = n_routes};
    check(sched_task_create(&spec) == MT_OK && sched_task_init(pid, NULL, 0) == MT_OK);
}

int main(void)
{
    motet_boot();
    create(PID_LOGGER, PRIO_LOGGER, logger, 2, NULL, 0);
    create(PID_FILTER, PRIO_FILTER, filter, 0, filter_routes, 1);
    create(PID_SENSOR, PRIO_SENSOR, sensor, 1, sensor_routes, 1);
    sched_run();
    return 1;
}
