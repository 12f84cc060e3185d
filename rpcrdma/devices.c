/*
 * What outlives a single endpoint: per device and per process.  siw's
 * mmap key defect is avoided with one guard CQ per siw context while
 * endpoints use it, and a device the kernel is removing is let go of by
 * one watcher thread per process, started with its first rdma_cm
 * channel, that sees the device's node vanish from /dev/infiniband and
 * makes librdmacm forget it and tells the users that hold a device
 * without watching its events (CLIENTs between calls).  Each keeps its
 * table or list under a lock of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "rpcrdma/devices.h"
#include "rpcrdma/resolve.h"
#include "rpcrdma/verbs.h"

/* The siw guard CQ: 32768 CQEs of 32 bytes plus 8: 257 pages. */
#define RPCRDMA_SIW_GUARD_CQE 32768
#define RPCRDMA_SIW_GUARD_MAX 8 /* siw devices (verbs contexts) a process guards */

/*
 * soft-iWARP's mmap key defect.  The siw kernel driver gives each user
 * CQ and QP queue a mmap offset from one page allocator per verbs
 * context (so per process: librdmacm shares one context per device),
 * lowest free range first; libsiw takes the offset 0x90000 (page 144,
 * SIW_INVAL_UOBJ_KEY in <rdma/siw-abi.h>) as the kernel's "no mapping"
 * answer and destroys the object, without setting errno.  So a queue
 * that starts exactly at page 144 cannot be created, and once pages 0
 * to 143 are taken no CQ or QP can: with our default sizes (12 pages a
 * connection) the 13th connection of a process, client or server,
 * failed.  The guard: one CQ of 257 pages (1 MiB of the kernel's
 * memory) made before the first endpoint's CQ on a siw context, and
 * destroyed after the last endpoint's queues on it are gone.  Made with
 * no other queue of ours on the context, it starts at the lowest free
 * page, so it spans page 144 unless something else of the process took
 * pages up to 144.  Destroyed with the last endpoint, whose cm id still
 * pins librdmacm's context, it never outlives that context and never
 * holds a removed device (its mapping keeps the device's uverbs file
 * open, and the kernel's removal waits for that) beyond the endpoints.
 */
struct siw_guard {
	struct ibv_context *verbs; /* NULL: a free entry */
	struct ibv_cq *cq;         /* NULL if it could not be made: the endpoints still count */
	unsigned int users;        /* endpoints on the context */
};

/* A forked child's guards of its parent (and theirs of theirs): kept reachable for LeakSanitizer. */
struct siw_guards_aside {
	struct siw_guard guards[RPCRDMA_SIW_GUARD_MAX];
	struct siw_guards_aside *older;
};

static pthread_mutex_t siw_guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct siw_guard siw_guards[RPCRDMA_SIW_GUARD_MAX];
static struct siw_guards_aside *siw_guards_of_ancestors;
static struct siw_guards_aside *siw_guards_aside_spare; /* made with a guard: no malloc in a fork */

static struct siw_guard *siw_guard_find(const struct ibv_context *verbs)
{
	for (int i = 0; i < RPCRDMA_SIW_GUARD_MAX; i++)
		if (siw_guards[i].verbs == verbs)
			return &siw_guards[i];
	return NULL;
}

static bool siw_guards_in_use(void)
{
	for (int i = 0; i < RPCRDMA_SIW_GUARD_MAX; i++)
		if (siw_guards[i].verbs)
			return true;
	return false;
}

bool rpcrdma_device_siw_guard_get(struct ibv_context *verbs)
{
	struct siw_guard *g;

	pthread_mutex_lock(&siw_guard_lock);
	g = siw_guard_find(verbs);
	if (!g && (g = siw_guard_find(NULL)))
		g->verbs = verbs;
	if (g) {
		g->users++;
		if (!g->cq)
			g->cq = ibv_create_cq(verbs, RPCRDMA_SIW_GUARD_CQE, NULL, NULL, 0);
		if (!siw_guards_aside_spare)
			siw_guards_aside_spare = malloc(sizeof(*siw_guards_aside_spare));
	}
	pthread_mutex_unlock(&siw_guard_lock);
	return g != NULL;
}

void rpcrdma_device_siw_guard_put(struct ibv_context *verbs)
{
	struct siw_guard *g;

	pthread_mutex_lock(&siw_guard_lock);
	g = siw_guard_find(verbs);
	if (g && --g->users == 0) {
		if (g->cq)
			ibv_destroy_cq(g->cq);
		*g = (struct siw_guard){ 0 };
	}
	pthread_mutex_unlock(&siw_guard_lock);
}

