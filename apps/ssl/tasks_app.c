/* SPDX-License-Identifier: MIT */
/*
 * The programs this firmware carries, by the ids the descriptions use, and
 * the application's start: register them, then hand the description to the
 * application manager, which creates, wires and initialises the tasks.
 */
#include <stdio.h>
#include <string.h>

#include "dsp/fbd.h"
#include "dsp/vote.h"
#include "motet/motet.h"
#include "ssl_app.h"
#include "tasks.h"
#include "tasks_state.h"

#if SSL_MIGRATION
#include "motet/migrate.h"
#endif

#define PROGRAM(id_, name_, fn, size)                                                              \
    {                                                                                              \
        .id = (id_), .name = (name_), .handler = (fn), .state_size = (uint16_t) (size)             \
    }

static const program_t ssl_programs[] = {
    PROGRAM(SSL_PROG_MIC, "mic", ssl_mic_task, sizeof(mic_state_t)),
    PROGRAM(SSL_PROG_SC, "sc", ssl_sc_task, sizeof(sc_task_state_t)),
    PROGRAM(SSL_PROG_VOTE, "vote", ssl_vote_task, sizeof(vote_t)),
    PROGRAM(SSL_PROG_HT, "ht", ssl_ht_task, sizeof(ht_state_t)),
    PROGRAM(SSL_PROG_RADIO, "radio", ssl_radio_task, 0),
    PROGRAM(SSL_PROG_TEMP, "temp", ssl_temp_task, sizeof(temp_state_t)),
    PROGRAM(SSL_PROG_EWMA, "ewma", ssl_ewma_task, sizeof(fbd_ewma_t)),
    PROGRAM(SSL_PROG_ALERT, "alert", ssl_alert_task, sizeof(fbd_alert_t)),
    PROGRAM(SSL_PROG_FFT, "fft", ssl_fft_task, 0),
};

void ssl_register(void)
{
    program_register(ssl_programs, sizeof ssl_programs / sizeof ssl_programs[0]);
}

mt_err_t ssl_start(const uint8_t *desc, uint16_t len)
{
    ssl_register();
    mt_err_t err = appmgr_load(desc, len);
    if (!err) err = appmgr_last_result()->err;
    return err;
}

mt_err_t ssl_missing(const char *hardware)
{
    char line[120];
    int n = snprintf(line, sizeof line, "ssl: module %u has no %s: its task is not started\n",
                     (unsigned) bus_self(), hardware);
    if (n > 0) port_console_write(line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
    return MT_ERR_INVALID;
}

mt_err_t ssl_hand_over_image(void *image, uint16_t len)
{
#if SSL_MIGRATION
    mt_err_t err = migrate_state(image, len);
#else
    (void) len;
    mt_err_t err = MT_ERR_STATE; /* no migrator in this kernel: never asked */
#endif
    if (err) mem_free(image);
    return err;
}

/* Hand the migrator a copy of the state. */
static mt_err_t serialize_copy(const void *state, uint16_t size)
{
    void *copy = mem_alloc(size);
    if (!copy) return MT_ERR_NO_MEM; /* refused: the task stays where it is */
    memcpy(copy, state, size);
    return ssl_hand_over_image(copy, size);
}

bool ssl_plain_state_port(void *state, uint16_t size, mt_port_t port, const void *data,
                          uint16_t len, mt_err_t *err)
{
    if (port == PORT_SERIALIZE) {
        *err = serialize_copy(state, size);
        return true;
    }
    if (port == PORT_DESERIALIZE) {
        *err = len == size ? MT_OK : MT_ERR_INVALID;
        if (!*err) memcpy(state, data, size);
        return true;
    }
    return false;
}
