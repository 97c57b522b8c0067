/* SPDX-License-Identifier: MIT */
/*
 * The scenario reader: a strict subset of TOML, enough for scenario files
 * and still readable by any TOML parser (the tests use Python's tomllib).
 *
 *   # comment                  key = 1.5 / -3 / 2e3 / "text" / true
 *   [table]                    [[array-of-tables]]
 *
 * Keys are known per table (below); a key, table or value the simulator
 * does not know is an error with the file and line, never ignored, and so
 * is a file that defines nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef enum { T_TOP, T_ARRAY, T_NOISE, T_TEMPERATURE, T_SOURCE, T_FIRE, T_DEADLINE } table_t;

typedef struct reader {
    const char *path;
    unsigned line;
    table_t table;
    sim_scenario_t *sc;
    bool defines; /* a key or a table seen */
    char *err;
    size_t errlen;
} reader_t;

static int fail(reader_t *r, const char *fmt, ...)
{
    int n = snprintf(r->err, r->errlen, "%s:%u: ", r->path, r->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t) n < r->errlen) vsnprintf(r->err + n, r->errlen - (size_t) n, fmt, ap);
    va_end(ap);
    return -1;
}

void sim_scenario_defaults(sim_scenario_t *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->seed = 1;
    sc->duration_s = 10.0;
    sc->side_m = 0.20;
    sc->sample_rate_hz = 16000.0;
    sc->speed_of_sound = 343.0;
    sc->snr_db = 20.0;
    sc->reference_dbfs = -20.0;
    sc->room_c = 21.0;
    sc->temp_noise_c = 0.05;
}

static char *trim(char *s)
{
    while (isspace((unsigned char) *s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char) e[-1])) *--e = '\0';
    return s;
}

/* Cut a comment that is not inside a string. */
static void strip_comment(char *s)
{
    bool quoted = false;
    for (; *s; s++) {
        if (*s == '"') quoted = !quoted;
        if (*s == '#' && !quoted) {
            *s = '\0';
            return;
        }
    }
}

static int open_table(reader_t *r, const char *name, bool array)
{
    static const struct {
        const char *name;
        table_t t;
        bool array;
    } known[] = {{"array", T_ARRAY, false},
                 {"noise", T_NOISE, false},
                 {"temperature", T_TEMPERATURE, false},
                 {"source", T_SOURCE, true},
                 {"fire", T_FIRE, true},
                 {"deadline", T_DEADLINE, true}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(name, known[i].name) != 0) continue;
        if (array != known[i].array)
            return fail(r, "'%s' must be written %s", name, array ? "[name]" : "[[name]]");
        r->table = known[i].t;
        if (r->table == T_SOURCE) {
            if (r->sc->n_sources == SIM_MAX_SOURCES)
                return fail(r, "more than %d sources", SIM_MAX_SOURCES);
            sim_source_t *s = &r->sc->sources[r->sc->n_sources++];
            *s = (sim_source_t){.duration_s = 1.0, .level_dbfs = -20.0, .distance_m = 3.0};
        }
        if (r->table == T_FIRE) {
            if (r->sc->n_fires == SIM_MAX_FIRES)
                return fail(r, "more than %d fires", SIM_MAX_FIRES);
            r->sc->fires[r->sc->n_fires++] = (sim_fire_t){.rise_c = 20.0, .tau_s = 10.0};
        }
        if (r->table == T_DEADLINE) {
            if (r->sc->n_deadlines == SIM_MAX_DEADLINES)
                return fail(r, "more than %d deadline changes", SIM_MAX_DEADLINES);
            r->sc->deadlines[r->sc->n_deadlines++] = (sim_deadline_t){.block_ms = 250.0};
        }
        return 0;
    }
    return fail(r, "unknown table '%s'", name);
}

/* A value: a number (*num) or a quoted string (copied into str). */
typedef struct value {
    bool is_string;
    double num;
    char str[32];
} value_t;

static int parse_value(reader_t *r, const char *text, value_t *v)
{
    memset(v, 0, sizeof *v);
    size_t n = strlen(text);
    if (n >= 2 && text[0] == '"' && text[n - 1] == '"') {
        if (n - 2 >= sizeof v->str) return fail(r, "string too long");
        memcpy(v->str, text + 1, n - 2);
        v->is_string = true;
        return 0;
    }
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
        v->num = text[0] == 't';
        return 0;
    }
    char *end;
    errno = 0;
    v->num = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !isfinite(v->num))
        return fail(r, "bad value '%s' (a number or a \"string\")", text);
    return 0;
}

/* One known key: where its number goes and the range it must lie in. */
typedef struct field {
    const char *key;
    double *dst;
    double lo, hi;
} field_t;

static int set_number(reader_t *r, const field_t *f, size_t n, const char *key, const value_t *v)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].key, key) != 0) continue;
        if (v->is_string) return fail(r, "'%s' must be a number", key);
        if (v->num < f[i].lo || v->num > f[i].hi)
            return fail(r, "'%s' = %g is outside %g .. %g", key, v->num, f[i].lo, f[i].hi);
        *f[i].dst = v->num;
        return 0;
    }
    return fail(r, "unknown key '%s' here", key);
}

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static int set_top(reader_t *r, const char *key, const value_t *v)
{
    sim_scenario_t *sc = r->sc;
    if (strcmp(key, "seed") == 0) {
        if (v->is_string || v->num < 0 || v->num > 9007199254740991.0 || v->num != floor(v->num))
            return fail(r, "'seed' must be a non-negative integer");
        sc->seed = (uint64_t) v->num;
        return 0;
    }
    field_t f[] = {{"duration", &sc->duration_s, 0.001, 3600.0}};
    return set_number(r, f, NFIELDS(f), key, v);
}