/*
 * The kernel finishes removing a device (rdma link delete, a driver
 * unload) in two steps, each without a time limit on soft-RoCE and
 * soft-iWARP: rdma_cm waits until every cm id on the device is destroyed
 * (those of processes it destroys itself once it has queued
 * RDMA_CM_EVENT_DEVICE_REMOVAL; kernel users such as knfsd must destroy
 * theirs), then uverbs removes the device's node and waits until every
 * process has released its files of the device: fds, and mappings of
 * queues (rxe and siw cannot disassociate a context).  Our endpoints give
 * back their objects when destroyed, but librdmacm keeps its own context
 * of every device it has opened until it re-reads the device list and
 * finds the device gone.  Nothing of ours is told of the removal when no
 * cm id of ours is on the device (a server whose connections over it
 * have ended, a wildcard listener), or when an endpoint is destroyed on a
 * disconnect that came before the event; and a CLIENT between calls
 * reads no event until its next call, keeping its queues meanwhile.
 *
 * So each process that uses rdma_cm keeps one watcher thread, started
 * with its first event channel.  It sleeps on inotify of DEV_DIR
 * (rescanning every WATCH_RESCAN_MS where it cannot watch the directory:
 * it is missing while no device exists, or inotify is out of instances)
 * and, when a uverbs node it saw has vanished or been replaced and the
 * process still has the node open, makes librdmacm re-read the list
 * (libibverbs no longer lists a device whose node is gone) and tells the
 * users (rpcrdma_device_user_add), which let go of their connections on
 * it; librdmacm closes a vanished device no cm id uses, and one still
 * used when its last cm id goes.  The re-read opens every other device,
 * so it is done only when needed.  librdmacm (rdma-core 44) gives up re-reading when
 * no device is left at all: then its context stays open, and the removal
 * waits, until the process exits.  A /dev whose nodes nobody deletes (a
 * container's own) shows no removal.  The thread never ends, so the
 * library is linked -z nodelete: a dlclose() leaves its code mapped.
 */
#define DEV_DIR          "/dev/infiniband"
#define WATCH_NODES_MAX  64   /* uverbs nodes compared; with more, every wake-up counts as a loss */
#define WATCH_RESCAN_MS  1000 /* without an inotify watch of DEV_DIR */
#define WATCH_EVENTS     (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF)

/* The uverbs nodes in DEV_DIR: a node deleted and made again has a new inode. */
struct node_set {
	unsigned int n;
	bool overflow;
	ino_t ino[WATCH_NODES_MAX];
};

/* False if DEV_DIR could not be read for another reason than its absence (no fd left, say). */
static bool node_set_scan(struct node_set *s)
{
	DIR *d = opendir(DEV_DIR);
	struct dirent *e;

	if (!d && errno != ENOENT)
		return false;
	s->n = 0;
	s->overflow = false;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "uverbs", 6) != 0)
			continue;
		if (s->n == WATCH_NODES_MAX)
			s->overflow = true;
		else
			s->ino[s->n++] = e->d_ino;
	}
	if (d)
		closedir(d);
	return true;
}

/*
 * True if this process has a node of DEV_DIR open whose inode is @ino.
 * Only such fds are stat'ed: a stat of an fd on a network file system
 * whose server is gone could block.
 */
static bool process_has_open(ino_t ino)
{
	DIR *d = opendir("/proc/self/fd");
	char target[sizeof(DEV_DIR) + 64];
	struct dirent *e;
	struct stat st;
	bool found = false;
	ssize_t n;

	if (!d)
		return true; /* cannot tell: re-read */
	while (!found && (e = readdir(d))) {
		n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0 || strncmp(target, DEV_DIR "/", sizeof(DEV_DIR)) != 0)
			continue;
		found = fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISCHR(st.st_mode) &&
			st.st_ino == ino;
	}
	closedir(d);
	return found;
}

/*
 * The kernel unlinks a device's node when it starts removing it: an fd
 * opened on the node then has no link left, whatever the path it was
 * opened by or the root the process has now.
 */
bool rpcrdma_device_removed(const struct ibv_context *verbs)
{
	struct stat st;

	return verbs && fstat(verbs->cmd_fd, &st) == 0 && st.st_nlink == 0;
}

/* True if a node of @before that this process has open is missing from @after (or may be). */
static bool node_set_lost_held(const struct node_set *before, const struct node_set *after)
{
	if (before->overflow || after->overflow)
		return true;
	for (unsigned int i = 0; i < before->n; i++) {
		unsigned int j = 0;

		while (j < after->n && after->ino[j] != before->ino[i])
			j++;
		if (j == after->n && process_has_open(before->ino[i]))
			return true;
	}
	return false;
}

