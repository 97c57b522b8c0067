/* SPDX-License-Identifier: MIT */
/*
 * The SSL application's board (apps/ssl/board.h) for the firmware
 * benchmarks: four microphones that read a table of fixed synthetic blocks
 * instead of an ADC, no temperature sensor, no radio, and no cost model
 * (the image runs in emulated real time). Both builds of the four-channel
 * benchmark read it the same way, so they see the same blocks.
 *
 * Block k of every channel is table entry k % BOARD_BENCH_BLOCKS: even
 * entries hold quiet sensor noise only; odd entries add a loud broadband
 * source, a plane wave from an azimuth of its own (rounded to whole
 * samples of delay per microphone).
 *
 *     board_bench_make();
 *     board_bench_wake_at(17, &flag);   // flag = 1 once channel 0 read block 16
 *     ...
 *     board_bench_stop(&flag);          // reads fail from now on; flag = 1 once all four did
 */
#ifndef BENCH_SSL_BOARD_BENCH_H
#define BENCH_SSL_BOARD_BENCH_H

#include <stdint.h>

#include "board.h"

#define BOARD_BENCH_BLOCKS 16u

/* Fill the table (at boot: floating point, not measured). */
void board_bench_make(void);
/* True azimuth of block k's source, tenths of a degree; -1 for a quiet block. */
int32_t board_bench_truth(uint32_t k);
/* Set *flag to 1 when channel 0 has read `reads` blocks. */
void board_bench_wake_at(uint32_t reads, volatile uint32_t *flag);
/* Refuse every read from now on (the microphone tasks then stop); set
 * *flag to 1 once each of the four channels has been refused. */
void board_bench_stop(volatile uint32_t *flag);
/* Capture time (t_us) of channel 0's first read: the Motet build numbers
 * its blocks from it (tasks_ssl.c). */
uint32_t board_bench_first_t_us(void);

#endif /* BENCH_SSL_BOARD_BENCH_H */
