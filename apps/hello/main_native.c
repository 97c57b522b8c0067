/* SPDX-License-Identifier: MIT */
/*
 * The hello application as a native module (one Linux process).
 * `hello --sim --until 1` runs one simulated second deterministically;
 * `hello --realtime` runs on the wall clock until interrupted.
 */
#include <stdio.h>

#include "hello.h"
#include "motet/motet.h"
#include "native.h"

int main(int argc, char **argv)
{
    native_options_t opt;
    int rest = port_native_parse_args(argc, argv, &opt);
    if (rest > 1) {
        fprintf(stderr, "hello: unknown argument '%s'\n", argv[1]);
        return 2;
    }
    port_native_configure(&opt);
    motet_boot();
    mt_err_t err = hello_start();
    if (err) {
        fprintf(stderr, "hello: cannot start the application: %s\n", mt_strerror(err));
        return 1;
    }
    sched_run();
    return 0;
}
