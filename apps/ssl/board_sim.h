/* SPDX-License-Identifier: MIT */
/*
 * The board on a host: board.h served by the sensor simulator. The program
 * (main_native.c or standalone.c) opens a scenario, picks the processor of
 * the cost model and says what declared work does to its clock.
 */
#ifndef APPS_SSL_BOARD_SIM_H
#define APPS_SSL_BOARD_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "dsp/cost.h"
#include "sim/sim.h"

/* Load the scenario file and build the simulator; 0, or -1 with a message
 * on stderr. */
int board_sim_open(const char *path);
/* The scenario being simulated (after board_sim_open()). */
const sim_scenario_t *board_sim_scenario(void);
/* The processor board_work() charges for (default: arm7). */
void board_sim_set_cpu(const cost_cpu_t *cpu);
const cost_cpu_t *board_sim_cpu(void);
/* The sensors this module carries (default: all, one module hosting the
 * whole application). A module of a device serves only its own: the
 * microphones in mic_mask (bit c: channel c), the temperature sensor, the
 * radio. The simulator behind them is the same on every module (same
 * scenario, same seed, any sample computable at any time), so the modules
 * see one consistent world. */
void board_sim_set_sensors(uint8_t mic_mask, bool temp, bool radio);

/* A module's sensors as the device file names them. */
typedef struct board_sim_sensors {
    uint8_t mics; /* bit c: microphone c */
    bool temp, radio;
} board_sim_sensors_t;
/* Adds sensor `name` (microphone:N, temperature, radio) to *s: NULL, or
 * what is wrong with the name. */
const char *board_sim_add_sensor(board_sim_sensors_t *s, const char *name);
/* What board_work() does with the microseconds it computed. */
void board_sim_on_work(void (*fn)(uint32_t us));

#endif /* APPS_SSL_BOARD_SIM_H */
