/* SPDX-License-Identifier: MIT */
/*
 * HT: sound direction by SRP-PHAT (steered response power with the phase
 * transform) for four microphones, over a grid of azimuths.
 *
 * Each channel's spectrum is whitened (every bin scaled to unit magnitude:
 * the PHAT weighting, so that the phase alone carries the delay); the six
 * microphone pairs' cross-spectra C_ij[k] = N_i[k] conj(N_j[k]) are formed
 * on the bins where both channels heard signal (SC zeroes the others); then
 * for each candidate azimuth theta the steered power
 *
 *     P(theta) = sum over pairs, bins of Re(C_ij[k] e^(+2 pi i k D_ij(theta) / n))
 *
 * is summed, where D_ij(theta) = fs (p_j - p_i) . u(theta) / c is the delay
 * in samples a plane wave from theta puts between microphones i and j. The
 * best grid point is refined by a parabola through it and its neighbours.
 *
 * Arithmetic. This stage runs on the 32-bit compute module in the paper's
 * mapping (an ARM7 at 60 MHz), so it uses 32-bit integers freely: Q15
 * spectra, Q15 steering from the 1024-step table, 32-bit sums, one integer
 * square root and one division per bin for the whitening, a 64-bit product
 * for the final interpolation. Only srp_init() uses floating point (double,
 * once, to build the delay table from the geometry). The sensing modules
 * never run it.
 *
 * Memory is the caller's: srp_workspace_size() bytes, aligned for int32_t.
 * For 360 angles and 151 bins that is about 13 KB.
 *
 *     srp_t srp;
 *     static int32_t ws[SIZE / 4];
 *     srp_init(&srp, &cfg, &geometry, ws);
 *     for (c = 0; c < 4; c++) srp_phat(spectra[c], cfg.nbins);
 *     srp_cross(&srp, spectra);
 *     srp_result_t r;
 *     srp_locate(&srp, &r);     // r.angle_ddeg: tenths of a degree
 */
#ifndef SSL_SRP_H
#define SSL_SRP_H

#include <stddef.h>
#include <stdint.h>

#include "q15.h"

#define SRP_MICS  4
#define SRP_PAIRS 6
/* Fraction bits of the per-bin steering phase (in 1/1024 turns). */
#define SRP_DELAY_FRAC 10

typedef struct srp_geometry {
    double x[SRP_MICS], y[SRP_MICS]; /* microphone positions, metres */
    double sample_rate;              /* Hz */
    double speed_of_sound;           /* m/s */
} srp_geometry_t;

typedef struct srp_config {
    uint16_t n_angles; /* candidates 0, 360/n_angles, ... degrees (>= 3) */
    uint8_t log2n;     /* FFT size n = 2^log2n (at most 9: bins are 8-bit) */
    uint8_t bin_lo;    /* first bin of the band */
    uint8_t nbins;     /* bins in the band */
} srp_config_t;

typedef struct srp {
    srp_config_t cfg;
    int32_t *delay;            /* [n_angles][SRP_PAIRS] phase per bin, 1/1024 turn << FRAC */
    int16_t *cos;              /* [1024] cosine table (sine = cos shifted a quarter) */
    uint8_t *bin;              /* [SRP_PAIRS][nbins] bin of each cross-spectrum entry */
    cq15_t *cross;             /* [SRP_PAIRS][nbins] PHAT cross-spectra */
    int32_t *power;            /* [n_angles] steered power of the last srp_locate() */
    uint16_t count[SRP_PAIRS]; /* entries per pair */
} srp_t;

typedef struct srp_result {
    uint16_t angle_ddeg; /* estimate, tenths of a degree, 0 .. 3599 */
    uint16_t best;       /* grid index of the maximum */
    int32_t peak;        /* P at the maximum */
    int32_t mean;        /* mean P over the grid */
    uint16_t entries;    /* cross-spectrum entries summed per angle */
} srp_result_t;

/* Bytes of workspace srp_init() needs for `cfg`. */
size_t srp_workspace_size(const srp_config_t *cfg);
/* Build the tables; 0 on success, -1 for a bad configuration. */
int srp_init(srp_t *s, const srp_config_t *cfg, const srp_geometry_t *g, void *workspace);
/* PHAT weighting in place: every non-zero bin scaled to magnitude 1 (Q15). */
void srp_phat(cq15_t *bins, uint8_t nbins);
/* Cross-spectra of the six pairs from four whitened band spectra. */
void srp_cross(srp_t *s, cq15_t *const spectra[SRP_MICS]);
/* Steer over the grid and fill *r. */
void srp_locate(srp_t *s, srp_result_t *r);

/* Integer square root: floor(sqrt(v)). */
uint16_t srp_isqrt(uint32_t v);

#endif /* SSL_SRP_H */
