/* SPDX-License-Identifier: MIT */
/*
 * The SSL + FBD programs as Motet tasks (tasks_ssl.c, tasks_fbd.c,
 * tasks_radio.c) and how to start the application.
 */
#ifndef APPS_SSL_TASKS_H
#define APPS_SSL_TASKS_H

#include <stdint.h>

#include "motet/sched.h"

mt_err_t ssl_mic_task(void *state, msg_t *msg);
mt_err_t ssl_sc_task(void *state, msg_t *msg);
mt_err_t ssl_vote_task(void *state, msg_t *msg);
mt_err_t ssl_ht_task(void *state, msg_t *msg);
mt_err_t ssl_radio_task(void *state, msg_t *msg);
mt_err_t ssl_temp_task(void *state, msg_t *msg);
mt_err_t ssl_ewma_task(void *state, msg_t *msg);
mt_err_t ssl_alert_task(void *state, msg_t *msg);

/* Register every program, then load the description; after motet_boot(). */
mt_err_t ssl_start(const uint8_t *desc, uint16_t len);

/* Module time in microseconds (the port's ticks converted). */
uint32_t ssl_now_us(void);

/* Generated from ssl_single.toml by `motet appc` at build time. */
extern const uint8_t ssl_single_desc[];
extern const uint16_t ssl_single_desc_len;

#endif /* APPS_SSL_TASKS_H */
