/* SPDX-License-Identifier: MIT */
/*
 * Heap operations for the kernel's own components only (mem.h is the
 * public side). mem_free() refuses a task's free of a block it does not
 * own; the kernel frees blocks it holds itself (message payloads, scratch
 * tables, bus frames, migration images) in whatever task's context it
 * happens to run, so it needs a release that does not ask who is running.
 * Applications never include this header.
 */
#ifndef MOTET_MEM_INTERNAL_H
#define MOTET_MEM_INTERNAL_H

#include "motet/mem.h"

/* Free a live block whoever owns it; NULL is ignored. Kernel use only:
 * MT_ERR_DOUBLE_FREE or MT_ERR_BAD_POINTER (logged), never MT_ERR_NOT_OWNER. */
mt_err_t mem_release(void *ptr);
/* Give live block ptr, which must be `from`'s (any owner's when `from` is
 * the kernel), to `to`: MT_ERR_NOT_OWNER or MT_ERR_BAD_POINTER (logged) and
 * nothing changed otherwise. Any context. */
mt_err_t mem_pass(void *ptr, mt_pid_t from, mt_pid_t to);
/* Give a live block the kernel lent out (a payload run at once) to `owner`
 * without checking it again; returns ptr. Any context. */
void *mem_hand_over(void *ptr, mt_pid_t owner);

#endif /* MOTET_MEM_INTERNAL_H */
