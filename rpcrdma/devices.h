/*
 * Process-wide state about the RDMA devices under our endpoints: the
 * soft-iWARP mmap-key guard, and letting go of a device the kernel is
 * removing.  Endpoints call in from verbs.c; nothing here is per
 * connection.  All functions are thread-safe and return nothing: what
 * they cannot do only costs what they exist to avoid.
 */
#ifndef RPCRDMA_DEVICES_H
#define RPCRDMA_DEVICES_H

#include <infiniband/verbs.h>

/* Before a process's first CQ on a siw context @verbs (see devices.c). */
void rpcrdma_device_siw_guard(struct ibv_context *verbs);

/* The node of a device, as rpcrdma_device_release_removed() takes it. */
#define RPCRDMA_UVERBS_PATH_MAX sizeof(((struct ibv_device *)0)->dev_path)

/*
 * Before the cm id of an endpoint or listener told of @verbs's removal
 * is destroyed: drops the device's siw guard and copies its uverbs node
 * to @uverbs_path, for rpcrdma_device_release_removed() after.
 */
void rpcrdma_device_removing(struct ibv_context *verbs, char uverbs_path[RPCRDMA_UVERBS_PATH_MAX]);

/*
 * After an endpoint or listener's cm id is destroyed: @uverbs_path is
 * the node of a device removed under it, or "".  Lets go of removed devices whose node has
 * vanished and watches the others (see devices.c).
 */
void rpcrdma_device_release_removed(const char *uverbs_path);

#endif
