/*
 * Client registration strategies and the per-connection buffer cache
 * (see registration.h).  Idle buffers are kept on one list, smallest
 * first; a request takes the smallest one that fits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/registration.h"
#include "rpcrdma/transport.h"

#define REGBUF_MIN   (64u << 10)
#define REGBUF_ALIGN 4096u

struct rpcrdma_reg {
	pthread_mutex_t lock;
	struct rpcrdma_ep *ep;
	enum rpcrdma_registration strategy;
	uint64_t keep_bytes;
	uint64_t idle_bytes;
	struct rpcrdma_regbuf *idle; /* sorted by cap */
	uint64_t remote_invalidations, local_invalidations;
};

static void regbuf_free(struct rpcrdma_regbuf *buf);

int rpcrdma_reg_create(struct rpcrdma_ep *ep, enum rpcrdma_registration strategy,
		       uint64_t keep_bytes, struct rpcrdma_reg **out)
{
	struct rpcrdma_reg *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return -ENOMEM;
	pthread_mutex_init(&reg->lock, NULL);
	reg->ep = ep;
	reg->strategy = strategy;
	reg->keep_bytes = keep_bytes;
	*out = reg;
	return 0;
}

/*
 * Memory whose window or region could not be destroyed may still be
 * remotely accessible: it is left allocated, never to be reused.
 */
static void regbuf_free(struct rpcrdma_regbuf *buf)
{
	bool gone;

	if (!buf)
		return;
	gone = !buf->mw || ibv_dealloc_mw(buf->mw) == 0; /* before the region it is bound in */
	gone = rpcrdma_mr_dereg(buf->call_mr) && gone;
	gone = rpcrdma_mr_dereg(buf->base_mr) && gone;
	if (gone)
		free(buf->addr);
	free(buf);
}

