/* A credential flavor that wraps the body (wrap_flavor.h). */
#include "wrap_flavor.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/svc_auth.h>
#include <rpc/svc_mt.h>

#include "rdmatest_support.h"

#define TAG_CALL 0x43414c4cu  /* checksum tags: a reply's cannot pass for a call's */
#define TAG_REPLY 0x52504c59u

atomic_uint wrap_min_generation;
atomic_uint wrap_svc_unwraps, wrap_svc_wraps, wrap_svc_refused, wrap_svc_replays;
atomic_bool wrap_svc_in_place, wrap_svc_fail_wrap;
static atomic_uint next_context = 1;

/* ---- the wrapped body, both sides ---- */

static bool_t body_wrap(XDR *xdrs, xdrproc_t xfunc, void *where, uint32_t tag)
{
	u_int len = (u_int)xdr_sizeof(xfunc, where);
	char *body = malloc(len ? len : 1);
	uint32_t sum;
	bool_t ok;
	XDR x;

	if (!body)
		return FALSE;
	xdrmem_create(&x, body, len, XDR_ENCODE);
	ok = xfunc(&x, where) && XDR_GETPOS(&x) == len;
	XDR_DESTROY(&x);
	sum = rdmatest_fnv1a((const uint8_t *)body, len) ^ tag;
	ok = ok && xdr_bytes(xdrs, &body, &len, ~0u) && xdr_u_int32_t(xdrs, &sum);
	free(body);
	return ok;
}

/*
 * The same bytes written as libtirpc's xdr_rpc_gss_wrap_data writes
 * RPCSEC_GSS integrity data: skip the length word, encode in place, read
 * the body back with XDR_INLINE to checksum it, then fill in the length.
 */
static bool_t body_wrap_in_place(XDR *xdrs, xdrproc_t xfunc, void *where, uint32_t tag)
{
	u_int start = XDR_GETPOS(xdrs), end, len;
	uint32_t sum;
	int32_t *body;

	if (!XDR_SETPOS(xdrs, start + 4) || !xfunc(xdrs, where))
		return FALSE;
	end = XDR_GETPOS(xdrs);
	len = end - start - 4;
	if (!XDR_SETPOS(xdrs, start + 4) || !(body = XDR_INLINE(xdrs, (int)len)))
		return FALSE;
	sum = rdmatest_fnv1a((const uint8_t *)body, len) ^ tag;
	return XDR_SETPOS(xdrs, start) && xdr_u_int(xdrs, &len) && XDR_SETPOS(xdrs, end) &&
	       xdr_u_int32_t(xdrs, &sum);
}

static bool_t body_unwrap(XDR *xdrs, xdrproc_t xfunc, void *where, uint32_t tag)
{
	char *body = NULL;
	u_int len = 0;
	uint32_t sum;
	bool_t ok;
	XDR x;

	if (!xdr_bytes(xdrs, &body, &len, ~0u))
		return FALSE;
	ok = xdr_u_int32_t(xdrs, &sum) &&
	     sum == (rdmatest_fnv1a((const uint8_t *)body, len) ^ tag);
	if (ok) {
		xdrmem_create(&x, body, len, XDR_DECODE);
		ok = xfunc(&x, where);
		XDR_DESTROY(&x);
	}
	free(body);
	return ok;
}

/* ---- server ---- */

static int svc_wrap(SVCAUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	(void)a;
	atomic_fetch_add(&wrap_svc_wraps, 1);
	if (atomic_load(&wrap_svc_fail_wrap))
		return FALSE;
	if (atomic_load(&wrap_svc_in_place))
		return body_wrap_in_place(xdrs, xfunc, where, TAG_REPLY);
	return body_wrap(xdrs, xfunc, where, TAG_REPLY);
}

static int svc_unwrap(SVCAUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	(void)a;
	atomic_fetch_add(&wrap_svc_unwraps, 1);
	return body_unwrap(xdrs, xfunc, where, TAG_CALL);
}

static int svc_wrap_destroy(SVCAUTH *a)
{
	(void)a;
	return TRUE;
}

static struct svc_auth_ops svc_wrap_ops = {
	.svc_ah_wrap = svc_wrap,
	.svc_ah_unwrap = svc_unwrap,
	.svc_ah_destroy = svc_wrap_destroy,
};

/* The verifier's body until the reply is sent, and the sequence numbers seen: one service thread. */
static uint32_t svc_verf_seq;
#define SEEN_MAX 4096
static uint64_t svc_seen[SEEN_MAX];
static unsigned int svc_seen_next;

