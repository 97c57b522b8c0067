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

#endif /* PORT_CONFIG_H */
