/* SPDX-License-Identifier: MIT */
/*
 * What a handler run costs in simulated time on the native port (native.h).
 *
 * The native port does not measure code: a handler runs in zero simulated
 * time unless something declares its work (port_native_busy()). So that the
 * preemptions and latencies of an application look like a device's, a
 * module program charges every handler run a cost: a default, and one per
 * task by the name its description gives it. The programs' handlers are
 * wrapped, once registered, by trampolines that run the handler and then
 * declare the cost of the task that ran; a program table keeps its ids and
 * names, so descriptions and migrations find the same programs.
 *
 * A misspelt task name would cost nothing and say nothing, so each cost
 * remembers whether a handler run matched it, and the module names, when
 * it halts, each one that matched no run here and no task of the
 * application it knows. Tasks arrive with loads and migrations, so no
 * check at start-up could tell; a task of the application placed on
 * another module is no mistake (every module gets the device's costs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "motet/motet.h"
#include "native.h"

#define COST_PROGRAMS 32 /* trampolines: programs of one module */
#define COST_TASKS    32 /* per-task costs */

static struct {
    uint32_t default_us;
    struct {
        char name[24];
        uint32_t us;
        bool matched; /* a handler run here was this task's */
    } task[COST_TASKS];
    uint8_t n_tasks;
    program_t wrapped[COST_PROGRAMS];
    task_handler_t real[COST_PROGRAMS];
} C;

void native_handler_cost_default(uint32_t us)
{
    C.default_us = us;
}

int native_handler_cost_task(const char *spec)
{
    const char *eq = strchr(spec, '=');
    char *end;
    unsigned long us = eq ? strtoul(eq + 1, &end, 0) : 0;
    size_t n = eq ? (size_t) (eq - spec) : 0;
    if (!eq || n == 0 || n >= sizeof C.task[0].name || *end || eq[1] == '-' || us > 10000000ul)
        return -1;
    if (C.n_tasks == COST_TASKS) return -1;
    memcpy(C.task[C.n_tasks].name, spec, n);
    C.task[C.n_tasks].name[n] = '\0';
    C.task[C.n_tasks++].us = (uint32_t) us;
    return 0;
}

uint32_t native_handler_cost_us(mt_pid_t pid)
{
    const char *name = module_task_name(pid);
    for (uint8_t i = 0; name && i < C.n_tasks; i++)
        if (strcmp(C.task[i].name, name) == 0) {
            C.task[i].matched = true;
            return C.task[i].us;
        }
    return C.default_us;
}

static bool in_application(const module_app_t *app, const char *name)
{
    for (uint8_t k = 0; app && app->tasks && k < app->num_tasks; k++)
        if (app->tasks[k] && strcmp(app->tasks[k], name) == 0) return true;
    return false;
}

/* atexit(): every halt of a module program ends in exit() (port_halt()). */
static void warn_unmatched(void)
{
    const module_app_t *app = module_current_app();
    for (uint8_t i = 0; i < C.n_tasks; i++) {
        if (C.task[i].matched || in_application(app, C.task[i].name)) continue;
        if (app)
            module_say("warning: --task-us %s=%lu matched no task that ran on this module nor "
                       "any task of the application '%s'",
                       C.task[i].name, (unsigned long) C.task[i].us, app->name);
        else
            module_say("warning: --task-us %s=%lu matched no task that ran on this module",
                       C.task[i].name, (unsigned long) C.task[i].us);
    }
}

static mt_err_t charged(uint8_t k, void *state, mt_port_t port, void *data, uint16_t len)
{
    mt_pid_t me = sched_current_pid();
    mt_err_t result = C.real[k](state, port, data, len);
    uint32_t us = native_handler_cost_us(me);
    if (us) port_native_busy((uint32_t) ((uint64_t) us * PORT_TICKS_PER_SECOND / 1000000u));
    return result;
}

/* One trampoline per slot k of the wrapped table: C has no closures. */
#define TRAMPOLINE(k)                                                                              \
    static mt_err_t trampoline_##k(void *state, mt_port_t port, void *data, uint16_t len)          \
    {                                                                                              \
        return charged(k, state, port, data, len);                                                 \
    }
TRAMPOLINE(0)
TRAMPOLINE(1)
TRAMPOLINE(2)
TRAMPOLINE(3)
TRAMPOLINE(4)
TRAMPOLINE(5)
TRAMPOLINE(6)
TRAMPOLINE(7)
TRAMPOLINE(8)
TRAMPOLINE(9)
TRAMPOLINE(10)
TRAMPOLINE(11)
TRAMPOLINE(12)
TRAMPOLINE(13)
TRAMPOLINE(14)
TRAMPOLINE(15)
TRAMPOLINE(16)
TRAMPOLINE(17)
TRAMPOLINE(18)
TRAMPOLINE(19)
TRAMPOLINE(20)
TRAMPOLINE(21)
TRAMPOLINE(22)
TRAMPOLINE(23)
TRAMPOLINE(24)
TRAMPOLINE(25)
TRAMPOLINE(26)
TRAMPOLINE(27)
TRAMPOLINE(28)
TRAMPOLINE(29)
TRAMPOLINE(30)
TRAMPOLINE(31)

static const task_handler_t trampolines[COST_PROGRAMS] = {
    trampoline_0,  trampoline_1,  trampoline_2,  trampoline_3,  trampoline_4,  trampoline_5,
    trampoline_6,  trampoline_7,  trampoline_8,  trampoline_9,  trampoline_10, trampoline_11,
    trampoline_12, trampoline_13, trampoline_14, trampoline_15, trampoline_16, trampoline_17,
    trampoline_18, trampoline_19, trampoline_20, trampoline_21, trampoline_22, trampoline_23,
    trampoline_24, trampoline_25, trampoline_26, trampoline_27, trampoline_28, trampoline_29,
    trampoline_30, trampoline_31,
};

int native_handler_cost_apply(void)
{
    /* A name costing 0 is wrapped too, so that its runs are seen. */
    bool any = C.default_us != 0 || C.n_tasks != 0;
    uint8_t n;
    const program_t *table = program_table(&n);
    if (C.n_tasks) atexit(warn_unmatched);
    if (!any || !table) return 0;
    if (n > COST_PROGRAMS) {
        fprintf(stderr, "handler costs: %u programs, at most %u\n", n, COST_PROGRAMS);
        return -1;
    }
    for (uint8_t k = 0; k < n; k++) {
        C.wrapped[k] = table[k];
        C.real[k] = table[k].handler;
        C.wrapped[k].handler = trampolines[k];
    }
    program_register(C.wrapped, n);
    return 0;
}
