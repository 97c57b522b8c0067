/* SPDX-License-Identifier: MIT */
/*
 * module_main() on the native port (module.h, native.h): a module program
 * is a Linux process, started alone or by `motet run` as one module of a
 * device. Its command line picks the clock, the bus, whether it loads the
 * description and which one:
 *
 *     PROG [--sim | --realtime] [--until S] [--seed N] [--log FILE]
 *          [--bus SOCKET --module N ...] [--loader]
 *          [--app NAME | --app-file FILE.bin] [the program's own options]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "motet/motet.h"
#include "native.h"

int native_module_parse_args(int argc, char **argv, native_module_t *m)
{
    memset(m, 0, sizeof *m);
    int rest = port_native_parse_args(argc, argv, &m->opt);
    return port_native_bus_parse_args(rest, argv, &m->bus);
}

int native_module_option(native_module_t *m, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    bool has_value = *i + 1 < argc;
    if (strcmp(arg, "--loader") == 0) {
        m->loader = true;
    } else if (strcmp(arg, "--app") == 0 && has_value) {
        m->app_name = argv[++*i];
    } else if (strcmp(arg, "--app-file") == 0 && has_value) {
        m->app_file = argv[++*i];
    } else if (strcmp(arg, "--handler-us") == 0 && has_value) {
        char *end;
        unsigned long us = strtoul(argv[++*i], &end, 0);
        if (*end || argv[*i][0] == '-' || us > 10000000ul) return -1;
        native_handler_cost_default((uint32_t) us);
    } else if (strcmp(arg, "--task-us") == 0 && has_value) {
        if (native_handler_cost_task(argv[++*i]) != 0) return -1;
    } else {
        return 0;
    }
    return 1;
}

void native_module_boot(const native_module_t *m)
{
    port_native_configure(&m->opt);
    native_event_report_errors(true);
    motet_boot();
}

bool native_module_loads(const native_module_t *m)
{
    return m->loader || !m->bus.socket;
}

/* ---- a description from a file: `motet appc X.toml -o X.bin --names` ----
 *
 * The file is the binary description (its header says how long) followed,
 * optionally, by its names: "MTNM", u8 tasks, u8 groups, then that many
 * NUL-terminated names, tasks first. */

#define NAMES_MAGIC  "MTNM"
#define NAMES_MAX    (MT_PID_LAST_APP - MT_PID_FIRST_APP + 1 + 255)
#define FILE_MAX     (MOTET_APP_DESC_MAX + 6 + NAMES_MAX * 32)
#define DESC_LEN_OFF 8

static struct {
    uint8_t bytes[FILE_MAX + 1];
    const char *names[NAMES_MAX];
    char name[32]; /* the file's name without its directory and .bin */
    module_app_t app;
} file;

/* Points app's names into the trailer at t (n bytes), names[] holding
 * them; false if malformed or more than max. */
static bool read_names(module_app_t *app, const uint8_t *t, size_t n, const char **names,
                       size_t max)
{
    if (n == 0) return true; /* no names: messages give pids only */
    if (n < 6 || memcmp(t, NAMES_MAGIC, 4) != 0 || t[n - 1] != '\0') return false;
    size_t total = (size_t) t[4] + t[5];
    if (total > max) return false;
    const char *s = (const char *) t + 6, *end = (const char *) t + n;
    for (size_t k = 0; k < total; k++) {
        if (s >= end) return false;
        names[k] = s;
        s += strlen(s) + 1; /* the last byte is a NUL: never past end */
    }
    app->tasks = names;
    app->num_tasks = t[4];
    app->groups = names + t[4];
    app->num_groups = t[5];
    return s == end;
}

const char *native_app_file_parse(const uint8_t *bytes, size_t n, module_app_t *app,
                                  const char **names, size_t max_names)
{
    size_t len =
        n >= DESC_LEN_OFF + 2 ? (size_t) (bytes[DESC_LEN_OFF] | bytes[DESC_LEN_OFF + 1] << 8) : n;
    if (n == 0) return "empty";
    if (len > MOTET_APP_DESC_MAX) return "larger than MOTET_APP_DESC_MAX";
    if (len > n) return "shorter than its header says";
    app->desc = bytes;
    app->len = (uint16_t) len;
    app->tasks = app->groups = NULL;
    app->num_tasks = app->num_groups = 0;
    if (!read_names(app, bytes + len, n - len, names, max_names))
        return "the names after the description are malformed";
    return NULL;
}

