/* SPDX-License-Identifier: MIT */
/*
 * SSL + FBD on a multi-module device (run by `motet run` or `motet demo`):
 * the same program on every module, told by the hub which module it is.
 *
 *     ssl_device --scenario FILE [--cpu NAME] [--sensor S]... [--loader]
 *                [--desc FILE.bin] [bus options] [native options]
 *     ssl_device --scenario FILE --check
 *
 * Every module registers the same programs; the loader broadcasts the
 * description (the built-in ssl_device.toml, or a compiled FILE.bin from
 * `motet appc`) and each module creates its own part of it.
 *
 * --cpu is this module's processor for the cost model (msp430, arm7,
 * atmega128): each module charges its work at its own speed. --sensor names
 * the hardware this module carries, one per option: microphone:N (channel
 * N of the array), temperature, radio. On a bus the module serves only
 * those; alone (no --bus) it has them all, like the single-module build.
 *
 * --check reads the scenario as a module would, says what is wrong with it
 * (status 2) or nothing (status 0), and runs nothing: `motet demo` asks
 * once, before it starts five modules that would each refuse the file.
 *
 * Every module reads the same scenario file and builds the same simulator
 * (every random value is a hash of the seed, so any module can compute any
 * sample), and each asks it only for its own sensors. The sampling instants
 * line up because the device's clocks share one time base: the device file
 * gives every module an exact clock starting at 0 (devices/ssl-device.toml),
 * so module time is the simulation's global time, and the microphone tasks
 * capture on multiples of the block period (tasks_ssl.c). Drifting clocks
 * would need the capture instants placed by time sync instead.
 *
 * Run-time migration (--migrate PID:MODULE@S, up to MAX_MIGRATIONS times,
 * built when the kernel has the task migrator, SSL_MIGRATION from
 * CMakeLists.txt): the loader asks for task PID to move to MODULE at
 * module time S, from an interrupt line of the native port scheduled for
 * that tick (migrate_request() may be called from any context); the
 * requests go in time order, one line rescheduled for the next. vote, ewma
 * and alert move as copies of their plain-data states, sc and ht as images
 * they flatten themselves (tasks_migrate.c). Without the migrator the
 * option is refused and not named in the usage line (the scenario test
 * looks for it there).
 *
 * The same requests can come while the device runs, from its host (the
 * hub's side: a planner that answers a deadline change, tools/motetlib/
 * ssl_replan.py): a host message of (pid, module) byte pairs, each asked
 * of the migrator as it arrives; the migrators carry it over the bus to the
 * task's module.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_sim.h"
#include "motet/motet.h"
#include "native.h"
#include "ssl_app.h"
#include "ssl_apps.h"
#include "tasks.h"

#if SSL_MIGRATION
#include "motet/migrate.h"
#define MIGRATE_USAGE " [--migrate PID:MODULE@S]"
#else
#define MIGRATE_USAGE ""
#endif

/* The native interrupt line that makes the --migrate requests. */
#define MIGRATE_LINE   0
#define MAX_MIGRATIONS 8

typedef struct migration {
    unsigned long pid, dest;
    double at_s;
} migration_t;

typedef struct options {
    const char *scenario;
    const cost_cpu_t *cpu;
    board_sim_sensors_t sensors;
    bool check;                          /* --check: read the scenario, run nothing */
    migration_t migrate[MAX_MIGRATIONS]; /* in time order */
    uint8_t n_migrate;
} options_t;

