/*
 * What outlives endpoints: per device and per process.  siw's mmap key
 * defect is avoided with one guard CQ per siw context for the life of
 * the process, and a device the kernel is removing is let go of by a
 * watcher thread that makes librdmacm forget it once its node has
 * vanished.  Both keep a small fixed table under a lock of their own;
 * neither allocates after start-up but the guard's CQ and the watcher.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
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
 * CQ of 257 pages (1 MiB of the kernel's memory) kept for the life of
 * the process; it starts at the lowest free page, so it spans page 144
 * unless something else of the process already took pages up to 144.
 */
/* Read as well as written, so the guards stay reachable (LeakSanitizer). */
static pthread_mutex_t siw_guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_cq *siw_guards[RPCRDMA_SIW_GUARD_MAX];

void rpcrdma_device_siw_guard(struct ibv_context *verbs)
{
	int i;

	pthread_mutex_lock(&siw_guard_lock);
	for (i = 0; i < RPCRDMA_SIW_GUARD_MAX && siw_guards[i] && siw_guards[i]->context != verbs; i++)
		;
	if (i < RPCRDMA_SIW_GUARD_MAX && !siw_guards[i])
		siw_guards[i] = ibv_create_cq(verbs, RPCRDMA_SIW_GUARD_CQE, NULL, NULL, 0);
	pthread_mutex_unlock(&siw_guard_lock);
}

/*
 * The siw key guard of a removed device goes with it: libsiw maps a CQ's
 * queue from the device's uverbs file, and a mapping holds that file open
 * after librdmacm has closed its context, so the kernel's removal (which
 * waits for every uverbs file of the device to be released: siw and rxe
 * cannot disassociate a context) would wait for the process to exit.
 * Seen in the test bed: rdma link delete blocked in ib_uverbs_remove_one
 * while our server's only hold on siw0 was the guard's 257-page mapping
 * of the deleted uverbs node.  No queue is created on a removed device,
 * so the guard has nothing left to protect.
 */
static void siw_unguard(struct ibv_context *verbs)
{
	int i, last;

	pthread_mutex_lock(&siw_guard_lock);
	for (i = 0; i < RPCRDMA_SIW_GUARD_MAX && siw_guards[i]; i++) {
		if (siw_guards[i]->context != verbs)
			continue;
		ibv_destroy_cq(siw_guards[i]);
		for (last = i; last + 1 < RPCRDMA_SIW_GUARD_MAX && siw_guards[last + 1]; last++)
			;
		siw_guards[i] = siw_guards[last]; /* keep the array dense: the lookup stops at NULL */
		siw_guards[last] = NULL;
		break;
	}
	pthread_mutex_unlock(&siw_guard_lock);
}

void rpcrdma_device_removing(struct ibv_context *verbs, char uverbs_path[RPCRDMA_UVERBS_PATH_MAX])
{
	snprintf(uverbs_path, RPCRDMA_UVERBS_PATH_MAX, "%s", verbs->device->dev_path);
	siw_unguard(verbs);
}

/*
 * The kernel finishes removing a device (rdma link delete, a driver
 * unload) in two steps, each without a time limit on soft-RoCE and
 * soft-iWARP: rdma_cm waits until every cm id on the device is destroyed
 * (those of processes it destroys itself once it has queued
 * RDMA_CM_EVENT_DEVICE_REMOVAL; kernel users such as knfsd must destroy
 * theirs), then uverbs removes the device's node and waits until every
 * process has released its files of the device: fds, and mappings of
 * queues (rxe and siw cannot disassociate a context).  An endpoint told
 * RDMA_CM_EVENT_DEVICE_REMOVAL gives back its objects when destroyed, but
 * librdmacm keeps its own context of the device open until it re-reads
 * the device list and finds the device gone, which it is only once the
 * node has vanished, and rdma_cm's step can take seconds (knfsd closes a
 * connection from one of its threads).  So the first endpoint destroyed
 * after the event hands the node to a watcher thread, which waits for
 * the node to vanish (checking every DEVICE_REMOVAL_POLL_MS, for up to
 * DEVICE_REMOVAL_WATCH_MS) and then makes librdmacm re-read the list; it
 * closes a vanished device no cm id uses, and one still used when its
 * last cm id goes.  Nothing else of ours has to happen for that, so a
 * server that accepts no new connection, or a client that makes no new
 * call, lets go as well.  librdmacm (rdma-core 44) gives up re-reading
 * when no device is left at all: then its context stays open, and the
 * removal waits, until the process exits.
 */
