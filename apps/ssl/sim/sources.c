/* SPDX-License-Identifier: MIT */
/*
 * Source signals. Both kinds are sums of sinusoids whose phases are known
 * in closed form at any time, which is what makes exact fractional delays
 * possible: the microphone signal is the source signal at t - delay.
 *
 * Speech-like: a glottal pitch f0 that glides slowly (a sinusoidal
 * vibrato-like drift of a few per cent), all its harmonics up to 5 kHz
 * (or 0.45 fs), weighted by three formant resonances of a vowel; syllables
 * at 3.5-5 per second, each with its own vowel and an envelope that dips
 * to 15 % between syllables (amplitude modulation).
 * Noise burst: 160 sinusoids of equal amplitude at random frequencies in
 * 150 Hz - 6 kHz (or 0.45 fs) with random phases, a broadband noise.
 * Both start and stop with 10 ms raised-cosine ramps.
 */
#include <math.h>

#include "sim_internal.h"

#define PI       3.14159265358979323846
#define RAMP_S   0.010
#define F_TOP_HZ 5000.0

/* Formant frequencies (Hz) of five vowels: a, e, i, o, u. */
static const double formant[SIM_VOWELS][3] = {
    {730, 1090, 2440}, {530, 1840, 2480}, {270, 2290, 3010}, {570, 840, 2410}, {300, 870, 2240}};
static const double formant_bw[3] = {120, 160, 220};
static const double formant_gain[3] = {1.0, 0.7, 0.4};

static double top_hz(double sample_rate, double limit)
{
    double nyq = 0.45 * sample_rate;
    return nyq < limit ? nyq : limit;
}

/* Amplitude of a harmonic at f in vowel v: three resonances. */
static double vowel_weight(unsigned v, double f)
{
    double a = 0;
    for (int i = 0; i < 3; i++) {
        double x = (f - formant[v][i]) / formant_bw[i];
        a += formant_gain[i] / sqrt(1.0 + x * x);
    }
    return a;
}

static void voice_init(voice_t *v, const sim_source_t *def, uint64_t seed, unsigned i, double fs)
{
    uint64_t stream = RNG_SOURCE + i;
    v->f0 = def->f0_hz > 0 ? def->f0_hz : 100.0 + 120.0 * rng_uniform(rng_hash(seed, stream, 0));
    v->vib_rate = 0.5 + 0.7 * rng_uniform(rng_hash(seed, stream, 1));
    v->vib_depth = 0.04 + 0.04 * rng_uniform(rng_hash(seed, stream, 2));
    v->vib_phase = 2 * PI * rng_uniform(rng_hash(seed, stream, 3));
    v->syl_rate = 3.5 + 1.5 * rng_uniform(rng_hash(seed, stream, 4));
    v->syl_phase = rng_uniform(rng_hash(seed, stream, 5));
    v->vowel0 = (unsigned) (rng_hash(seed, stream, 6) % SIM_VOWELS);
    double top = top_hz(fs, F_TOP_HZ);
    v->n_harm = 0;
    while (v->n_harm < SIM_HARMONICS && (v->n_harm + 1) * v->f0 * (1 + v->vib_depth) < top)
        v->n_harm++;
    for (unsigned h = 0; h < v->n_harm; h++)
        v->harm_phase[h] = 2 * PI * rng_uniform(rng_hash(seed, stream, 100 + h));
}

static void burst_init(burst_t *b, uint64_t seed, unsigned i, double fs)
{
    uint64_t stream = RNG_SOURCE + i;
    double lo = 150.0, hi = top_hz(fs, 6000.0);
    for (unsigned k = 0; k < SIM_NOISE_TONES; k++) {
        b->freq[k] = lo + (hi - lo) * rng_uniform(rng_hash(seed, stream, 1000 + 2 * k));
        b->phase[k] = 2 * PI * rng_uniform(rng_hash(seed, stream, 1001 + 2 * k));
    }
}

static double voice_at(const voice_t *v, double u)
{
    double psi = v->syl_rate * u + v->syl_phase;
    double j = floor(psi), s = sin(PI * (psi - j));
    double env = 0.15 + 0.85 * s * s;
    unsigned vowel = (unsigned) ((v->vowel0 + (uint64_t) j) % SIM_VOWELS);
    double arg = 2 * PI * v->vib_rate * u + v->vib_phase;
    double phase = 2 * PI * v->f0 * (u - v->vib_depth / (2 * PI * v->vib_rate) * cos(arg));
    double f_now = v->f0 * (1 + v->vib_depth * sin(arg));
    double sum = 0;
    for (unsigned h = 0; h < v->n_harm; h++)
        sum += vowel_weight(vowel, (h + 1) * f_now) * cos((h + 1) * phase + v->harm_phase[h]);
    return env * sum;
}

static double burst_at(const burst_t *b, double u)
{
    double sum = 0;
    for (unsigned k = 0; k < SIM_NOISE_TONES; k++)
        sum += cos(2 * PI * b->freq[k] * u + b->phase[k]);
    return sum;
}

static double raw_at(const source_state_t *st, double u)
{
    return st->def->kind == SIM_SPEECH ? voice_at(&st->voice, u) : burst_at(&st->burst, u);
}

/* RMS of the raw signal: exact for the burst (distinct frequencies), over
 * two seconds of samples for the voice. */
static double raw_rms(const source_state_t *st, double fs)
{
    if (st->def->kind == SIM_NOISE) return sqrt(SIM_NOISE_TONES / 2.0);
    unsigned n = (unsigned) (2.0 * fs);
    double acc = 0;
    for (unsigned i = 0; i < n; i++) {
        double x = voice_at(&st->voice, i / fs);
        acc += x * x;
    }
    return sqrt(acc / n);
}

void source_init(source_state_t *st, const sim_source_t *def, uint64_t seed, unsigned i,
                 double sample_rate)
{
    st->def = def;
    if (def->kind == SIM_SPEECH)
        voice_init(&st->voice, def, seed, i, sample_rate);
    else
        burst_init(&st->burst, seed, i, sample_rate);
    st->gain = pow(10.0, def->level_dbfs / 20.0) / raw_rms(st, sample_rate);
}

static double ramp(double x)
{
    if (x >= RAMP_S) return 1.0;
    double s = sin(PI * x / (2 * RAMP_S));
    return s * s;
}

double source_signal(const source_state_t *st, double t)
{
    double u = t - st->def->start_s, left = st->def->duration_s - u;
    if (u < 0 || left <= 0) return 0;
    return st->gain * ramp(u) * ramp(left) * raw_at(st, u);
}
