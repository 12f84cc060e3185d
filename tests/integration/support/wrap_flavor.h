/*
 * A private credential flavor that wraps the call's body, as RPCSEC_GSS's
 * integrity service does, through libtirpc's interface for such flavors:
 * an AUTH with ah_wrap/ah_unwrap/ah_refresh for clients, and a handler
 * registered with svc_auth_reg() that installs SVCAUTH wrap/unwrap
 * operations for the server.  The credential is a generation number, a
 * sequence number the reply's verifier echoes, and the AUTH's context
 * number; the body on the wire is
 *     opaque body<>; unsigned checksum;
 * with the checksum FNV-1a of the body xor a tag per direction.  Both
 * sides count what they wrapped and unwrapped.  As an RPCSEC_GSS server,
 * the server takes each context's sequence number once: a replay is
 * refused (AUTH_TOOWEAK, where RFC 2203 discards it silently and
 * libtirpc's RPCSEC_GSS answers RPCSEC_GSS_CTXPROBLEM) and counted.
 */
#ifndef WRAP_FLAVOR_H
#define WRAP_FLAVOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#define WRAP_FLAVOR 200777 /* in the range RFC 5531 leaves to private use */

struct wrap_auth {
	AUTH auth;
	/*
	 * The credential's body, big-endian: the generation and a sequence
	 * number that each marshal advances and the reply's verifier must
	 * echo, kept without a lock as RPCSEC_GSS keeps its own.
	 */
	uint32_t cred_be[3];
	bool tamper;       /* send a checksum the server cannot verify */
	bool in_place;     /* wrap as RPCSEC_GSS does: XDR_SETPOS forward, XDR_INLINE back */
	unsigned int wraps, unwraps, refreshes;
};

/* A client AUTH of the flavor (cl_auth = &w->auth); auth_destroy() frees it. */
struct wrap_auth *wrap_auth_create(uint32_t generation);

/* The server side: credentials below wrap_min_generation are refused (AUTH_REJECTEDCRED). */
extern atomic_uint wrap_min_generation;
extern atomic_uint wrap_svc_unwraps, wrap_svc_wraps, wrap_svc_refused, wrap_svc_replays;
extern atomic_bool wrap_svc_in_place; /* the server wraps replies as RPCSEC_GSS does */
extern atomic_bool wrap_svc_fail_wrap; /* the server's SVCAUTH_WRAP fails */

/* svc_auth_reg() of the flavor's handler; false if libtirpc refused. */
bool wrap_flavor_register(void);

#endif
