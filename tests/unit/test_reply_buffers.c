/* The server's reply buffers: sizes, smallest fit, the FIFO of posted buffers, the keep budget. */
#include <errno.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "rpcrdma/reply_buffers.h"

/* Registration is counted here; the buffers' memory is real. */
static int regs, deregs, fail_next_reg;

static struct ibv_mr *count_reg(struct ibv_pd *pd, const void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	(void)pd;
	cr_assert_eq(access, 0, "reply buffers are registered for local access only");
	if (fail_next_reg) {
		fail_next_reg = 0;
		errno = EFAULT;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	cr_assert_not_null(mr);
	mr->addr = (void *)(uintptr_t)addr;
	mr->length = len;
	regs++;
	return mr;
}

static void count_dereg(struct ibv_mr *mr)
{
	deregs++;
	free(mr);
}

static void setup(struct rpcrdma_replybufs *rb, uint64_t keep)
{
	regs = deregs = fail_next_reg = 0;
	rpcrdma_replybufs_init(rb, NULL, keep);
	rb->ops = (struct rpcrdma_replybuf_reg){ .reg = count_reg, .dereg = count_dereg };
}

static struct rpcrdma_replybuf *get(struct rpcrdma_replybufs *rb, uint32_t len)
{
	struct rpcrdma_replybuf *b = NULL;

	cr_assert_eq(rpcrdma_replybufs_get(rb, len, &b), 0);
	cr_assert_geq(b->cap, len);
	cr_assert_eq(b->mr->length, b->cap, "the whole buffer is registered");
	return b;
}

Test(reply_buffers, sizes_double_to_64k_then_grow_in_64k_steps)
{
	struct rpcrdma_replybufs rb;
	const uint32_t len[] = { 1, 8192, 8193, 20480, 65536, 65537, (1u << 20) + 4096 };
	const uint32_t cap[] = { 8192, 8192, 16384, 32768, 65536, 131072, (1u << 20) + 65536 };

	setup(&rb, 0);
	for (size_t i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
		struct rpcrdma_replybuf *b = get(&rb, len[i]);

		cr_assert_eq(b->cap, cap[i], "len %u: cap %u, want %u", len[i], b->cap, cap[i]);
		b->addr[b->cap - 1] = 1; /* the memory is really there (ASan) */
		rpcrdma_replybufs_put(&rb, b);
	}
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, deregs);
}

Test(reply_buffers, a_request_takes_the_smallest_idle_buffer_that_fits)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *small, *mid, *big;

	setup(&rb, 1u << 20);
	big = get(&rb, 100000);
	small = get(&rb, 100);
	mid = get(&rb, 30000);
	rpcrdma_replybufs_put(&rb, big);
	rpcrdma_replybufs_put(&rb, small);
	rpcrdma_replybufs_put(&rb, mid);
	cr_assert_eq(rb.idle_bytes, big->cap + small->cap + mid->cap);
	cr_assert_eq(get(&rb, 9000), mid);
	cr_assert_eq(get(&rb, 10), small);
	cr_assert_eq(get(&rb, 10), big);
	cr_assert_eq(rb.idle_bytes, 0);
	cr_assert_eq(regs, 3, "idle buffers are reused, not registered again");
	rpcrdma_replybufs_put(&rb, big);
	rpcrdma_replybufs_put(&rb, small);
	rpcrdma_replybufs_put(&rb, mid);
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(deregs, 3);
}

Test(reply_buffers, posted_buffers_complete_in_posting_order_only)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *a, *b;

	setup(&rb, 1u << 20);
	a = get(&rb, 100);
	b = get(&rb, 100);
	rpcrdma_replybufs_posted(&rb, a);
	rpcrdma_replybufs_posted(&rb, b);
	cr_assert_eq(rb.in_flight, 2);
	cr_assert_eq(rpcrdma_replybufs_complete(&rb, (uintptr_t)b), -EPROTO);
	cr_assert_eq(rpcrdma_replybufs_complete(&rb, 0), -EPROTO);
	cr_assert_eq(rb.in_flight, 2, "a refused completion changes nothing");
	cr_assert_eq(rpcrdma_replybufs_complete(&rb, (uintptr_t)a), 0);
	cr_assert_eq(rpcrdma_replybufs_complete(&rb, (uintptr_t)b), 0);
	cr_assert_eq(rb.in_flight, 0);
	cr_assert_eq(rpcrdma_replybufs_complete(&rb, (uintptr_t)b), -EPROTO, "nothing is posted");
	cr_assert_eq(rb.idle_bytes, a->cap + b->cap);
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, deregs);
}

Test(reply_buffers, idle_buffers_beyond_the_budget_are_freed_but_one_is_always_kept)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *b[4], *huge;

	setup(&rb, 16384); /* two 8 KiB buffers */
	for (int i = 0; i < 4; i++) {
		b[i] = get(&rb, 100);
		rpcrdma_replybufs_posted(&rb, b[i]);
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(rpcrdma_replybufs_complete(&rb, (uintptr_t)b[i]), 0);
	cr_assert_eq(rb.idle_bytes, 16384);
	cr_assert_eq(deregs, 2);
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, deregs);

	setup(&rb, 16384);
	huge = get(&rb, 1u << 20); /* above the budget, but the only idle one: kept */
	rpcrdma_replybufs_put(&rb, huge);
	cr_assert_eq(deregs, 0);
	cr_assert_eq(get(&rb, 1u << 20), huge, "a stream of large replies registers nothing");
	rpcrdma_replybufs_put(&rb, huge);
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, deregs);
}

Test(reply_buffers, destroy_frees_posted_buffers_too)
{
	struct rpcrdma_replybufs rb;

	setup(&rb, 1u << 20);
	for (int i = 0; i < 3; i++)
		rpcrdma_replybufs_posted(&rb, get(&rb, 5000));
	rpcrdma_replybufs_put(&rb, get(&rb, 5000));
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, 4);
	cr_assert_eq(deregs, 4);
	cr_assert_eq(rb.in_flight, 0);
	cr_assert_null(rb.head);
	cr_assert_null(rb.idle);
}

Test(reply_buffers, a_failed_registration_is_reported_and_leaks_nothing)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *b = NULL;

	setup(&rb, 1u << 20);
	fail_next_reg = 1;
	cr_assert_eq(rpcrdma_replybufs_get(&rb, 100, &b), -EFAULT);
	cr_assert_null(b);
	rpcrdma_replybufs_put(&rb, NULL);
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, 0);
	cr_assert_eq(deregs, 0);
}
