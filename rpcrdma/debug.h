/*
 * Debug messages on stderr, on when the environment has RPCRDMA_DEBUG
 * set to anything but "" or "0": why a connection was lost or given up, which
 * a peer sees only as a disconnect and a caller only as an errno, and a
 * listener's loss of its device, which nobody sees.
 */
#ifndef RPCRDMA_DEBUG_H
#define RPCRDMA_DEBUG_H

#include <sys/socket.h>

/*
 * rpcrdma_debug_conn_lost - "rpcrdma: @side: connection with @peer
 * closed: @why (strerror(@err))" when debugging is on; no parenthesis
 * when @err is 0.
 */
void rpcrdma_debug_conn_lost(const char *side, const struct sockaddr *peer, const char *why,
			     int err);

/* rpcrdma_debug_listener - "rpcrdma: server: listener on @addr: @what" when debugging is on. */
void rpcrdma_debug_listener(const struct sockaddr *addr, const char *what);

#endif
