/*
 * A listener's table of upper-layer bindings: lookups, replacement, the
 * eight-binding limit, a refused commit, references, and a lookup made
 * while a binding is being made (it waits for it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "rpcrdma/svc_ulbs.h"
#include "thread_sleep.h"

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
	svc_ulbs_put(conn); /* asan-tests report a leak or a double free */
	svc_ulbs_put(NULL);
}

/*
 * A call dispatched as soon as svc_reg() registered its program is
 * answered with the program's binding: its lookup, made while the
 * binding is being committed, waits for it.
 */
struct racing_lookup {
	struct svc_ulbs *u;
	pthread_t thread;
	pid_t tid;
	atomic_bool returned;
	uint32_t mask;
};

static void *racing_lookup_run(void *arg)
{
	struct racing_lookup *r = arg;

	__atomic_store_n(&r->tid, gettid(), __ATOMIC_RELEASE);
	r->mask = svc_ulbs_res_ddp(r->u, 100003, 3, 3);
	atomic_store(&r->returned, true);
	return NULL;
}

static bool racing_lookup_returned(void *arg)
{
	return atomic_load(&((struct racing_lookup *)arg)->returned);
}

static bool commit_while_looked_up(void *arg)
{
	struct racing_lookup *r = arg;

	cr_assert_eq(pthread_create(&r->thread, NULL, racing_lookup_run, r), 0);
	wait_asleep_or_done(&r->tid, racing_lookup_returned, r);
	cr_assert_not(atomic_load(&r->returned), "a lookup returned while the binding was made");
	return true;
}

Test(svc_ulbs, a_lookup_during_the_commit_waits_for_the_binding, .timeout = 20)
{
	struct racing_lookup r = { .u = svc_ulbs_new() };

	cr_assert_eq(svc_ulbs_bind(r.u, 100003, 3, &ulb_a, commit_while_looked_up, &r), 0);
	pthread_join(r.thread, NULL);
	cr_assert_eq(r.mask, 1, "the lookup saw mask %u, not the new binding's", r.mask);
	svc_ulbs_put(r.u);
}
