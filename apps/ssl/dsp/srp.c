/* SPDX-License-Identifier: MIT */
/*
 * SRP-PHAT (srp.h). The inner loop is srp_steer(): for one angle, every
 * cross-spectrum entry rotated by its steering phase, real parts summed.
 */
#include "srp.h"

#include <math.h>

#include "trig.h"

/* The six pairs (i, j), i < j. */
static const uint8_t pair_i[SRP_PAIRS] = {0, 0, 0, 1, 1, 2};
static const uint8_t pair_j[SRP_PAIRS] = {1, 2, 3, 2, 3, 3};

static size_t align4(size_t n)
{
    return (n + 3u) & ~(size_t) 3u;
}

size_t srp_workspace_size(const srp_config_t *cfg)
{
    size_t n = (size_t) cfg->n_angles * SRP_PAIRS * sizeof(int32_t); /* delay */
    n += TRIG_STEPS * sizeof(int16_t);                               /* cos */
    n += (size_t) cfg->n_angles * sizeof(int32_t);                   /* power */
    n += (size_t) SRP_PAIRS * cfg->nbins * sizeof(cq15_t);           /* cross */
    return n + align4((size_t) SRP_PAIRS * cfg->nbins);              /* bin */
}

/* Steering phase per bin for a delay of d samples: k d / n turns, in
 * 1/1024 turns with SRP_DELAY_FRAC fraction bits. */
static int32_t phase_step(double d, uint8_t log2n)
{
    double steps = d * (double) TRIG_STEPS / (double) (1u << log2n);
    return (int32_t) lround(steps * (double) (1L << SRP_DELAY_FRAC));
}

static void fill_delays(srp_t *s, const srp_geometry_t *g)
{
    const double pi = 3.14159265358979323846;
    double scale = g->sample_rate / g->speed_of_sound;
    for (uint16_t a = 0; a < s->cfg.n_angles; a++) {
        double th = 2.0 * pi * a / s->cfg.n_angles;
        double ux = cos(th), uy = sin(th);
        for (uint8_t p = 0; p < SRP_PAIRS; p++) {
            uint8_t i = pair_i[p], j = pair_j[p];
            double d = scale * ((g->x[j] - g->x[i]) * ux + (g->y[j] - g->y[i]) * uy);
            s->delay[a * SRP_PAIRS + p] = phase_step(d, s->cfg.log2n);
        }
    }
}

int srp_init(srp_t *s, const srp_config_t *cfg, const srp_geometry_t *g, void *workspace)
{
    if (cfg->n_angles < 3 || cfg->log2n < 2 || cfg->log2n > 9 || !cfg->nbins ||
        (unsigned) cfg->bin_lo + cfg->nbins > (1u << (cfg->log2n - 1u)))
        return -1;
    uint8_t *w = workspace;
    s->cfg = *cfg;
    s->delay = (int32_t *) (void *) w;
    w += (size_t) cfg->n_angles * SRP_PAIRS * sizeof(int32_t);
    s->power = (int32_t *) (void *) w;
    w += (size_t) cfg->n_angles * sizeof(int32_t);
    s->cos = (int16_t *) (void *) w;
    w += TRIG_STEPS * sizeof(int16_t);
    s->cross = (cq15_t *) (void *) w;
    w += (size_t) SRP_PAIRS * cfg->nbins * sizeof(cq15_t);
    s->bin = w;
    for (uint16_t i = 0; i < TRIG_STEPS; i++) s->cos[i] = trig_cos(i);
    for (uint8_t p = 0; p < SRP_PAIRS; p++) s->count[p] = 0;
    fill_delays(s, g);
    return 0;
}