static void usage(const char *why, const char *arg)
{
    fprintf(stderr,
            "ssl_device: %s%s%s\n"
            "usage: ssl_device --scenario FILE [--cpu NAME] [--sensor microphone:N|temperature|"
            "radio]... [--loader] [--desc FILE.bin]" MIGRATE_USAGE
            " [--bus SOCKET --module N ...]\n"
            "       ssl_device --scenario FILE --check\n",
            why, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static void heap_report(void)
{
    mem_stats_t st;
    mem_get_stats(&st);
    fprintf(stderr, "ssl: module %u heap high water %u of %u bytes, %u allocation failures\n",
            (unsigned) bus_self(), (unsigned) st.high_water, (unsigned) st.heap_size,
            (unsigned) st.failures);
}

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
    if (*i + 1 >= argc) usage("missing value", argv[*i]);
    return argv[++*i];
}

/* PID:MODULE@SECONDS, e.g. 0x18:4@3.1, into o->migrate in time order. */
static void parse_migration(const char *v, options_t *o)
{
    if (!SSL_MIGRATION) usage("--migrate needs the task migrator, not in this kernel", v);
    if (o->n_migrate == MAX_MIGRATIONS) usage("too many --migrate options (at most 8)", v);
    migration_t *m = &o->migrate[o->n_migrate];
    char *end;
    m->pid = strtoul(v, &end, 0);
    if (*end++ != ':') usage("--migrate PID:MODULE@SECONDS", v);
    m->dest = strtoul(end, &end, 0);
    if (*end++ != '@') usage("--migrate PID:MODULE@SECONDS", v);
    m->at_s = strtod(end, &end);
    if (*end || m->pid > 0xFF || m->dest > 0xFF || !(m->at_s >= 0))
        usage("--migrate PID:MODULE@SECONDS", v);
    for (migration_t *p = m; p > o->migrate && p[-1].at_s > p->at_s; p--) {
        migration_t later = p[-1];
        p[-1] = *p;
        *p = later;
    }
    o->n_migrate++;
}

/* The program's own options into o, the module program's (--loader,
 * --desc FILE.bin) into m. */
static void parse(int argc, char **argv, options_t *o, native_module_t *m)
{
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = option(argc, argv, &i, "--scenario"))) {
            o->scenario = v;
        } else if ((v = option(argc, argv, &i, "--cpu"))) {
            o->cpu = cost_cpu_find(v);
            if (!o->cpu) usage("unknown --cpu (msp430, arm7, atmega128)", v);
        } else if ((v = option(argc, argv, &i, "--sensor"))) {
            const char *wrong = board_sim_add_sensor(&o->sensors, v);
            if (wrong) usage(wrong, v);
        } else if ((v = option(argc, argv, &i, "--desc")) ||
                   (v = option(argc, argv, &i, "--app-file"))) {
            m->app_file = v;
        } else if ((v = option(argc, argv, &i, "--migrate"))) {
            parse_migration(v, o);
        } else if (strcmp(argv[i], "--loader") == 0) {
            m->loader = true;
        } else if (strcmp(argv[i], "--check") == 0) {
            o->check = true;
        } else {
            usage("unknown argument", argv[i]);
        }
    }
    if (!o->scenario) usage("--scenario FILE is required", NULL);
}

#if SSL_MIGRATION
static migration_t pending[MAX_MIGRATIONS];
static uint8_t n_pending, next_pending;

static uint64_t migration_tick(const migration_t *m)
{
    return (uint64_t) (m->at_s * PORT_TICKS_PER_SECOND);
}

/* Ask the migrator to move task pid to module dest, and say what came of
 * asking. */
static void ask_migration(unsigned long pid, unsigned long dest)
{
    mt_err_t err = migrate_request((mt_pid_t) pid, (mt_module_t) dest);
    char line[96];
    int n = snprintf(line, sizeof line, "ssl: migration of task 0x%02lx to module %lu asked: %s\n",
                     pid, dest, mt_strerror(err));
    if (n > 0) port_console_write(line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
}

/* The interrupt at a requested tick: ask, and set the line for the next
 * request. */
static void migrate_isr(void)
{
    const migration_t *m = &pending[next_pending++];
    ask_migration(m->pid, m->dest);
    if (next_pending < n_pending)
        port_native_irq_schedule(MIGRATE_LINE, migration_tick(&pending[next_pending]));
}

/* A message from the host: (pid, module) pairs, asked in order. */
static void host_message(const uint8_t *msg, uint16_t len)
{
    for (uint16_t i = 0; i + 1u < len; i += 2u) ask_migration(msg[i], msg[i + 1u]);
}
#endif

/* The loader makes the --migrate requests (every module gets the options). */
static void schedule_migrations(const options_t *o)
{
#if SSL_MIGRATION
    memcpy(pending, o->migrate, sizeof pending);
    n_pending = o->n_migrate;
    port_native_irq_attach(MIGRATE_LINE, migrate_isr);
    port_native_irq_schedule(MIGRATE_LINE, migration_tick(&pending[0]));
#else
    (void) o;
#endif
}

int main(int argc, char **argv)
{
    native_module_t m;
    int rest = native_module_parse_args(argc, argv, &m);
    options_t o = {.cpu = cost_cpu_find("arm7")};
    parse(rest, argv, &o, &m);
    static const module_app_t *const apps[] = {&ssl_device_app};
    const module_app_t *app;
    if (native_module_pick_app(&m, "ssl_device", apps, 1, &app) != 0) return 2;
    if (board_sim_open(o.scenario) != 0) return 2;
    if (o.check) return 0;
    board_sim_set_cpu(o.cpu);
    board_sim_on_work(busy);
    if (m.bus.socket) board_sim_set_sensors(o.sensors.mics, o.sensors.temp, o.sensors.radio);
    native_module_boot(&m);
    atexit(heap_report);
    ssl_register();
    port_native_bus_start(&m.bus);
    int status = native_module_load(&m, "ssl_device", app);
    if (status) return status;
    if (native_module_loads(&m) && o.n_migrate) schedule_migrations(&o);
#if SSL_MIGRATION
    if (m.bus.socket) port_native_bus_on_host(host_message);
#endif
    sched_run();
    return 0;
}
