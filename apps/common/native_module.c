/* SPDX-License-Identifier: MIT */
/*
 * The start every native module program shares (native_module.h): written
 * once so that the programs agree on their options and on which module
 * loads the description.
 */
#include "native_module.h"

#include <stdio.h>
#include <string.h>

#include "motet/motet.h"

int native_module_parse_args(int argc, char **argv, native_module_t *m)
{
    int rest = port_native_parse_args(argc, argv, &m->opt);
    m->loader = false;
    m->app = NULL;
    return port_native_bus_parse_args(rest, argv, &m->bus);
}

static const native_module_app_t *find_app(const native_module_app_t *apps, size_t n_apps,
                                           const char *name)
{
    for (size_t i = 0; i < n_apps; i++)
        if (strcmp(apps[i].name, name) == 0) return &apps[i];
    return NULL;
}

int native_module_app_option(native_module_t *m, const char *prog, const native_module_app_t *apps,
                             size_t n_apps, int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--loader") == 0) {
        m->loader = true;
    } else if (strcmp(argv[*i], "--app") == 0 && *i + 1 < argc) {
        m->app = find_app(apps, n_apps, argv[++*i]);
        if (!m->app) {
            fprintf(stderr, "%s: no application '%s'\n", prog, argv[*i]);
            return -1;
        }
    } else if (strcmp(argv[*i], "--sensor") == 0 && *i + 1 < argc) {
        ++*i; /* recorded by the device file; simulated sensors come with apps/ssl */
    } else {
        return 0;
    }
    return 1;
}

void native_module_boot(const native_module_t *m)
{
    port_native_configure(&m->opt);
    motet_boot();
}

bool native_module_loads(const native_module_t *m)
{
    return m->loader || !m->bus.socket;
}

int native_module_load_app(const native_module_t *m, const char *prog)
{
    if (!native_module_loads(m)) return 0;
    mt_err_t err = bus_app_load(m->app->desc, *m->app->len);
    if (err) {
        fprintf(stderr, "%s: cannot load '%s': %s\n", prog, m->app->name, mt_strerror(err));
        return 1;
    }
    return 0;
}
