/*
 * A scripted NFS server for the demo's procedures (unit tests): a
 * CLIENT whose call asks the test's answer function for the reply,
 * encodes it and decodes it with the caller's routine, as a transport
 * would; a session whose CLIENT it is.
 */
#ifndef TESTS_UNIT_NFS_SCRIPT_H
#define TESTS_UNIT_NFS_SCRIPT_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "nfs_proc.h"

struct script {
	/* Encode the reply to @proc with @args into @x; false: the call fails to send. */
	bool (*answer)(struct script *sc, rpcproc_t proc, const void *args, XDR *x);
	unsigned int calls;
	uint32_t pages;          /* READDIR pages answered */
	char *buf;
	u_int cap;
};

static inline enum clnt_stat script_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
				  xdrproc_t xres, void *res, struct timeval tv)
{
	struct script *sc = (struct script *)cl->cl_private;
	XDR x;

	(void)xargs;
	(void)tv;
	sc->calls++;
	xdrmem_create(&x, sc->buf, sc->cap, XDR_ENCODE);
	if (!sc->answer(sc, proc, args, &x))
		return RPC_CANTSEND;
	xdrmem_create(&x, sc->buf, xdr_getpos(&x), XDR_DECODE);
	return xres(&x, res) ? RPC_SUCCESS : RPC_CANTDECODERES;
}

static inline bool_t script_freeres(CLIENT *cl, xdrproc_t xres, void *res)
{
	(void)cl;
	xdr_free(xres, res);
	return TRUE;
}

static const struct clnt_ops script_ops = {
	.cl_call = script_call,
	.cl_freeres = script_freeres,
};

struct rig {
	struct script sc;
	CLIENT cl;
	struct nfs_session s;
	struct nfs_fh dir;
};

static inline void rig_init(struct rig *r, bool (*answer)(struct script *, rpcproc_t, const void *, XDR *))
{
	memset(r, 0, sizeof(*r));
	r->sc.answer = answer;
	r->sc.cap = 1u << 20;
	r->sc.buf = malloc(r->sc.cap);
	cr_assert_not_null(r->sc.buf);
	r->cl.cl_ops = (struct clnt_ops *)&script_ops;
	r->cl.cl_private = (char *)&r->sc;
	r->s.clnt = &r->cl;
	r->s.tv = (struct timeval){ 1, 0 };
	r->dir.len = 4;
	memcpy(r->dir.data, "dir!", 4);
}

static inline void rig_destroy(struct rig *r)
{
	free(r->sc.buf);
}

#endif
