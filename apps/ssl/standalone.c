/* SPDX-License-Identifier: MIT */
/*
 * The baseline: the same signal chain as one plain C program, without
 * Motet (the paper's "standalone" column). Static buffers instead of the
 * heap, direct calls instead of messages, one loop over the sampling
 * instants in time order instead of timers. It reads the same scenario and
 * calls the same DSP functions in the same order as the tasks, so its
 * reports must be identical to the Motet build's:
 *
 *     ssl_standalone --scenario FILE [--block-period-us N]
 *
 *     ssl block=20 t_ms=5250.000 angle=44.9 true=45.0
 *     fire alert sample_ms=7510.000 temp=24.06
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "board_sim.h"
#include "dsp/fbd.h"
#include "dsp/fft.h"
#include "dsp/sc.h"
#include "dsp/srp.h"
#include "dsp/vote.h"
#include "ssl_app.h"

typedef struct channel {
    sc_state_t sc;
    uint32_t noise[SSL_NBINS];
    cq15_t buf[SSL_N / 2]; /* samples, then the spectrum in place */
} channel_t;

static channel_t chan[SSL_CHANNELS];
static srp_t srp;
static int32_t srp_ws[24576 / sizeof(int32_t)];
static vote_t votes;
static fbd_ewma_t ewma;
static fbd_alert_t alert;
static const sc_config_t sc_cfg = SSL_SC_CONFIG;

static void setup(void)
{
    srp_config_t cfg = {
        .n_angles = SSL_ANGLES, .log2n = SSL_LOG2N, .bin_lo = SSL_BIN_LO, .nbins = SSL_NBINS};
    srp_geometry_t g;
    board_geometry(&g);
    if (srp_workspace_size(&cfg) > sizeof srp_ws || srp_init(&srp, &cfg, &g, srp_ws) != 0) {
        fprintf(stderr, "ssl_standalone: SRP configuration does not fit\n");
        exit(1);
    }
    for (unsigned c = 0; c < SSL_CHANNELS; c++) sc_init(&chan[c].sc, chan[c].noise, &sc_cfg);
}

/* Sample, transform and examine one channel; false once the data ends. */
static bool channel_block(channel_t *ch, uint8_t c, uint32_t t_us, bool *sound)
{
    int16_t *samples = (int16_t *) (void *) ch->buf;
    if (!board_mic_read(c, t_us, samples, SSL_N)) return false;
    fft_window_hann(samples, SSL_LOG2N, SSL_PRESCALE);
    uint8_t e = fft_real(samples, SSL_LOG2N, NULL);
    sc_process(&ch->sc, &sc_cfg, ch->buf + SSL_BIN_LO, e, sound);
    return true;
}

static void locate(uint16_t block, uint32_t t_us)
{
    cq15_t *bands[SSL_CHANNELS];
    for (unsigned c = 0; c < SSL_CHANNELS; c++) {
        bands[c] = chan[c].buf + SSL_BIN_LO;
        srp_phat(bands[c], SSL_NBINS);
    }
    srp_cross(&srp, bands);
    srp_result_t r;
    srp_locate(&srp, &r);
    int32_t truth = board_true_angle(t_us, SSL_N);
    char tbuf[16] = "-";
    if (truth >= 0) snprintf(tbuf, sizeof tbuf, "%ld.%ld", (long) truth / 10, (long) truth % 10);
    printf("ssl block=%u t_ms=%lu.%03lu angle=%u.%u true=%s\n", block,
           (unsigned long) (t_us / 1000u), (unsigned long) (t_us % 1000u), r.angle_ddeg / 10u,
           r.angle_ddeg % 10u, tbuf);
}

static bool ssl_block(uint16_t block, uint32_t t_us)
{
    vote_result_t v = VOTE_PENDING;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        bool sound;
        if (!channel_block(&chan[c], c, t_us, &sound)) return false;
        v = vote_add(&votes, block, c, sound, SSL_CHANNELS, SSL_VOTE_NEED);
    }
    if (v == VOTE_SOUND) locate(block, t_us);
    return true;
}

static bool fbd_sample(uint32_t t_us)
{
    static const fbd_alert_config_t cfg = {.threshold_q16 = SSL_ALERT_THRESHOLD,
                                           .shift = SSL_ALERT_SHIFT};
    int16_t temp;
    if (!board_temp_read(t_us, &temp)) return false;
    int32_t avg = fbd_ewma_update(&ewma, temp, SSL_EWMA_SHIFT);
    if (!fbd_alert_update(&alert, &cfg, avg)) return true;
    int32_t centi = (int32_t) temp * 100 / 16;
    printf("fire alert sample_ms=%lu.%03lu temp=%ld.%02ld\n", (unsigned long) (t_us / 1000u),
           (unsigned long) (t_us % 1000u), (long) (centi / 100),
           (long) (centi < 0 ? -centi % 100 : centi % 100));
    return true;
}

/* The sampling instants in time order (a temperature reading first on a
 * tie, as its higher priority would have it). */
static void run(uint32_t block_period)
{
    uint32_t t_block = block_period, t_temp = SSL_TEMP_PHASE_US;
    bool blocks = true, temps = true;
    uint16_t block = 0;
    while (blocks || temps) {
        if (temps && (!blocks || t_temp <= t_block)) {
            temps = fbd_sample(t_temp);
            t_temp += SSL_TEMP_PERIOD_US;
        } else {
            blocks = ssl_block(block++, t_block);
            t_block += block_period;
        }
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: ssl_standalone --scenario FILE [--block-period-us N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *scenario = NULL;
    uint32_t period = SSL_BLOCK_PERIOD_US;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc)
            scenario = argv[++i];
        else if (strcmp(argv[i], "--block-period-us") == 0 && i + 1 < argc)
            period = (uint32_t) strtoul(argv[++i], NULL, 10);
        else
            usage();
    }
    if (!scenario || period == 0) usage();
    if (board_sim_open(scenario) != 0) return 2;
    setup();
    run(period);
    return 0;
}