static void librdmacm_reread(void)
{
	struct ibv_context **list = rdma_get_devices(NULL);

	if (list)
		rdma_free_devices(list);
}

/*
 * The users, newest first; a forked child starts a new generation with
 * none.  The watcher tells one user at a time without the lock (a user's
 * lock is taken, and its dropped connections freed, in the call), so
 * creating and destroying other users never waits for a whole pass; the
 * user being told is not unlisted until its call has returned.
 */
static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t users_told = PTHREAD_COND_INITIALIZER;
static struct rpcrdma_device_user *users;
static struct rpcrdma_device_user *users_telling; /* being told, the lock not held */
static unsigned int users_generation;

void rpcrdma_device_user_add(struct rpcrdma_device_user *u)
{
	pthread_mutex_lock(&users_lock);
	u->prev = NULL;
	u->next = users;
	if (users)
		users->prev = u;
	users = u;
	u->generation = users_generation;
	u->listed = true;
	pthread_mutex_unlock(&users_lock);
}

void rpcrdma_device_user_remove(struct rpcrdma_device_user *u)
{
	pthread_mutex_lock(&users_lock);
	while (users_telling == u)
		pthread_cond_wait(&users_told, &users_lock);
	if (u->listed && u->generation == users_generation) {
		if (u->prev)
			u->prev->next = u->next;
		else
			users = u->next;
		if (u->next)
			u->next->prev = u->prev;
	}
	u->listed = false;
	pthread_mutex_unlock(&users_lock);
}

void rpcrdma_device_users_tell_removed(void)
{
	struct rpcrdma_device_user *u, *next;

	pthread_mutex_lock(&users_lock);
	for (u = users; u; u = next) {
		users_telling = u;
		pthread_mutex_unlock(&users_lock);
		u->removed(u);
		pthread_mutex_lock(&users_lock);
		next = u->next; /* u stayed listed: its removal waited */
		users_telling = NULL;
		pthread_cond_broadcast(&users_told);
	}
	pthread_mutex_unlock(&users_lock);
}

