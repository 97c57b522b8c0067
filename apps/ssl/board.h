/* SPDX-License-Identifier: MIT */
/*
 * The hardware the SSL and FBD tasks use, behind one small interface: the
 * microphone ADCs, the temperature sensor, the array geometry, and a way to
 * declare computation. On the native port the sensors are the simulator
 * (board_sim.c) and declared work advances the simulated clock; a firmware
 * port would read its ADC and do nothing for board_work() (real time).
 */
#ifndef APPS_SSL_BOARD_H
#define APPS_SSL_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "dsp/cost.h"
#include "dsp/srp.h"

/* The ADC codes of microphone `ch` for the n samples that end at time
 * t_us; false once the scenario has ended (no more data) or if this
 * module has no such microphone. */
bool board_mic_read(uint8_t ch, uint32_t t_us, int16_t *out, uint16_t n);
/* The temperature sensor sampled at t_us, 1/16 degree C; false once the
 * scenario has ended or if this module has no temperature sensor. */
bool board_temp_read(uint32_t t_us, int16_t *temp_q4);
/* Whether this module has microphone `ch`, the temperature sensor, the
 * radio: a task placed on a module without its hardware refuses INIT. */
bool board_has_mic(uint8_t ch);
bool board_has_temp(void);
bool board_has_radio(void);
/* Microphone positions, sample rate and speed of sound. */
void board_geometry(srp_geometry_t *g);
/* For reports only: the true azimuth (tenths of a degree) of the source
 * sounding during the n samples that end at t_us; -1 if none, -2 if mixed
 * or partial. */
int32_t board_true_angle(uint32_t t_us, uint16_t n);

/* The running task did this work: charge its time (native: simulated). */
void board_work(const cost_t *c);

/* Whether the SSL handlers declare their work with the cost model at all:
 * the simulated boards need it; a firmware build on real (or emulated)
 * time sets SSL_COST_MODEL=0, so that its handlers carry no accounting
 * the standalone build lacks (bench/ssl-cortex-m). */
#ifndef SSL_COST_MODEL
#define SSL_COST_MODEL 1
#endif

#endif /* APPS_SSL_BOARD_H */
