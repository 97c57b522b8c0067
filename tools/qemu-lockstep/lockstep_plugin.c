/* SPDX-License-Identifier: MIT */
/*
 * motet-lockstep: a TCG plugin that parks QEMU's virtual CPU at chosen
 * code addresses until the process driving QEMU lets it go on. The
 * Cortex-M lock-step adapter (tools/motetlib/qemu_module.py) names the
 * port's fence, doorbell and idle functions and the reset handler
 * (ports/cortex-m/clock.c, bus.c, sleep.c):
 * parked, the guest's time stands still while the adapter reads and writes
 * it through qtest, which answers meanwhile. It also parks before the
 * first instruction, so that the adapter sets the module up first.
 *
 *     -plugin motet-lockstep.so,pcs=ADDR[:ADDR...],park=FIFO,resume=FIFO
 *
 * Parking writes "P<i>\n" (i: the index of the address in pcs; S for the
 * start) to `park` and waits for one byte on `resume`. If the adapter goes
 * away, QEMU exits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu_plugin_api.h"

#define PCS_MAX 8

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t pcs[PCS_MAX];
static unsigned n_pcs;
static int park_fd = -1, resume_fd = -1;
static bool started;

static void park(char what)
{
    char line[4] = {'P', what, '\n', 0};
    char go;
    if (write(park_fd, line, 3) != 3 || read(resume_fd, &go, 1) != 1) _exit(0);
}

static void at_pc(unsigned int vcpu, void *userdata)
{
    (void) vcpu;
    park((char) ('0' + (uintptr_t) userdata));
}

static void at_start(unsigned int vcpu, void *userdata)
{
    (void) vcpu;
    (void) userdata;
    if (started) return;
    started = true;
    park('S');
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void) id;
    uint64_t pc = qemu_plugin_tb_vaddr(tb);
    if (!started) qemu_plugin_register_vcpu_tb_exec_cb(tb, at_start, QEMU_PLUGIN_CB_NO_REGS, NULL);
    for (unsigned i = 0; i < n_pcs; i++)
        if (pcs[i] == pc)
            qemu_plugin_register_vcpu_tb_exec_cb(tb, at_pc, QEMU_PLUGIN_CB_NO_REGS,
                                                 (void *) (uintptr_t) i);
}

static int parse_pcs(const char *text)
{
    char *end;
    for (const char *p = text; *p && n_pcs < PCS_MAX; p = *end ? end + 1 : end) {
        pcs[n_pcs++] = strtoull(p, &end, 0) & ~1ull; /* no Thumb bit */
        if (end == p || (*end && *end != ':')) return -1;
    }
    return n_pcs ? 0 : -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    (void) info;
    const char *park_path = NULL, *resume_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "pcs=", 4) && parse_pcs(argv[i] + 4) == 0) continue;
        if (!strncmp(argv[i], "park=", 5)) {
            park_path = argv[i] + 5;
        } else if (!strncmp(argv[i], "resume=", 7)) {
            resume_path = argv[i] + 7;
        } else {
            fprintf(stderr, "motet-lockstep: bad argument '%s'\n", argv[i]);
            return 1;
        }
    }
    if (!n_pcs || !park_path || !resume_path) {
        fprintf(stderr, "motet-lockstep: needs pcs=, park= and resume=\n");
        return 1;
    }
    /* The adapter opens its ends in the same order. */
    park_fd = open(park_path, O_WRONLY);
    resume_fd = open(resume_path, O_RDONLY);
    if (park_fd < 0 || resume_fd < 0) {
        perror("motet-lockstep");
        return 1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    return 0;
}