/* Whether (context, sequence) was seen among the last SEEN_MAX calls; records it if not. */
static bool svc_replayed(uint32_t context_be, uint32_t seq_be)
{
	uint64_t key = (uint64_t)ntohl(context_be) << 32 | ntohl(seq_be);

	for (unsigned int i = 0; i < SEEN_MAX; i++)
		if (svc_seen[i] == key)
			return true;
	svc_seen[svc_seen_next++ % SEEN_MAX] = key;
	return false;
}

/* svc_auth_reg's handler: the credential is the generation, the sequence number and the context. */
static enum auth_stat svc_wrap_authenticate(struct svc_req *rq, struct rpc_msg *msg)
{
	struct opaque_auth *cred = &msg->rm_call.cb_cred;
	uint32_t body[3];

	if (cred->oa_length != sizeof(body))
		return AUTH_BADCRED;
	memcpy(body, cred->oa_base, sizeof(body));
	if (ntohl(body[0]) < atomic_load(&wrap_min_generation)) {
		atomic_fetch_add(&wrap_svc_refused, 1);
		return AUTH_REJECTEDCRED;
	}
	if (svc_replayed(body[2], body[1])) {
		atomic_fetch_add(&wrap_svc_replays, 1);
		return AUTH_TOOWEAK;
	}
	SVC_XP_AUTH(rq->rq_xprt).svc_ah_ops = &svc_wrap_ops;
	SVC_XP_AUTH(rq->rq_xprt).svc_ah_private = NULL;
	svc_verf_seq = body[1];
	rq->rq_xprt->xp_verf = (struct opaque_auth){ WRAP_FLAVOR, (caddr_t)&svc_verf_seq, 4 };
	return AUTH_OK;
}

/* ---- client ---- */

static struct wrap_auth *wrap_of(AUTH *a)
{
	return (struct wrap_auth *)a;
}

static void wa_nextverf(AUTH *a)
{
	(void)a;
}

static int wa_marshal(AUTH *a, XDR *xdrs)
{
	struct wrap_auth *w = wrap_of(a);

	w->cred_be[1] = htonl(ntohl(w->cred_be[1]) + 1);
	return xdr_opaque_auth(xdrs, &a->ah_cred) && xdr_opaque_auth(xdrs, &a->ah_verf);
}

/* As RPCSEC_GSS checks the reply against its current sequence number, not the call's. */
static int wa_validate(AUTH *a, struct opaque_auth *verf)
{
	return verf->oa_flavor == WRAP_FLAVOR && verf->oa_length == 4 &&
	       !memcmp(verf->oa_base, &wrap_of(a)->cred_be[1], 4);
}

static int wa_refresh(AUTH *a, void *msg)
{
	struct wrap_auth *w = wrap_of(a);

	(void)msg;
	w->refreshes++;
	w->cred_be[0] = htonl(ntohl(w->cred_be[0]) + 1);
	return TRUE;
}

static void wa_destroy(AUTH *a)
{
	free(wrap_of(a));
}

static int wa_wrap(AUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	struct wrap_auth *w = wrap_of(a);

	w->wraps++;
	if (w->in_place)
		return body_wrap_in_place(xdrs, xfunc, where, w->tamper ? ~TAG_CALL : TAG_CALL);
	return body_wrap(xdrs, xfunc, where, w->tamper ? ~TAG_CALL : TAG_CALL);
}

static int wa_unwrap(AUTH *a, XDR *xdrs, xdrproc_t xfunc, caddr_t where)
{
	wrap_of(a)->unwraps++;
	return body_unwrap(xdrs, xfunc, where, TAG_REPLY);
}

static struct auth_ops wrap_auth_ops = {
	.ah_nextverf = wa_nextverf,
	.ah_marshal = wa_marshal,
	.ah_validate = wa_validate,
	.ah_refresh = wa_refresh,
	.ah_destroy = wa_destroy,
	.ah_wrap = wa_wrap,
	.ah_unwrap = wa_unwrap,
};

struct wrap_auth *wrap_auth_create(uint32_t generation)
{
	struct wrap_auth *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->cred_be[0] = htonl(generation);
	w->cred_be[2] = htonl(atomic_fetch_add(&next_context, 1));
	w->auth.ah_ops = &wrap_auth_ops;
	w->auth.ah_cred = (struct opaque_auth){ WRAP_FLAVOR, (caddr_t)w->cred_be, sizeof(w->cred_be) };
	w->auth.ah_verf = _null_auth;
	return w;
}

bool wrap_flavor_register(void)
{
	return svc_auth_reg(WRAP_FLAVOR, svc_wrap_authenticate) == 0;
}
