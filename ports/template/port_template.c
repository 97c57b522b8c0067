/* SPDX-License-Identifier: MIT */
/*
 * The empty port: every hook of motet/port.h with its duty, and nothing
 * else. Copy this directory to ports/<name>/, fill in each function for the
 * processor, and build with -DMOTET_PORT=<name>. It compiles (CI builds it)
 * so that a hook added to port.h without a template entry fails the build.
 */
#include "motet/bus.h"
#include "motet/port.h"
#include "motet/sched.h"
#include "motet/timer.h"

static port_counter_t counter; /* stands in for a hardware register */

void port_init(void)
{
    /* Clocks, console UART, the free-running counter and its compare
     * channel, the interrupt vector table; leave interrupts disabled. */
    counter = 0;
}

void port_halt(int status)
{
    /* Report status (semihosting, a simulator marker, a LED) and stop. */
    (void) status;
    for (;;) {
    }
}

port_irq_state_t port_irq_save(void)
{
    /* Read the interrupt-enable bit, clear it, return what it was. */
    return 0;
}

void port_irq_restore(port_irq_state_t state)
{
    /* Write the bit back; a pending interrupt is then taken at once. */
    (void) state;
}

void port_irq_enable(void)
{
}

bool port_in_isr(void)
{
    /* True inside an interrupt body (e.g. IPSR != 0 on Cortex-M). */
    return false;
}

port_counter_t port_counter_read(void)
{
    return counter;
}

void port_compare_set(port_counter_t at)
{
    /* Program the compare register; its interrupt calls, in order,
     * sched_isr_enter(), timer_isr_compare(), then on the way out, with
     * interrupts still off, sched_isr_exit(). */
    (void) at;
}

void port_compare_disable(void)
{
}

void port_sleep(port_sleep_mode_t mode)
{
    /* Pick the hardware mode for `mode`, then enable interrupts and sleep
     * in one step (SEI; SLEEP on AVR, CPSIE i; WFI on Cortex-M) so that an
     * interrupt between the two cannot be missed. */
    (void) mode;
}

void port_console_write(const char *text, size_t n)
{
    (void) text;
    (void) n;
}

uint32_t port_cycles(void)
{
    return 0;
}

bool port_bus_send(const uint8_t *frame, uint16_t n)
{
    /* Start sending `frame` in this module's bus slot (keep the pointer: it
     * stays valid until the end). Stamp a time-sync frame with
     * bus_frame_stamp() when it completes on the wire. The bus interrupt
     * calls, between sched_isr_enter() and sched_isr_exit():
     * bus_isr_rx(frame, n, capture) for each frame received (answering the
     * sender with its result: BUS_RX_REJECTED means corrupt, send again;
     * BUS_RX_BUSY means keep it unacknowledged and offer it again later,
     * the sender waiting meanwhile), and
     * bus_isr_tx_done(result) once every receiver answered this one. */
    (void) frame;
    (void) n;
    return false;
}

mt_err_t port_bus_join(void)
{
    /* A firmware module of a device: read this module's address and the
     * device's modules from the bus interface, bus_start() with them, then
     * let the interface deliver frames. */
    return MT_ERR_STATE;
}

bool port_bus_loader(void)
{
    return false; /* the interface says whether this module loads the application */
}

#if MOTET_THREADS
void port_context_init(port_context_t *ctx, void *stack, size_t size, void (*entry)(void *),
                       void *arg)
{
    /* Lay out on [stack, stack + size) the frame that the switch below
     * pops: its callee-saved registers (entry and arg among them) and a
     * return address into a few lines of assembly that call entry(arg),
     * with the stack aligned as the ABI wants at a call. Store the stack
     * pointer of that frame in *ctx. */
    (void) stack;
    (void) size;
    (void) entry;
    (void) arg;
    ctx->sp = NULL;
}

void port_context_switch(port_context_t *from, port_context_t *to)
{
    /* In assembly: push the callee-saved registers, save the stack pointer
     * in *from, load *to's, pop its registers, return into it. It is also
     * called from sched_isr_exit(), so the port must run that exit dispatch
     * on the interrupted stack in thread mode, with the interrupt's frame
     * left below (docs/threads.md, "Port hooks"). */
    (void) from;
    (void) to;
}
#endif
