/* SPDX-License-Identifier: MIT */
/*
 * FBD, fire breakout detection: an exponentially weighted moving average of
 * the temperature, and an alert on the energy of its change. Fixed point for
 * the sensing module: temperatures arrive in Q4 (1/16 degree C, a 12-bit
 * digital sensor's step), the average is kept in Q8 (1/256 degree C).
 *
 * EWMA: y += (x - y) / 2^shift, started at the first sample.
 * Alert: the change of the average between two samples, d = y_n - y_(n-1),
 * is squared (Q16, degrees C squared) and averaged the same way into an
 * energy E += (d^2 - E) / 2^shift. A fire makes the temperature climb, so d
 * stays large for several samples and E crosses the threshold; sensor noise
 * is smoothed by the EWMA and squared small, so it does not. The alert fires
 * once on the way up and re-arms when E falls below a quarter of the
 * threshold (hysteresis), so a second fire gets its own alert.
 *
 *     fbd_ewma_t avg = {0};
 *     fbd_alert_t al = {0};
 *     int32_t y = fbd_ewma_update(&avg, sample_q4, 2);
 *     if (fbd_alert_update(&al, &cfg, y)) send_alert();
 */
#ifndef SSL_FBD_H
#define SSL_FBD_H

#include <stdbool.h>
#include <stdint.h>

typedef struct fbd_ewma {
    int32_t value_q8; /* the average, 1/256 degree C */
    uint8_t primed;   /* a first sample has been seen */
} fbd_ewma_t;

typedef struct fbd_alert_config {
    uint32_t threshold_q16; /* energy that raises the alert, degrees C^2 * 65536 */
    uint8_t shift;          /* energy average step 1/2^shift */
} fbd_alert_config_t;

typedef struct fbd_alert {
    int32_t last_q8;     /* previous average */
    uint32_t energy_q16; /* E */
    uint8_t primed;      /* last_q8 is valid */
    uint8_t alarm;       /* alert raised, not yet re-armed */
} fbd_alert_t;

/* Add a Q4 sample; returns the new average in Q8. */
int32_t fbd_ewma_update(fbd_ewma_t *f, int16_t sample_q4, uint8_t shift);
/* Add an average (Q8); true exactly when the alert is raised. */
bool fbd_alert_update(fbd_alert_t *a, const fbd_alert_config_t *cfg, int32_t avg_q8);

#endif /* SSL_FBD_H */
