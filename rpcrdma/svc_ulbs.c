/*
 * The table of a listener's upper-layer bindings, shared by reference
 * with the connections it accepts (see svc_ulbs.h).  The entries are
 * guarded by the table's mutex, held only to copy a mask out or while
 * one binding is made.  The references are atomic only so that the
 * table's life does not depend on the one-serving-thread rule the rest
 * of the server keeps (svc_rdma_create(3), "Serving").
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "rpcrdma/svc_ulbs.h"
#include "rpcrdma/transport.h"

struct svc_ulbs {
	atomic_uint refs;
	pthread_mutex_t lock;
	size_t n;
	struct {
		rpcprog_t prog;
		rpcvers_t vers;
		const struct rpcrdma_ulb *ulb;
	} e[SVC_ULBS_MAX];
};

struct svc_ulbs *svc_ulbs_new(void)
{
	struct svc_ulbs *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	if (pthread_mutex_init(&u->lock, NULL)) {
		free(u);
		return NULL;
	}
	atomic_init(&u->refs, 1);
	return u;
}

struct svc_ulbs *svc_ulbs_get(struct svc_ulbs *u)
{
	atomic_fetch_add_explicit(&u->refs, 1, memory_order_relaxed);
	return u;
}

void svc_ulbs_put(struct svc_ulbs *u)
{
	if (!u || atomic_fetch_sub_explicit(&u->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_destroy(&u->lock);
	free(u);
}

/* The index of (@prog, @vers), or u->n when it has no binding.  Locked. */
static size_t svc_ulbs_find(const struct svc_ulbs *u, rpcprog_t prog, rpcvers_t vers)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		if (u->e[i].prog == prog && u->e[i].vers == vers)
			break;
	return i;
}

int svc_ulbs_bind(struct svc_ulbs *u, rpcprog_t prog, rpcvers_t vers,
		  const struct rpcrdma_ulb *ulb, bool (*commit)(void *arg), void *arg)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&u->lock);
	i = svc_ulbs_find(u, prog, vers);
	if (i == SVC_ULBS_MAX)
		rc = -ENOSPC;
	else if (!commit(arg))
		rc = -EPERM;
	if (rc == 0) {
		u->e[i].prog = prog;
		u->e[i].vers = vers;
		u->e[i].ulb = ulb;
		if (i == u->n)
			u->n++;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

uint32_t svc_ulbs_res_ddp(struct svc_ulbs *u, rpcprog_t prog, rpcvers_t vers, rpcproc_t proc)
{
	const struct rpcrdma_ulb_proc *p = NULL;
	uint32_t mask;
	size_t i;

	pthread_mutex_lock(&u->lock);
	i = svc_ulbs_find(u, prog, vers);
	if (i < u->n)
		p = rpcrdma_ulb_proc_find(u->e[i].ulb, proc);
	mask = p ? p->res_ddp : 0;
	pthread_mutex_unlock(&u->lock);
	return mask;
}