static int set_source(reader_t *r, const char *key, const value_t *v)
{
    sim_source_t *s = &r->sc->sources[r->sc->n_sources - 1];
    if (strcmp(key, "kind") == 0) {
        if (v->is_string && strcmp(v->str, "speech") == 0)
            s->kind = SIM_SPEECH;
        else if (v->is_string && strcmp(v->str, "noise") == 0)
            s->kind = SIM_NOISE;
        else
            return fail(r, "'kind' must be \"speech\" or \"noise\"");
        return 0;
    }
    field_t f[] = {
        {"angle", &s->angle_deg, -360.0, 720.0},   {"start", &s->start_s, 0.0, 3600.0},
        {"duration", &s->duration_s, 0.0, 3600.0}, {"level_dbfs", &s->level_dbfs, -120.0, 0.0},
        {"distance", &s->distance_m, 0.0, 1000.0}, {"f0", &s->f0_hz, 0.0, 400.0}};
    return set_number(r, f, NFIELDS(f), key, v);
}

static int set_key(reader_t *r, const char *key, const value_t *v)
{
    sim_scenario_t *sc = r->sc;
    sim_fire_t *fire = sc->n_fires ? &sc->fires[sc->n_fires - 1] : NULL;
    switch (r->table) {
    case T_TOP:
        return set_top(r, key, v);
    case T_SOURCE:
        return set_source(r, key, v);
    case T_ARRAY: {
        field_t f[] = {{"side", &sc->side_m, 0.01, 10.0},
                       {"sample_rate", &sc->sample_rate_hz, 1000.0, 96000.0},
                       {"speed_of_sound", &sc->speed_of_sound, 100.0, 2000.0}};
        return set_number(r, f, NFIELDS(f), key, v);
    }
    case T_NOISE: {
        field_t f[] = {{"snr_db", &sc->snr_db, -30.0, 120.0},
                       {"reference_dbfs", &sc->reference_dbfs, -120.0, 0.0}};
        return set_number(r, f, NFIELDS(f), key, v);
    }
    case T_TEMPERATURE: {
        field_t f[] = {{"room", &sc->room_c, -40.0, 100.0},
                       {"noise", &sc->temp_noise_c, 0.0, 10.0}};
        return set_number(r, f, NFIELDS(f), key, v);
    }
    case T_FIRE: {
        field_t f[] = {{"time", &fire->time_s, 0.0, 3600.0},
                       {"rise", &fire->rise_c, 0.0, 1000.0},
                       {"tau", &fire->tau_s, 0.01, 3600.0}};
        return set_number(r, f, NFIELDS(f), key, v);
    }
    case T_DEADLINE: {
        sim_deadline_t *d = &sc->deadlines[sc->n_deadlines - 1];
        field_t f[] = {{"time", &d->time_s, 0.0, 3600.0}, {"block_ms", &d->block_ms, 1.0, 10000.0}};
        return set_number(r, f, NFIELDS(f), key, v);
    }
    }
    return fail(r, "internal: no table");
}

static int parse_line(reader_t *r, char *line)
{
    strip_comment(line);
    char *s = trim(line);
    size_t n = strlen(s);
    if (n == 0) return 0;
    r->defines = true;
    if (s[0] == '[') {
        bool array = n >= 4 && s[1] == '[' && s[n - 2] == ']' && s[n - 1] == ']';
        if (!array && s[n - 1] != ']') return fail(r, "unclosed table header");
        s[n - (array ? 2 : 1)] = '\0';
        return open_table(r, trim(s + (array ? 2 : 1)), array);
    }
    char *eq = strchr(s, '=');
    if (!eq) return fail(r, "expected 'key = value'");
    *eq = '\0';
    char *key = trim(s);
    value_t v;
    if (!*key) return fail(r, "missing key");
    if (parse_value(r, trim(eq + 1), &v)) return -1;
    return set_key(r, key, &v);
}

int sim_scenario_load(const char *path, sim_scenario_t *sc, char *err, size_t errlen)
{
    reader_t r = {.path = path, .line = 0, .table = T_TOP, .sc = sc, .err = err, .errlen = errlen};
    sim_scenario_defaults(sc);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[256];
    int status = 0;
    while (status == 0 && fgets(line, sizeof line, f)) {
        r.line++;
        if (!strchr(line, '\n') && !feof(f)) status = fail(&r, "line too long");
        if (status == 0) status = parse_line(&r, line);
    }
    fclose(f);
    /* Every key has a default, but a file that sets none is a wrong path or
     * an unsaved file, not a wish for 10 s of silence (the host's reader,
     * tools/motetlib/ssl_scenario.py, says the same). */
    if (status == 0 && !r.defines) {
        snprintf(err, errlen,
                 "scenario file %s defines nothing: no key and no table (an empty file, or only "
                 "comments); every default would run 10 s with no source and no fire",
                 path);
        return -1;
    }
    for (unsigned i = 0; status == 0 && i < sc->n_sources; i++) {
        double d = sc->sources[i].distance_m;
        if (d > 0 && d < sc->side_m) {
            r.line = 0;
            status = fail(&r, "source %u: 'distance' must be 0 (far) or at least the side", i + 1);
        }
    }
    return status;
}
