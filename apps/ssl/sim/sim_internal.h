/* SPDX-License-Identifier: MIT */
/*
 * What the simulator's files share: the simulator object, the source
 * models (sources.c) and the counter-based random numbers (rng.c).
 */
#ifndef SSL_SIM_INTERNAL_H
#define SSL_SIM_INTERNAL_H

#include <stdint.h>

#include "sim.h"

#define SIM_HARMONICS   64  /* most harmonics a voice uses */
#define SIM_NOISE_TONES 160 /* sinusoids of a noise burst */
#define SIM_VOWELS      5

/* Random-number streams: each quantity draws from its own. */
enum { RNG_MIC_NOISE = 1, RNG_TEMP_NOISE = 9, RNG_SOURCE = 16 };

/* A speech-like voice: harmonics of a gliding pitch, shaped by the
 * formants of a vowel that changes every syllable. */
typedef struct voice {
    double f0, vib_rate, vib_depth, vib_phase; /* pitch and its slow glide */
    double syl_rate, syl_phase;                /* syllables per second */
    unsigned vowel0;                           /* first syllable's vowel */
    unsigned n_harm;
    double harm_phase[SIM_HARMONICS];
} voice_t;

/* A noise burst: many sinusoids at random frequencies and phases. */
typedef struct burst {
    double freq[SIM_NOISE_TONES], phase[SIM_NOISE_TONES];
} burst_t;

typedef struct source_state {
    const sim_source_t *def;
    double gain;                             /* raw signal -> level_dbfs */
    double delay_s[SIM_MICS], amp[SIM_MICS]; /* propagation to each mic */
    voice_t voice;
    burst_t burst;
} source_state_t;

struct sim {
    sim_scenario_t sc;
    double mic_x[SIM_MICS], mic_y[SIM_MICS];
    double noise_rms; /* ADC full scale = 1.0 */
    source_state_t src[SIM_MAX_SOURCES];
};

/* Set up source i's model and level (sources.c). */
void source_init(source_state_t *st, const sim_source_t *def, uint64_t seed, unsigned i,
                 double sample_rate);
/* The source's signal at time t (seconds, at the array centre), 0 while
 * it is silent. */
double source_signal(const source_state_t *st, double t);

/* A 64-bit hash of (seed, stream, index): independent values per index. */
uint64_t rng_hash(uint64_t seed, uint64_t stream, uint64_t index);
/* Uniform in (0, 1) from a hash. */
double rng_uniform(uint64_t h);
/* Standard normal value for (seed, stream, index). */
double rng_gauss(uint64_t seed, uint64_t stream, uint64_t index);

#endif /* SSL_SIM_INTERNAL_H */
