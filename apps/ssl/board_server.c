/* SPDX-License-Identifier: MIT */
/*
 * ssl_board: the sensors of an emulated module of a device, served on the
 * host (board_host.h). The module's emulator starts it (the device file's
 * `board`) and passes it the firmware's requests on standard input; it
 * answers on standard output from the simulator a native module uses
 * (board_sim.c), so that the emulated and the native sensing modules of a
 * device read one world: the same scenario, seed and sampling instants.
 *
 *     ssl_board --scenario FILE [--sensor S]... [--check]
 *
 * Framing: a 16-bit little-endian length, then that many bytes, each way.
 * Its first frame, empty, says that it took its arguments: the emulator
 * waits for it before the module joins the bus, and a program that ends
 * first (an unknown sensor, a scenario it cannot read) keeps the module
 * off the bus.
 * --check reads the scenario as the board would, says what is wrong with
 * it (status 2) or nothing (status 0), and serves nothing. A scenario whose
 * [array] is not the firmware boards' (board_host.h) is refused: the array
 * is their hardware. A malformed request ends the program with a message
 * naming it (status 3); the emulator then reports the board gone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "board_host.h"
#include "board_sim.h"

#define REQUEST_MAX 255u
#define ANSWER_MAX  4096u

static void usage(const char *why, const char *arg)
{
    fprintf(stderr,
            "ssl_board: %s%s%s\n"
            "usage: ssl_board --scenario FILE [--sensor microphone:N|temperature|radio]... "
            "[--check]\n",
            why, arg ? ": " : "", arg ? arg : "");
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

/* The scenario's array must be the one the firmware carries. */
static int check_array(const char *path)
{
    const sim_scenario_t *sc = board_sim_scenario();
    if (fabs(sc->side_m * 1000.0 - SSL_ARRAY_SIDE_MM) < 1e-6 &&
        fabs(sc->sample_rate_hz - SSL_ARRAY_RATE_HZ) < 1e-6 &&
        fabs(sc->speed_of_sound * 1000.0 - SSL_ARRAY_SOUND_MM_S) < 1e-3)
        return 0;
    fprintf(stderr,
            "ssl_board: scenario %s: an emulated module's microphone array is its hardware "
            "(side %.2f m, %d Hz, %.0f m/s), not the scenario's (side %g m, %g Hz, %g m/s); "
            "leave [array] out\n",
            path, SSL_ARRAY_SIDE_MM / 1000.0, SSL_ARRAY_RATE_HZ, SSL_ARRAY_SOUND_MM_S / 1000.0,
            sc->side_m, sc->sample_rate_hz, sc->speed_of_sound);
    return 2;
}

/* The answer to one request into ans: its length, or -1 if malformed. */
static int answer(const uint8_t *req, size_t n, uint8_t *ans)
{
    if (n == 1 && req[0] == SSL_BOARD_SENSORS) {
        uint8_t mask = 0;
        for (uint8_t c = 0; c < SIM_MICS; c++)
            if (board_has_mic(c)) mask |= (uint8_t) (1u << c);
        if (board_has_temp()) mask |= SSL_BOARD_HAS_TEMP;
        if (board_has_radio()) mask |= SSL_BOARD_HAS_RADIO;
        ans[0] = mask;
        return 1;
    }
    if (n == 8 && req[0] == SSL_BOARD_MIC) {
        uint16_t count = get_u16(req + 6);
        int16_t samples[ANSWER_MAX / 2];
        if (count > ANSWER_MAX / 2) return -1;
        if (!board_mic_read(req[1], get_u32(req + 2), samples, count)) return 0;
        for (uint16_t i = 0; i < count; i++) {
            ans[2 * i] = (uint8_t) samples[i];
            ans[2 * i + 1] = (uint8_t) ((uint16_t) samples[i] >> 8);
        }
        return 2 * count;
    }
    if (n == 5 && req[0] == SSL_BOARD_TEMP) {
        int16_t t;
        if (!board_temp_read(get_u32(req + 1), &t)) return 0;
        ans[0] = (uint8_t) t;
        ans[1] = (uint8_t) ((uint16_t) t >> 8);
        return 2;
    }
    if (n == 7 && req[0] == SSL_BOARD_TRUTH) {
        uint32_t a = (uint32_t) board_true_angle(get_u32(req + 1), get_u16(req + 5));
        for (unsigned i = 0; i < 4; i++) ans[i] = (uint8_t) (a >> (8u * i));
        return 4;
    }
    return -1;
}

static int serve(void)
{
    uint8_t head[2], req[REQUEST_MAX], ans[ANSWER_MAX];
    while (fread(head, 1, 2, stdin) == 2) {
        size_t n = get_u16(head);
        if (n == 0 || n > REQUEST_MAX || fread(req, 1, n, stdin) != n) {
            fprintf(stderr, "ssl_board: a request of %zu bytes, cut short or too long\n", n);
            return 3;
        }
        int len = answer(req, n, ans);
        if (len < 0) {
            fprintf(stderr, "ssl_board: unknown request '%c' of %zu bytes\n", req[0], n);
            return 3;
        }
        head[0] = (uint8_t) len;
        head[1] = (uint8_t) (len >> 8);
        if (fwrite(head, 1, 2, stdout) != 2 ||
            fwrite(ans, 1, (size_t) len, stdout) != (size_t) len || fflush(stdout) != 0)
            return 0; /* the emulator has gone */
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *scenario = NULL;
    board_sim_sensors_t sensors = {0};
    bool check = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) {
            scenario = argv[++i];
        } else if (strcmp(argv[i], "--sensor") == 0 && i + 1 < argc) {
            const char *wrong = board_sim_add_sensor(&sensors, argv[++i]);
            if (wrong) {
                usage(wrong, argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            usage("unknown argument", argv[i]);
            return 2;
        }
    }
    if (!scenario) {
        usage("--scenario FILE is required", NULL);
        return 2;
    }
    if (board_sim_open(scenario) != 0) return 2;
    int status = check_array(scenario);
    if (status || check) return status;
    board_sim_set_sensors(sensors.mics, sensors.temp, sensors.radio);
    static const uint8_t ready[2] = {0, 0};
    if (fwrite(ready, 1, sizeof ready, stdout) != sizeof ready || fflush(stdout) != 0) return 0;
    return serve();
}
