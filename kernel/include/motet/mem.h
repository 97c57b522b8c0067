/* SPDX-License-Identifier: MIT */
/*
 * The memory manager: one heap with an owner per block.
 *
 * Address-ordered first fit with coalescing of neighbours on free, so the
 * lowest addresses are reused first and fragmentation stays low. Every block
 * records the pid that owns it; a killed task's blocks are reclaimed. Semantics are those of the C
 * library: mem_realloc(NULL, n) is mem_alloc(n), mem_realloc(p, 0) frees p and returns NULL,
 * mem_free(NULL) does nothing. A task frees and resizes only its own blocks: a received payload
 * becomes its own when it takes it (sched_take()). Errors (exhaustion, double free, foreign
 * pointer, another owner's block) return NULL or an error code and are logged, never crash.
 *
 * Example:
 *
 *     char *buf = mem_alloc(64);          // owned by the running task
 *     buf = mem_realloc(buf, 128);
 *     mem_free(buf);
 */
#ifndef MOTET_MEM_H
#define MOTET_MEM_H

#include "motet/types.h"

/* Owner of blocks that belong to the kernel (e.g. queued message payloads). */
#define MEM_OWNER_KERNEL MT_PID_NONE

typedef struct mem_stats {
    uint16_t heap_size;    /* bytes managed, headers included */
    uint16_t in_use;       /* bytes in allocated blocks, headers included */
    uint16_t high_water;   /* largest in_use seen since boot */
    uint16_t largest_free; /* largest block mem_alloc() could return now */
    uint16_t free_blocks;  /* number of free fragments */
    uint16_t alloc_count;  /* allocated blocks */
    uint16_t failures;     /* allocations refused since boot */
} mem_stats_t;

/* Allocate `size` bytes owned by the running task (the kernel in an
 * interrupt); NULL if exhausted. */
void *mem_alloc(size_t size);
/* Resize keeping the owner and contents; NULL (old block kept) on failure,
 * which includes a task resizing a block it does not own. */
void *mem_realloc(void *ptr, size_t size);
/* Free a block; NULL is ignored. MT_ERR_DOUBLE_FREE, MT_ERR_BAD_POINTER, or
 * MT_ERR_NOT_OWNER (nothing freed) when a task frees a block it does not own;
 * an interrupt handler, or code outside every handler, may free any block. */
mt_err_t mem_free(void *ptr);
/* Owner of a live heap block, or MEM_OWNER_KERNEL if ptr is not one. */
mt_pid_t mem_owner(const void *ptr);
/* True if ptr is the start of a live heap block. */
bool mem_is_heap(const void *ptr);
/* Usable bytes of a live block (at least what was asked). */
size_t mem_block_size(const void *ptr);
/* Fill *stats (largest_free, free_blocks and alloc_count by a walk of the
 * heap with interrupts off); any context. */
void mem_get_stats(mem_stats_t *stats);
/* True if the heap is whole: every block's header checks, the blocks tile
 * the heap, the free list holds exactly the free blocks in address order
 * with no two side by side, and the counters agree. For tests and fuzzing:
 * walks the whole heap with interrupts off; any context. */
bool mem_consistent(void);

#endif /* MOTET_MEM_H */
