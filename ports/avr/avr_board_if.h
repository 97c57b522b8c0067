/* SPDX-License-Identifier: MIT */
/*
 * The board interface of an ATmega128 module on a device: the module's
 * sensors as one memory-mapped peripheral with DMA, served on the host.
 * An emulated module has no ADC wired to a room, so the simavr harness
 * passes each request the firmware makes to a board program (a native
 * program named by the device file, started by the harness with
 * `--board`) and writes its answer into SRAM: the same simulator, the
 * same scenario and the same seed as a native module's sensors
 * (docs/simavr-harness.md, "The board interface"). The firmware sees an
 * ADC that has already captured what it asks for, as a DMA-driven ADC
 * with a sample buffer would have; the request itself costs the cycles of
 * the register writes.
 *
 * What a request and its answer hold is the application's business (the
 * harness copies bytes); this header is the one definition the AVR
 * firmware and the harness share, so it holds only numbers.
 *
 * A call: write the request's address and length, the answer buffer's
 * address and size, then CALL. When the STS that wrote CALL completes, the
 * answer is in the buffer, ANS_LEN holds its length and STATUS says how
 * the call went. The registers sit in extended I/O addresses the
 * ATmega128 leaves reserved (0xE0 .. 0xE9), below the bus interface's.
 */
#ifndef AVR_BOARD_IF_H
#define AVR_BOARD_IF_H

#define AVR_BOARD_IF_REQ_LO     0xE0 /* w: request address */
#define AVR_BOARD_IF_REQ_HI     0xE1
#define AVR_BOARD_IF_REQ_LEN    0xE2 /* w: request bytes (1 .. 255) */
#define AVR_BOARD_IF_ANS_LO     0xE3 /* w: answer buffer address */
#define AVR_BOARD_IF_ANS_HI     0xE4
#define AVR_BOARD_IF_ANS_LEN_LO 0xE5 /* w: buffer size; r: answer bytes after CALL */
#define AVR_BOARD_IF_ANS_LEN_HI 0xE6
#define AVR_BOARD_IF_CMD        0xE7 /* w: AVR_BOARD_CMD_CALL */
#define AVR_BOARD_IF_STATUS     0xE8 /* r: AVR_BOARD_* of the last call */

#define AVR_BOARD_CMD_CALL 1

#define AVR_BOARD_OK       0 /* the answer is in the buffer */
#define AVR_BOARD_NONE     1 /* no board program: the module has no sensors */
#define AVR_BOARD_TOO_LONG 2 /* the answer did not fit the buffer: nothing written */
#define AVR_BOARD_FAILED   3 /* the board program ended or broke the protocol */

#endif /* AVR_BOARD_IF_H */