#define DEVICE_REMOVAL_POLL_MS  20
#define DEVICE_REMOVAL_WATCH_MS (10 * 60 * 1000)
#define DEVICE_REMOVAL_MAX      8 /* removed devices watched at once */

/* Nodes of removed devices not yet let go; a watcher thread runs while any is. */
static pthread_mutex_t removal_lock = PTHREAD_MUTEX_INITIALIZER;
static char removal_pending[DEVICE_REMOVAL_MAX][sizeof(((struct ibv_device *)0)->dev_path)];
static bool removal_watching;

static void librdmacm_forget_removed(void)
{
	struct ibv_context **list = rdma_get_devices(NULL);

	if (list)
		rdma_free_devices(list);
}

/*
 * Drop from the pending list every node that has vanished; true if any
 * had (the caller then has librdmacm re-read the list).  Called with
 * removal_lock held.  *@left: how many are still pending.
 */
static bool removal_reap(int *left)
{
	bool gone = false;

	*left = 0;
	for (int i = 0; i < DEVICE_REMOVAL_MAX; i++) {
		if (!removal_pending[i][0])
			continue;
		if (access(removal_pending[i], F_OK) != 0) {
			removal_pending[i][0] = '\0';
			gone = true;
		} else {
			(*left)++;
		}
	}
	return gone;
}

static void *removal_watch(void *arg)
{
	int64_t deadline = rpcrdma_now_ms() + DEVICE_REMOVAL_WATCH_MS;
	bool gone;
	int left;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&removal_lock);
		gone = removal_reap(&left);
		if (!left || rpcrdma_now_ms() >= deadline)
			removal_watching = false; /* what is left is retried at the next destroy */
		pthread_mutex_unlock(&removal_lock);
		if (gone)
			librdmacm_forget_removed();
		if (!left || rpcrdma_now_ms() >= deadline)
			return NULL;
		nanosleep(&(struct timespec){ 0, DEVICE_REMOVAL_POLL_MS * 1000000L }, NULL);
	}
}

/* Start the watcher with every signal blocked, so the program's signals go to its own threads. */
static bool removal_watch_start(void)
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
	rc = pthread_create(&t, &attr, removal_watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc == 0;
}

/*
 * @uverbs_path: the node of a device just removed under an endpoint, or
 * "" when an endpoint without that event is destroyed.  Either way,
 * devices whose node has vanished are let go at once; a new node still
 * there is watched.  Should the watcher be missing (it could not start,
 * or gave up), every later destroy still retries.
 */
void rpcrdma_device_release_removed(const char *uverbs_path)
{
	bool gone, watch = false;
	int i, left, free_slot = -1;

	pthread_mutex_lock(&removal_lock);
	if (uverbs_path[0]) {
		for (i = 0; i < DEVICE_REMOVAL_MAX; i++) {
			if (!strcmp(removal_pending[i], uverbs_path))
				break;
			if (free_slot < 0 && !removal_pending[i][0])
				free_slot = i;
		}
		if (i == DEVICE_REMOVAL_MAX && free_slot >= 0)
			snprintf(removal_pending[free_slot], sizeof(removal_pending[free_slot]), "%s",
				 uverbs_path);
	}
	gone = removal_reap(&left);
	if (left && !removal_watching)
		watch = removal_watching = true;
	pthread_mutex_unlock(&removal_lock);
	if (gone)
		librdmacm_forget_removed();
	if (watch && !removal_watch_start()) {
		pthread_mutex_lock(&removal_lock);
		removal_watching = false;
		pthread_mutex_unlock(&removal_lock);
	}
}

