/* SPDX-License-Identifier: MIT */
/*
 * The application manager's start-up, for boot (appmgr.h is the public
 * side).
 */
#ifndef MOTET_APPMGR_INTERNAL_H
#define MOTET_APPMGR_INTERNAL_H

#include "motet/appmgr.h"
#include "motet/config.h"

/* Priority of the manager: the top level, above every application task. */
#define APPMGR_PRIO ((mt_prio_t) (MOTET_PRIO_LEVELS - 1))

/* Create the manager task (pid MT_PID_APPMGR); boot, after sched_init(). */
mt_err_t appmgr_start(void);

#endif /* MOTET_APPMGR_INTERNAL_H */