static const module_app_t *read_app_file(const char *path, const char *prog)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s: ", prog, path);
        perror(NULL);
        return NULL;
    }
    size_t n = fread(file.bytes, 1, sizeof file.bytes, f);
    fclose(f);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(file.name, sizeof file.name, "%.*s", (int) strcspn(base, "."), base);
    file.app.name = file.name;
    const char *why = n > FILE_MAX
                          ? "too large"
                          : native_app_file_parse(file.bytes, n, &file.app, file.names, NAMES_MAX);
    if (why) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, why);
        return NULL;
    }
    return &file.app;
}

int native_module_pick_app(const native_module_t *m, const char *prog,
                           const module_app_t *const *apps, uint8_t num_apps,
                           const module_app_t **app)
{
    *app = NULL;
    if (m->app_file) {
        *app = read_app_file(m->app_file, prog);
        return *app ? 0 : 2;
    }
    if (!m->app_name) {
        if (num_apps) *app = apps[0];
        return 0;
    }
    module_spec_t spec = {.apps = apps, .num_apps = num_apps};
    *app = module_find_app(&spec, m->app_name);
    if (*app) return 0;
    fprintf(stderr, "%s: no application '%s' (built in:", prog, m->app_name);
    for (uint8_t i = 0; i < num_apps; i++) fprintf(stderr, " %s", apps[i]->name);
    fprintf(stderr, ")\n");
    return 2;
}

int native_module_load(const native_module_t *m, const char *prog, const module_app_t *app)
{
    if (!app) return 0; /* a program that loads nothing itself */
    bool load = native_module_loads(m);
    mt_err_t err = module_use_app(app, load);
    /* Alone, the manager has handled it already; on a bus the verdict comes
     * later, and the hub reports it. */
    if (!err && load && !port_native_bus_connected()) err = appmgr_last_result()->err;
    if (!err) return 0;
    native_event_dump_flush(); /* the error records first, with the task's name */
    fprintf(stdout, "%s: cannot load '%s': %s\n", prog, app->name, mt_strerror(err));
    fflush(stdout);
    return 1;
}

int module_main(const module_spec_t *spec, int argc, char **argv)
{
    native_module_t m;
    int rest = native_module_parse_args(argc, argv, &m);
    for (int i = 1; i < rest; i++) {
        int mine = native_module_option(&m, rest, argv, &i);
        if (mine < 0) {
            fprintf(stderr, "%s: bad %s '%s' (microseconds, 0 .. 10000000)\n", spec->name,
                    argv[i - 1], argv[i]);
            return 2;
        }
        if (mine) continue;
        int took = spec->option ? spec->option(rest, argv, &i) : 0;
        if (took < 0) return 2;
        if (!took && strcmp(argv[i], "--sensor") == 0 && i + 1 < rest) {
            /* A program that simulates sensors takes --sensor itself; a
             * name this one accepted would be a sensor no task can read. */
            fprintf(stderr, "%s: unknown sensor '%s' (this program's sensors: none)\n", spec->name,
                    argv[i + 1]);
            return 2;
        }
        if (!took) {
            fprintf(stderr, "%s: unknown argument '%s'\n", spec->name, argv[i]);
            return 2;
        }
    }
    /* Before the bus: a module refusing its arguments never joins it. */
    const module_app_t *app;
    if (native_module_pick_app(&m, spec->name, spec->apps, spec->num_apps, &app) != 0) return 2;
    native_module_boot(&m);
    spec->register_programs();
    if (native_handler_cost_apply() != 0) return 2;
    port_native_bus_start(&m.bus);
    if (spec->started) spec->started();
    int status = native_module_load(&m, spec->name, app);
    if (status) return status;
    sched_run();
    return 0;
}
