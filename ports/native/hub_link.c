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
