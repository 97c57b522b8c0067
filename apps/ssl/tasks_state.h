/* SPDX-License-Identifier: MIT */
/*
 * The tasks' private states, in one place so that the program table
 * (tasks_app.c) can size them. Only the tasks_*.c files include this.
 */
#ifndef APPS_SSL_TASKS_STATE_H
#define APPS_SSL_TASKS_STATE_H

#include <stdint.h>

#include "dsp/sc.h"
#include "dsp/srp.h"
#include "ssl_app.h"

typedef struct mic_state {
    uint32_t period_us; /* block period */
    uint32_t next_us;   /* end of the next block's capture window */
    uint8_t channel;
    uint8_t periodic; /* the periodic timer runs (after the first, aligning one) */
} mic_state_t;

typedef struct sc_task_state {
    sc_state_t sc;
    uint32_t noise[SSL_NBINS];
    ssl_spectrum_t *held; /* band of the last block, awaiting the vote */
    uint8_t channel;
} sc_task_state_t;

typedef struct ht_state {
    srp_t srp;
    void *workspace;                    /* srp tables, on the heap, ours */
    ssl_spectrum_t *spec[SSL_CHANNELS]; /* bands of the block being gathered */
    uint16_t block;
} ht_state_t;

typedef struct temp_state {
    uint32_t period_us;
    uint32_t next_us; /* when the next sample is taken */
    uint8_t periodic; /* the periodic timer runs */
} temp_state_t;

#endif /* APPS_SSL_TASKS_STATE_H */