uint16_t srp_isqrt(uint32_t v)
{
    uint32_t root = 0, bit = 1uL << 30;
    while (bit > v) bit >>= 2;
    while (bit) {
        if (v >= root + bit) {
            v -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    return (uint16_t) root;
}

void srp_phat(cq15_t *bins, uint8_t nbins)
{
    for (uint8_t k = 0; k < nbins; k++) {
        int32_t re = bins[k].re, im = bins[k].im;
        uint16_t mag = srp_isqrt((uint32_t) (re * re) + (uint32_t) (im * im));
        if (mag == 0) continue; /* a zeroed (masked) bin stays out */
        bins[k].re = q15_sat(re * 32767 / mag);
        bins[k].im = q15_sat(im * 32767 / mag);
    }
}

static void cross_pair(srp_t *s, uint8_t p, const cq15_t *a, const cq15_t *b)
{
    cq15_t *c = s->cross + (size_t) p * s->cfg.nbins;
    uint8_t *bin = s->bin + (size_t) p * s->cfg.nbins;
    uint16_t n = 0;
    for (uint8_t k = 0; k < s->cfg.nbins; k++) {
        if ((!a[k].re && !a[k].im) || (!b[k].re && !b[k].im)) continue;
        /* a conj(b), Q15 */
        int32_t cr = (int32_t) a[k].re * b[k].re + (int32_t) a[k].im * b[k].im;
        int32_t ci = (int32_t) a[k].im * b[k].re - (int32_t) a[k].re * b[k].im;
        c[n].re = (int16_t) ((cr + 0x4000) >> 15);
        c[n].im = (int16_t) ((ci + 0x4000) >> 15);
        bin[n++] = (uint8_t) (s->cfg.bin_lo + k);
    }
    s->count[p] = n;
}

void srp_cross(srp_t *s, cq15_t *const spectra[SRP_MICS])
{
    for (uint8_t p = 0; p < SRP_PAIRS; p++)
        cross_pair(s, p, spectra[pair_i[p]], spectra[pair_j[p]]);
}

/* P(angle a): each entry rotated by e^(+i phase), real parts, Q15 sum. */
static int32_t srp_steer(const srp_t *s, uint16_t a)
{
    const int32_t *d = s->delay + (size_t) a * SRP_PAIRS;
    int32_t sum = 0;
    for (uint8_t p = 0; p < SRP_PAIRS; p++) {
        const cq15_t *c = s->cross + (size_t) p * s->cfg.nbins;
        const uint8_t *bin = s->bin + (size_t) p * s->cfg.nbins;
        for (uint16_t e = 0; e < s->count[p]; e++) {
            uint16_t ph = (uint16_t) (((int32_t) bin[e] * d[p] + (1L << (SRP_DELAY_FRAC - 1))) >>
                                      SRP_DELAY_FRAC);
            int32_t co = s->cos[ph & (TRIG_STEPS - 1u)];
            int32_t si = s->cos[(uint16_t) (ph - TRIG_STEPS / 4u) & (TRIG_STEPS - 1u)];
            sum += (c[e].re * co - c[e].im * si) >> 15;
        }
    }
    return sum;
}

/* Parabola through the maximum and its neighbours: the vertex offset
 * (l - r) / (2 (l - 2c + r)) grid steps, in tenths of a degree, rounded. */
static int32_t refine_ddeg(const srp_t *s, uint16_t best)
{
    uint16_t n = s->cfg.n_angles;
    int64_t l = s->power[(best + n - 1u) % n], c = s->power[best], r = s->power[(best + 1u) % n];
    int64_t den = -2 * (l - 2 * c + r); /* > 0 at a strict maximum */
    if (den <= 0) return 0;             /* flat: no curvature to use */
    int64_t step = 3600 / n;            /* tenths of a degree per grid step */
    int64_t num = (l - r) * step;
    int64_t off = num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
    if (off > step / 2) off = step / 2;
    if (off < -step / 2) off = -step / 2;
    return (int32_t) -off;
}

void srp_locate(srp_t *s, srp_result_t *r)
{
    int64_t total = 0;
    uint16_t best = 0;
    for (uint16_t a = 0; a < s->cfg.n_angles; a++) {
        s->power[a] = srp_steer(s, a);
        total += s->power[a];
        if (s->power[a] > s->power[best]) best = a;
    }
    int32_t ddeg = (int32_t) ((uint32_t) best * 3600u / s->cfg.n_angles) + refine_ddeg(s, best);
    r->angle_ddeg = (uint16_t) ((ddeg + 3600) % 3600);
    r->best = best;
    r->peak = s->power[best];
    r->mean = (int32_t) (total / s->cfg.n_angles);
    r->entries = 0;
    for (uint8_t p = 0; p < SRP_PAIRS; p++) r->entries = (uint16_t) (r->entries + s->count[p]);
}
