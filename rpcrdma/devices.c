/*
 * What outlives endpoints: per device and per process.  siw's mmap key
 * defect is avoided with one guard CQ per siw context, kept until the
 * device goes, and a device the kernel is removing is let go of by one
 * watcher thread per process, started with its first rdma_cm channel,
 * that sees a device node vanish from /dev/infiniband and then drops the
 * device's guard and makes librdmacm forget it.  The guards keep a small
 * fixed table under a lock of their own; the watcher keeps its state on
 * its own stack.
 */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "rpcrdma/devices.h"
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
 * failed.  The guard: before a process's first CQ on a siw context, one
 * CQ of 257 pages (1 MiB of the kernel's memory) kept until the device
 * goes; it starts at the lowest free page, so it spans page 144 unless
 * something else of the process already took pages up to 144.
 *
 * It goes with its device: libsiw maps a CQ's queue from the device's
 * uverbs file, and the mapping holds that file open after librdmacm has
 * closed its context, so the kernel's removal (which waits for every
 * uverbs file of the device to be released: siw and rxe cannot
 * disassociate a context) would wait for the process to exit.  Seen in
 * the test bed: rdma link delete blocked in ib_uverbs_remove_one while
 * our server's only hold on siw0 was the guard's mapping of the deleted
 * node.  A device counts as gone once its node in /dev/infiniband is
 * (or is another device's: a node made again has a new inode), which the
 * kernel deletes before anything else of the device's uverbs side; no
 * queue is created on the device after that.  The check and the create
 * share the lock with the watcher's drop, so a guard made as the device
 * goes is seen by the drop that follows.
 */
#define DEV_DIR "/dev/infiniband"

struct siw_guard {
	struct ibv_cq *cq;
	ino_t ino; /* of the device's node when the guard was made */
};

/* Read as well as written, so the guards stay reachable (LeakSanitizer). */
static pthread_mutex_t siw_guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct siw_guard siw_guards[RPCRDMA_SIW_GUARD_MAX];

/* The inode of @verbs's node in DEV_DIR; false if it has none. */
static bool device_node(const struct ibv_context *verbs, ino_t *ino)
{
	char path[sizeof(DEV_DIR) + sizeof(verbs->device->dev_name)];
	struct stat st;

	snprintf(path, sizeof(path), DEV_DIR "/%s", verbs->device->dev_name);
	if (stat(path, &st) != 0)
		return false;
	*ino = st.st_ino;
	return true;
}

void rpcrdma_device_siw_guard(struct ibv_context *verbs)
{
	ino_t ino;
	int i;

	pthread_mutex_lock(&siw_guard_lock);
	for (i = 0; i < RPCRDMA_SIW_GUARD_MAX && siw_guards[i].cq &&
		    siw_guards[i].cq->context != verbs;
	     i++)
		;
	if (i < RPCRDMA_SIW_GUARD_MAX && !siw_guards[i].cq && device_node(verbs, &ino)) {
		siw_guards[i].cq = ibv_create_cq(verbs, RPCRDMA_SIW_GUARD_CQE, NULL, NULL, 0);
		siw_guards[i].ino = ino;
	}
	pthread_mutex_unlock(&siw_guard_lock);
}

/* Destroy the guards of devices that have gone, keeping the array dense (the lookup stops at NULL). */
static void siw_unguard_gone(void)
{
	int i = 0, last;
	ino_t ino;

	pthread_mutex_lock(&siw_guard_lock);
	while (i < RPCRDMA_SIW_GUARD_MAX && siw_guards[i].cq) {
		if (device_node(siw_guards[i].cq->context, &ino) && ino == siw_guards[i].ino) {
			i++;
			continue;
		}
		ibv_destroy_cq(siw_guards[i].cq);
		for (last = i; last + 1 < RPCRDMA_SIW_GUARD_MAX && siw_guards[last + 1].cq; last++)
			;
		siw_guards[i] = siw_guards[last];
		siw_guards[last] = (struct siw_guard){ 0 };
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
 * finds the device gone, and the siw guard stays mapped.  Nothing of ours
 * is told of the removal when no cm id of ours is on the device (a server
 * whose connections over it have ended, a wildcard listener), or when an
 * endpoint is destroyed on a disconnect that came before the event.
 *
 * So each process that uses rdma_cm keeps one watcher thread, started
 * with its first event channel.  It sleeps on inotify of /dev/infiniband
 * (rescanning every WATCH_RESCAN_MS where it cannot watch the directory:
 * it is missing while no device exists, or inotify is out of instances)
 * and, when a uverbs node it saw has vanished or been replaced, waits
 * for the device's sysfs entry to follow (removal_under_way), drops the
 * guards of gone devices and makes librdmacm re-read the list; it
 * closes a vanished device no cm id uses, and one still used when its
 * last cm id goes.  librdmacm (rdma-core 44) gives up re-reading when no
 * device is left at all: then its context stays open, and the removal
 * waits, until the process exits.  The thread never ends, so the
 * library is linked -z nodelete: a dlclose() leaves its code mapped.
 */
#define WATCH_NODES_MAX      64   /* uverbs nodes compared; with more, every wake-up counts as a loss */
#define WATCH_RESCAN_MS      1000 /* without an inotify watch of DEV_DIR */
#define WATCH_SETTLE_MS      2000 /* for a removed device's sysfs entry to follow its node */
#define WATCH_SETTLE_STEP_MS 10
#define WATCH_EVENTS         (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF)
#define SYSFS_VERBS_DIR      "/sys/class/infiniband_verbs"

/* The uverbs nodes in DEV_DIR: a node deleted and made again has a new inode. */
struct node_set {
	unsigned int n;
	bool overflow;
	struct {
		ino_t ino;
		char name[32];
	} node[WATCH_NODES_MAX];
};

static void node_set_scan(struct node_set *s)
{
	DIR *d = opendir(DEV_DIR);
	struct dirent *e;

	s->n = 0;
	s->overflow = false;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "uverbs", 6) != 0)
			continue;
		if (s->n == WATCH_NODES_MAX || strlen(e->d_name) >= sizeof(s->node[0].name)) {
			s->overflow = true;
			continue;
		}
		s->node[s->n].ino = e->d_ino;
		snprintf(s->node[s->n].name, sizeof(s->node[0].name), "%s", e->d_name);
		s->n++;
	}
	if (d)
		closedir(d);
}

