/* SPDX-License-Identifier: MIT */
/*
 * SC (sc.h): noise estimation and detection. Two passes over the band:
 * the first counts signal bins (the verdict needs the count), the second
 * zeroes the others and updates the estimate with the verdict known.
 *
 * Why noise bins keep moving both ways during a sound: a rule that only
 * lets the estimate fall while a sound lasts is a minimum tracker, biased
 * low by several dB after a second of speech, and the first noise blocks
 * after it then look like sound. Updating every bin that is not signal
 * (both ways) and holding only the signal bins keeps the estimate within
 * a fraction of a dB (the truncation at 6 dB costs 0.3 dB).
 */
#include "sc.h"

void sc_init(sc_state_t *sc, uint32_t *noise, const sc_config_t *cfg)
{
    sc->noise = noise;
    sc->trained = 0;
    for (uint8_t i = 0; i < cfg->nbins; i++) noise[i] = 0;
}

uint32_t sc_power(cq15_t x, uint8_t e, uint8_t power_shift)
{
    uint32_t p = (uint32_t) ((int32_t) x.re * x.re) + (uint32_t) ((int32_t) x.im * x.im);
    int16_t s = (int16_t) (2 * (int16_t) e - (int16_t) power_shift);
    if (s < 0) return p >> (uint8_t) -s;
    if (s >= 32 || (p && p > (UINT32_MAX >> s))) return p ? UINT32_MAX : 0;
    return p << s;
}

/* Move *n a fraction 1/2^shift of the way to p; never below 1, so that a
 * silent bin cannot make every later sound "infinitely" loud. */
static void follow(uint32_t *n, uint32_t p, uint8_t shift)
{
    if (p >= *n)
        *n += (p - *n) >> shift;
    else
        *n -= (*n - p) >> shift;
    if (*n == 0) *n = 1;
}

static void train(sc_state_t *sc, const sc_config_t *cfg, const cq15_t *bins, uint8_t e)
{
    /* Block t (from 0) weighs 1/2^t, capped at the normal rate: a fast
     * start from the first block's power. */
    uint8_t shift = sc->trained < cfg->rate_shift ? sc->trained : cfg->rate_shift;
    for (uint8_t i = 0; i < cfg->nbins; i++) {
        uint32_t p = sc_power(bins[i], e, cfg->power_shift);
        if (sc->trained == 0)
            sc->noise[i] = p ? p : 1;
        else
            follow(&sc->noise[i], p, shift);
    }
    sc->trained++;
}

static bool is_signal(uint32_t p, uint32_t n, uint8_t thresh_shift)
{
    return (p >> thresh_shift) > n;
}

uint16_t sc_process(sc_state_t *sc, const sc_config_t *cfg, cq15_t *bins, uint8_t e, bool *sound)
{
    *sound = false;
    if (sc->trained < cfg->train_blocks) {
        train(sc, cfg, bins, e);
        return 0;
    }
    uint16_t count = 0;
    for (uint8_t i = 0; i < cfg->nbins; i++)
        if (is_signal(sc_power(bins[i], e, cfg->power_shift), sc->noise[i], cfg->thresh_shift))
            count++;
    *sound = count >= cfg->min_bins;
    for (uint8_t i = 0; i < cfg->nbins; i++) {
        uint32_t p = sc_power(bins[i], e, cfg->power_shift);
        bool signal = is_signal(p, sc->noise[i], cfg->thresh_shift);
        if (!signal) bins[i] = (cq15_t){0, 0};
        if (!signal || !*sound) follow(&sc->noise[i], p, cfg->rate_shift);
    }
    return count;
}
