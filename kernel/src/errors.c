/* SPDX-License-Identifier: MIT */
#include "motet/types.h"

static const char *const names[MT_ERR_COUNT] = {
    [MT_OK] = "MT_OK",
    [MT_ERR_INVALID] = "MT_ERR_INVALID",
    [MT_ERR_NO_TASK] = "MT_ERR_NO_TASK",
    [MT_ERR_NO_PORT] = "MT_ERR_NO_PORT",
    [MT_ERR_QUEUE_FULL] = "MT_ERR_QUEUE_FULL",
    [MT_ERR_NO_MEM] = "MT_ERR_NO_MEM",
    [MT_ERR_NO_SLAB] = "MT_ERR_NO_SLAB",
    [MT_ERR_NO_TIMER] = "MT_ERR_NO_TIMER",
    [MT_ERR_DOUBLE_FREE] = "MT_ERR_DOUBLE_FREE",
    [MT_ERR_BAD_POINTER] = "MT_ERR_BAD_POINTER",
    [MT_ERR_EXISTS] = "MT_ERR_EXISTS",
    [MT_ERR_STATE] = "MT_ERR_STATE",
    [MT_ERR_NO_PROGRAM] = "MT_ERR_NO_PROGRAM",
    [MT_ERR_NO_ROUTE] = "MT_ERR_NO_ROUTE",
    [MT_ERR_DESC_HEADER] = "MT_ERR_DESC_HEADER",
    [MT_ERR_DESC_LENGTH] = "MT_ERR_DESC_LENGTH",
    [MT_ERR_DESC_TASK] = "MT_ERR_DESC_TASK",
    [MT_ERR_DESC_ROUTE] = "MT_ERR_DESC_ROUTE",
    [MT_ERR_DESC_GROUP] = "MT_ERR_DESC_GROUP",
    [MT_ERR_DESC_CHECKSUM] = "MT_ERR_DESC_CHECKSUM",
    [MT_ERR_BUS_CORRUPT] = "MT_ERR_BUS_CORRUPT",
    [MT_ERR_BUS_DOWN] = "MT_ERR_BUS_DOWN",
    [MT_ERR_NOT_MOVABLE] = "MT_ERR_NOT_MOVABLE",
};

const char *mt_strerror(mt_err_t err)
{
    if ((unsigned) err >= MT_ERR_COUNT) return "MT_ERR_UNKNOWN";
    return names[err];
}