void rpcrdma_reg_destroy(struct rpcrdma_reg *reg)
{
	if (!reg)
		return;
	while (reg->idle) {
		struct rpcrdma_regbuf *b = reg->idle;

		reg->idle = b->next;
		regbuf_free(b);
	}
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

enum rpcrdma_registration rpcrdma_reg_strategy(const struct rpcrdma_reg *reg)
{
	return reg->strategy;
}

static uint32_t regbuf_size(uint32_t len)
{
	uint32_t cap = REGBUF_MIN;

	while (cap < len && cap < (1u << 31))
		cap <<= 1;
	return cap < len ? len : cap;
}

static int regbuf_alloc(struct rpcrdma_reg *reg, uint32_t len, struct rpcrdma_regbuf **out)
{
	struct rpcrdma_regbuf *b = calloc(1, sizeof(*b));
	int rc = -ENOMEM;

	if (!b)
		return -ENOMEM;
	b->cap = regbuf_size(len);
	if (posix_memalign((void **)&b->addr, REGBUF_ALIGN, b->cap)) {
		b->addr = NULL;
		goto fail;
	}
	/* the server may read all of it: none of what the heap held before may show */
	memset(b->addr, 0, b->cap);
	if (reg->strategy == RPCRDMA_REG_MEMORY_WINDOW) {
		b->base_mr = rpcrdma_mr_reg(rpcrdma_ep_pd(reg->ep), b->addr, b->cap,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		if (!b->base_mr) {
			rc = -errno;
			goto fail;
		}
		rc = rpcrdma_ep_mw_alloc(reg->ep, &b->mw);
		if (rc)
			goto fail;
	}
	*out = b;
	return 0;
fail:
	regbuf_free(b);
	return rc;
}

/*
 * Free every idle buffer: their registrations count against
 * RLIMIT_MEMLOCK.  Returns whether there was any.
 */
static bool reg_purge(struct rpcrdma_reg *reg)
{
	struct rpcrdma_regbuf *b;
	bool any;

	pthread_mutex_lock(&reg->lock);
	b = reg->idle;
	reg->idle = NULL;
	reg->idle_bytes = 0;
	pthread_mutex_unlock(&reg->lock);
	any = b != NULL;
	while (b) {
		struct rpcrdma_regbuf *next = b->next;

		regbuf_free(b);
		b = next;
	}
	return any;
}

int rpcrdma_reg_get(struct rpcrdma_reg *reg, uint32_t len, struct rpcrdma_regbuf **out)
{
	struct rpcrdma_regbuf **pp;
	int rc;

	pthread_mutex_lock(&reg->lock);
	for (pp = &reg->idle; *pp; pp = &(*pp)->next)
		if ((*pp)->cap >= len) {
			*out = *pp;
			*pp = (*out)->next;
			(*out)->next = NULL;
			reg->idle_bytes -= (*out)->cap;
			pthread_mutex_unlock(&reg->lock);
			return 0;
		}
	pthread_mutex_unlock(&reg->lock);
	rc = regbuf_alloc(reg, len, out);
	if (rc && reg_purge(reg)) /* the idle buffers' memory may be what it lacked */
		rc = regbuf_alloc(reg, len, out);
	return rc;
}

void rpcrdma_reg_put(struct rpcrdma_reg *reg, struct rpcrdma_regbuf *buf)
{
	struct rpcrdma_regbuf **pp;

	if (!buf)
		return;
	pthread_mutex_lock(&reg->lock);
	if (buf->exposed || buf->call_mr || reg->idle_bytes + buf->cap > reg->keep_bytes) {
		pthread_mutex_unlock(&reg->lock);
		regbuf_free(buf);
		return;
	}
	for (pp = &reg->idle; *pp && (*pp)->cap < buf->cap; pp = &(*pp)->next)
		;
	buf->next = *pp;
	*pp = buf;
	reg->idle_bytes += buf->cap;
	pthread_mutex_unlock(&reg->lock);
}

int rpcrdma_reg_expose(struct rpcrdma_reg *reg, struct rpcrdma_regbuf *buf, uint32_t len,
		       uint64_t wr_id)
{
	const unsigned int access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	int rc;

	if (len > buf->cap)
		return -E2BIG;
	buf->len = len;
	if (reg->strategy == RPCRDMA_REG_PER_CALL_MR) {
		buf->call_mr = rpcrdma_mr_reg(rpcrdma_ep_pd(reg->ep), buf->addr, len,
					      (int)access | IBV_ACCESS_LOCAL_WRITE);
		if (!buf->call_mr)
			return -errno;
		buf->rkey = buf->call_mr->rkey;
		buf->exposed = true;
		return 0;
	}
	/* Marked exposed before posting: a failed post may still have bound it. */
	buf->exposed = true;
	rc = rpcrdma_ep_post_bind_mw(reg->ep, buf->mw, buf->base_mr, (uintptr_t)buf->addr, len,
				     access, wr_id, &buf->rkey);
	return rc;
}

bool rpcrdma_reg_revoke_is_synchronous(const struct rpcrdma_reg *reg,
				       const struct rpcrdma_regbuf *buf, uint32_t invalidated_rkey)
{
	return buf->exposed && (reg->strategy == RPCRDMA_REG_PER_CALL_MR ||
				(invalidated_rkey && invalidated_rkey == buf->rkey));
}

int rpcrdma_reg_revoke(struct rpcrdma_reg *reg, struct rpcrdma_regbuf *buf,
		       uint32_t invalidated_rkey, uint64_t wr_id)
{
	int rc;

	if (!buf->exposed)
		return 0;
	if (reg->strategy == RPCRDMA_REG_PER_CALL_MR) {
		if (!rpcrdma_mr_dereg(buf->call_mr))
			return -EIO; /* still exposed: put destroys it, or leaves it allocated */
		buf->call_mr = NULL;
		buf->exposed = false;
		return 0;
	}
	if (invalidated_rkey && invalidated_rkey == buf->rkey) {
		buf->exposed = false;
		__atomic_add_fetch(&reg->remote_invalidations, 1, __ATOMIC_RELAXED);
		return 0;
	}
	rc = rpcrdma_ep_post_local_inv(reg->ep, buf->rkey, wr_id);
	if (rc)
		return rc;
	__atomic_add_fetch(&reg->local_invalidations, 1, __ATOMIC_RELAXED);
	return 1;
}

void rpcrdma_reg_revoked(struct rpcrdma_regbuf *buf)
{
	buf->exposed = false;
}

void rpcrdma_reg_counts(const struct rpcrdma_reg *reg, uint64_t *remote, uint64_t *local)
{
	*remote = __atomic_load_n(&reg->remote_invalidations, __ATOMIC_RELAXED);
	*local = __atomic_load_n(&reg->local_invalidations, __ATOMIC_RELAXED);
}
