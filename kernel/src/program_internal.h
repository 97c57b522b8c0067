/* SPDX-License-Identifier: MIT */
/*
 * The program registry's lookups for the kernel (program.h is the public
 * side): the application manager finds a description's programs by id,
 * migration a task's program by its code and again by id on arrival.
 */
#ifndef MOTET_PROGRAM_INTERNAL_H
#define MOTET_PROGRAM_INTERNAL_H

#include "motet/program.h"

/* The program with this id, or NULL. */
const program_t *program_find(uint8_t id);
/* The program whose code is `handler`, or NULL (migration: the destination
 * finds the same program by its id). */
const program_t *program_find_handler(task_handler_t handler);

#endif /* MOTET_PROGRAM_INTERNAL_H */
