/* SPDX-License-Identifier: MIT */
/*
 * motet-profile: a TCG plugin that counts how often each guest instruction
 * runs inside a window of the run, counted in guest instructions from the
 * start, which under `-icount shift=0` is virtual time in ns. A benchmark
 * whose scenarios run one after the other for a fixed virtual time (the
 * Thread-Metric suites, bench/cortex-m) is profiled scenario by scenario
 * by choosing the window; the per-instruction counts, divided by the
 * scenario's iterations in the window, give an iteration's breakdown.
 *
 *     -plugin motet-profile.so,from=N,to=M,out=FILE
 *
 * FILE gets one "ADDRESS COUNT" line (hexadecimal, decimal) per instruction
 * that ran in [N, M), then "# instructions T" (all counted, window or not);
 * QEMU stops at M. Counting is per translation block, at its start: a block
 * left early by an exception counts whole, so the figures are exact for
 * straight-line code and may count a few instructions too many around
 * exceptions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu_plugin_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* One translated block: its instructions' addresses and its runs. */
typedef struct block {
    struct block *next;
    uint64_t runs;
    size_t n;
    uint64_t pc[];
} block_t;

static block_t *blocks;
static uint64_t executed, from, to = UINT64_MAX;
static const char *out_path = "motet-profile.txt";

static void write_profile(qemu_plugin_id_t id, void *userdata)
{
    (void) id;
    (void) userdata;
    FILE *f = fopen(out_path, "w");
    if (!f) {
        perror(out_path);
        return;
    }
    for (const block_t *b = blocks; b; b = b->next)
        for (size_t i = 0; b->runs && i < b->n; i++)
            fprintf(f, "%llx %llu\n", (unsigned long long) b->pc[i], (unsigned long long) b->runs);
    fprintf(f, "# instructions %llu\n", (unsigned long long) executed);
    fclose(f);
}

static void ran(unsigned int vcpu, void *userdata)
{
    (void) vcpu;
    block_t *b = userdata;
    if (executed >= from && executed < to) b->runs++;
    executed += b->n;
    if (executed >= to) {
        write_profile(0, NULL);
        _exit(0);
    }
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void) id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    block_t *b = calloc(1, sizeof *b + n * sizeof b->pc[0]);
    if (!b) {
        fprintf(stderr, "motet-profile: out of memory\n");
        _exit(1);
    }
    b->n = n;
    for (size_t i = 0; i < n; i++)
        b->pc[i] = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
    b->next = blocks;
    blocks = b;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, ran, QEMU_PLUGIN_CB_NO_REGS, b);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    (void) info;
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "from=", 5)) {
            from = strtoull(argv[i] + 5, NULL, 0);
        } else if (!strncmp(argv[i], "to=", 3)) {
            to = strtoull(argv[i] + 3, NULL, 0);
        } else if (!strncmp(argv[i], "out=", 4)) {
            out_path = argv[i] + 4;
        } else {
            fprintf(stderr, "motet-profile: bad argument '%s'\n", argv[i]);
            return 1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, write_profile, NULL);
    return 0;
}
