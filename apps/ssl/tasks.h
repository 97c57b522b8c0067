/* SPDX-License-Identifier: MIT */
/*
 * The SSL + FBD programs as Motet tasks (tasks_ssl.c, tasks_fbd.c,
 * tasks_radio.c) and how to start the application.
 */
#ifndef APPS_SSL_TASKS_H
#define APPS_SSL_TASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "motet/sched.h"

mt_err_t ssl_mic_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_fft_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_sc_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_vote_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_ht_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_radio_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_temp_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_ewma_task(void *state, mt_port_t port, void *data, uint16_t len);
mt_err_t ssl_alert_task(void *state, mt_port_t port, void *data, uint16_t len);

/* Register every program; after motet_boot(). */
void ssl_register(void);
/* Register every program, then load the description on this module alone;
 * after motet_boot(). */
mt_err_t ssl_start(const uint8_t *desc, uint16_t len);

/* INIT of a task placed on a module without its hardware: says so on the
 * console ("ssl: module 1 has no microphone 2: its task is not started")
 * and returns MT_ERR_INVALID, which the kernel logs. */
mt_err_t ssl_missing(const char *hardware);

/* Migration of a task whose state is plain data (no pointers: vote, ewma,
 * alert): PORT_SERIALIZE hands the migrator a copy of the `size` bytes of
 * `state`, PORT_DESERIALIZE on the destination copies them back. True if
 * msg was one of those two, with the handler's result in *err. SC and HT
 * hold heap pointers and flatten their states themselves
 * (tasks_migrate.c). */
bool ssl_plain_state_port(void *state, uint16_t size, mt_port_t port, const void *data,
                          uint16_t len, mt_err_t *err);

/* From a PORT_SERIALIZE handler: hand the migrator `image`, a heap block of
 * `len` bytes of the running task's (the migrator owns it once accepted;
 * on an error it is freed here and the migration is refused). Without the
 * migrator in the kernel: MT_ERR_STATE. */
mt_err_t ssl_hand_over_image(void *image, uint16_t len);

/* Module time in microseconds (the port's ticks converted). */
uint32_t ssl_now_us(void);

#endif /* APPS_SSL_TASKS_H */
