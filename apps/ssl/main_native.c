/* SPDX-License-Identifier: MIT */
/*
 * SSL + FBD on one native module (a Linux process) in simulated time:
 *
 *     ssl --scenario FILE [--cpu msp430|arm7|atmega128] [native options]
 *
 * The scenario (apps/ssl/README.md) drives the simulated microphones and
 * temperature sensor; --cpu picks the processor whose cost model turns the
 * tasks' work into simulated time (default arm7, the compute module that
 * could host every task); the native options are those of
 * port_native_parse_args() (--seed, --until, --log FILE, ...). Without
 * --until the module runs until the scenario is over and nothing is left to
 * do. Reports go to standard output, one line each (tasks_radio.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_sim.h"
#include "motet/motet.h"
#include "native.h"
#include "ssl_apps.h"
#include "tasks.h"

static void usage(const char *why)
{
    fprintf(stderr,
            "ssl: %s\n"
            "usage: ssl --scenario FILE [--cpu NAME] [--sim] [--seed N] [--until S] [--log FILE]\n",
            why);
    exit(2);
}

/* At exit (port_halt() calls exit()): how much of the heap the run used. */
static void heap_report(void)
{
    mem_stats_t st;
    mem_get_stats(&st);
    fprintf(stderr, "ssl: heap high water %u of %u bytes, %u allocation failures\n",
            (unsigned) st.high_water, (unsigned) st.heap_size, (unsigned) st.failures);
}

/* Declared work advances the simulated clock (interrupts preempt it). */
static void busy(uint32_t us)
{
    port_native_busy((uint32_t) ((uint64_t) us * PORT_TICKS_PER_SECOND / 1000000u));
}

static const char *option(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) usage("missing value");
    return argv[++*i];
}

static void parse(int argc, char **argv, const char **scenario, const cost_cpu_t **cpu)
{
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = option(argc, argv, &i, "--scenario")))
            *scenario = v;
        else if ((v = option(argc, argv, &i, "--cpu")) && !(*cpu = cost_cpu_find(v)))
            usage("unknown --cpu (msp430, arm7, atmega128)");
        else if (!v)
            usage("unknown argument");
    }
    if (!*scenario) usage("--scenario FILE is required");
}

int main(int argc, char **argv)
{
    native_options_t opt;
    int rest = port_native_parse_args(argc, argv, &opt);
    const char *scenario = NULL;
    const cost_cpu_t *cpu = cost_cpu_find("arm7");
    parse(rest, argv, &scenario, &cpu);
    if (board_sim_open(scenario) != 0) return 2;
    board_sim_set_cpu(cpu);
    board_sim_on_work(busy);
    port_native_configure(&opt);
    motet_boot();
    atexit(heap_report);
    mt_err_t err = ssl_start(ssl_single_app.desc, ssl_single_app.len);
    if (err) {
        fprintf(stderr, "ssl: cannot start the application: %s\n", mt_strerror(err));
        return 1;
    }
    sched_run();
    return 0;
}
