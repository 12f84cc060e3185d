/*
 * Address literals of the integration tests' command lines (rdmatest_addr.h).
 */
#include "rdmatest_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

int rdmatest_parse_addr(const char *text, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return AF_INET6;
	}
	return 0;
}
