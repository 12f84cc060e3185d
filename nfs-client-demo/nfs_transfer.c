/*
 * nfs_transfer: the pipelined copy behind get and put.  The threads share
 * one cursor under a mutex; the first failure stops every thread at its
 * next range.  The calling thread only waits and draws the progress bar.
 */
#include "nfs_transfer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs_proc.h"

struct transfer {
	struct nfs_session *s;
	const struct nfs_fh *fh;
	int fd;
	bool put;
	stable_how how;
	uint32_t chunk;
	uint64_t size;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int running;
	uint64_t next;          /* next offset to hand out */
	uint64_t moved;
	uint64_t eof_at;        /* get: where the file ended early */
	uint64_t fail_at;       /* get: the lowest offset a failed range did not reach */
	bool cut_pending;       /* get: a regular file, to be emptied before the first write */
	struct nfs_status err;
	bool have_verf, verf_changed; /* put: of the WRITEs a COMMIT must cover */
	char verf[NFS3_WRITEVERFSIZE];
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool take_range(struct transfer *t, uint64_t *off, uint32_t *len)
{
	bool ok;

	pthread_mutex_lock(&t->lock);
	ok = !nfs_failed(t->err) && t->next < t->size && t->next < t->eof_at;
	if (ok) {
		*off = t->next;
		*len = t->size - t->next < t->chunk ? (uint32_t)(t->size - t->next) : t->chunk;
		t->next += *len;
	}
	pthread_mutex_unlock(&t->lock);
	return ok;
}

static void record(struct transfer *t, struct nfs_status st, uint64_t moved)
{
	pthread_mutex_lock(&t->lock);
	t->moved += moved;
	if (nfs_failed(st) && !nfs_failed(t->err))
		t->err = st;
	pthread_mutex_unlock(&t->lock);
}

/*
 * A WRITE's bytes, and its verifier.  A WRITE answered FILE_SYNC is on
 * stable storage whatever happens next; any other answer (DATA_SYNC
 * leaves metadata behind; an unknown value) is up to a COMMIT under the
 * same verifier.
 */
static void record_write(struct transfer *t, const struct nfs_write_res *w)
{
	pthread_mutex_lock(&t->lock);
	t->moved += w->done;
	if (w->committed != FILE_SYNC) {
		if (!t->have_verf)
			memcpy(t->verf, w->verf, NFS3_WRITEVERFSIZE);
		else if (memcmp(t->verf, w->verf, NFS3_WRITEVERFSIZE))
			t->verf_changed = true;
		t->have_verf = true;
	}
	pthread_mutex_unlock(&t->lock);
}

static struct nfs_status write_local(int fd, const char *buf, uint32_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return nfs_local_err(n < 0 ? errno : EIO);
		buf += n;
		len -= (uint32_t)n;
		off += (uint64_t)n;
	}
	return nfs_ok();
}

static struct nfs_status read_local(int fd, char *buf, uint32_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return nfs_local_err(n < 0 ? errno : EIO); /* 0: the file shrank */
		buf += n;
		len -= (uint32_t)n;
		off += (uint64_t)n;
	}
	return nfs_ok();
}

/*
 * get's local write.  The file is emptied before the first byte goes in,
 * not before the copy: a copy that fails before any READ returned data
 * (a server that refuses them) leaves an existing file as it was.
 */
static struct nfs_status get_write(struct transfer *t, const char *buf, uint32_t len,
				   uint64_t off)
{
	int err = 0;

	pthread_mutex_lock(&t->lock);
	if (t->cut_pending && ftruncate(t->fd, 0))
		err = errno; /* still pending: no thread writes into the file not emptied */
	else
		t->cut_pending = false;
	pthread_mutex_unlock(&t->lock);
	return err ? nfs_local_err(err) : write_local(t->fd, buf, len, off);
}

