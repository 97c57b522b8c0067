/* SPDX-License-Identifier: MIT */
/*
 * The sound-localisation (SSL) and fire-breakout-detection (FBD)
 * application: parameters shared by the Motet tasks (tasks_*.c) and the
 * standalone baseline (standalone.c), and the messages between tasks.
 *
 * Task graph (the paper's figure 4; wiring in ssl_single.toml):
 *
 *   mic0..3 --samples--> fft0..3 --spectrum--> sc0..3 --verdict--> vote
 *   vote --decision--> @sound (sc0..3)
 *   sc0..3 --spectrum (when the vote says sound)--> ht --direction--> radio
 *   temp --reading--> ewma --average--> alert --alert--> radio
 */
#ifndef APPS_SSL_APP_H
#define APPS_SSL_APP_H

#include <stddef.h>
#include <stdint.h>

#include "dsp/fft.h"
#include "dsp/q15.h"
#include "dsp/sc.h"

/* ---- signal chain parameters ---- */

#define SSL_CHANNELS 4
#define SSL_LOG2N    9 /* 512-sample blocks */
#define SSL_N        (1u << SSL_LOG2N)
/* ADC codes (12 bits) are shifted left by this before the FFT: 15 bits. */
#define SSL_PRESCALE 3
/* The band SC and HT use: bins 10 .. 160, 312.5 Hz - 5 kHz at 16 kHz
 * (speech energy; below, room rumble; above, little speech and spatial
 * aliasing of the 0.2 m array everywhere). */
#define SSL_BIN_LO 10
#define SSL_NBINS  151
/* Candidate azimuths for HT: every degree. */
#define SSL_ANGLES 360
/* Vote: sound when more than two of the four channels detect it. */
#define SSL_VOTE_NEED 3

/* SC: a bin is signal 6 dB over its noise estimate (2^2); a block is sound
 * with 16 signal bins of 151: with the noise estimate an average of about
 * 15 blocks, a noise bin passes 6 dB with probability (1 + 4/15)^-15 = 3 %,
 * 4.4 bins per block on average, and 16 or more with probability about
 * 1e-5 per channel, 1e-14 for three channels at once. Estimate update 1/8
 * per block; four training blocks (1 s at the default block rate). */
#define SSL_SC_CONFIG                                                                              \
    {                                                                                              \
        .bin_lo = SSL_BIN_LO, .nbins = SSL_NBINS, .thresh_shift = 2, .min_bins = 16,               \
        .rate_shift = 3, .train_blocks = 4, .power_shift = 2 * SSL_PRESCALE                        \
    }

/* Default timing, also in ssl_single.toml: a block every 250 ms, the
 * temperature every 250 ms (4 Hz), 10 ms after each block. */
#define SSL_BLOCK_PERIOD_US 250000u
#define SSL_TEMP_PERIOD_US  250000u
#define SSL_TEMP_PHASE_US   10000u

/* FBD: EWMA step 1/4; alert when the energy of the average's change, itself
 * averaged with step 1/2, exceeds (0.25 degree C per sample)^2, i.e. a
 * sustained climb of about 1 degree C per second. */
#define SSL_EWMA_SHIFT      2
#define SSL_ALERT_SHIFT     1
#define SSL_ALERT_THRESHOLD (64u * 64u) /* Q16: (0.25 * 256)^2 */

/* ---- program ids (the [programs] table of the descriptions) ---- */

enum {
    SSL_PROG_MIC = 1,
    SSL_PROG_SC,
    SSL_PROG_VOTE,
    SSL_PROG_HT,
    SSL_PROG_RADIO,
    SSL_PROG_TEMP,
    SSL_PROG_EWMA,
    SSL_PROG_ALERT,
    SSL_PROG_FFT
};

/* ---- messages ----
 *
 * A message may cross the bus between instruction sets (the mixed device:
 * ATmega128 sensing modules, a Cortex-M3 compute module), so each has the
 * same layout on every port: fields at their natural alignment, explicit
 * reserved bytes where a 32-bit compiler would pad, a size that is a
 * multiple of 4 (checked below); the byte order is little-endian on every
 * port Motet has. */

