/* SPDX-License-Identifier: MIT */
/*
 * Hello world, as in the CoMOS paper: a timer task wakes 8 times a second
 * and multicasts to its group; the hello task answers each tick by sending
 * "Hello World" to the radio task, which prints it with the module's time.
 * The wiring lives in hello.toml, not here: these handlers only name their
 * output ports.
 */
#include <stdio.h>
#include <string.h>

#include "hello.h"

#ifndef HELLO_GREETINGS
#define HELLO_GREETINGS 0 /* stop after this many greetings; 0: never */
#endif
#include "motet/motet.h"
#include "motet/port.h"

static mt_err_t ticker_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) {
        uint32_t period = 0;
        if (len != sizeof period) return MT_ERR_INVALID;
        /* The init string is a time, not ticks, so one description gives
         * the same rate on every port's clock. */
        memcpy(&period, data, sizeof period); /* microseconds */
        return timer_start(0, TIMER_US(period), true);
    }
    if (port == PORT_TIMEOUT0) return sched_send(0, NULL, 0, 0);
    return MT_OK;
}

static mt_err_t hello_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    static char greeting[] = "Hello World";
    if (port == PORT_0) return sched_send(0, greeting, sizeof greeting - 1, 0);
    return MT_OK;
}

static mt_err_t radio_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    uint32_t *sent = state;
    if (port != PORT_0) return MT_OK;
    uint32_t us = (uint32_t) ((uint64_t) timer_now() * 1000000u / PORT_TICKS_PER_SECOND);
    char line[40];
    int n = snprintf(line, sizeof line, "[%6lu.%03lu ms] radio: ", (unsigned long) (us / 1000u),
                     (unsigned long) (us % 1000u));
    if (n > 0) port_console_write(line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
    /* The payload is no C string, and avr-libc's printf has no "%.*s". */
    port_console_write((const char *) data, len);
    port_console_write("\n", 1);
    (*sent)++;
    if (HELLO_GREETINGS && *sent == HELLO_GREETINGS) port_halt(0);
    return MT_OK;
}

static const program_t hello_programs[] = {
    {.id = 1, .name = "timer", .handler = ticker_task, .state_size = 0},
    {.id = 2, .name = "hello", .handler = hello_task, .state_size = 0},
    {.id = 3, .name = "radio", .handler = radio_task, .state_size = sizeof(uint32_t)},
};

void hello_register(void)
{
    program_register(hello_programs, sizeof hello_programs / sizeof hello_programs[0]);
}
