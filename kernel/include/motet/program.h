/* SPDX-License-Identifier: MIT */
/*
 * Program registry: the code images a module can instantiate as tasks.
 * An application description names programs by id; each module's firmware
 * registers the programs it carries (a const table, normally in ROM).
 *
 * Example:
 *
 *     static const program_t my_programs[] = {
 *         {.id = 1, .name = "timer", .handler = timer_task, .state_size = 8},
 *     };
 *     program_register(my_programs, 1);
 */
#ifndef MOTET_PROGRAM_H
#define MOTET_PROGRAM_H

#include "motet/sched.h"
#include "motet/state_layout.h"

typedef struct program {
    uint8_t id;
    const char *name;
    task_handler_t handler;
    uint16_t state_size;
    /* NULL: the task serialises its state itself (PORT_SERIALIZE); else
     * the kernel moves it in this layout (motet/state_layout.h). */
    const state_layout_t *layout;
} program_t;

/* Use `table` (n entries, ids unique) as this module's programs. */
void program_register(const program_t *table, uint8_t n);
/* The registered table, its size in *n (NULL and 0 before a registration). */
const program_t *program_table(uint8_t *n);

/* The program the local task `pid` runs, or NULL (no such task, or its
 * handler is not a registered program): for diagnostics, which name tasks. */
const program_t *sched_task_program(mt_pid_t pid);

#endif /* MOTET_PROGRAM_H */
