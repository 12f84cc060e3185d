/*
 * Process-wide state about the RDMA devices under our endpoints: the
 * soft-iWARP mmap-key guard, and letting go of a device the kernel is
 * removing.  verbs.c calls in, and CLIENTs to be told of removals;
 * nothing here is per connection.  All
 * functions are thread-safe and report no error: what they cannot do
 * only costs what they exist to avoid.
 */
#ifndef RPCRDMA_DEVICES_H
#define RPCRDMA_DEVICES_H

#include <stdbool.h>

#include <infiniband/verbs.h>

/*
 * An endpoint's hold on the siw key guard of context @verbs (see
 * devices.c): get before its CQ; true if counted, and then put after its
 * queues are destroyed and before its cm id is.
 */
bool rpcrdma_device_siw_guard_get(struct ibv_context *verbs);
void rpcrdma_device_siw_guard_put(struct ibv_context *verbs);

/*
 * With a process's first rdma_cm event channel: starts the thread that
 * lets go of devices the kernel removes (see devices.c); later calls
 * return at once.  A thread that cannot start is tried again at the next
 * call.
 */
void rpcrdma_device_watch_start(void);

/*
 * Runs @fn(@arg) on a detached thread named @name, started with every
 * signal blocked.  Returns false when no thread could start (@fn was not
 * called).
 */
bool rpcrdma_thread_start_detached(void *(*fn)(void *), void *arg, const char *name);

/*
 * A user of devices that does not poll its cm events while idle (a
 * CLIENT between calls) and so would keep a removed device until its
 * next use.  The watcher calls @removed on its own thread, one user at a
 * time and without the users' list locked, after device nodes the
 * process holds have vanished (rpcrdma_device_removed() tells which
 * devices); @removed must not add or remove users.  Added before its
 * first connection is published, removed before freed and not while
 * holding a lock @removed takes: the removal of a user being told waits
 * for its call to return (removing one never added, or added in the
 * parent of a forked child, does nothing).  The watcher may pass while a
 * connection is being built: check a new one with
 * rpcrdma_device_removed() once published.
 */
struct rpcrdma_device_user {
	void (*removed)(struct rpcrdma_device_user *u);
	struct rpcrdma_device_user *prev, *next;
	unsigned int generation; /* of the list it was added to */
	bool listed;
};

void rpcrdma_device_user_add(struct rpcrdma_device_user *u);
void rpcrdma_device_user_remove(struct rpcrdma_device_user *u);

/*
 * The watcher's pass over the users, newest first.  One caller at a time
 * (the watcher; tests): the user being told is pinned in a single slot.
 */
void rpcrdma_device_users_tell_removed(void);

/*
 * True if the kernel is removing @verbs's device: the node its context
 * was opened on has been unlinked (or someone deleted it).
 */
bool rpcrdma_device_removed(const struct ibv_context *verbs);

#endif
