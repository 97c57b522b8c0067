/* SPDX-License-Identifier: MIT */
#include "motet/program.h"
#include "program_internal.h"

static const program_t *programs;
static uint8_t program_count;

void program_register(const program_t *table, uint8_t n)
{
    programs = table;
    program_count = n;
}

const program_t *program_table(uint8_t *n)
{
    *n = program_count;
    return programs;
}

const program_t *program_find(uint8_t id)
{
    for (uint8_t i = 0; i < program_count; i++)
        if (programs[i].id == id) return &programs[i];
    return NULL;
}

const program_t *program_find_handler(task_handler_t handler)
{
    for (uint8_t i = 0; i < program_count; i++)
        if (programs[i].handler == handler) return &programs[i];
    return NULL;
}
