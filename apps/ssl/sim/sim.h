/* SPDX-License-Identifier: MIT */
/*
 * The simulated sensors of the sound-localisation demo (host side only).
 *
 * A scenario file (TOML, read by sim_scenario_load(), format in
 * apps/ssl/README.md) places sound sources around a square array of four
 * microphones and fires near a temperature sensor, with a seed. From it the
 * simulator produces what each module's ADC would read:
 *
 * - microphone m at the corner (+-side/2, +-side/2), counted counter-
 *   clockwise from (+,+); azimuths count counter-clockwise from +x;
 * - each source is a point at `distance` (0: a plane wave from infinity)
 *   emitting a speech-like or a noise-burst signal. Both are sums of
 *   sinusoids with closed-form phases, so the signal at a microphone is the
 *   source signal evaluated exactly at t - delay: fractional delays from the
 *   geometry and c are exact, with no interpolation filter;
 * - white Gaussian background noise, independent per microphone, at the
 *   scenario's SNR below a reference level;
 * - a 12-bit ADC at the scenario's sample rate (full scale +-1.0);
 * - a temperature sensor: room temperature, sensor noise, and for each
 *   fire a rise with a time constant, read in 1/16 degree C.
 *
 * Every random quantity is a hash of (seed, stream, index), not the state
 * of a generator, so any block can be produced in any order and a run is
 * reproducible from the seed alone.
 *
 *     sim_scenario_t sc;
 *     char err[160];
 *     if (sim_scenario_load("room.toml", &sc, err, sizeof err)) die(err);
 *     sim_t *s = sim_create(&sc);
 *     int16_t block[512];
 *     sim_mic_block(s, 0, 16000, 512, block);  // mic 0, samples 15488..15999
 */
#ifndef SSL_SIM_H
#define SSL_SIM_H

#include <stddef.h>
#include <stdint.h>

#define SIM_MICS          4
#define SIM_MAX_SOURCES   32
#define SIM_MAX_FIRES     8
#define SIM_MAX_DEADLINES 8
#define SIM_ADC_BITS      12

typedef enum { SIM_SPEECH, SIM_NOISE } sim_kind_t;

typedef struct sim_source {
    double angle_deg;  /* azimuth, counter-clockwise from +x */
    double start_s;    /* emission starts (seen at the array centre) */
    double duration_s; /* and lasts */
    double level_dbfs; /* RMS at the array centre, dB relative to 1.0 */
    double distance_m; /* from the array centre; 0 for a plane wave */
    double f0_hz;      /* speech: mean pitch; 0 picks one from the seed */
    sim_kind_t kind;
} sim_source_t;

typedef struct sim_fire {
    double time_s; /* the rise starts */
    double rise_c; /* final temperature rise, degrees C */
    double tau_s;  /* time constant of the rise */
} sim_fire_t;

/* A change of the block deadline (capture end to the radio) at run time:
 * the user's request the device's host acts on by placing the tasks
 * again (tools/motetlib/replan.py); the modules only check it. */
typedef struct sim_deadline {
    double time_s;   /* the request arrives */
    double block_ms; /* the new deadline */
} sim_deadline_t;

typedef struct sim_scenario {
    uint64_t seed;
    double duration_s;     /* length of the run */
    double side_m;         /* side of the microphone square */
    double sample_rate_hz; /* ADC sample rate */
    double speed_of_sound; /* m/s */
    double snr_db;         /* reference level over the noise RMS */
    double reference_dbfs; /* level the SNR is counted from */
    double room_c;         /* room temperature */
    double temp_noise_c;   /* temperature sensor noise (RMS) */
    unsigned n_sources;
    sim_source_t sources[SIM_MAX_SOURCES];
    unsigned n_fires;
    sim_fire_t fires[SIM_MAX_FIRES];
    unsigned n_deadlines;
    sim_deadline_t deadlines[SIM_MAX_DEADLINES];
} sim_scenario_t;

typedef struct sim sim_t;

/* The defaults of every field (no sources, no fires). */
void sim_scenario_defaults(sim_scenario_t *sc);
/* Read a scenario file; 0 on success, else -1 with a message "file:line:
 * what" in err. Unknown keys and sections are errors. */
int sim_scenario_load(const char *path, sim_scenario_t *sc, char *err, size_t errlen);

/* A simulator for the scenario (copied); NULL if out of memory. */
sim_t *sim_create(const sim_scenario_t *sc);
void sim_destroy(sim_t *s);
const sim_scenario_t *sim_scenario(const sim_t *s);
/* Position of microphone m, metres. */
void sim_mic_position(const sim_t *s, unsigned m, double *x, double *y);

/* ADC codes (-2048 .. 2047) of microphone m for the n samples that end
 * just before sample index `end` (sample i is taken at i / fs). */
void sim_mic_block(const sim_t *s, unsigned m, uint64_t end, unsigned n, int16_t *out);
/* Temperature sensor reading at time t_us, in 1/16 degree C. */
int16_t sim_temp_read(const sim_t *s, uint64_t t_us);
/* Azimuth of the one source sounding during the whole of [t0, t1) seconds,
 * with no other source during it; -1 if none sounds, -2 if it is mixed. */
double sim_true_angle(const sim_t *s, double t0, double t1);

#endif /* SSL_SIM_H */
