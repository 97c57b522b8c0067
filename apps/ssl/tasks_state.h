/* SPDX-License-Identifier: MIT */
/*
 * The tasks' private states, in one place so that the program table
 * (tasks_app.c) can size them. Only the tasks_*.c files include this.
 */
#ifndef APPS_SSL_TASKS_STATE_H
#define APPS_SSL_TASKS_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "dsp/sc.h"
#include "dsp/srp.h"
#include "motet/sched.h"
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
    ssl_spectrum_t *held; /* spectrum of the last block, awaiting the vote */
    uint8_t channel;
} sc_task_state_t;

typedef struct ht_state {
    srp_t srp;
    void *workspace;                    /* srp tables, on the heap, ours */
    ssl_spectrum_t *spec[SSL_CHANNELS]; /* spectra of the block being gathered */
    uint16_t block;
} ht_state_t;

/* HT's SRP tables: allocate its workspace and build them from the board's
 * geometry (INIT, and on arrival after a migration: they are not moved). */
mt_err_t ssl_ht_tables(ht_state_t *s);

/* sc's migration image: this header, then the held spectrum message
 * (held_len bytes, 0 or SSL_SPECTRUM_MSG_LEN). */
typedef struct sc_image {
    uint32_t noise[SSL_NBINS];
    uint16_t held_len; /* bytes of the held spectrum that follow; 0: none */
    uint8_t channel;
    uint8_t trained;
} sc_image_t;

/* ht's migration image: this header, then a spectrum message
 * (SSL_SPECTRUM_MSG_LEN bytes) for each bit of `present`, in channel order. */
typedef struct ht_image {
    uint16_t block;
    uint8_t present; /* bit c: channel c's band follows */
    uint8_t reserved;
} ht_image_t;

/* Run-time migration of sc and ht (tasks_migrate.c): PORT_SERIALIZE hands
 * the migrator a flat image of the state, heap blocks included;
 * PORT_DESERIALIZE rebuilds the state from it on the destination (a
 * malformed image: MT_ERR_INVALID, and the task stays where it was). True
 * if msg was one of those two ports, with the handler's result in *err. */
bool ssl_sc_migration_port(sc_task_state_t *s, mt_port_t port, const void *data, uint16_t len,
                           mt_err_t *err);
bool ssl_ht_migration_port(ht_state_t *s, mt_port_t port, const void *data, uint16_t len,
                           mt_err_t *err);

typedef struct temp_state {
    uint32_t period_us;
    uint32_t next_us; /* when the next sample is taken */
    uint8_t periodic; /* the periodic timer runs */
} temp_state_t;

#endif /* APPS_SSL_TASKS_STATE_H */
