/* SPDX-License-Identifier: MIT */
/* The test-port interface on the native port: its simulated clock. */
#include "motet/motet.h"
#include "native.h"
#include "test_port.h"

void tport_boot(uint32_t counter_start)
{
    native_options_t opt = {.realtime = false,
                            .seed = 1,
                            .until_ticks = 0,
                            .counter_start = counter_start,
                            .log_path = NULL};
    port_native_configure(&opt);
    motet_boot();
}

uint64_t tport_time(void)
{
    return port_native_time();
}

void tport_busy(uint32_t ticks)
{
    port_native_busy(ticks);
}

void tport_irq_attach(uint8_t line, tport_isr_fn isr)
{
    port_native_irq_attach(line, isr);
}

void tport_irq_raise(uint8_t line)
{
    port_native_irq_raise(line);
}

void tport_irq_schedule(uint8_t line, uint64_t at)
{
    port_native_irq_schedule(line, at);
}

uint32_t tport_sleep_count(void)
{
    return port_native_sleep_count();
}

uint64_t tport_sleep_ticks(void)
{
    return port_native_sleep_ticks();
}

/* Signal handlers run on the interrupted stack: this frame is there. */
uintptr_t tport_interrupted_stack(void)
{
    return (uintptr_t) __builtin_frame_address(0);
}
