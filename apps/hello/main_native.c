/* SPDX-License-Identifier: MIT */
/*
 * The hello application as a native module (one Linux process).
 * `hello --sim --until 1` runs one simulated second deterministically;
 * `hello --realtime` runs on the wall clock until interrupted.
 */
#include "hello.h"
#include "hello_apps.h"
#include "motet/module.h"

int main(int argc, char **argv)
{
    const module_spec_t spec = {.name = "hello",
                                .register_programs = hello_register,
                                .apps = hello_apps,
                                .num_apps = HELLO_NUM_APPS};
    return module_main(&spec, argc, argv);
}
