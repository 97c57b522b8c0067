/* SPDX-License-Identifier: MIT */
/*
 * A description file as a module program reads it (`--app-file`,
 * native_app_file_parse() in ports/native/module_native.c) on any bytes:
 * accepted, the description lies inside the bytes and within the kernel's
 * limit, and every name is a NUL-terminated string inside them, no more
 * names than there is room for; then the kernel's reader takes the
 * description as it would on the module.
 */
#include <string.h>

#include "appdesc.h"
#include "fuzz_support.h"
#include "native.h"

#define MAX_NAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_names(const char *const *names, unsigned n, const uint8_t *data, size_t size)
{
    const char *lo = (const char *) data, *hi = (const char *) data + size;
    for (unsigned k = 0; k < n; k++) {
        FUZZ_CHECK(names[k] >= lo && names[k] < hi);
        FUZZ_CHECK(memchr(names[k], '\0', (size_t) (hi - names[k])) != NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *names[MAX_NAMES];
    module_app_t app = {.name = "fuzz"};
    if (native_app_file_parse(data, size, &app, names, MAX_NAMES) != NULL) return 0;
    FUZZ_CHECK(app.desc == data && app.len <= size && app.len <= MOTET_APP_DESC_MAX);
    FUZZ_CHECK((unsigned) app.num_tasks + app.num_groups <= MAX_NAMES);
    check_names(app.tasks, app.num_tasks, data, size);
    check_names(app.groups, app.num_groups, data, size);
    appdesc_t d;
    (void) appdesc_parse(app.desc, app.len, &d);
    return 0;
}
