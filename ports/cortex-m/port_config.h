/* SPDX-License-Identifier: MIT */
/*
 * Cortex-M3 port constants (QEMU mps2-an385, see cortex_m.h).
 *
 * The tick is 100 us: the 25 MHz APB timer clock divided by 2,500 in
 * software. Why not the raw clock: under `-icount shift=0` the emulated core
 * executes 40 instructions per timer clock, so a kernel path of a few
 * hundred instructions would span many clocks and no timer could fire on
 * the tick it was set for, as the kernel tests demand. A tick must outlast
 * the longest path from an event (boot, an interrupt, the end of declared
 * work) to the handler that reads the time: the kernel tests' longest is
 * about 22,000 instructions (at 10 us, 10,000 instructions a tick, they
 * failed by one tick), and a tick is 100,000 instructions here (2,500 on a
 * real 25 MHz Cortex-M3, i.e. 100 us either way).
 */
#ifndef PORT_CONFIG_H
#define PORT_CONFIG_H

#define PORT_NAME             "cortex-m"
#define PORT_COUNTER_BITS     32
#define PORT_TICKS_PER_SECOND 10000u
/* Waits longer than 2 ms may use the deep sleep mode. */
#define PORT_SLEEP_DEEP_MIN_TICKS 20u

/* The mps2-an385 system and APB timer clock, and timer clocks per tick. */
#define PORT_CM_CLOCK_HZ        25000000u
#define PORT_CM_CLOCKS_PER_TICK (PORT_CM_CLOCK_HZ / PORT_TICKS_PER_SECOND)

#if PORT_CM_CLOCK_HZ % PORT_TICKS_PER_SECOND != 0
#error "PORT_TICKS_PER_SECOND must divide the 25 MHz timer clock"
#endif

/* Interrupt primitives inline (port.h, PORT_IRQ_INLINE): each is one or
 * two instructions, less than the call that would wrap it. */
#define PORT_IRQ_INLINE 1
static MT_INLINE uint8_t port_irq_save(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n"
                   "cpsid i"
                   : "=r"(primask)
                   :
                   : "memory");
    return (uint8_t) primask;
}
static MT_INLINE void port_irq_restore(uint8_t state)
{
    /* The ISB lets a pending interrupt in before the next instruction. */
    if (!state)
        __asm volatile("cpsie i\n"
                       "isb" ::
                           : "memory");
}
static MT_INLINE bool port_in_isr(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    return ipsr != 0u;
}

#endif /* PORT_CONFIG_H */
