/* SPDX-License-Identifier: MIT */
/*
 * The hello application as firmware: boot, load, run. Built with
 * HELLO_GREETINGS=n it halts (status 0) after the n-th greeting, so an
 * emulator run has an end; 0 runs forever.
 */
#include "hello.h"
#include "motet/motet.h"
#include "motet/port.h"

int main(void)
{
    motet_boot();
    mt_err_t err = hello_start();
    if (err) port_halt(1);
    sched_run();
    return 0;
}
