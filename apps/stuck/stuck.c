/* SPDX-License-Identifier: MIT */
/*
 * Programs that hang a module in zero simulated time, for the tests of the
 * hub's watchdog (docs/bus.md, "The watchdog"): a handler that never
 * returns, and two tasks that send each other a message forever without
 * declaring any work; and one that stops its chip, for the tests of an
 * emulated module whose emulator ends under the device. Each starts its
 * fault on a timer, so that the device has run normally first. And one
 * that only prints its init string, for the tests of what `motet run`
 * takes from a module's console (nothing: a task may print anything).
 */
#include <string.h>

#include "motet/motet.h"
#include "stuck.h"

/* INIT: u32 delay in ticks before the fault (timer 0, one-shot). */
static mt_err_t start_after(const void *data, uint16_t len)
{
    uint32_t delay = 0;
    if (len >= 4) memcpy(&delay, data, 4);
    return delay ? timer_start(0, delay, false) : MT_ERR_INVALID;
}

/* spin: on its timer, loops for ever. The volatile counter keeps the
 * compiler from reasoning about the loop; it never ends. */
static mt_err_t spin(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) return start_after(data, len);
    if (port != PORT_TIMEOUT0) return MT_OK;
    module_say("spin 0x%02x: looping", sched_current_pid());
    for (volatile uint32_t *n = state;;) (*n)++;
}

/* ball: on its timer (if it has one) or on a message, sends a message on
 * output 0; two of them wired to each other play for ever at zero cost. */
static mt_err_t ball(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) return len ? start_after(data, len) : MT_OK;
    if (port == PORT_TIMEOUT0) module_say("ball 0x%02x: serving", sched_current_pid());
    if (port != PORT_TIMEOUT0 && port != PORT_0) return MT_OK;
    return sched_send(0, NULL, 0, 0);
}

/* halt: on its timer, stops the chip with status 3 (port_halt(): the
 * emulator or the process exits), as a module whose emulator dies, or
 * with the status a u8 after the delay gives, as a module the kernel
 * halts. */
static mt_err_t halt(void *state, mt_port_t port, void *data, uint16_t len)
{
    uint8_t *status = state;
    if (port == PORT_INIT) {
        *status = len > 4 ? ((const uint8_t *) data)[4] : 3u;
        return start_after(data, len);
    }
    if (port != PORT_TIMEOUT0) return MT_OK;
    module_say("halt 0x%02x: stopping the chip", sched_current_pid());
    port_halt(*status);
    return MT_OK;
}

/* say: its INIT prints its init string, as text, and succeeds. */
static mt_err_t say(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_INIT) module_say("%.*s", (int) len, (const char *) data);
    return MT_OK;
}

static const program_t programs[] = {
    {.id = 1, .name = "spin", .handler = spin, .state_size = sizeof(uint32_t)},
    {.id = 2, .name = "ball", .handler = ball, .state_size = 0},
    {.id = 3, .name = "halt", .handler = halt, .state_size = sizeof(uint8_t)},
    {.id = 4, .name = "say", .handler = say, .state_size = 0},
};

void stuck_register(void)
{
    program_register(programs, sizeof programs / sizeof programs[0]);
}
