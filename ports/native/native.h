/* SPDX-License-Identifier: MIT */
/*
 * Native port extras: the controls a host program, a test or a benchmark
 * uses to drive a native module. Portable kernel code never includes this.
 *
 * A native module is a Linux process. Interrupts are POSIX signals that
 * really interrupt whatever is running (SIGALRM for the compare, SIGUSR1 for
 * external lines); disabling interrupts is a flag, and a signal that arrives
 * while it is set is held and taken when interrupts are enabled again, as a
 * microcontroller holds a pending interrupt.
 *
 * Two clocks. Simulated (default): the counter moves only when the module
 * sleeps (it jumps to the next event) or when a handler declares work with
 * port_native_busy(); runs are deterministic for a given seed. Real: the
 * counter is CLOCK_MONOTONIC in microseconds and sleep blocks the process.
 */
#ifndef PORT_NATIVE_H
#define PORT_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "motet/module.h"

#define NATIVE_IRQ_LINES 8

typedef void (*native_isr_fn)(void);

typedef struct native_options {
    bool realtime;          /* real clock instead of the simulated one */
    uint64_t seed;          /* seed of port_native_random() */
    uint64_t until_ticks;   /* sim: halt(0) when the clock reaches it; 0 = never */
    uint32_t counter_start; /* initial counter value (to exercise the wrap) */
    const char *log_path;   /* event log dump file (event_dump.c), NULL: none */
} native_options_t;

/* Parse --sim, --realtime, --seed N, --until SECONDS, --counter-start N, --log FILE
 * (decimal or 0x hex; also --name=VALUE) from argv into *opt, which starts
 * from the defaults; exits with a usage message on a bad argument. Unknown
 * arguments are left for the caller (returns argc of the remaining ones,
 * argv[0] included, compacted into argv). */
int port_native_parse_args(int argc, char **argv, native_options_t *opt);
/* Apply options; call before motet_boot() (defaults: sim, seed 1, start 0). */
void port_native_configure(const native_options_t *opt);

/* Module time: 64-bit ticks since configure or boot (never wraps). */
uint64_t port_native_time(void);
/* True when configured for the real clock. */
bool port_native_realtime(void);
/* Declare `ticks` of computation by the running code. Sim: the clock
 * advances and every interrupt that falls due meanwhile is delivered at its
 * exact tick, preempting the caller; time spent preempted does not count as
 * the caller's ticks. Real: spins for that long (wall clock). */
void port_native_busy(uint32_t ticks);
/* Total ticks spent in port_sleep() since configure or boot. */
uint64_t port_native_sleep_ticks(void);
/* Number of times port_sleep() was entered since configure or boot. */
uint32_t port_native_sleep_count(void);

/* Attach an interrupt service routine to external line 0..7. */
void port_native_irq_attach(uint8_t line, native_isr_fn isr);
/* Raise line now: a real signal, taken at once unless interrupts are off. */
void port_native_irq_raise(uint8_t line);
/* Raise line when the clock reaches `at` (absolute ticks; at once if it
 * has). Sim: exact. Real: polled by port_sleep() and port_native_busy(). */
void port_native_irq_schedule(uint8_t line, uint64_t at);

/* Open the event dump file (truncating it); NULL closes dumping. */
void native_event_dump_open(const char *path);
/* Drain the kernel's event ring into the dump file, if one is open. */
void native_event_dump_flush(void);
/* Flush and close the dump file. */
void native_event_dump_close(void);
/* Drain the ring at every flush and print its error records on the console
 * (module_report_error()), a dump file or not; module_main() turns it on. */
void native_event_report_errors(bool on);

/* Deterministic pseudo-random numbers (xorshift64*), seeded by options. */
uint64_t port_native_random(void);

/* ---- multi-module devices: the bus link (bus_native.c, docs/bus.md) ----
 *
 * Each module of a device is a process; a hub process models the bus and
 * keeps the simulated clocks of all modules coherent: a module's clock moves
 * only as far as the hub grants, so a frame from another module arrives as
 * an interrupt at its exact simulated tick. The bus interface is external
 * line NATIVE_BUS_LINE. */

#define NATIVE_BUS_LINE (NATIVE_IRQ_LINES - 1)

/* The time-grant hook: called before the simulated clock moves from `now`
 * towards `want` (UINT64_MAX: asleep with nothing scheduled). Returns where
 * the clock may move: above `now`, and at most `want` unless `sleeping`
 * (a module powered off meanwhile wakes later; what fell due is taken
 * late). It may schedule interrupts above `now` up to the time it returns
 * (port_native_irq_schedule), never raise one. NULL removes it; reset by
 * boot. */
typedef uint64_t (*native_grant_fn)(uint64_t now, uint64_t want, bool sleeping);
void port_native_set_grant_hook(native_grant_fn fn);

typedef struct native_bus_options {
    const char *socket;      /* the hub's Unix socket; NULL: no bus */
    uint8_t module;          /* this module's bus address */
    uint32_t frame_ns;       /* CPU time per frame sent or received */
    uint32_t byte_ns;        /* CPU time per byte copied to or from the bus */
    uint8_t timesync_window; /* pairs of the time-sync fit; 0: the default */
} native_bus_options_t;

/* Parse --bus PATH, --module N, --bus-frame-ns N, --bus-byte-ns N,
 * --timesync-window N like port_native_parse_args() (defaults: no bus,
 * module 0, no CPU cost); returns the remaining argc. */
