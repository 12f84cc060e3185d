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

void rpcrdma_debug_conn_lost(const char *side, const struct sockaddr *peer, const char *why,
			     int err)
{
	char uaddr[64], text[128];

	if (!debug_on())
		return;
	if (!peer || rpcrdma_uaddr_format(peer, uaddr, sizeof(uaddr)))
		snprintf(uaddr, sizeof(uaddr), "an unknown address");
	if (err)
		fprintf(stderr, "rpcrdma: %s: connection with %s closed: %s (%s)\n", side, uaddr,
			why, strerror_r(err, text, sizeof(text)));
	else
		fprintf(stderr, "rpcrdma: %s: connection with %s closed: %s\n", side, uaddr, why);
}
