/*
 * cmd_bench: a closed-loop load generator: N threads each keep one call
 * outstanding (READ, WRITE or GETATTR) for S seconds; every call's latency
 * is kept and the percentiles come from all of them.  read and write use
 * the file BENCH_FILE in the export root (write creates it; read writes it
 * first when it is missing or shorter than BENCH_REGION) and cycle through
 * its first BENCH_REGION bytes.  write ends with a COMMIT, inside the
 * timed interval.  The clock starts once every thread has its CLIENT (over
 * TCP each connects its own; over RDMA they share the session's) and stops
 * at the last thread's last reply, so that connects and disconnects are
 * not timed on one side only.
 */
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs_proc.h"
#include "progress.h"

#define BENCH_FILE "bench.dat"
#define BENCH_REGION (64ull << 20)

enum bench_kind { BENCH_READ, BENCH_WRITE, BENCH_GETATTR };

struct bench {
	struct cli *c;
	enum bench_kind kind;
	struct nfs_node file;
	uint32_t size;
	double deadline;
	pthread_mutex_t lock;
	pthread_cond_t gate;     /* ready and started, under lock */
	unsigned int ready;      /* threads done getting their CLIENT */
	bool started;            /* deadline is set: the timed part began */
	uint64_t next_off;
	struct nfs_status err;
};

struct bench_thread {
	struct bench *b;
	pthread_t th;
	double *lat;
	size_t n, cap;
	struct nfs_status err;
	double ended;            /* when its last call returned: before its CLIENT goes */
};

static bool keep(struct bench_thread *t, double lat)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		double *v = realloc(t->lat, cap * sizeof(*v));

		if (!v)
			return false;
		t->lat = v;
		t->cap = cap;
	}
	t->lat[t->n++] = lat;
	return true;
}

static uint64_t next_offset(struct bench *b)
{
	uint64_t off;

	pthread_mutex_lock(&b->lock);
	off = b->next_off;
	b->next_off = (b->next_off + b->size) % (BENCH_REGION - BENCH_REGION % b->size);
	pthread_mutex_unlock(&b->lock);
	return off;
}

static struct nfs_status one_call(struct bench *b, CLIENT *cl, char *buf)
{
	struct nfs_write_res w;
	uint32_t n;
	bool eof;
	fattr3 a;

	switch (b->kind) {
	case BENCH_READ:
		return nfs3_read(b->c->s, cl, &b->file.fh, next_offset(b), b->size, buf, &n, &eof);
	case BENCH_WRITE:
		return nfs3_write(b->c->s, cl, &b->file.fh, next_offset(b), buf, b->size, UNSTABLE,
				  &w);
	case BENCH_GETATTR:
		break;
	}
	return nfs3_getattr(b->c->s, cl, &b->c->s->root, &a);
}

