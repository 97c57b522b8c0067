/* SPDX-License-Identifier: MIT */
/*
 * The board of an emulated module (a firmware image in a device): what its
 * sensors answer comes from the host. The emulator passes each request of
 * the firmware's board layer to the board program `ssl_board`
 * (board_server.c), which answers from the same simulator, scenario and
 * seed as a native module's sensors (board_sim.c), and writes the answer
 * into the module's memory (on the ATmega128: ports/avr/avr_board_if.h).
 * The emulated ADC has captured whatever instant is asked for, as an ADC
 * filling a buffer by DMA has; the firmware pays for the request, not for
 * the samples.
 *
 * Requests and answers, all fields little-endian (the byte order of the
 * application's descriptions):
 *
 *   SENSORS                         -> u8: bit c microphone c, HAS_TEMP, HAS_RADIO
 *   MIC    u8 channel, u32 t_us, u16 n -> n x i16 ADC codes (the n samples that end
 *                                        at t_us), or nothing: no data
 *   TEMP   u32 t_us                  -> i16 in 1/16 C, or nothing: no data
 *   TRUTH  u32 t_us, u16 n           -> i32: board_true_angle() (reports only)
 *
 * The microphone array's geometry is the board's hardware, not a reading:
 * the firmware has it built in (below, board_array.c), and ssl_board
 * refuses a scenario whose [array] differs.
 */
#ifndef APPS_SSL_BOARD_HOST_H
#define APPS_SSL_BOARD_HOST_H

#define SSL_BOARD_SENSORS 'S'
#define SSL_BOARD_MIC     'M'
#define SSL_BOARD_TEMP    'T'
#define SSL_BOARD_TRUTH   'A'

#define SSL_BOARD_HAS_TEMP  0x10u
#define SSL_BOARD_HAS_RADIO 0x20u

/* The array the firmware boards carry: the simulator's default one. */
#define SSL_ARRAY_SIDE_MM    200
#define SSL_ARRAY_RATE_HZ    16000
#define SSL_ARRAY_SOUND_MM_S 343000

#endif /* APPS_SSL_BOARD_HOST_H */