/* True if a node of @before is missing from @after (or may be). */
static bool node_set_lost(const struct node_set *before, const struct node_set *after)
{
	if (before->overflow || after->overflow)
		return true;
	for (unsigned int i = 0; i < before->n; i++) {
		unsigned int j = 0;

		while (j < after->n && (after->node[j].ino != before->node[i].ino ||
					strcmp(after->node[j].name, before->node[i].name)))
			j++;
		if (j == after->n)
			return true;
	}
	return false;
}

/*
 * True while a uverbs entry in sysfs has no node in DEV_DIR: the kernel
 * deletes a removed device's node first and its sysfs entry, which
 * libibverbs lists devices from, just after; until then librdmacm would
 * still find the device.
 */
static bool removal_under_way(void)
{
	DIR *d = opendir(SYSFS_VERBS_DIR);
	char path[sizeof(DEV_DIR) + sizeof(((struct dirent *)0)->d_name)];
	struct dirent *e;
	bool busy = false;

	while (d && !busy && (e = readdir(d))) {
		if (strncmp(e->d_name, "uverbs", 6) != 0)
			continue;
		snprintf(path, sizeof(path), DEV_DIR "/%s", e->d_name);
		busy = access(path, F_OK) != 0;
	}
	if (d)
		closedir(d);
	return busy;
}

static void devices_let_go(void)
{
	struct ibv_context **list;

	for (int ms = 0; ms < WATCH_SETTLE_MS && removal_under_way(); ms += WATCH_SETTLE_STEP_MS)
		nanosleep(&(struct timespec){ 0, WATCH_SETTLE_STEP_MS * 1000000L }, NULL);
	siw_unguard_gone();
	list = rdma_get_devices(NULL); /* re-reads the list: closes what vanished */
	if (list)
		rdma_free_devices(list);
}

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static bool watch_started;
static int watch_ifd = -1; /* the watcher's inotify fd, closed in a forked child */

/* Block until DEV_DIR may have changed; (re)adds the watch when it is missing. */
static void watch_wait(int ifd, int *wd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = { .fd = ifd, .events = POLLIN };
	ssize_t n;

	if (ifd >= 0 && *wd < 0)
		*wd = inotify_add_watch(ifd, DEV_DIR, WATCH_EVENTS);
	if (poll(&p, ifd >= 0 ? 1 : 0, *wd >= 0 ? -1 : WATCH_RESCAN_MS) <= 0)
		return;
	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *at = buf; at < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)at;

			if (ev->mask & IN_IGNORED)
				*wd = -1; /* the directory went (no device left): watch it again once it is back */
			at += sizeof(*ev) + ev->len;
		}
	}
}

static void *device_watch(void *arg)
{
	struct node_set sets[2];
	unsigned int seen = 0;
	int ifd = (int)(intptr_t)arg, wd = -1;

	node_set_scan(&sets[seen]);
	for (;;) {
		watch_wait(ifd, &wd);
		node_set_scan(&sets[!seen]);
		if (node_set_lost(&sets[seen], &sets[!seen]))
			devices_let_go();
		seen = !seen;
	}
	return NULL;
}

/* A forked child has no watcher: its first channel starts its own. */
static void watch_forked(void)
{
	if (watch_ifd >= 0)
		close(watch_ifd);
	watch_ifd = -1;
	watch_started = false;
	pthread_mutex_init(&watch_lock, NULL);
}

/* Started with every signal blocked, so the program's signals go to its own threads. */
static bool watch_thread_start(int ifd)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (pthread_attr_init(&attr))
		return false;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, device_watch, (void *)(intptr_t)ifd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc == 0;
}

void rpcrdma_device_watch_start(void)
{
	static bool atfork_set;
	int ifd;

	pthread_mutex_lock(&watch_lock);
	if (!watch_started) {
		if (!atfork_set)
			atfork_set = pthread_atfork(NULL, NULL, watch_forked) == 0;
		ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC); /* -1: the watcher rescans instead */
		watch_started = watch_thread_start(ifd);
		if (watch_started)
			watch_ifd = ifd;
		else if (ifd >= 0)
			close(ifd);
	}
	pthread_mutex_unlock(&watch_lock);
}
