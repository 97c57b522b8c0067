/* SPDX-License-Identifier: MIT */
/*
 * The temperature sensor: room temperature, plus for each fire that has
 * started a first-order rise rise * (1 - e^(-(t - t0) / tau)), plus white
 * sensor noise, read with a 12-bit digital sensor's step of 1/16 degree C.
 * The noise of a reading depends on its time, so it does not matter how
 * often or in which order the sensor is read.
 */
#include <math.h>

#include "sim_internal.h"

int16_t sim_temp_read(const sim_t *s, uint64_t t_us)
{
    double t = (double) t_us / 1e6, temp = s->sc.room_c;
    for (unsigned i = 0; i < s->sc.n_fires; i++) {
        const sim_fire_t *f = &s->sc.fires[i];
        if (t >= f->time_s) temp += f->rise_c * (1.0 - exp(-(t - f->time_s) / f->tau_s));
    }
    temp += s->sc.temp_noise_c * rng_gauss(s->sc.seed, RNG_TEMP_NOISE, t_us);
    double q = floor(temp * 16.0 + 0.5);
    if (q > 32767) q = 32767;
    if (q < -32768) q = -32768;
    return (int16_t) q;
}
