/*
 * nfs-client-demo's pipelined copy (nfs_transfer.c) against a scripted
 * NFS server: a CLIENT that serves READ, WRITE and COMMIT from a file in
 * memory, under a lock (the transfer's threads call it at once), and can
 * fail READs from an offset, restart (change its write verifier) after
 * given WRITEs, and answer FILE_SYNC WRITEs as UNSTABLE from a given one.  The local side
 * is a real temporary file.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs_proc.h"
#include "nfs_transfer.h"

#define CHUNK 4096u
#define MAX_RESTARTS 4

struct server {
	pthread_mutex_t lock;
	char *data;
	uint64_t size, cap;
	uint64_t read_fail_at;            /* READs from here fail with NFS3ERR_IO */
	unsigned int restart_at[MAX_RESTARTS]; /* the verifier changes after these WRITE counts */
	unsigned int weak_from;           /* FILE_SYNC WRITEs from this one answered UNSTABLE; 0: none */
	unsigned int generation, writes, file_sync_writes, commits;
};

/* The session's worker clients: the scripted one; the n-th request fails when fail_nth is n. */
static unsigned int worker_requests, worker_fail_nth;

CLIENT *nfs_session_worker_client(struct nfs_session *s, struct nfs_status *st)
{
	if (__atomic_add_fetch(&worker_requests, 1, __ATOMIC_SEQ_CST) == worker_fail_nth) {
		*st = nfs_rpc_err(RPC_CANTSEND);
		return NULL;
	}
	return s->clnt;
}

void nfs_session_worker_release(struct nfs_session *s, CLIENT *cl)
{
	(void)s;
	(void)cl;
}

/* Renewals of the session's own client (over TCP it sat idle during the pass). */
static unsigned int renewals, renewals_at_commit;

void nfs_session_renew(struct nfs_session *s)
{
	(void)s;
	renewals++;
}

static void server_verf(const struct server *sv, char *verf)
{
	memset(verf, 0, NFS3_WRITEVERFSIZE);
	memcpy(verf, &sv->generation, sizeof(sv->generation));
}

static bool_t answer_read(struct server *sv, const READ3args *a, XDR *x)
{
	READ3res r = { .status = NFS3_OK };
	READ3resok *ok = &r.READ3res_u.resok;
	uint64_t end = a->offset + a->count;

	if (a->offset >= sv->read_fail_at) {
		r.status = NFS3ERR_IO;
		return xdr_READ3res(x, &r);
	}
	if (end > sv->size)
		end = sv->size;
	ok->count = a->offset < end ? (count3)(end - a->offset) : 0;
	ok->eof = end == sv->size;
	ok->data.data_len = ok->count;
	ok->data.data_val = sv->data + (a->offset < sv->size ? a->offset : sv->size);
	return xdr_READ3res(x, &r);
}

static bool_t answer_write(struct server *sv, const WRITE3args *a, XDR *x)
{
	WRITE3res r = { .status = NFS3_OK };
	WRITE3resok *ok = &r.WRITE3res_u.resok;
	uint64_t end = a->offset + a->data.data_len;
	unsigned int n = ++sv->writes;

	cr_assert_leq(end, sv->cap);
	memcpy(sv->data + a->offset, a->data.data_val, a->data.data_len);
	if (end > sv->size)
		sv->size = end;
	ok->count = a->data.data_len;
	ok->committed = a->stable == FILE_SYNC && !(sv->weak_from && n >= sv->weak_from) ? FILE_SYNC
										: UNSTABLE;
	sv->file_sync_writes += a->stable == FILE_SYNC;
	server_verf(sv, ok->verf);
	for (int i = 0; i < MAX_RESTARTS; i++)
		sv->generation += sv->restart_at[i] && n == sv->restart_at[i];
	return xdr_WRITE3res(x, &r);
}

static bool_t answer_commit(struct server *sv, XDR *x)
{
	COMMIT3res r = { .status = NFS3_OK };

	sv->commits++;
	renewals_at_commit = renewals;
	server_verf(sv, r.COMMIT3res_u.resok.verf);
	return xdr_COMMIT3res(x, &r);
}

