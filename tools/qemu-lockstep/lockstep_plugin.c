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
 *     -plugin motet-lockstep.so,pcs=ADDR[:ADDR...],park=FIFO,resume=FIFO[,log=R:B:S]
 *
 * Parking writes "P<i> <count>\n" to `park` (i: the index of the address
 * in pcs; S for the start; W right after a WFI, before the next
 * instruction; F at the fence; count: the guest instructions executed
 * before the park) and waits on `resume` for "g" and the fence, a
 * little-endian u64: the count before which the CPU parks next (F), all
 * ones for none. If the adapter goes away, QEMU exits (status 0); a resume
 * cut short or not starting with "g" ends it with status 2 and a message.
 *
 * The fence is the adapter's grant while the core runs: it parks before
 * the instruction that would make the count pass it, whatever that
 * instruction is and whether interrupts are masked there. (It was once an
 * interrupt of a timer armed at the grant, whose handler parked: a
 * section with interrupts off held it back, up to 300 instructions of
 * the kernel's start on a bus, migrate_start()'s clearing of its state.)
 * A sleeping core runs no instructions: the adapter wakes it with a timer
 * for that, and it parks right after its WFI (W).
 *
 * The count and the WFI parks are the adapter's clock: under -icount the
 * guest's virtual time is its instructions times 2^shift ns plus the time
 * it slept (a WFI, where virtual time jumps to the next timer event), and
 * right after a WFI the adapter reads where the sleep ended. QEMU's own
 * clock, as qtest reads it at a fence or a doorbell, is QEMU's as of its
 * last update (the core halted, the guest read a clock, an execution slice
 * ended) and lags the park by what ran since: microseconds at a doorbell.
 *
 * The count is an inline add before each instruction, not the block's
 * size at its start: a block may be left before its end (under -icount an
 * I/O access in the middle of a block ends it there and runs the access
 * again as a block of its own, QEMU's I/O recompile, which carries memory
 * callbacks only), and counting whole blocks counted what never ran: on
 * the SSL device's Cortex-M3, 349 instructions too many in the 47,115 to
 * the first fence, 4 in each 3,125 between two fences 50 us apart. The
 * count costs an add per instruction and a call per block (the WFI
 * check), and a park per WFI: on the SSL device, whose Cortex-M3 sleeps
 * most of the time, within the noise of QEMU's CPU time (0.5 to 0.8 s
 * for 4 s of the device, before and after). The fence's test is a call
 * per instruction: over 2 s of the SSL device the whole run's CPU time
 * (hub, QEMU, four simavr) was 5.4 and 7.2 s with the timer's fence, 6.0
 * and 6.5 s with the count's, two runs each on a loaded machine.
 *
 * The log tap, `log=RING:BYTES:SLOT`: the kernel's event log ring
 * (kernel/src/log_ring.h: log_ring, its size, the bytes of a slot) is
 * watched for the store that begins a slot (its stamp, the first field
 * the kernel writes). Each such store is announced at the next park as
 * "L <count> <slot>" before the park's line: count is the guest
 * instructions executed before the store, slot the slot's index. The
 * adapter reads the slots' fields through qtest while parked and times
 * each record as it times the park (qemu_module.py, LogTap): exact in
 * instructions, where the kernel's own stamps have its 100 us tick.
 */
#include <errno.h>
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

static uint64_t executed;           /* guest instructions */
static uint64_t fence = UINT64_MAX; /* park when executed reaches it */
static bool wfi_ran;                /* since the last block began: park before the next */

/* The log tap (log=): the ring, the stores seen. */
#define TAP_MAX 4096
static uint64_t ring, ring_bytes, slot_bytes;
static struct {
    uint64_t count;
    uint32_t slot;
} tapped[TAP_MAX];
static unsigned n_tapped;
static uint64_t tap_dropped;

static void say(const char *text, size_t n)
{
    if (write(park_fd, text, n) != (ssize_t) n) _exit(0);
}

/* The adapter and the plugin out of step: no fence read can be trusted. */
static void out_of_step(const char *why)
{
    ssize_t said = write(STDERR_FILENO, why, strlen(why));
    _exit(said < 0 ? 3 : 2);
}

