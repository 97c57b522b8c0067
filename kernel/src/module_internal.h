/* SPDX-License-Identifier: MIT */
/*
 * What the module's own files share beyond module.h's API: the console's
 * error lines (module_errors.c) read the description (module.c).
 */
#ifndef MOTET_MODULE_INTERNAL_H
#define MOTET_MODULE_INTERNAL_H

#include "motet/program.h"
#include "motet/types.h"

/* The program the current description gives the task with device pid
 * `pid`, if this module has it, whether the task lives or has ended; NULL
 * otherwise. */
const program_t *module_task_program(mt_pid_t pid);

#endif /* MOTET_MODULE_INTERNAL_H */
