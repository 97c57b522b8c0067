/* SPDX-License-Identifier: MIT */
/*
 * Template port constants: copy this directory to start a new port.
 */
#ifndef PORT_CONFIG_H
#define PORT_CONFIG_H

#define PORT_NAME             "template"
#define PORT_COUNTER_BITS     32
#define PORT_TICKS_PER_SECOND 1000000u
/* Waits longer than 2 ms may use the deep sleep mode. */
#define PORT_SLEEP_DEEP_MIN_TICKS 2000u
/* Define when port_bus_send() and the bus interrupt exist (MOTET_BUS=1). */
#define PORT_HAS_BUS 1

/* Threads (MOTET_THREADS=1): what a suspended context keeps outside its
 * stack, and the bytes a thread stack needs beyond the thread's own frames
 * (saved registers; interrupt frames if interrupts use the current stack).
 * Leave them out while the port has no port_context_init/switch. */
#define PORT_HAS_THREADS 1
typedef struct port_context {
    void *sp;
} port_context_t;
#define PORT_THREAD_STACK_EXTRA 96u
#define PORT_THREAD_STACK_MIN   256u

#endif /* PORT_CONFIG_H */