/* The watcher's state, made before its thread starts (so no loss between start and first scan). */
struct watch {
	int ifd; /* inotify, or -1: rescans */
	int wd;  /* the watch of DEV_DIR, or -1 */
	struct node_set sets[2];
	unsigned int seen; /* sets[seen]: the last scan */
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static bool watch_started; /* written under watch_lock; read without it first */
static struct watch the_watch = { .ifd = -1, .wd = -1 };

/*
 * The program closed our inotify fd (a daemon closing every fd): its
 * number may be another file of the program's now, never to be polled,
 * read or closed by us again.  The watcher rescans instead.
 */
static void watch_lose_fd(struct watch *w)
{
	w->ifd = w->wd = -1;
}

/* (Re)add the watch; true if it is new: what changed while nothing watched needs a rescan. */
static bool watch_add(struct watch *w)
{
	int wd;

	if (w->ifd < 0)
		return false;
	wd = inotify_add_watch(w->ifd, DEV_DIR, WATCH_EVENTS); /* the same wd while it lasts */
	if (wd < 0 && (errno == EBADF || errno == EINVAL)) { /* not an inotify fd any more */
		watch_lose_fd(w);
		return false;
	}
	if (wd == w->wd)
		return false;
	w->wd = wd;
	return wd >= 0;
}

/* Block until DEV_DIR may have changed; the caller rescans. */
static void watch_wait(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = { .fd = w->ifd, .events = POLLIN };

	if (watch_add(w)) /* also after IN_IGNORED: the directory went and may be back */
		return;
	if (poll(&p, w->ifd >= 0 ? 1 : 0, w->wd >= 0 ? -1 : WATCH_RESCAN_MS) <= 0)
		return;
	/* still ours? (ENOENT: the directory went, which watch_add sees next) */
	if ((p.revents & POLLNVAL) ||
	    (inotify_add_watch(w->ifd, DEV_DIR, WATCH_EVENTS) < 0 && (errno == EBADF || errno == EINVAL))) {
		watch_lose_fd(w);
		return;
	}
	while (read(w->ifd, buf, sizeof(buf)) > 0)
		; /* the events only wake us: the rescan tells what changed */
}

static void *device_watch(void *arg)
{
	struct watch *w = arg;

	for (;;) {
		watch_wait(w);
		if (!node_set_scan(&w->sets[!w->seen]))
			continue; /* compared with the last good scan next time */
		if (node_set_lost_held(&w->sets[w->seen], &w->sets[!w->seen])) {
			librdmacm_reread();
			rpcrdma_device_users_tell_removed();
		}
		w->seen = !w->seen;
	}
	return NULL;
}

/*
 * fork(): no lock of ours is held by another thread across it, and no
 * user is being told (a fork waits for that pass to end).  The child
 * has no watcher (its first channel starts its own) and no users (the
 * parent's CLIENTs are not told of removals there), and the guards are
 * the parent's objects, on contexts it only shares (rpcrdma(3): clients
 * and servers are not used across a fork): the child sets them aside,
 * never destroyed (and still reachable, for LeakSanitizer, in a child's
 * child too).  librdmacm's own lock is not covered: a fork while the
 * watcher re-reads its list leaves the child's librdmacm stuck, as would
 * one while any thread of the program was in librdmacm.  The handlers
 * are set when the library is loaded: a user may be added before the
 * first channel exists.
 */
static void watch_fork_prepare(void)
{
	pthread_mutex_lock(&users_lock);
	while (users_telling) /* its connections' teardown takes librdmacm's lock */
		pthread_cond_wait(&users_told, &users_lock);
	pthread_mutex_lock(&watch_lock);
	pthread_mutex_lock(&siw_guard_lock);
}

static void watch_fork_parent(void)
{
	pthread_mutex_unlock(&siw_guard_lock);
	pthread_mutex_unlock(&watch_lock);
	pthread_mutex_unlock(&users_lock);
}

/*
 * No malloc here: an allocator with fork handlers of its own may still
 * hold its locks.  Without the spare (no memory when the guard was
 * made) the parent's guards are only unreachable.
 */
static void siw_guards_set_aside(void)
{
	struct siw_guards_aside *aside = siw_guards_aside_spare;

	if (!siw_guards_in_use())
		return;
	siw_guards_aside_spare = NULL;
	if (aside) {
		memcpy(aside->guards, siw_guards, sizeof(siw_guards));
		aside->older = siw_guards_of_ancestors;
		siw_guards_of_ancestors = aside;
	}
	memset(siw_guards, 0, sizeof(siw_guards));
}

static void watch_fork_child(void)
{
	/* The program may have closed it and reused its number, unknown to the watcher yet. */
	if (watch_started && the_watch.ifd >= 0)
		watch_add(&the_watch); /* loses the fd if that number is no inotify fd any more */
	if (watch_started && the_watch.ifd >= 0)
		close(the_watch.ifd);
	the_watch = (struct watch){ .ifd = -1, .wd = -1 };
	__atomic_store_n(&watch_started, false, __ATOMIC_RELEASE);
	siw_guards_set_aside();
	rpcrdma_ep_forked();
	rpcrdma_resolve_forked();
	users = NULL;
	users_telling = NULL;
	users_told = (pthread_cond_t)PTHREAD_COND_INITIALIZER; /* a parent's waiter is not here */
	users_generation++;
	watch_fork_parent();
}

__attribute__((constructor)) static void watch_atfork_set(void)
{
	pthread_atfork(watch_fork_prepare, watch_fork_parent, watch_fork_child);
}

/*
 * Started with every signal blocked, so the program's signals go to its
 * own threads; detached only once named, since a detached thread that
 * has ended leaves no thread to name (its id may be another's by then).
 */
bool rpcrdma_thread_start_detached(void *(*fn)(void *), void *arg, const char *name)
{
	sigset_t all, old;
	pthread_t t;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return false;
	pthread_setname_np(t, name);
	pthread_detach(t);
	return true;
}

void rpcrdma_device_watch_start(void)
{
	struct watch *w = &the_watch;
	bool started;

	if (__atomic_load_n(&watch_started, __ATOMIC_ACQUIRE)) /* every connect comes here */
		return;
	pthread_mutex_lock(&watch_lock);
	if (!watch_started) {
		*w = (struct watch){ .wd = -1 };
		w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC); /* -1: the watcher rescans instead */
		watch_add(w);
		if (!node_set_scan(&w->sets[0]))
			w->sets[0] = (struct node_set){ 0 };
		started = rpcrdma_thread_start_detached(device_watch, w, "rpcrdma-devices");
		__atomic_store_n(&watch_started, started, __ATOMIC_RELEASE);
		if (!watch_started && w->ifd >= 0) {
			close(w->ifd);
			w->ifd = -1;
		}
	}
	pthread_mutex_unlock(&watch_lock);
}
