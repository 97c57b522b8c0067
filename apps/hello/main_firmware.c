/* SPDX-License-Identifier: MIT */
/*
 * The hello application as firmware: boot, load, run. Built with
 * HELLO_GREETINGS=n it halts (status 0) after the n-th greeting, so an
 * emulator run has an end; 0 runs forever.
 */
#include "hello.h"
#include "hello_apps.h"
#include "motet/module.h"

int main(void)
{
    const module_spec_t spec = {.name = "hello",
                                .register_programs = hello_register,
                                .apps = hello_apps,
                                .num_apps = HELLO_NUM_APPS};
    return module_main(&spec, 0, 0);
}
