/* SPDX-License-Identifier: MIT */
/*
 * The microphone array: geometry, propagation from each source to each
 * microphone, background noise and the ADC (sim.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define PI 3.14159265358979323846

/* Corners counter-clockwise from (+,+): 45, 135, 225, 315 degrees. */
static void place_mics(sim_t *s)
{
    static const double sx[SIM_MICS] = {1, -1, -1, 1}, sy[SIM_MICS] = {1, 1, -1, -1};
    for (unsigned m = 0; m < SIM_MICS; m++) {
        s->mic_x[m] = sx[m] * s->sc.side_m / 2;
        s->mic_y[m] = sy[m] * s->sc.side_m / 2;
    }
}

/* Delay (relative to the array centre) and gain of the path to each mic:
 * a point source at its distance, or a plane wave when the distance is 0. */
static void propagate(sim_t *s, source_state_t *st)
{
    double th = st->def->angle_deg * PI / 180.0, r = st->def->distance_m, c = s->sc.speed_of_sound;
    double ux = cos(th), uy = sin(th);
    for (unsigned m = 0; m < SIM_MICS; m++) {
        if (r <= 0) {
            st->delay_s[m] = -(s->mic_x[m] * ux + s->mic_y[m] * uy) / c;
            st->amp[m] = 1.0;
        } else {
            double d = hypot(r * ux - s->mic_x[m], r * uy - s->mic_y[m]);
            st->delay_s[m] = (d - r) / c;
            st->amp[m] = r / d;
        }
    }
}

sim_t *sim_create(const sim_scenario_t *sc)
{
    sim_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->sc = *sc;
    place_mics(s);
    s->noise_rms = pow(10.0, (sc->reference_dbfs - sc->snr_db) / 20.0);
    for (unsigned i = 0; i < sc->n_sources; i++) {
        source_init(&s->src[i], &s->sc.sources[i], sc->seed, i, sc->sample_rate_hz);
        propagate(s, &s->src[i]);
    }
    return s;
}

void sim_destroy(sim_t *s)
{
    free(s);
}

const sim_scenario_t *sim_scenario(const sim_t *s)
{
    return &s->sc;
}

void sim_mic_position(const sim_t *s, unsigned m, double *x, double *y)
{
    *x = s->mic_x[m];
    *y = s->mic_y[m];
}

static int16_t adc(double x)
{
    double full = (double) (1 << (SIM_ADC_BITS - 1));
    double code = floor(x * full + 0.5);
    if (code > full - 1) code = full - 1;
    if (code < -full) code = -full;
    return (int16_t) code;
}

void sim_mic_block(const sim_t *s, unsigned m, uint64_t end, unsigned n, int16_t *out)
{
    double fs = s->sc.sample_rate_hz;
    for (unsigned k = 0; k < n; k++) {
        uint64_t i = end - n + k;
        double t = (double) i / fs, x = 0;
        for (unsigned j = 0; j < s->sc.n_sources; j++)
            x += s->src[j].amp[m] * source_signal(&s->src[j], t - s->src[j].delay_s[m]);
        x += s->noise_rms * rng_gauss(s->sc.seed, RNG_MIC_NOISE + m, i);
        out[k] = adc(x);
    }
}

double sim_true_angle(const sim_t *s, double t0, double t1)
{
    int found = -1;
    for (unsigned j = 0; j < s->sc.n_sources; j++) {
        const sim_source_t *d = &s->sc.sources[j];
        double a = d->start_s, b = d->start_s + d->duration_s;
        if (b <= t0 || a >= t1 || d->duration_s <= 0) continue; /* silent in the window */
        if (found >= 0 || a > t0 || b < t1) return -2;          /* mixed or partial */
        found = (int) j;
    }
    if (found < 0) return -1;
    double a = fmod(s->sc.sources[found].angle_deg, 360.0);
    return a < 0 ? a + 360.0 : a;
}
