/* SPDX-License-Identifier: MIT */
/* The byte level of the module-hub link (hub_link.h). */
#include "hub_link.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

uint8_t *hub_link_put(uint8_t *p, uint64_t v, uint8_t bytes)
{
    for (uint8_t i = 0; i < bytes; i++) *p++ = (uint8_t) (v >> (8u * i));
    return p;
}

uint64_t hub_link_get(const uint8_t *p, uint8_t bytes)
{
    uint64_t v = 0;
    for (uint8_t i = 0; i < bytes; i++) v |= (uint64_t) p[i] << (8u * i);
    return v;
}

bool hub_link_read_event(const uint8_t *body, size_t n, size_t data_max, hub_link_event_t *e)
{
    if (n < 9) return false;
    *e = (hub_link_event_t){.at = hub_link_get(body, 8), .kind = body[8]};
    const uint8_t *rest = body + 9;
    size_t left = n - 9;
    switch (e->kind) {
    case HUB_EV_TX_DONE:
        e->result = left == 1 ? rest[0] : 0u;
        return left == 1 && e->result < HUB_TX_RESULTS;
    case HUB_EV_PROBE:
        e->value = left == 4 ? (uint32_t) hub_link_get(rest, 4) : 0u;
        return left == 4;
    case HUB_EV_RX:
        if (left < 4 || left - 4 > data_max) return false;
        e->value = (uint32_t) hub_link_get(rest, 4);
        e->data = rest + 4;
        e->n = left - 4;
        return true;
    case HUB_EV_HOST:
        e->data = rest;
        e->n = left;
        return left <= data_max;
    default:
        return false;
    }
}

bool hub_link_write(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t done = write(fd, p, n);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return false;
        p += done;
        n -= (size_t) done;
    }
    return true;
}

hub_link_status_t hub_link_read(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t done = read(fd, p, n);
        if (done < 0 && errno == EINTR) continue;
        if (done == 0) return HUB_LINK_CLOSED;
        if (done < 0) return HUB_LINK_BROKEN;
        p += done;
        n -= (size_t) done;
    }
    return HUB_LINK_OK;
}

int hub_link_connect(const char *path)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
