/* SPDX-License-Identifier: MIT */
/* FBD (fbd.h): EWMA and the change-energy alert, integers only. */
#include "fbd.h"

int32_t fbd_ewma_update(fbd_ewma_t *f, int16_t sample_q4, uint8_t shift)
{
    int32_t x = (int32_t) sample_q4 * 16; /* Q4 -> Q8 */
    if (!f->primed) {
        f->value_q8 = x;
        f->primed = 1;
    } else {
        f->value_q8 += (x - f->value_q8) >> shift;
    }
    return f->value_q8;
}

/* Square of a change in Q8, as Q16, clamped to +-128 degrees per sample. */
static uint32_t square_q16(int32_t d)
{
    if (d > 32767) d = 32767;
    if (d < -32767) d = -32767;
    return (uint32_t) (d * d);
}

bool fbd_alert_update(fbd_alert_t *a, const fbd_alert_config_t *cfg, int32_t avg_q8)
{
    if (!a->primed) {
        a->last_q8 = avg_q8;
        a->primed = 1;
        return false;
    }
    uint32_t e2 = square_q16(avg_q8 - a->last_q8);
    a->last_q8 = avg_q8;
    if (e2 >= a->energy_q16)
        a->energy_q16 += (e2 - a->energy_q16) >> cfg->shift;
    else
        a->energy_q16 -= (a->energy_q16 - e2) >> cfg->shift;
    if (a->alarm) {
        if (a->energy_q16 < cfg->threshold_q16 / 4u) a->alarm = 0;
        return false;
    }
    if (a->energy_q16 <= cfg->threshold_q16) return false;
    a->alarm = 1;
    return true;
}