/* *@at = min(*@at, @off) under the transfer's lock (eof_at, fail_at). */
static void lower_to(struct transfer *t, uint64_t *at, uint64_t off)
{
	pthread_mutex_lock(&t->lock);
	*at = min_u64(*at, off);
	pthread_mutex_unlock(&t->lock);
}

/* READ [off, off + len), short reads continued; an early eof is recorded. */
static struct nfs_status get_range(struct transfer *t, CLIENT *cl, char *buf, uint64_t off,
				   uint32_t len)
{
	struct nfs_status st = nfs_ok();
	uint32_t got;
	bool eof;

	while (len && !nfs_failed(st)) {
		st = nfs3_read(t->s, cl, t->fh, off, len, buf, &got, &eof);
		if (!nfs_failed(st))
			st = get_write(t, buf, got, off);
		if (nfs_failed(st)) {
			lower_to(t, &t->fail_at, off);
			break;
		}
		record(t, st, got);
		off += got;
		len -= got;
		if (len && eof) { /* nothing without eof is an error (nfs3_read) */
			lower_to(t, &t->eof_at, off);
			break;
		}
	}
	return st;
}

static struct nfs_status put_range(struct transfer *t, CLIENT *cl, char *buf, uint64_t off,
				   uint32_t len)
{
	struct nfs_status st = read_local(t->fd, buf, len, off);
	struct nfs_write_res w;
	uint32_t pos = 0;

	while (pos < len && !nfs_failed(st)) {
		st = nfs3_write(t->s, cl, t->fh, off + pos, buf + pos, len - pos, t->how, &w);
		if (nfs_failed(st))
			break;
		if (w.done == 0)
			return nfs_err(NFS3ERR_IO);
		record_write(t, &w);
		pos += w.done;
	}
	return st;
}

