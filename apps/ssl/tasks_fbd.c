/* SPDX-License-Identifier: MIT */
/*
 * The FBD tasks: temp samples the temperature sensor at 4 Hz, ewma smooths
 * it, alert watches the energy of its change (dsp/fbd.h). They run at a
 * higher priority than SSL, so a reading preempts an FFT or an SRP search
 * on the shared stack and its alert reaches the radio at once.
 */
#include "board.h"
#include "dsp/fbd.h"
#include "motet/motet.h"
#include "ssl_app.h"
#include "tasks.h"
#include "tasks_state.h"

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* ---- temp: a one-shot timer for the phase, then a periodic one ---- */

/* Like the microphones (tasks_ssl.c), the samples sit on a grid of module
 * time, `phase` after each multiple of the period, whenever INIT ran. */
static mt_err_t temp_init(temp_state_t *s, const void *data, uint16_t len)
{
    if (len != 8) return MT_ERR_INVALID; /* u32 period, u32 phase (us) */
    s->period_us = get_u32(data);
    uint32_t phase = get_u32((const uint8_t *) data + 4);
    if (s->period_us == 0 || phase == 0 || phase >= s->period_us) return MT_ERR_INVALID;
    if (!board_has_temp()) return ssl_missing("temperature sensor");
    uint32_t now = ssl_now_us();
    s->next_us = now / s->period_us * s->period_us + phase;
    if (s->next_us <= now) s->next_us += s->period_us;
    return timer_start(0, TIMER_US(s->next_us - now), false);
}

static mt_err_t temp_sample(temp_state_t *s)
{
    if (!s->periodic) {
        s->periodic = 1;
        mt_err_t err = timer_start(0, TIMER_US(s->period_us), true);
        if (err) return err;
    }
    /* The sensor converts on the timer's tick: the reading belongs to the
     * nominal time, however late this handler runs. */
    ssl_reading_t r = {.t_us = s->next_us};
    s->next_us += s->period_us;
    if (!board_temp_read(r.t_us, &r.temp_q4)) return timer_stop(0);
    cost_t c = {0};
    cost_temp_read(&c);
    board_work(&c);
    return sched_send(0, &r, sizeof r, 0);
}

mt_err_t ssl_temp_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    temp_state_t *s = state;
    if (port == PORT_INIT) return temp_init(s, data, len);
    if (port == PORT_TIMEOUT0) return temp_sample(s);
    return MT_OK;
}

/* ---- ewma ---- */

mt_err_t ssl_ewma_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    fbd_ewma_t *f = state;
    mt_err_t err;
    if (ssl_plain_state_port(f, sizeof *f, port, data, len, &err)) return err;
    if (port != PORT_0 || len != sizeof(ssl_reading_t)) return MT_OK;
    ssl_reading_t r = *(const ssl_reading_t *) data;
    r.avg_q8 = fbd_ewma_update(f, r.temp_q4, SSL_EWMA_SHIFT);
    cost_t c = {0};
    cost_ewma(&c);
    board_work(&c);
    return sched_send(0, &r, sizeof r, 0);
}

/* ---- alert ---- */

mt_err_t ssl_alert_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    static const fbd_alert_config_t cfg = {.threshold_q16 = SSL_ALERT_THRESHOLD,
                                           .shift = SSL_ALERT_SHIFT};
    fbd_alert_t *a = state;
    mt_err_t err;
    if (ssl_plain_state_port(a, sizeof *a, port, data, len, &err)) return err;
    if (port != PORT_0 || len != sizeof(ssl_reading_t)) return MT_OK;
    ssl_reading_t r = *(const ssl_reading_t *) data;
    bool raised = fbd_alert_update(a, &cfg, r.avg_q8);
    cost_t c = {0};
    cost_alert(&c);
    board_work(&c);
    if (!raised) return MT_OK;
    r.energy = a->energy_q16;
    return sched_send(0, &r, sizeof r, 0);
}