int port_native_bus_parse_args(int argc, char **argv, native_bus_options_t *opt);
/* After motet_boot(): connect to the hub, learn the device's modules, take
 * the bus interrupt line and the grant hook, and bus_start(). Exits with
 * status 2 and a message if the hub cannot be reached or the clock is the
 * real one (the link is driven by the simulated clock). Nothing without a
 * socket. At the end of the run (the hub says so) the module prints its bus
 * counters and halts with status 0. */
void port_native_bus_start(const native_bus_options_t *opt);
/* True once port_native_bus_start() connected. */
bool port_native_bus_connected(void);
/* Port internal: forget pending bus events and test hooks; port_init(). */
void native_bus_reset(void);

/* Tests without a hub: frames given to port_bus_send() go to `fn` instead,
 * and the test plays the interface with the two calls below (each an
 * interrupt on NATIVE_BUS_LINE at absolute tick `at`). NULL: back to the
 * hub. Needs MOTET_BUS. */
typedef void (*native_bus_tx_fn)(const uint8_t *frame, uint16_t n);
void port_native_bus_capture(native_bus_tx_fn fn);
/* A frame arrives at `at`; `*accepted` (if not NULL) gets the kernel's
 * answer once it is taken. */
void port_native_bus_inject_rx(const uint8_t *frame, uint16_t n, uint64_t at, bool *accepted);
/* The frame in the interface ends with `result` at `at`. */
void port_native_bus_inject_tx_done(uint8_t result, uint64_t at);
/* A message from the device's host (the hub's side, e.g. a planner asking
 * for migrations while the device runs), taken in the bus interrupt at the
 * tick the hub chose. */
typedef void (*native_host_fn)(const uint8_t *msg, uint16_t len);
/* Hand the host's messages to `fn` (NULL: ignore them). */
void port_native_bus_on_host(native_host_fn fn);

/* ---- module programs (module_native.c; module.h's module_main()) ----
 *
 * module_main() on this port is these steps in this order; a program that
 * needs its own main (apps/ssl/main_device.c) calls them itself:
 *
 *     native_module_parse_args, [its own options], native_module_pick_app,
 *     native_module_boot, [its registrations], port_native_bus_start,
 *     native_module_load, sched_run
 */

typedef struct native_module {
    native_options_t opt;     /* port_native_parse_args() */
    native_bus_options_t bus; /* port_native_bus_parse_args() */
    bool loader;              /* --loader: this module loads the description */
    const char *app_name;     /* --app NAME: a built-in description; NULL: the first */
    const char *app_file;     /* --app-file FILE: a compiled one (motet appc -o F --names) */
} native_module_t;

/* ---- the cost of a handler run (handler_cost.c) ----
 *
 * The native port does not measure code: a handler takes no simulated time
 * unless it declares its work with port_native_busy(). A module program
 * (module_main()) charges each handler run a cost instead: `--handler-us
 * N` for every task, `--task-us NAME=N` for the task NAME of the
 * description (its name there); `motet run` passes the device file's
 * handler_us and task_us. Emulated modules (Cortex-M, AVR) run real code
 * and are charged real cycles. */

/* Microseconds charged after every handler run of a task without its own. */
void native_handler_cost_default(uint32_t us);
/* "NAME=US": the cost of task NAME's runs; 0, or -1 if malformed or full. */
int native_handler_cost_task(const char *spec);
/* The cost charged for a run of task `pid`, in microseconds. */
uint32_t native_handler_cost_us(mt_pid_t pid);
/* After the programs are registered: wraps them so that each run is
 * charged (nothing to do at zero cost); -1 if there are too many. At the
 * module's exit, warns on its console of each --task-us name that matched
 * no handler run here and no task of its application. */
int native_handler_cost_apply(void);

/* Takes the port's and the bus's options out of argv into m; returns how
 * many arguments are left, argv[0 .. n-1]. */
int native_module_parse_args(int argc, char **argv, native_module_t *m);
/* Takes argv[*i] (and its value) if it is a module program's option:
 * --loader, --app NAME, --app-file FILE, --handler-us N, --task-us NAME=N:
 * 1 if taken, 0 if not one of them, -1 for a bad value (argv[*i] is the
 * value). --sensor S is the program's own (module_main() refuses it for a
 * program that simulates no sensors). */
int native_module_option(native_module_t *m, int argc, char **argv, int *i);
/* Configures the port, has errors reported on the console, and boots. */
void native_module_boot(const native_module_t *m);
/* True on the module that loads the description: the device's loader, or
 * a module alone (no --bus), which must load it itself. */
bool native_module_loads(const native_module_t *m);
/* The bytes of a description file (`motet appc X.toml -o X.bin --names`:
 * the binary description, then optionally "MTNM", u8 tasks, u8 groups and
 * that many NUL-terminated names) into *app, whose desc and names point
 * into bytes and names[0 .. max_names-1] (its name is left alone); NULL,
 * or why the bytes are refused. The kernel validates the description. */
const char *native_app_file_parse(const uint8_t *bytes, size_t n, module_app_t *app,
                                  const char **names, size_t max_names);
/* Picks the description (--app-file, --app NAME or apps[0]) into *app
 * (NULL: the program has none): 0, or 2 after printing "PROG: ..." with the
 * reason (a file it cannot read, a name no description has). Called before
 * port_native_bus_start(), so that a module refusing its arguments exits
 * before it joins the bus. */
int native_module_pick_app(const native_module_t *m, const char *prog,
                           const module_app_t *const *apps, uint8_t num_apps,
                           const module_app_t **app);
/* Uses `app` (native_module_pick_app(); NULL: nothing) for names and loads
 * it if this module loads it: 0, or 1 after printing "PROG: ..." with the
 * reason. */
int native_module_load(const native_module_t *m, const char *prog, const module_app_t *app);

#endif /* PORT_NATIVE_H */
