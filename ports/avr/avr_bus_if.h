/* SPDX-License-Identifier: MIT */
/*
 * The bus interface of an ATmega128 module: a memory-mapped peripheral with
 * DMA and one interrupt line, as a bus controller on the external memory
 * interface would be. The AVR port's bus driver (port_avr_bus.c) programs it;
 * the simavr harness (tools/simavr-harness/buslink.c) implements it and
 * connects it to the hub, which models the bus itself (docs/bus.md). This
 * header is the one definition both sides share, so it holds only numbers.
 *
 * The registers sit in the extended I/O addresses the ATmega128 leaves
 * reserved (0xF0 .. 0xFF), reached with LDS/STS.
 *
 * Sending: the driver writes the frame's address and length, then SEND;
 * the interface reads the frame from SRAM at that instant (the frame must
 * stay put until the transfer ends, as port_bus_send() promises).
 * Receiving: the driver gives the interface a buffer once (RXBUF); a frame
 * arrives there whole. Events: the interface presents one at a time in
 * EVENT (a frame received, or the end of the frame sent) and pulls INT7
 * (PE7) low; the driver's answer (RX_DONE with its verdict, or EVENT_DONE)
 * releases the line, and the next event, if any, pulls it low again: one
 * falling edge per event. A time-sync probe (the hub measuring the sync
 * error, docs/bus.md) is an event too: the driver answers PROBE_DONE with
 * ADDR, LEN = 9 bytes in SRAM, the kernel time and the global time it
 * makes of it (u32 each, least significant byte first) and 1 if
 * synchronised.
 */
#ifndef AVR_BUS_IF_H
#define AVR_BUS_IF_H

#define AVR_BUS_IF_EVENT    0xF0 /* r: the event presented, AVR_BUS_EV_* */
#define AVR_BUS_IF_RESULT   0xF1 /* r: EV_TX_DONE: port_bus_result_t */
#define AVR_BUS_IF_LEN_LO   0xF2 /* r: EV_RX: frame bytes; w: bytes to send or buffer size */
#define AVR_BUS_IF_LEN_HI   0xF3
#define AVR_BUS_IF_ADDR_LO  0xF4 /* w: frame to send, or the receive buffer */
#define AVR_BUS_IF_ADDR_HI  0xF5
#define AVR_BUS_IF_CMD      0xF6 /* w: AVR_BUS_CMD_* */
#define AVR_BUS_IF_MODULE   0xF7 /* r: this module's bus address */
#define AVR_BUS_IF_MODULES0 0xF8 /* r: the device's modules, a u32 mask, 0xF8 .. 0xFB */
#define AVR_BUS_IF_FLAGS    0xFC /* r: AVR_BUS_FLAG_* */

#define AVR_BUS_EV_NONE    0
#define AVR_BUS_EV_RX      1
#define AVR_BUS_EV_TX_DONE 2
#define AVR_BUS_EV_PROBE   3

#define AVR_BUS_CMD_SEND       1    /* hand the frame at ADDR, LEN to the bus */
#define AVR_BUS_CMD_RXBUF      2    /* frames arrive at ADDR, at most LEN bytes */
#define AVR_BUS_CMD_EVENT_DONE 3    /* the TX_DONE event is taken */
#define AVR_BUS_CMD_PROBE_DONE 4    /* the PROBE event's answer is at ADDR, LEN */
#define AVR_BUS_PROBE_ANSWER   9    /* its bytes */
#define AVR_BUS_CMD_RX_DONE    0x10 /* | bus_rx_t: the frame is taken, with this verdict */

#define AVR_BUS_FLAG_LINKED 0x01 /* a hub is connected */
#define AVR_BUS_FLAG_LOADER 0x02 /* this module loads the application */

#define AVR_BUS_IRQ_LINE 7 /* INT7, pin PE7 */

#endif /* AVR_BUS_IF_H */
