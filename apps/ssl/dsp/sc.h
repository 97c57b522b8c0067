/* SPDX-License-Identifier: MIT */
/*
 * SC: per-bin noise power estimation and voice detection, one instance per
 * microphone channel, on the sensing module (fixed point, 32-bit integers).
 *
 * For each bin of a band the block's power P is compared with the noise
 * estimate N of that bin: the bin holds signal when P > N * 2^thresh_shift.
 * The block holds sound when at least min_bins bins do. Bins without signal
 * are zeroed in the spectrum, so that a later stage (SRP-PHAT) weighs only
 * bins where this channel heard something. The estimate follows the noise:
 * every bin that is not signal moves 1/2^rate_shift of the way towards P;
 * a signal bin does so only in a block without sound (so that a long sound
 * is not learnt as noise, while a rising noise floor is still followed).
 * The first train_blocks blocks only train the estimate (never sound).
 *
 * Powers are |X|^2 in squared input units: the FFT's block exponent e gives
 * |X|^2 = |out|^2 * 4^e, and power_shift removes a known input gain (the
 * window's pre-scaling by 2^s is power_shift = 2s), saturating at 2^32 - 1.
 *
 *     sc_state_t sc;
 *     uint32_t noise[151];
 *     sc_init(&sc, noise, &cfg);
 *     bool sound;
 *     uint16_t n = sc_process(&sc, &cfg, spectrum + cfg.bin_lo, e, &sound);
 */
#ifndef SSL_SC_H
#define SSL_SC_H

#include <stdbool.h>
#include <stdint.h>

#include "q15.h"

typedef struct sc_config {
    uint8_t bin_lo;       /* first bin of the band */
    uint8_t nbins;        /* bins in the band */
    uint8_t thresh_shift; /* signal: P > N * 2^thresh_shift */
    uint8_t min_bins;     /* sound: at least this many signal bins */
    uint8_t rate_shift;   /* noise update step 1/2^rate_shift */
    uint8_t train_blocks; /* blocks that only train the estimate */
    uint8_t power_shift;  /* input gain to remove, in bits of power */
} sc_config_t;

typedef struct sc_state {
    uint32_t *noise; /* nbins estimates, caller-provided */
    uint8_t trained; /* blocks seen, up to train_blocks */
} sc_state_t;

/* Attach the estimate array (cfg->nbins entries) and forget the noise. */
void sc_init(sc_state_t *sc, uint32_t *noise, const sc_config_t *cfg);

/* Power of one bin of a spectrum with block exponent e, in squared input
 * units shifted right by power_shift; saturates at UINT32_MAX. */
uint32_t sc_power(cq15_t x, uint8_t e, uint8_t power_shift);

/* Examine one block: bins[0 .. nbins) are the band's bins, block exponent e.
 * Zeroes the bins without signal, updates the estimate, sets *sound and
 * returns the number of signal bins (0 while training). */
uint16_t sc_process(sc_state_t *sc, const sc_config_t *cfg, cq15_t *bins, uint8_t e, bool *sound);

#endif /* SSL_SC_H */
