/* SPDX-License-Identifier: MIT */
/*
 * board.h on a host, from the simulator (board_sim.h). Times are module
 * microseconds; sample i of the ADC is taken at i / fs seconds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "board_sim.h"

static sim_t *sim;
static sim_scenario_t scenario;
static const cost_cpu_t *cpu;
static void (*work_fn)(uint32_t us);
static uint8_t mics = (1u << SIM_MICS) - 1u;
static bool has_temp = true, has_radio = true;

int board_sim_open(const char *path)
{
    char err[512]; /* room for a path and the longest message */
    if (sim_scenario_load(path, &scenario, err, sizeof err) != 0) {
        fprintf(stderr, "ssl: scenario: %s\n", err);
        return -1;
    }
    sim_destroy(sim);
    sim = sim_create(&scenario);
    if (!sim) {
        fprintf(stderr, "ssl: out of memory\n");
        return -1;
    }
    return 0;
}

const sim_scenario_t *board_sim_scenario(void)
{
    return &scenario;
}

void board_sim_set_cpu(const cost_cpu_t *c)
{
    cpu = c;
}

const cost_cpu_t *board_sim_cpu(void)
{
    return cpu ? cpu : cost_cpu_find("arm7");
}

void board_sim_set_sensors(uint8_t mic_mask, bool temp, bool radio)
{
    mics = mic_mask;
    has_temp = temp;
    has_radio = radio;
}

const char *board_sim_add_sensor(board_sim_sensors_t *s, const char *name)
{
    static const char mic[] = "microphone:";
    if (strncmp(name, mic, sizeof mic - 1) == 0) {
        char *end;
        unsigned long ch = strtoul(name + sizeof mic - 1, &end, 10);
        if (*end || end == name + sizeof mic - 1 || ch >= SIM_MICS)
            return "microphone:N needs a channel 0..3";
        s->mics |= (uint8_t) (1u << ch);
    } else if (strcmp(name, "temperature") == 0) {
        s->temp = true;
    } else if (strcmp(name, "radio") == 0) {
        s->radio = true;
    } else {
        return "unknown sensor";
    }
    return NULL;
}

bool board_has_mic(uint8_t ch)
{
    return ch < SIM_MICS && (mics >> ch & 1u);
}

bool board_has_temp(void)
{
    return has_temp;
}

bool board_has_radio(void)
{
    return has_radio;
}

void board_sim_on_work(void (*fn)(uint32_t us))
{
    work_fn = fn;
}

static bool in_scenario(uint32_t t_us)
{
    return (double) t_us <= scenario.duration_s * 1e6;
}

bool board_mic_read(uint8_t ch, uint32_t t_us, int16_t *out, uint16_t n)
{
    uint64_t end = (uint64_t) floor((double) t_us * scenario.sample_rate_hz / 1e6 + 1e-6);
    if (!sim || !in_scenario(t_us) || !board_has_mic(ch) || end < n) return false;
    sim_mic_block(sim, ch, end, n, out);
    return true;
}

bool board_temp_read(uint32_t t_us, int16_t *temp_q4)
{
    if (!sim || !in_scenario(t_us) || !has_temp) return false;
    *temp_q4 = sim_temp_read(sim, t_us);
    return true;
}

void board_geometry(srp_geometry_t *g)
{
    for (unsigned m = 0; m < SIM_MICS; m++) sim_mic_position(sim, m, &g->x[m], &g->y[m]);
    g->sample_rate = scenario.sample_rate_hz;
    g->speed_of_sound = scenario.speed_of_sound;
}

int32_t board_true_angle(uint32_t t_us, uint16_t n)
{
    double t1 = t_us / 1e6, t0 = t1 - n / scenario.sample_rate_hz;
    double a = sim_true_angle(sim, t0, t1);
    if (a < 0) return (int32_t) a;
    return (int32_t) lround(a * 10.0) % 3600;
}

void board_work(const cost_t *c)
{
    if (work_fn) work_fn(cost_us(board_sim_cpu(), c));
}
