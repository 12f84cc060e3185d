/*
 * Registered reply buffers of one server connection (see reply_buffers.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <sanitizer/asan_interface.h>

#include "rpcrdma/reply_buffers.h"
#include "rpcrdma/transport.h"

#define REPLYBUF_MIN   8192u
#define REPLYBUF_STEP  (64u << 10)

void rpcrdma_replybufs_init(struct rpcrdma_replybufs *rb, struct ibv_pd *pd, int access,
			    uint64_t keep_bytes, uint64_t keep_one_max)
{
	*rb = (struct rpcrdma_replybufs){
		.pd = pd,
		.ops = { .reg = rpcrdma_mr_reg, .dereg = rpcrdma_mr_dereg },
		.access = access & IBV_ACCESS_LOCAL_WRITE,
		.keep_bytes = keep_bytes,
		.keep_one_max = keep_one_max,
	};
}

static void replybuf_free(struct rpcrdma_replybufs *rb, struct rpcrdma_replybuf *b)
{
	if (!b)
		return;
	if (b->mr)
		(void)rb->ops.dereg(b->mr); /* local access only: a region left registered is reachable by no peer */
	if (b->addr) {
		ASAN_UNPOISON_MEMORY_REGION(b->addr, b->cap); /* the next mapping there starts clean */
		munmap(b->addr, b->cap);
	}
	free(b);
}

/* Powers of two up to REPLYBUF_STEP, then multiples of it: a 1 MiB reply does not take 2 MiB. */
static uint32_t replybuf_size(uint32_t len)
{
	uint32_t cap = REPLYBUF_MIN;

	while (cap < len && cap < REPLYBUF_STEP)
		cap <<= 1;
	if (cap >= len)
		return cap;
	return len > UINT32_MAX - REPLYBUF_STEP ? len : (len + REPLYBUF_STEP - 1) / REPLYBUF_STEP * REPLYBUF_STEP;
}

static int replybuf_alloc(struct rpcrdma_replybufs *rb, uint32_t len, struct rpcrdma_replybuf **out)
{
	struct rpcrdma_replybuf *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->cap = replybuf_size(len);
	/* Mapped, not from the heap: long-lived buffers among the calls' short-lived allocations
	 * would fragment it, and the server's memory would creep under steady load. */
	b->addr = mmap(NULL, b->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->addr == MAP_FAILED) {
		b->addr = NULL;
		replybuf_free(rb, b);
		return -ENOMEM;
	}
	b->mr = rb->ops.reg(rb->pd, b->addr, b->cap, rb->access);
	if (!b->mr) {
		int rc = errno ? -errno : -ENOMEM;

		replybuf_free(rb, b);
		return rc;
	}
	*out = b;
	return 0;
}

/*
 * Under ASan the part of a buffer past what was asked for is poisoned
 * until the buffer is given back, so a write past a reply or a Read sink
 * is caught as it would be in memory of its own; no-ops otherwise.
 */
static void replybuf_lend(struct rpcrdma_replybuf *b, uint32_t len)
{
	ASAN_POISON_MEMORY_REGION(b->addr + len, b->cap - len);
}

static void replybuf_return(struct rpcrdma_replybuf *b)
{
	ASAN_UNPOISON_MEMORY_REGION(b->addr, b->cap);
}

int rpcrdma_replybufs_get(struct rpcrdma_replybufs *rb, uint32_t len,
			  struct rpcrdma_replybuf **out)
{
	struct rpcrdma_replybuf **pp = &rb->idle;

	int rc;

	while (*pp && (*pp)->cap < len)
		pp = &(*pp)->next;
	if (*pp) {
		*out = *pp;
		*pp = (*pp)->next;
		(*out)->next = NULL;
		rb->idle_bytes -= (*out)->cap;
	} else {
		rc = replybuf_alloc(rb, len, out);
		if (rc)
			return rc;
	}
	replybuf_lend(*out, len);
	return 0;
}

/* Free the largest idle buffer if it is larger than @cap. */
static bool replybuf_evict_larger(struct rpcrdma_replybufs *rb, uint32_t cap)
{
	struct rpcrdma_replybuf **pp = &rb->idle;

	if (!*pp)
		return false;
	while ((*pp)->next)
		pp = &(*pp)->next;
	if ((*pp)->cap <= cap)
		return false;
	rb->idle_bytes -= (*pp)->cap;
	replybuf_free(rb, *pp);
	*pp = NULL;
	return true;
}

void rpcrdma_replybufs_put(struct rpcrdma_replybufs *rb, struct rpcrdma_replybuf *b)
{
	struct rpcrdma_replybuf **pp = &rb->idle;

	if (!b)
		return;
	replybuf_return(b);
	/* over the budget a smaller buffer stays before a larger one: one large reply does not
	 * make every small one register anew */
	while (rb->idle_bytes + b->cap > rb->keep_bytes && replybuf_evict_larger(rb, b->cap))
		;
	if (rb->idle_bytes + b->cap > rb->keep_bytes && (rb->idle || b->cap > rb->keep_one_max)) {
		replybuf_free(rb, b);
		return;
	}
	while (*pp && (*pp)->cap < b->cap)
		pp = &(*pp)->next;
	b->next = *pp;
	*pp = b;
	rb->idle_bytes += b->cap;
}

void rpcrdma_replybufs_posted(struct rpcrdma_replybufs *rb, struct rpcrdma_replybuf *b)
{
	b->next = NULL;
	if (rb->tail)
		rb->tail->next = b;
	else
		rb->head = b;
	rb->tail = b;
	rb->in_flight++;
}

int rpcrdma_replybufs_complete(struct rpcrdma_replybufs *rb, uint64_t wr_id)
{
	struct rpcrdma_replybuf *b = rb->head;

	if (!b || (uint64_t)(uintptr_t)b != wr_id)
		return -EPROTO;
	rb->head = b->next;
	if (!rb->head)
		rb->tail = NULL;
	rb->in_flight--;
	rpcrdma_replybufs_put(rb, b);
	return 0;
}

static void replybuf_free_list(struct rpcrdma_replybufs *rb, struct rpcrdma_replybuf *b)
{
	while (b) {
		struct rpcrdma_replybuf *next = b->next;

		replybuf_free(rb, b);
		b = next;
	}
}

void rpcrdma_replybufs_destroy(struct rpcrdma_replybufs *rb)
{
	replybuf_free_list(rb, rb->idle);
	replybuf_free_list(rb, rb->head);
	rb->idle = rb->head = rb->tail = NULL;
	rb->idle_bytes = 0;
	rb->in_flight = 0;
}
