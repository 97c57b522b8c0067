/* SPDX-License-Identifier: MIT */
/*
 * Kernel configuration of the migration test program (MOTET_USER_CONFIG).
 * A migrating task's state is on the heap three times at the peak on the
 * source (the task's own, its serialised copy, a frame on the way) and
 * twice on the destination; the benchmark moves states of up to 4 KB.
 * Messages held while a task moves take queue entries, so there are more.
 */
#ifndef APPS_MIGRATE_KERNEL_CONFIG_H
#define APPS_MIGRATE_KERNEL_CONFIG_H

#define MOTET_HEAP_SIZE       20480
#define MOTET_MAX_QUEUED_MSGS 96
#define MOTET_LOG_ENTRIES     256

#endif /* APPS_MIGRATE_KERNEL_CONFIG_H */
