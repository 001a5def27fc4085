/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef GPUAPP_IO_H
#define GPUAPP_IO_H

/*
 * A whole buffer to a file descriptor, for the programs' files and
 * streams (captures, IPFIX files, JSON). Header only, no DPDK: a library
 * that includes it needs no link to libgpuapp.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* All of buf to fd, retrying short and interrupted writes. 0 or -errno;
 * -EIO when the descriptor takes nothing (a write of 0 bytes). */
static inline int
gpuapp_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf;

	while (len > 0) {
		const ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif /* GPUAPP_IO_H */