/* A thread with its CLIENT (or its error) waits here until the clock starts. */
static void bench_gate_pass(struct bench *b)
{
	pthread_mutex_lock(&b->lock);
	b->ready++;
	pthread_cond_broadcast(&b->gate);
	while (!b->started)
		pthread_cond_wait(&b->gate, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

/* Once the @nt threads started are ready: the clock starts now, for *@seconds. */
static double bench_gate_open(struct bench *b, unsigned int nt, double seconds)
{
	double t0;

	pthread_mutex_lock(&b->lock);
	while (b->ready < nt)
		pthread_cond_wait(&b->gate, &b->lock);
	t0 = progress_now();
	b->deadline = t0 + seconds;
	b->started = true;
	pthread_cond_broadcast(&b->gate);
	pthread_mutex_unlock(&b->lock);
	return t0;
}

static void *bench_worker(void *arg)
{
	struct bench_thread *t = arg;
	struct bench *b = t->b;
	CLIENT *cl = nfs_session_worker_client(b->c->s, &t->err);
	char *buf = cl ? calloc(1, b->size ? b->size : 1) : NULL;
	double t0;

	if (cl && !buf)
		t->err = nfs_local_err(ENOMEM);
	bench_gate_pass(b);
	while (buf && (t0 = progress_now()) < b->deadline) {
		t->err = one_call(b, cl, buf);
		if (nfs_failed(t->err))
			break;
		if (!keep(t, progress_now() - t0)) {
			t->err = nfs_local_err(ENOMEM);
			break;
		}
	}
	t->ended = progress_now(); /* a TCP thread's disconnect is not timed, as its connect is not */
	free(buf);
	if (cl)
		nfs_session_worker_release(b->c->s, cl);
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double percentile(const double *v, size_t n, unsigned int p)
{
	size_t i = n ? (n * p + 99) / 100 : 0;

	return n ? v[i ? i - 1 : 0] : 0;
}

static void report(const struct cli_command *cmd, const struct bench *b, double *all, size_t n,
		   double seconds)
{
	double ops = seconds > 0 ? (double)n / seconds : 0;

	qsort(all, n, sizeof(*all), by_value);
	printf("bench %s: %zu ops in %.2f s, %.1f ops/s", cmd->bench_kind, n, seconds, ops);
	if (b->kind != BENCH_GETATTR)
		printf(", %.1f MB/s", ops * b->size / 1e6);
	printf(", latency p50 %.3f ms p90 %.3f ms p99 %.3f ms (%u thread%s", percentile(all, n, 50) * 1e3,
	       percentile(all, n, 90) * 1e3, percentile(all, n, 99) * 1e3, cmd->bench_threads,
	       cmd->bench_threads == 1 ? "" : "s");
	if (b->kind != BENCH_GETATTR)
		printf(", %u bytes", b->size);
	printf(")\n");
}

/* BENCH_FILE, created or truncated for write, filled if too short for read. */
static struct nfs_status bench_file(struct bench *b)
{
	struct nfs_session *s = b->c->s;
	struct nfs_status st = nfs3_lookup(s, &s->root, BENCH_FILE, &b->file);
	struct nfs_write_res w = { 0 };
	char *buf;

	if (b->kind == BENCH_READ && !nfs_failed(st) && b->file.attr.size >= BENCH_REGION)
		return st;
	st = nfs3_create(s, &s->root, BENCH_FILE, 0644, NULL, &b->file, NULL);
	if (nfs_failed(st) || b->kind == BENCH_WRITE)
		return st;
	buf = calloc(1, s->wsize);
	if (!buf)
		return nfs_local_err(ENOMEM);
	for (uint64_t off = 0; off < BENCH_REGION && !nfs_failed(st); off += w.done) {
		st = nfs3_write(s, NULL, &b->file.fh, off, buf, s->wsize, UNSTABLE, &w);
		if (!nfs_failed(st) && w.done == 0)
			st = nfs_err(NFS3ERR_IO);
	}
	free(buf);
	return nfs_failed(st) ? st : nfs3_commit(s, NULL, &b->file.fh, w.verf);
}

static struct nfs_status bench_run(struct bench *b, struct bench_thread *t, unsigned int nt,
				   double *seconds)
{
	char verf[NFS3_WRITEVERFSIZE];
	unsigned int started = 0;
	struct nfs_status st = nfs_ok();
	double t0, end, commit;

	for (; started < nt; started++) {
		t[started].b = b;
		if (pthread_create(&t[started].th, NULL, bench_worker, &t[started]))
			break;
	}
	t0 = end = bench_gate_open(b, started, *seconds);
	for (unsigned int i = 0; i < started; i++) {
		pthread_join(t[i].th, NULL);
		if (nfs_failed(t[i].err) && !nfs_failed(st))
			st = t[i].err;
		if (t[i].ended > end)
			end = t[i].ended;
	}
	if (started < nt && !nfs_failed(st))
		st = nfs_local_err(EAGAIN);
	commit = progress_now();
	if (!nfs_failed(st) && b->kind == BENCH_WRITE)
		st = nfs3_commit(b->c->s, NULL, &b->file.fh, verf);
	*seconds = end - t0 + (progress_now() - commit); /* the COMMIT is timed */
	return st;
}

int cmd_bench(struct cli *c, const struct cli_command *cmd)
{
	struct bench b = { .c = c, .err = { NFS_STATUS_OK, 0 } };
	struct bench_thread *t = calloc(cmd->bench_threads, sizeof(*t));
	uint32_t limit;
	double seconds = cmd->bench_seconds, *all = NULL;
	size_t n = 0;
	struct nfs_status st = nfs_ok();
	int rc = NFS_EXIT_OK;

	b.kind = !strcmp(cmd->bench_kind, "read") ? BENCH_READ :
		 !strcmp(cmd->bench_kind, "write") ? BENCH_WRITE : BENCH_GETATTR;
	limit = b.kind == BENCH_READ ? c->s->rsize : c->s->wsize;
	b.size = cmd->bench_size ? cmd->bench_size : limit;
	if (b.kind != BENCH_GETATTR && b.size > limit) {
		cli_msg("bench: --size %u is larger than the %s %u", b.size,
			b.kind == BENCH_READ ? "rsize" : "wsize", limit);
		free(t);
		return NFS_EXIT_USAGE;
	}
	if (!t || pthread_mutex_init(&b.lock, NULL)) {
		free(t);
		return cli_fail(c, "bench", nfs_local_err(ENOMEM));
	}
	if (pthread_cond_init(&b.gate, NULL)) {
		pthread_mutex_destroy(&b.lock);
		free(t);
		return cli_fail(c, "bench", nfs_local_err(ENOMEM));
	}
	if (b.kind != BENCH_GETATTR)
		st = bench_file(&b);
	if (!nfs_failed(st))
		st = bench_run(&b, t, cmd->bench_threads, &seconds);
	nfs_session_renew(c->s); /* idle while the threads' own connections ran */
	for (unsigned int i = 0; i < cmd->bench_threads; i++)
		n += t[i].n;
	all = nfs_failed(st) ? NULL : malloc((n ? n : 1) * sizeof(*all));
	if (!nfs_failed(st) && !all)
		st = nfs_local_err(ENOMEM);
	if (nfs_failed(st)) {
		rc = cli_fail(c, b.kind == BENCH_GETATTR ? "bench" : BENCH_FILE, st);
	} else {
		n = 0;
		for (unsigned int i = 0; i < cmd->bench_threads; i++) {
			if (t[i].n)
				memcpy(all + n, t[i].lat, t[i].n * sizeof(*all));
			n += t[i].n;
		}
		report(cmd, &b, all, n, seconds);
	}
	for (unsigned int i = 0; i < cmd->bench_threads; i++)
		free(t[i].lat);
	free(all);
	free(t);
	pthread_cond_destroy(&b.gate);
	pthread_mutex_destroy(&b.lock);
	return rc;
}