static void *worker(void *arg)
{
	struct transfer *t = arg;
	struct nfs_status st = nfs_ok();
	CLIENT *cl = nfs_session_worker_client(t->s, &st);
	char *buf = cl ? malloc(t->chunk) : NULL;
	uint64_t off;
	uint32_t len;

	if (cl && !buf)
		st = nfs_local_err(ENOMEM);
	while (buf && !nfs_failed(st) && take_range(t, &off, &len))
		st = t->put ? put_range(t, cl, buf, off, len) : get_range(t, cl, buf, off, len);
	free(buf);
	if (cl)
		nfs_session_worker_release(t->s, cl);
	pthread_mutex_lock(&t->lock);
	if (nfs_failed(st) && !nfs_failed(t->err))
		t->err = st;
	t->running--;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void wait_workers(struct transfer *t, struct progress *p, uint64_t base)
{
	struct timespec ts;

	pthread_mutex_lock(&t->lock);
	while (t->running) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&t->cond, &t->lock, &ts);
		if (p) { /* drawn unlocked: a stalled terminal must not stop the workers */
			uint64_t moved = t->moved;

			pthread_mutex_unlock(&t->lock);
			progress_update(p, base + moved, progress_now());
			pthread_mutex_lock(&t->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

/* One pass over the file with @inflight threads. */
static struct nfs_status run_pass(struct transfer *t, unsigned int inflight, struct progress *p,
				  uint64_t base)
{
	pthread_t th[NFS_TRANSFER_INFLIGHT_MAX];
	unsigned int started = 0;

	t->next = 0;
	t->moved = 0;
	t->eof_at = t->fail_at = UINT64_MAX;
	t->err = nfs_ok();
	t->have_verf = t->verf_changed = false;
	if (inflight > NFS_TRANSFER_INFLIGHT_MAX)
		inflight = NFS_TRANSFER_INFLIGHT_MAX;
	if (inflight == 0)
		inflight = 1;
	pthread_mutex_lock(&t->lock);
	for (; started < inflight; started++) {
		t->running++;
		if (pthread_create(&th[started], NULL, worker, t)) {
			t->running--;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (started == 0)
		return nfs_local_err(EAGAIN);
	wait_workers(t, p, base);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	nfs_session_renew(t->s); /* for the COMMIT and whatever comes next */
	return t->err;
}

static struct nfs_status transfer_init(struct transfer *t, struct nfs_session *s,
				       const struct nfs_fh *fh, int fd, uint64_t size, bool put)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->fh = fh;
	t->fd = fd;
	t->size = size;
	t->put = put;
	t->how = UNSTABLE;
	t->chunk = put ? s->wsize : s->rsize;
	if (pthread_mutex_init(&t->lock, NULL))
		return nfs_local_err(ENOMEM);
	if (pthread_cond_init(&t->cond, NULL)) {
		pthread_mutex_destroy(&t->lock);
		return nfs_local_err(ENOMEM);
	}
	return nfs_ok();
}

static void transfer_destroy(struct transfer *t)
{
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
}

struct nfs_status nfs_transfer_get(struct nfs_session *s, const struct nfs_fh *fh, int fd,
				   uint64_t size, unsigned int inflight, struct progress *p,
				   struct nfs_transfer_result *res)
{
	struct transfer t;
	struct nfs_status st = transfer_init(&t, s, fh, fd, size, false);
	struct stat sb;
	bool regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);

	memset(res, 0, sizeof(*res));
	if (nfs_failed(st))
		return st;
	t.cut_pending = regular;
	if (size)
		st = run_pass(&t, inflight, p, 0);
	/*
	 * Every range below t.next was handed out and is done, failed
	 * (fail_at) or found the end (eof_at): the copy is whole up to the
	 * least of them, also when a worker failed before taking a range.
	 */
	res->bytes = min_u64(min_u64(t.fail_at, t.eof_at), min_u64(t.next, size));
	if (regular && (!nfs_failed(st) || !t.cut_pending) && ftruncate(fd, (off_t)res->bytes) &&
	    !nfs_failed(st))
		st = nfs_local_err(errno);
	transfer_destroy(&t);
	return st;
}

/* COMMIT; true when every WRITE of the pass not answered FILE_SYNC is covered by it. */
static struct nfs_status commit_pass(struct transfer *t, bool *stable)
{
	char verf[NFS3_WRITEVERFSIZE];
	struct nfs_status st = nfs3_commit(t->s, NULL, t->fh, verf);

	*stable = !nfs_failed(st) && !t->verf_changed &&
		  (!t->have_verf || !memcmp(verf, t->verf, NFS3_WRITEVERFSIZE));
	return st;
}

struct nfs_status nfs_transfer_put(struct nfs_session *s, const struct nfs_fh *fh, int fd,
				   uint64_t size, unsigned int inflight, struct progress *p,
				   struct nfs_transfer_result *res)
{
	struct transfer t;
	struct nfs_status st = transfer_init(&t, s, fh, fd, size, true);
	bool stable = size == 0;

	memset(res, 0, sizeof(*res));
	if (nfs_failed(st))
		return st;
	if (size)
		st = run_pass(&t, inflight, p, 0);
	if (size && !nfs_failed(st))
		st = commit_pass(&t, &stable);
	if (!nfs_failed(st) && !stable) {
		/* The server restarted: what it had not committed may be gone. */
		res->rewrites++;
		t.how = FILE_SYNC;
		st = run_pass(&t, inflight, p, 0);
		/*
		 * A server that answered FILE_SYNC WRITEs as less stable owes a
		 * COMMIT (Linux's client sends one too); if it restarted again
		 * before that, the data is not known to be there.
		 */
		if (!nfs_failed(st) && t.have_verf) {
			st = commit_pass(&t, &stable);
			if (!nfs_failed(st) && !stable)
				st = nfs_err(NFS3ERR_IO);
		}
	}
	res->bytes = nfs_failed(st) ? t.moved : size;
	transfer_destroy(&t);
	return st;
}
