/* SPDX-License-Identifier: MIT */
/*
 * The harness on a device: the AVR module's bus interface (ports/avr/
 * avr_bus_if.h) and its link to the hub (tools/motetlib/hub.py), which
 * grants the core its cycles in lock-step with the other modules. See
 * docs/simavr-harness.md, "On a device".
 */
#ifndef SIMAVR_BUSLINK_H
#define SIMAVR_BUSLINK_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "sim_avr.h"

/* Connects to the hub as module opt->bus_module and wires the bus
 * interface into the core: 0, or EXIT_ERROR after a message on stderr. */
int buslink_start(avr_t *core, const options_t *opt);

/* Tells the hub where the core is (running, or asleep until its next timer)
 * and how many of its cycles so far it slept (*asleep), then waits for the
 * grant: true with *until = the cycle the core may run to, the hub's events
 * for it scheduled on the way, and *asleep grown by the cycles it was
 * powered off, if it was; false once the hub ends the run, *status = the
 * status it gives. */
bool buslink_grant(uint64_t *asleep, uint64_t *until, int *status);

#endif /* SIMAVR_BUSLINK_H */