/* Parked before an instruction: a block's first, or the fence's. */
static void park(char what)
{
    char line[96];
    uint8_t go[9];
    if (tap_dropped) {
        say(line,
            (size_t) snprintf(line, sizeof line, "LOST %llu\n", (unsigned long long) tap_dropped));
        tap_dropped = 0;
    }
    for (unsigned i = 0; i < n_tapped; i++)
        say(line,
            (size_t) snprintf(line, sizeof line, "L %llu %u\n",
                              (unsigned long long) tapped[i].count, (unsigned) tapped[i].slot));
    n_tapped = 0;
    say(line,
        (size_t) snprintf(line, sizeof line, "P%c %llu\n", what, (unsigned long long) executed));
    for (size_t got = 0; got < sizeof go;) {
        ssize_t n = read(resume_fd, go + got, sizeof go - got);
        if (n < 0 && errno == EINTR) continue; /* a signal to QEMU's thread: read on */
        if (n == 0 && got == 0) _exit(0);      /* the adapter went away */
        if (n <= 0) out_of_step("motet-lockstep: resume message cut short\n");
        got += (size_t) n;
    }
    if (go[0] != 'g') out_of_step("motet-lockstep: resume message does not start with 'g'\n");
    fence = 0;
    for (unsigned i = 8; i >= 1; i--) fence = fence << 8 | go[i];
}

/* Before each instruction, ahead of its count's add. */
static void at_insn(unsigned int vcpu, void *userdata)
{
    (void) vcpu;
    (void) userdata;
    if (executed >= fence) park('F');
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

/* The clock's callbacks: a block begins (before at_pc and at_start, which
 * are registered after it), a WFI is about to run; the log tap's: a store
 * lands (after its instruction's add). */
static void after_wfi(unsigned int vcpu, void *userdata)
{
    (void) vcpu;
    (void) userdata;
    if (!wfi_ran) return;
    wfi_ran = false;
    park('W');
}

static void at_wfi(unsigned int vcpu, void *userdata)
{
    (void) vcpu;
    (void) userdata;
    wfi_ran = true;
}

static void stored(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
    (void) vcpu;
    (void) info;
    (void) userdata;
    if (vaddr < ring || vaddr >= ring + ring_bytes || (vaddr - ring) % slot_bytes) return;
    if (n_tapped == TAP_MAX) {
        tap_dropped++;
        return;
    }
    tapped[n_tapped].count = executed - 1u;
    tapped[n_tapped].slot = (uint32_t) ((vaddr - ring) / slot_bytes);
    n_tapped++;
}

static bool is_wfi(const struct qemu_plugin_insn *insn)
{
    const uint8_t *b = qemu_plugin_insn_data(insn);
    return qemu_plugin_insn_size(insn) == 2 && b[0] == 0x30 && b[1] == 0xBF; /* Thumb WFI */
}

static void count_block(struct qemu_plugin_tb *tb, size_t n)
{
    qemu_plugin_register_vcpu_tb_exec_cb(tb, after_wfi, QEMU_PLUGIN_CB_NO_REGS, NULL);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        /* at_insn is registered ahead of the count's add, so the fence
         * sees the instructions before this one whether QEMU runs an
         * instruction's callbacks in registration order or, as 7.2 does,
         * all callbacks before all inline operations. */
        qemu_plugin_register_vcpu_insn_exec_cb(insn, at_insn, QEMU_PLUGIN_CB_NO_REGS, NULL);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &executed, 1);
        if (ring_bytes)
            qemu_plugin_register_vcpu_mem_cb(insn, stored, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_W, NULL);
        if (is_wfi(insn))
            qemu_plugin_register_vcpu_insn_exec_cb(insn, at_wfi, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void) id;
    uint64_t pc = qemu_plugin_tb_vaddr(tb);
    size_t n = qemu_plugin_tb_n_insns(tb);
    count_block(tb, n);
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
        if (!strncmp(argv[i], "log=", 4)) {
            char *end;
            ring = strtoull(argv[i] + 4, &end, 0);
            if (*end == ':') ring_bytes = strtoull(end + 1, &end, 0);
            if (*end == ':') slot_bytes = strtoull(end + 1, &end, 0);
            if (*end || !ring_bytes || !slot_bytes || ring_bytes % slot_bytes) {
                fprintf(stderr, "motet-lockstep: log= wants RING:BYTES:SLOT, not '%s'\n",
                        argv[i] + 4);
                return 1;
            }
        } else if (!strncmp(argv[i], "park=", 5)) {
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
