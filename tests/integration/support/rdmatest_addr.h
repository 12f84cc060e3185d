/*
 * Address literals of the integration tests' command lines.  Needs only
 * libc, so the programs that link nothing but the library use it too.
 */
#ifndef RDMATEST_ADDR_H
#define RDMATEST_ADDR_H

#include <stdint.h>
#include <sys/socket.h>

/*
 * rdmatest_parse_addr - @text (IPv4 or IPv6 literal) and @port into @ss.
 * Returns the address family, or 0 when @text is not an address.
 */
int rdmatest_parse_addr(const char *text, uint16_t port, struct sockaddr_storage *ss);

#endif