static enum clnt_stat server_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *args,
				  xdrproc_t xres, void *res, struct timeval tv)
{
	struct server *sv = (struct server *)cl->cl_private;
	size_t cap = CHUNK + 1024;
	char *buf = malloc(cap);
	bool_t ok;
	XDR x;

	(void)xargs;
	(void)tv;
	cr_assert_not_null(buf);
	pthread_mutex_lock(&sv->lock);
	xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
	if (proc == NFSPROC3_READ)
		ok = answer_read(sv, args, &x);
	else if (proc == NFSPROC3_WRITE)
		ok = answer_write(sv, args, &x);
	else
		ok = proc == NFSPROC3_COMMIT && answer_commit(sv, &x);
	pthread_mutex_unlock(&sv->lock);
	if (ok) {
		xdrmem_create(&x, buf, xdr_getpos(&x), XDR_DECODE);
		ok = xres(&x, res);
	}
	free(buf);
	return ok ? RPC_SUCCESS : RPC_CANTDECODERES;
}

static bool_t server_freeres(CLIENT *cl, xdrproc_t xres, void *res)
{
	(void)cl;
	xdr_free(xres, res);
	return TRUE;
}

static const struct clnt_ops server_ops = {
	.cl_call = server_call,
	.cl_freeres = server_freeres,
};

struct rig {
	struct server sv;
	CLIENT cl;
	struct nfs_session s;
	struct nfs_fh fh;
	FILE *local;
	int fd;
};

static void fill(char *p, uint64_t n, unsigned int seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (char)(i * 131 + seed * 7 + (i >> 9));
}

/* A server file of @size bytes (room for @cap) and an empty local file. */
static void rig_init(struct rig *r, uint64_t size, uint64_t cap)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->sv.lock, NULL);
	r->sv.cap = cap;
	r->sv.data = calloc(1, cap);
	cr_assert_not_null(r->sv.data);
	r->sv.size = size;
	fill(r->sv.data, size, 1);
	r->sv.read_fail_at = UINT64_MAX;
	r->cl.cl_ops = (struct clnt_ops *)&server_ops;
	r->cl.cl_private = (char *)&r->sv;
	r->s.clnt = &r->cl;
	r->s.tv = (struct timeval){ 1, 0 };
	r->s.rsize = r->s.wsize = CHUNK;
	r->fh.len = 4;
	memcpy(r->fh.data, "file", 4);
	r->local = tmpfile();
	cr_assert_not_null(r->local);
	r->fd = fileno(r->local);
	worker_requests = worker_fail_nth = 0;
}

static void rig_destroy(struct rig *r)
{
	fclose(r->local);
	free(r->sv.data);
	pthread_mutex_destroy(&r->sv.lock);
}

static void local_write(struct rig *r, const char *p, uint64_t n)
{
	cr_assert_eq(pwrite(r->fd, p, n, 0), (ssize_t)n);
}

/* The local file holds exactly @n bytes, equal to the server's first @n. */
static void assert_local_is_prefix(struct rig *r, uint64_t n)
{
	struct stat sb;
	char *p = malloc(n + 1);

	cr_assert_not_null(p);
	cr_assert_eq(fstat(r->fd, &sb), 0);
	cr_assert_eq((uint64_t)sb.st_size, n, "local size %lld, expected %llu",
		     (long long)sb.st_size, (unsigned long long)n);
	cr_assert_eq(pread(r->fd, p, n, 0), (ssize_t)n);
	cr_assert_eq(memcmp(p, r->sv.data, n), 0);
	free(p);
}

/* ---- get --------------------------------------------------------------------------------- */

Test(nfs_transfer, get_copies_the_file_over_a_longer_local_one)
{
	struct rig r;
	struct nfs_transfer_result res;
	char junk[50000];
	uint64_t size = 10 * CHUNK + 123;

	rig_init(&r, size, size);
	memset(junk, 'j', sizeof(junk));
	local_write(&r, junk, sizeof(junk));
	cr_assert(!nfs_failed(nfs_transfer_get(&r.s, &r.fh, r.fd, size, 4, NULL, &res)));
	cr_assert_eq(res.bytes, size);
	assert_local_is_prefix(&r, size);
	rig_destroy(&r);
}

