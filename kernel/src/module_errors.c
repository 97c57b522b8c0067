/* SPDX-License-Identifier: MIT */
/*
 * Errors on the console (module.h, module_report_error()): an event-log
 * record of an error in words, naming the task as the description does.
 * Only a port that drains its log on the module itself links this (native):
 * the meanings are text that a microcontroller's flash need not carry.
 */
#include <stdio.h>

#include "module_internal.h"
#include "motet/module.h"
#include "motet/port.h"
#include "motet/program.h"

#if MOTET_APPMGR

/* What each mt_err_t means (types.h says the same beside each code). */
static const char *const meanings[MT_ERR_COUNT] = {
    [MT_OK] = "no error",
    [MT_ERR_INVALID] = "argument out of range",
    [MT_ERR_NO_TASK] = "no task with that pid",
    [MT_ERR_NO_PORT] = "no such input or output port",
    [MT_ERR_QUEUE_FULL] = "message pool exhausted",
    [MT_ERR_NO_MEM] = "heap exhausted",
    [MT_ERR_NO_SLAB] = "a metadata slab cache is exhausted",
    [MT_ERR_NO_TIMER] = "timer index beyond the four per task",
    [MT_ERR_DOUBLE_FREE] = "block or object already free",
    [MT_ERR_BAD_POINTER] = "pointer not from this allocator",
    [MT_ERR_EXISTS] = "pid already in use",
    [MT_ERR_STATE] = "operation not valid in the current state",
    [MT_ERR_NO_PROGRAM] = "no program with that id is registered on this module",
    [MT_ERR_NO_ROUTE] = "destination unreachable",
    [MT_ERR_DESC_HEADER] = "application description: bad header",
    [MT_ERR_DESC_LENGTH] = "application description: a length or offset outside it",
    [MT_ERR_DESC_TASK] = "application description: a bad task",
    [MT_ERR_DESC_ROUTE] = "application description: a bad output route",
    [MT_ERR_DESC_GROUP] = "application description: a bad multicast group",
    [MT_ERR_DESC_CHECKSUM] = "application description: checksum mismatch",
    [MT_ERR_BUS_CORRUPT] = "a bus frame failed its length or checksum check",
    [MT_ERR_BUS_DOWN] = "the destination module did not take a frame",
    [MT_ERR_NOT_MOVABLE] = "migration asked for a task that is not movable",
    [MT_ERR_NOT_OWNER] = "a task freed or resized a heap block it does not own",
    [MT_ERR_NO_MODULE] = "a task placed on a module the device does not have",
    [MT_ERR_BUS_LOST] = "an earlier message over this bus link was given up",
    [MT_ERR_TIMEOUT] = "a wait ended before what it waited for came",
    [MT_ERR_FULL] = "a queue, a semaphore or a module's migrations at once are at their limit",
};

static const char *meaning(uint8_t err)
{
    return err < MT_ERR_COUNT && meanings[err] ? meanings[err] : "unknown error";
}

static void print(const char *line, int n, size_t cap)
{
    if (n < 0) return;
    if ((size_t) n >= cap) n = (int) cap - 1;
    port_console_write(line, (size_t) n);
}

void module_report_error(const log_record_t *rec)
{
    if (rec->type != EV_ERROR && rec->type != EV_APPFAIL && rec->type != EV_DISAGREE &&
        rec->type != EV_INITFAIL)
        return;
    char line[256];
    uint64_t us = (uint64_t) rec->time * 1000000u / PORT_TICKS_PER_SECOND;
    unsigned long ms = (unsigned long) (us / 1000u), frac = (unsigned long) (us % 1000u);
    const module_app_t *app = module_current_app();
    if (rec->type == EV_APPFAIL) {
        uint8_t err = (uint8_t) (rec->arg >> 8), module = (uint8_t) rec->arg;
        const char *task = app && rec->pid < app->num_tasks ? app->tasks[rec->pid] : "?";
        print(line,
              snprintf(line, sizeof line,
                       "[%7lu.%03lu ms] ERR %s (%s): the application '%s' cannot load: "
                       "task '%s' (relative pid %u) on module %u\n",
                       ms, frac, mt_strerror((mt_err_t) err), meaning(err), app ? app->name : "?",
                       task, rec->pid, module),
              sizeof line);
        return;
    }
    if (rec->type == EV_DISAGREE) { /* its error follows, an ERROR of its own */
        print(line,
              snprintf(line, sizeof line,
                       "[%7lu.%03lu ms] ERR the application '%s', loaded here, failed on module %u "
                       "(load %u of module %u): the device disagrees\n",
                       ms, frac, app ? app->name : "?", rec->pid, rec->arg & 0xFFu, rec->arg >> 8),
              sizeof line);
        return;
    }
    uint8_t err = (uint8_t) rec->arg;
    if (rec->type == EV_INITFAIL && rec->pid >= MT_PID_SYSTEM) { /* the kernel halts the module */
        print(line,
              snprintf(line, sizeof line,
                       "[%7lu.%03lu ms] ERR %s (pid 0x%02x), a task of the kernel's own, could "
                       "not start (%s, %s): not created or its INIT failed, so the module halts\n",
                       ms, frac,
                       rec->pid == MT_PID_APPMGR ? "the application manager" : "the migrator",
                       rec->pid, mt_strerror((mt_err_t) err), meaning(err)),
              sizeof line);
        return;
    }
    const char *task = module_task_name(rec->pid);
    /* The log is drained as the module sleeps: a task whose INIT failed
     * has ended by then, and only the description still names its program. */
    const program_t *prog = sched_task_program(rec->pid);
    if (!prog) prog = module_task_program(rec->pid);
    if (rec->type == EV_INITFAIL) {
        print(line,
              snprintf(line, sizeof line,
                       "[%7lu.%03lu ms] ERR task '%s' (pid 0x%02x), program '%s', ended: its INIT "
                       "failed (%s), so it never runs (no FINAL; messages for it refused)\n",
                       ms, frac, task ? task : "?", rec->pid, prog && prog->name ? prog->name : "?",
                       mt_strerror((mt_err_t) err)),
              sizeof line);
        return;
    }
    char who[64];
    if (rec->pid == MT_PID_NONE)
        snprintf(who, sizeof who, "the kernel (no task running)");
    else if (rec->pid == MT_PID_APPMGR)
        snprintf(who, sizeof who, "the application manager (pid 0x%02x)", rec->pid);
    else
        snprintf(who, sizeof who, "task '%s' (pid 0x%02x), program '%s'", task ? task : "?",
                 rec->pid, prog && prog->name ? prog->name : "?");
    print(line,
          snprintf(line, sizeof line, "[%7lu.%03lu ms] ERR %s (%s) in %s\n", ms, frac,
                   mt_strerror((mt_err_t) err), meaning(err), who),
          sizeof line);
}

#endif /* MOTET_APPMGR */
