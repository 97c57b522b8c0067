/* SPDX-License-Identifier: MIT */
/*
 * Kernel configuration of the single-module SSL build (MOTET_USER_CONFIG).
 * The one native module hosts what will be five modules' tasks, so it needs
 * the heap of all of them: HT's SRP tables (16.3 KB; on the 32 KB compute
 * module in the paper's mapping), four SC noise estimates (0.6 KB each) and
 * up to five spectra in flight (1 KB each): 24.5 KB at the most (the run
 * prints its high-water mark on exit). The event ring holds a
 * whole block's events between two sleeps, so that a log is complete.
 */
#ifndef APPS_SSL_KERNEL_CONFIG_H
#define APPS_SSL_KERNEL_CONFIG_H

#define MOTET_HEAP_SIZE 28672
/* The application's 18 tasks and the kernel's own; on a module of the
 * device, the others' tasks. */
#define MOTET_MAX_TASKS        24
#define MOTET_MAX_REMOTE_TASKS 24
#define MOTET_LOG_ENTRIES      1024
/* A bus frame carries a block of samples (SSL_SAMPLES_MSG_LEN, 1040 B) to
 * an fft task placed away from its microphone. */
#define MOTET_BUS_PAYLOAD_MAX 1040
/* A migration's replies wait behind handlers of up to 50 ms (an FFT on a
 * sensing module's processor): the default 20 ms per round gave up on fft
 * tasks moved while the other channels' FFTs ran. */
#define MOTET_MIGRATE_TIMEOUT_MS 60

#endif /* APPS_SSL_KERNEL_CONFIG_H */
