/* SPDX-License-Identifier: MIT */
/*
 * The harness's board interface (ports/avr/avr_board_if.h): a module's
 * sensors served by a board program on the host, which the harness starts
 * (`--board PROGRAM --board-arg ARG ...`) and talks to over two pipes. See
 * docs/simavr-harness.md, "The board interface".
 */
#ifndef SIMAVR_BOARDLINK_H
#define SIMAVR_BOARDLINK_H

#include "harness.h"
#include "sim_avr.h"

/* Wires the board interface into the core and, if opt names a board
 * program, starts it and waits for its first frame, empty, which says that
 * it took its arguments, within opt->timeout (a few seconds without): 0,
 * or after a message on stderr EXIT_BOARD (it refused its arguments: it
 * exited with status 2 first), EXIT_LIMIT (it said nothing in time) or
 * EXIT_ERROR (it could not be started, ended otherwise, was killed or sent
 * another frame). Without a board program every call answers
 * AVR_BOARD_NONE. */
int boardlink_start(avr_t *core, const options_t *opt);

/* Closes the board program's pipes and waits for it. */
void boardlink_stop(void);

#endif /* SIMAVR_BOARDLINK_H */
