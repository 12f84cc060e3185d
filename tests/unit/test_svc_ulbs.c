/*
 * A listener's table of upper-layer bindings: lookups, replacement, the
 * eight-binding limit, a refused commit, and a binding changed while
 * another thread looks bindings up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include <criterion/criterion.h>

#include "rpcrdma/svc_ulbs.h"

static const struct rpcrdma_ulb_proc procs_a[] = {
	{ .proc = 3, .res_ddp = 1 },
	{ .proc = 6, .res_ddp = 2 },
};
static const struct rpcrdma_ulb ulb_a = { .prog = 100003, .vers = 3, .procs = procs_a, .nprocs = 2 };

static const struct rpcrdma_ulb_proc procs_b[] = { { .proc = 3, .res_ddp = 4 } };
static const struct rpcrdma_ulb ulb_b = { .prog = 100003, .vers = 3, .procs = procs_b, .nprocs = 1 };

static unsigned int commits;

static bool commit_yes(void *arg)
{
	(void)arg;
	commits++;
	return true;
}

static bool commit_no(void *arg)
{
	(void)arg;
	commits++;
	return false;
}

Test(svc_ulbs, lookup_finds_the_procedure_of_the_pair_only)
{
	struct svc_ulbs *u = svc_ulbs_new();

	cr_assert_not_null(u);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 3), 0, "empty table");
	cr_assert_eq(svc_ulbs_bind(u, 100003, 3, &ulb_a, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 3), 1);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 6), 2);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 4), 0, "procedure not in the binding");
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 4, 3), 0, "another version");
	cr_assert_eq(svc_ulbs_res_ddp(u, 100005, 3, 3), 0, "another program");
	svc_ulbs_put(u);
}

Test(svc_ulbs, binding_a_pair_again_replaces_it_even_with_null)
{
	struct svc_ulbs *u = svc_ulbs_new();

	cr_assert_eq(svc_ulbs_bind(u, 100003, 3, &ulb_a, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_bind(u, 100003, 3, &ulb_b, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 3), 4);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 6), 0);
	cr_assert_eq(svc_ulbs_bind(u, 100003, 3, NULL, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 3), 0);
	svc_ulbs_put(u);
}

Test(svc_ulbs, a_ninth_pair_is_refused_before_commit_but_replacing_is_not)
{
	struct svc_ulbs *u = svc_ulbs_new();

	for (rpcvers_t v = 1; v <= SVC_ULBS_MAX; v++)
		cr_assert_eq(svc_ulbs_bind(u, 100003, v, &ulb_a, commit_yes, NULL), 0);
	commits = 0;
	cr_assert_eq(svc_ulbs_bind(u, 100003, SVC_ULBS_MAX + 1, &ulb_a, commit_yes, NULL), -ENOSPC);
	cr_assert_eq(commits, 0, "the registration ran for a binding that cannot be kept");
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, SVC_ULBS_MAX + 1, 3), 0);
	cr_assert_eq(svc_ulbs_bind(u, 100003, SVC_ULBS_MAX, &ulb_b, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, SVC_ULBS_MAX, 3), 4);
	for (rpcvers_t v = 1; v < SVC_ULBS_MAX; v++)
		cr_assert_eq(svc_ulbs_res_ddp(u, 100003, v, 3), 1);
	svc_ulbs_put(u);
}

Test(svc_ulbs, a_refused_commit_leaves_the_table_unchanged)
{
	struct svc_ulbs *u = svc_ulbs_new();

	cr_assert_eq(svc_ulbs_bind(u, 100003, 3, &ulb_a, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_bind(u, 100003, 3, &ulb_b, commit_no, NULL), -EPERM);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100003, 3, 3), 1, "the old binding stays");
	cr_assert_eq(svc_ulbs_bind(u, 100005, 1, &ulb_b, commit_no, NULL), -EPERM);
	cr_assert_eq(svc_ulbs_res_ddp(u, 100005, 1, 3), 0, "no entry for a refused pair");
	/* the refused new pair took no slot: seven more still fit */
	for (rpcvers_t v = 10; v < 10 + SVC_ULBS_MAX - 1; v++)
		cr_assert_eq(svc_ulbs_bind(u, 100005, v, &ulb_a, commit_yes, NULL), 0);
	svc_ulbs_put(u);
}

Test(svc_ulbs, the_last_reference_frees_the_table)
{
	struct svc_ulbs *u = svc_ulbs_new();
	struct svc_ulbs *conn = svc_ulbs_get(u);

	cr_assert_eq(conn, u);
	svc_ulbs_put(u); /* the listener goes first */
	cr_assert_eq(svc_ulbs_bind(conn, 100003, 3, &ulb_a, commit_yes, NULL), 0);
	cr_assert_eq(svc_ulbs_res_ddp(conn, 100003, 3, 3), 1);
	svc_ulbs_put(conn); /* ASan reports a leak or a double free */
	svc_ulbs_put(NULL);
}

/* A reader sees the old binding or the new one, never anything else. */
struct flip {
	struct svc_ulbs *u;
	atomic_bool stop;
	unsigned int bad;
};

static void *look_up(void *arg)
{
	struct flip *f = arg;

	while (!atomic_load(&f->stop)) {
		uint32_t m = svc_ulbs_res_ddp(f->u, 100003, 3, 3);

		f->bad += m != 1 && m != 4;
	}
	return NULL;
}

Test(svc_ulbs, a_binding_changed_while_another_thread_looks_up)
{
	struct flip f = { .u = svc_ulbs_new() };
	pthread_t t;

	cr_assert_eq(svc_ulbs_bind(f.u, 100003, 3, &ulb_a, commit_yes, NULL), 0);
	cr_assert_eq(pthread_create(&t, NULL, look_up, &f), 0);
	for (int i = 0; i < 20000; i++) {
		cr_assert_eq(svc_ulbs_bind(f.u, 100003, 3, i & 1 ? &ulb_a : &ulb_b, commit_yes, NULL), 0);
		cr_assert_eq(svc_ulbs_bind(f.u, 100003 + 1 + (rpcprog_t)(i % 6), 1, &ulb_b, commit_yes,
					   NULL), 0);
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	cr_assert_eq(f.bad, 0, "%u lookups saw neither binding", f.bad);
	svc_ulbs_put(f.u);
}
