/* SPDX-License-Identifier: MIT */
/*
 * The application manager: the highest-priority system task. It takes a
 * binary application description (docs/app-format.md) on its PORT_0, validates it,
 * maps relative task and group ids to device ids, and then, in two stages,
 * creates every local task, remote control block and local group membership,
 * and only then initialises the local tasks. If any step fails, everything
 * this description created is removed again and the error is logged. The
 * first stage sets aside what the second needs (a message block per local
 * task, and heap room for an init string a block cannot hold), so that no
 * INIT fails for want of either. An INIT can still be refused for a task
 * killed, or sent its INIT by another, between the stages: that error is
 * the load's outcome (logged), the other tasks are initialised. Across
 * modules, a frame the bus loses can leave modules disagreeing about one
 * load (docs/bus.md, Application loading).
 *
 * Before it creates anything, every module checks that each task is placed
 * on a module of the device (bus_modules(): the modules the bus was started
 * with, this module alone without a bus), MT_ERR_NO_MODULE, and that each
 * task placed here runs a registered program, MT_ERR_NO_PROGRAM. A failure
 * that concerns one task is logged with an EV_APPFAIL record naming the
 * task's relative pid and its module, on every module of the device.
 */
#ifndef MOTET_APPMGR_H
#define MOTET_APPMGR_H

#include "motet/sched.h"

/* appmgr_result_t.bad_task of a failure that concerns no single task. */
#define APPMGR_NO_TASK 0xFFu

typedef struct appmgr_result {
    mt_err_t err;           /* outcome of the last description */
    uint16_t bad_offset;    /* for MT_ERR_DESC_*: the offending byte */
    mt_pid_t pid_base;      /* device pid of relative pid 0 */
    uint8_t group_base;     /* device group of relative group 0 */
    uint8_t created;        /* local tasks created */
    uint8_t bad_task;       /* relative pid the error is about, or APPMGR_NO_TASK */
    mt_module_t bad_module; /* that task's module (when bad_task is one) */
} appmgr_result_t;

/* Hand a description to the manager (a message to its PORT_0); task
 * context or boot. The outcome is in appmgr_last_result() once handled.
 * With the bus started, the device's load: bus_app_load() (bus.h). */
mt_err_t appmgr_load(const uint8_t *desc, uint16_t len);
/* Outcome of the most recent description handled. A description refused
 * while a load is in progress (MT_ERR_STATE, logged; appmgr_load()
 * returns it with the bus started) is not recorded: the record is that
 * load's, which its verdict still writes. */
const appmgr_result_t *appmgr_last_result(void);

#endif /* MOTET_APPMGR_H */
