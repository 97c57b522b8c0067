/* SPDX-License-Identifier: MIT */
/*
 * say(): one console line with the module's time in front, for the test
 * programs of multi-module devices (apps/pingpong, apps/migrate), whose
 * tests follow messages and tasks from module to module by these times:
 *
 *     [     12.345 ms] pong 0x11: seq 3 sent 12.100 in order
 */
#ifndef APPS_SAY_H
#define APPS_SAY_H

/* Prints the kernel time in ms, then printf(fmt, ...), as one line
 * through port_console_write(): cut to 158 characters before its newline. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* APPS_SAY_H */
