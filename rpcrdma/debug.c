/*
 * Debug messages.  The switch is read from the environment at each
 * message: they are rare (a connection given up), and reading it there
 * needs no global state and no set-up call.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/debug.h"
#include "rpcrdma/netconfig.h"

static bool debug_on(void)
{
	const char *v = getenv("RPCRDMA_DEBUG");

	return v && *v && strcmp(v, "0") != 0;
}

static void uaddr_of(const struct sockaddr *addr, char *uaddr, size_t size)
{
	if (!addr || rpcrdma_uaddr_format(addr, uaddr, size))
		snprintf(uaddr, size, "an unknown address");
}

void rpcrdma_debug_conn_lost(const char *side, const struct sockaddr *peer, const char *why,
			     int err)
{
	char uaddr[64], text[128];

	if (!debug_on())
		return;
	uaddr_of(peer, uaddr, sizeof(uaddr));
	if (err)
		fprintf(stderr, "rpcrdma: %s: connection with %s closed: %s (%s)\n", side, uaddr,
			why, strerror_r(err, text, sizeof(text)));
	else
		fprintf(stderr, "rpcrdma: %s: connection with %s closed: %s\n", side, uaddr, why);
}

void rpcrdma_debug_listener(const struct sockaddr *addr, const char *what)
{
	char uaddr[64];

	if (!debug_on())
		return;
	uaddr_of(addr, uaddr, sizeof(uaddr));
	fprintf(stderr, "rpcrdma: server: listener on %s: %s\n", uaddr, what);
}