Test(nfs_transfer, get_failure_cuts_the_local_file_to_the_copied_prefix)
{
	struct rig r;
	struct nfs_transfer_result res;
	struct nfs_status st;
	char junk[50000];
	uint64_t size = 10 * CHUNK;

	rig_init(&r, size, size);
	r.sv.read_fail_at = 5 * CHUNK;
	memset(junk, 'j', sizeof(junk));
	local_write(&r, junk, sizeof(junk));
	st = nfs_transfer_get(&r.s, &r.fh, r.fd, size, 4, NULL, &res);
	cr_assert(nfs_is(st, NFS3ERR_IO));
	cr_assert_eq(res.bytes, 5 * CHUNK);
	assert_local_is_prefix(&r, 5 * CHUNK);
	rig_destroy(&r);
}

Test(nfs_transfer, get_refused_from_the_start_leaves_the_local_file_as_it_was)
{
	struct rig r;
	struct nfs_transfer_result res;
	struct stat sb;
	char junk[5000], back[5000];

	rig_init(&r, 3 * CHUNK, 3 * CHUNK);
	r.sv.read_fail_at = 0;
	memset(junk, 'j', sizeof(junk));
	local_write(&r, junk, sizeof(junk));
	cr_assert(nfs_is(nfs_transfer_get(&r.s, &r.fh, r.fd, 3 * CHUNK, 4, NULL, &res),
			 NFS3ERR_IO));
	cr_assert_eq(res.bytes, 0);
	cr_assert_eq(fstat(r.fd, &sb), 0);
	cr_assert_eq(sb.st_size, (off_t)sizeof(junk));
	cr_assert_eq(pread(r.fd, back, sizeof(back), 0), (ssize_t)sizeof(back));
	cr_assert_eq(memcmp(back, junk, sizeof(junk)), 0);
	rig_destroy(&r);
}

Test(nfs_transfer, get_of_a_file_shorter_than_expected_ends_at_its_end)
{
	struct rig r;
	struct nfs_transfer_result res;
	uint64_t real = 3 * CHUNK + 10;

	rig_init(&r, real, real);
	cr_assert(!nfs_failed(nfs_transfer_get(&r.s, &r.fh, r.fd, 8 * CHUNK, 4, NULL, &res)));
	cr_assert_eq(res.bytes, real);
	assert_local_is_prefix(&r, real);
	rig_destroy(&r);
}

/* A worker that gets no client fails the copy; what is left is a prefix, never a gap. */
Test(nfs_transfer, get_with_a_worker_that_could_not_start_keeps_a_prefix)
{
	for (unsigned int nth = 1; nth <= 4; nth++) {
		struct rig r;
		struct nfs_transfer_result res;
		struct nfs_status st;
		uint64_t size = 40 * CHUNK;

		rig_init(&r, size, size);
		worker_fail_nth = nth;
		st = nfs_transfer_get(&r.s, &r.fh, r.fd, size, 4, NULL, &res);
		cr_assert_eq(st.kind, NFS_STATUS_RPC);
		cr_assert_leq(res.bytes, size);
		assert_local_is_prefix(&r, res.bytes);
		rig_destroy(&r);
	}
}

/* ---- put --------------------------------------------------------------------------------- */

#define PUT_SIZE (10 * CHUNK + 7) /* 11 WRITEs a pass */

/* How the server behaves during a put: restarts after these WRITEs, weak FILE_SYNC from one. */
struct put_case {
	unsigned int restart_at[2], weak_from;
};

/*
 * Put PUT_SIZE bytes (pattern 2) to a server set up as @pc; when the put
 * succeeds, the server's file must equal them.  @r is left for the
 * caller's checks of the server's counters, then rig_destroy().
 */
static struct nfs_status put_run(struct rig *r, struct put_case pc,
				 struct nfs_transfer_result *res)
{
	char *src = malloc(PUT_SIZE);
	struct nfs_status st;