/* mic -> fft: one channel's block of SSL_N samples (int16_t, ADC codes) in
 * place of bins[], the header with nbins 0; fft transforms it in place and
 * hands the same heap block on as the spectrum (SSL_SAMPLES_MSG_LEN bytes:
 * a bus frame of 1 KB carries it when fft runs on another module).
 *
 * fft -> sc -> ht: one channel's spectrum, a heap block handed over. The
 * message holds bins 0 up to the top of the band SC and HT use
 * (SSL_SENT_BINS; the band starts at bins[SSL_BIN_LO], where the FFT left
 * it: nothing is moved), 660 bytes with the header: it fits a bus frame,
 * so sc need not share a module with its microphone. */
typedef struct ssl_spectrum {
    uint32_t t_us;        /* end of the capture window (module time) */
    uint16_t block;       /* block number, from 0 */
    uint16_t nbins;       /* bins held */
    uint16_t signal_bins; /* SC: bins over the noise (others zeroed) */
    uint8_t channel;      /* microphone */
    uint8_t exponent;     /* block exponent of the FFT */
    uint8_t bin_lo;       /* bins[0] is bin bin_lo */
    uint8_t reserved[3];  /* 0; puts bins[] on a 4-byte boundary, so that a
                             copy of the bins moves words, not bytes */
    cq15_t bins[];
} ssl_spectrum_t;
_Static_assert(offsetof(ssl_spectrum_t, bins) % 4 == 0, "spectrum bins must be word aligned");

/* Bins of a spectrum message, and its bytes (header and bins). */
#define SSL_SENT_BINS        (SSL_BIN_LO + SSL_NBINS)
#define SSL_SPECTRUM_MSG_LEN ((uint16_t) (sizeof(ssl_spectrum_t) + SSL_SENT_BINS * sizeof(cq15_t)))
/* Bytes of a sample block (header and samples). */
#define SSL_SAMPLES_MSG_LEN ((uint16_t) (sizeof(ssl_spectrum_t) + SSL_N * sizeof(int16_t)))

/* fft's work on a sample block from mic: the Hann window and the real FFT
 * in place, the block becoming the spectrum it sends on (SSL_SENT_BINS). */
static inline void ssl_transform_block(ssl_spectrum_t *sp)
{
    int16_t *samples = (int16_t *) (void *) sp->bins;
    fft_window_hann(samples, SSL_LOG2N, SSL_PRESCALE);
    sp->exponent = fft_real(samples, SSL_LOG2N, NULL);
    sp->nbins = SSL_SENT_BINS; /* the rest of the block is not sent */
}

/* sc -> vote */
typedef struct ssl_verdict {
    uint16_t block;
    uint8_t channel;
    uint8_t sound;
} ssl_verdict_t;

/* vote -> @sound */
typedef struct ssl_decision {
    uint16_t block;
    uint8_t sound;
    uint8_t reserved; /* 0 */
} ssl_decision_t;

/* ht -> radio */
typedef struct ssl_direction {
    uint32_t t_us; /* the block's capture time */
    uint16_t block;
    uint16_t angle_ddeg; /* tenths of a degree */
    uint16_t entries;    /* cross-spectrum entries used */
    uint16_t reserved;   /* 0 */
} ssl_direction_t;

/* temp -> ewma -> alert -> radio */
typedef struct ssl_reading {
    uint32_t t_us;     /* when the sensor was sampled */
    int32_t avg_q8;    /* EWMA, 1/256 degree C (from ewma on) */
    uint32_t energy;   /* alert energy, Q16 (alert -> radio) */
    int16_t temp_q4;   /* 1/16 degree C */
    uint16_t reserved; /* 0 */
} ssl_reading_t;

_Static_assert(sizeof(ssl_spectrum_t) == 16 && sizeof(ssl_verdict_t) == 4 &&
                   sizeof(ssl_decision_t) == 4 && sizeof(ssl_direction_t) == 12 &&
                   sizeof(ssl_reading_t) == 16,
               "a message has one layout on every port");

#endif /* APPS_SSL_APP_H */
