/* SPDX-License-Identifier: MIT */
/*
 * Flat cycle profile of a firmware image: every executed instruction's
 * cycles are charged to the function that holds it (the nearest code symbol
 * at or below its address, from the image's symbol table). sim.c decides
 * when cycles count (a whole run, or only while a gate pin is high).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

typedef struct func {
    uint32_t addr;
    const char *name;
    uint64_t cycles;
} func_t;

static func_t *funcs;
/* Per instruction word (byte address / 2): cycles and executions. The
 * largest AVR flash is 256 KiB. */
#define PC_WORDS (256u * 1024u / 2u)
static uint64_t pc_cycles[PC_WORDS];
static uint32_t pc_runs[PC_WORDS];
static size_t n_funcs;
static uint64_t unknown_cycles;

/* Symbols that name no code: section bounds, region sizes, linker marks. */
static bool is_code_symbol(const avr_symbol_t *s, uint32_t flash_end)
{
    const char *n = s->symbol;
    size_t len = strlen(n);
    if (s->addr >= flash_end || len == 0) return false;
    if (len >= 2 && n[len - 1] == '_' && n[len - 2] == '_') return false; /* __x__ */
    return strncmp(n, "__", 2) != 0 || strcmp(n, "__vectors") == 0 ||
           strncmp(n, "__vector_", 9) == 0 || strncmp(n, "__udiv", 6) == 0 ||
           strncmp(n, "__div", 5) == 0 || strncmp(n, "__mul", 5) == 0 ||
           strncmp(n, "__umul", 6) == 0 || strncmp(n, "__do_", 5) == 0;
}

static int func_cmp(const void *a, const void *b)
{
    const func_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int profile_init(const elf_firmware_t *fw)
{
    funcs = calloc(fw->symbolcount ? fw->symbolcount : 1, sizeof *funcs);
    if (!funcs) return -1;
    for (uint32_t i = 0; i < fw->symbolcount; i++) {
        const avr_symbol_t *s = fw->symbol[i];
        if (is_code_symbol(s, fw->flashsize)) funcs[n_funcs++] = (func_t){s->addr, s->symbol, 0};
    }
    qsort(funcs, n_funcs, sizeof *funcs, func_cmp);
    return 0;
}

void profile_add(uint32_t pc, uint64_t cycles)
{
    if (pc / 2u < PC_WORDS) {
        pc_cycles[pc / 2u] += cycles;
        pc_runs[pc / 2u]++;
    }
    size_t lo = 0, hi = n_funcs; /* last function at or below pc */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (funcs[mid].addr <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        unknown_cycles += cycles;
    else
        funcs[lo - 1].cycles += cycles;
}

/* The function holding byte address pc, by address (before the sort by
 * cycles in profile_write()). */
static const char *func_at(uint32_t pc)
{
    const char *name = "(no symbol)";
    for (size_t i = 0; i < n_funcs && funcs[i].addr <= pc; i++) name = funcs[i].name;
    return name;
}

int profile_write_pcs(const char *path, const char *what)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "# motet-simavr profile: cycles and executions per instruction, %s\n", what);
    fprintf(f, "# address cycles executions function\n");
    for (uint32_t w = 0; w < PC_WORDS; w++)
        if (pc_runs[w])
            fprintf(f, "0x%05x %llu %lu %s\n", (unsigned) (w * 2u),
                    (unsigned long long) pc_cycles[w], (unsigned long) pc_runs[w], func_at(w * 2u));
    return fclose(f);
}

static int cycles_cmp(const void *a, const void *b)
{
    const func_t *x = a, *y = b;
    return x->cycles > y->cycles ? -1 : x->cycles < y->cycles;
}

int profile_write(const char *path, const char *what)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    qsort(funcs, n_funcs, sizeof *funcs, cycles_cmp);
    uint64_t total = unknown_cycles;
    for (size_t i = 0; i < n_funcs; i++) total += funcs[i].cycles;
    fprintf(f, "# motet-simavr profile: cycles (self) per function, %s\n", what);
    fprintf(f, "# %llu cycles in all\n", (unsigned long long) total);
    for (size_t i = 0; i < n_funcs && funcs[i].cycles; i++)
        fprintf(f, "%12llu %6.2f%%  %s\n", (unsigned long long) funcs[i].cycles,
                100.0 * (double) funcs[i].cycles / (double) (total ? total : 1), funcs[i].name);
    if (unknown_cycles)
        fprintf(f, "%12llu %6.2f%%  (no symbol)\n", (unsigned long long) unknown_cycles,
                100.0 * (double) unknown_cycles / (double) (total ? total : 1));
    return fclose(f);
}