	cr_assert_not_null(src);
	rig_init(r, 0, PUT_SIZE);
	memcpy(r->sv.restart_at, pc.restart_at, sizeof(pc.restart_at));
	r->sv.weak_from = pc.weak_from;
	fill(src, PUT_SIZE, 2);
	local_write(r, src, PUT_SIZE);
	st = nfs_transfer_put(&r->s, &r->fh, r->fd, PUT_SIZE, 4, NULL, res);
	if (!nfs_failed(st)) {
		cr_assert_eq(res->bytes, PUT_SIZE);
		cr_assert_eq(r->sv.size, PUT_SIZE);
		cr_assert_eq(memcmp(r->sv.data, src, PUT_SIZE), 0);
	}
	free(src);
	return st;
}

Test(nfs_transfer, put_writes_unstable_then_commits_once)
{
	struct rig r;
	struct nfs_transfer_result res;

	renewals = 0;
	cr_assert(!nfs_failed(put_run(&r, (struct put_case){ { 0 }, 0 }, &res)));
	cr_assert_eq(res.rewrites, 0);
	cr_assert_eq(r.sv.writes, 11);
	cr_assert_eq(r.sv.file_sync_writes, 0);
	cr_assert_eq(r.sv.commits, 1);
	cr_assert_eq(renewals_at_commit, 1, "the session's client renewed after the pass, before COMMIT");
	rig_destroy(&r);
}

Test(nfs_transfer, put_after_a_server_restart_writes_everything_again_file_sync)
{
	struct rig r;
	struct nfs_transfer_result res;

	cr_assert(!nfs_failed(put_run(&r, (struct put_case){ { 3 }, 0 }, &res)));
	cr_assert_eq(res.rewrites, 1);
	cr_assert_eq(r.sv.writes, 22);
	cr_assert_eq(r.sv.file_sync_writes, 11);
	cr_assert_eq(r.sv.commits, 1, "FILE_SYNC answered as such needs no COMMIT");
	rig_destroy(&r);
}

Test(nfs_transfer, put_sees_a_restart_after_the_last_write_in_the_commit)
{
	struct rig r;
	struct nfs_transfer_result res;

	cr_assert(!nfs_failed(put_run(&r, (struct put_case){ { 11 }, 0 }, &res)));
	cr_assert_eq(res.rewrites, 1);
	cr_assert_eq(r.sv.file_sync_writes, 11);
	rig_destroy(&r);
}

Test(nfs_transfer, put_commits_a_rewrite_the_server_answered_unstable)
{
	struct rig r;
	struct nfs_transfer_result res;

	cr_assert(!nfs_failed(put_run(&r, (struct put_case){ { 3 }, 1 }, &res)));
	cr_assert_eq(res.rewrites, 1);
	cr_assert_eq(r.sv.commits, 2, "the rewrite answered UNSTABLE was not committed");
	rig_destroy(&r);
}

/* WRITEs answered FILE_SYNC are safe; only the others need the COMMIT's verifier. */
Test(nfs_transfer, put_rewrite_answered_file_sync_then_unstable_after_a_restart_is_committed)
{
	struct rig r;
	struct nfs_transfer_result res;

	/* the restart after the rewrite's fifth WRITE, UNSTABLE answers from its sixth */
	cr_assert(!nfs_failed(put_run(&r, (struct put_case){ { 3, 16 }, 17 }, &res)));
	cr_assert_eq(res.rewrites, 1);
	cr_assert_eq(r.sv.commits, 2);
	rig_destroy(&r);
}

Test(nfs_transfer, put_fails_when_the_server_restarts_again_during_an_unstable_rewrite)
{
	struct rig r;
	struct nfs_transfer_result res;

	/* WRITEs 12 to 22 are the rewrite */
	cr_assert(nfs_is(put_run(&r, (struct put_case){ { 3, 15 }, 1 }, &res), NFS3ERR_IO));
	cr_assert_eq(res.rewrites, 1);
	rig_destroy(&r);
}

Test(nfs_transfer, put_fails_when_the_server_restarts_between_an_unstable_rewrite_and_its_commit)
{
	struct rig r;
	struct nfs_transfer_result res;

	cr_assert(nfs_is(put_run(&r, (struct put_case){ { 3, 22 }, 1 }, &res), NFS3ERR_IO));
	cr_assert_eq(r.sv.commits, 2);
	rig_destroy(&r);
}
