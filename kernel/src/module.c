/* SPDX-License-Identifier: MIT */
/*
 * The description a module program uses (module.h): which one, and its
 * task and group names mapped to device ids once the manager loaded it.
 */
#include <string.h>

#include "appdesc.h"
#include "module_internal.h"
#include "motet/appmgr.h"
#include "motet/bus.h"
#include "motet/module.h"
#include "motet/program.h"
#include "program_internal.h"

#if MOTET_APPMGR

/* The description this module uses: one per module program, chosen at
 * start (module_use_app()) and read by every name lookup after. */
static const module_app_t *current;

const module_app_t *module_find_app(const module_spec_t *spec, const char *name)
{
    for (uint8_t i = 0; i < spec->num_apps; i++)
        if (strcmp(spec->apps[i]->name, name) == 0) return spec->apps[i];
    return NULL;
}

mt_err_t module_use_app(const module_app_t *app, bool load)
{
    current = app;
    if (!load) return MT_OK;
    return bus_app_load(app->desc, app->len); /* without the bus up, the manager's alone */
}

const module_app_t *module_current_app(void)
{
    return current;
}

/* Relative id of `name` among n names, or n. */
static uint8_t find_name(const char *const *names, uint8_t n, const char *name)
{
    uint8_t i = 0;
    while (i < n && !(names[i] && strcmp(names[i], name) == 0)) i++;
    return i;
}

/* The manager's outcome of the current description: NULL unless loaded. */
static const appmgr_result_t *loaded(void)
{
    const appmgr_result_t *r = appmgr_last_result();
    return current && r->err == MT_OK && r->pid_base >= MT_PID_FIRST_APP ? r : NULL;
}

mt_pid_t module_task_pid(const char *name)
{
    const appmgr_result_t *r = loaded();
    if (!r || !name) return MT_PID_INVALID;
    uint8_t rel = find_name(current->tasks, current->num_tasks, name);
    return rel < current->num_tasks ? (mt_pid_t) (r->pid_base + rel) : MT_PID_INVALID;
}

uint8_t module_group_id(const char *name)
{
    const appmgr_result_t *r = loaded();
    if (!r || !name) return MODULE_NO_GROUP;
    uint8_t rel = find_name(current->groups, current->num_groups, name);
    return rel < current->num_groups ? (uint8_t) (r->group_base + rel) : MODULE_NO_GROUP;
}

const char *module_task_name(mt_pid_t pid)
{
    const appmgr_result_t *r = loaded();
    if (!r || pid < r->pid_base || pid - r->pid_base >= current->num_tasks) return NULL;
    return current->tasks[pid - r->pid_base];
}

/* From the description, not the task table: the console reports a
 * failed INIT's error after the task has ended (module_errors.c). */
const program_t *module_task_program(mt_pid_t pid)
{
    const appmgr_result_t *r = loaded();
    appdesc_t d;
    if (!r || pid < r->pid_base || pid - r->pid_base >= current->num_tasks ||
        appdesc_parse(current->desc, current->len, &d) != MT_OK)
        return NULL;
    for (uint8_t i = 0; i < d.num_tasks; i++) {
        appdesc_task_t t;
        appdesc_task(&d, i, &t);
        if (t.rel_pid == pid - r->pid_base) return program_find(t.prog_id);
    }
    return NULL;
}

#endif /* MOTET_APPMGR */
