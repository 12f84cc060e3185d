/*
 * The server's registered buffers (replies, and Read sinks on IB/RoCE):
 * sizes, smallest fit, the FIFO of posted buffers, the keep budget, the
 * access they are registered with.
 */
#include <errno.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <sanitizer/asan_interface.h>

#include "rpcrdma/reply_buffers.h"

/* Registration is counted here; the buffers' memory is real. */
static int regs, deregs, fail_next_reg, want_access;

static struct ibv_mr *count_reg(struct ibv_pd *pd, const void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	(void)pd;
	cr_assert_eq(access, want_access, "registered with access %#x, the pool's is %#x", access,
		     want_access);
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

static bool count_dereg(struct ibv_mr *mr)
{
	deregs++;
	free(mr);
	return true;
}

/* A reply pool as the server makes one: local read only, any one buffer kept. */
static void setup(struct rpcrdma_replybufs *rb, uint64_t keep)
{
	regs = deregs = fail_next_reg = want_access = 0;
	rpcrdma_replybufs_init(rb, NULL, 0, keep, UINT64_MAX);
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
		b->addr[len[i] - 1] = 1; /* the memory is really there (ASan) */
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

/* One large reply, then small ones two at a time: the small ones stay, the large one goes. */
Test(reply_buffers, a_large_idle_buffer_gives_way_to_small_ones_over_the_budget)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *huge, *a, *b;

	setup(&rb, 16384);
	huge = get(&rb, 1u << 20);
	rpcrdma_replybufs_put(&rb, huge); /* the only idle one: kept */
	for (int i = 0; i < 100; i++) {
		a = get(&rb, 100);
		b = get(&rb, 100);
		rpcrdma_replybufs_put(&rb, a);
		rpcrdma_replybufs_put(&rb, b);
	}
	cr_assert_leq(regs, 3, "%d registrations: the small replies registered anew", regs);
	cr_assert_leq(rb.idle_bytes, 16384, "idle %llu bytes: the large buffer stayed",
		      (unsigned long long)rb.idle_bytes);
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

Test(reply_buffers, a_sink_pool_registers_for_local_write_and_never_remote_access)
{
	struct rpcrdma_replybufs rb;

	regs = deregs = fail_next_reg = 0;
	want_access = IBV_ACCESS_LOCAL_WRITE;
	rpcrdma_replybufs_init(&rb, NULL, IBV_ACCESS_LOCAL_WRITE, 1u << 20, 2u << 20);
	rb.ops = (struct rpcrdma_replybuf_reg){ .reg = count_reg, .dereg = count_dereg };
	rpcrdma_replybufs_put(&rb, get(&rb, 4200));
	rpcrdma_replybufs_destroy(&rb);

	/* remote access asked for by mistake is not granted */
	rpcrdma_replybufs_init(&rb, NULL,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			       1u << 20, 2u << 20);
	rb.ops = (struct rpcrdma_replybuf_reg){ .reg = count_reg, .dereg = count_dereg };
	rpcrdma_replybufs_put(&rb, get(&rb, 4200));
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(regs, 2);
	cr_assert_eq(regs, deregs);
}

Test(reply_buffers, one_buffer_over_the_budget_is_kept_only_up_to_the_size_limit)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *b;

	regs = deregs = fail_next_reg = 0;
	want_access = IBV_ACCESS_LOCAL_WRITE;
	rpcrdma_replybufs_init(&rb, NULL, IBV_ACCESS_LOCAL_WRITE, 1u << 20, 2u << 20);
	rb.ops = (struct rpcrdma_replybuf_reg){ .reg = count_reg, .dereg = count_dereg };
	b = get(&rb, (2u << 20) - 100); /* over the budget, within the limit: kept */
	rpcrdma_replybufs_put(&rb, b);
	cr_assert_eq(deregs, 0);
	cr_assert_eq(get(&rb, 1u << 20), b);
	rpcrdma_replybufs_put(&rb, b);
	b = get(&rb, (2u << 20) + 1); /* over the limit: freed even with nothing idle */
	rpcrdma_replybufs_destroy(&rb);
	cr_assert_eq(deregs, 1);
	rpcrdma_replybufs_put(&rb, b);
	cr_assert_eq(deregs, 2);
	cr_assert_null(rb.idle);
	cr_assert_eq(rb.idle_bytes, 0);
	cr_assert_eq(regs, deregs);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(UNDER_ASAN)
/* ASan build only: the part of a lent buffer past the request is poisoned until it is given back. */
Test(reply_buffers, asan_the_tail_past_the_request_is_poisoned_while_lent)
{
	struct rpcrdma_replybufs rb;
	struct rpcrdma_replybuf *b;

	setup(&rb, 1u << 20);
	b = get(&rb, 5000);
	cr_assert_eq(b->cap, 8192);
	cr_assert(!__asan_address_is_poisoned(b->addr + 4999));
	cr_assert(__asan_address_is_poisoned(b->addr + 5000));
	cr_assert(__asan_address_is_poisoned(b->addr + b->cap - 1));
	rpcrdma_replybufs_put(&rb, b);
	cr_assert(!__asan_address_is_poisoned(b->addr + 5000), "given back: clean again");
	cr_assert_eq(get(&rb, 8000), b, "reused");
	cr_assert(!__asan_address_is_poisoned(b->addr + 7999));
	cr_assert(__asan_address_is_poisoned(b->addr + 8000));
	rpcrdma_replybufs_posted(&rb, b);
	cr_assert_eq(rpcrdma_replybufs_complete(&rb, (uintptr_t)b), 0);
	cr_assert(!__asan_address_is_poisoned(b->addr + 8000), "completed: clean again");
	rpcrdma_replybufs_destroy(&rb);
}
#endif
