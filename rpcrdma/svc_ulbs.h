/*
 * A server listener's upper-layer bindings (svc_rdma_reg): which results
 * of a program's procedures are DDP-eligible.  The listener and every
 * connection it accepted share one table, so a binding made or
 * replaced while clients are connected applies to their next replies.
 * svc_rdma_reg() may run in any thread while the svc_run() thread
 * looks bindings up: a mutex of the table's own guards the entries.
 */
#ifndef RPCRDMA_SVC_ULBS_H
#define RPCRDMA_SVC_ULBS_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "rpcrdma/rpcrdma.h"

#define SVC_ULBS_MAX 8 /* bindings per listener, one per program and version */

struct svc_ulbs;

/* A new, empty table holding one reference, or NULL (out of memory). */
struct svc_ulbs *svc_ulbs_new(void);

/* Another reference to @u. */
struct svc_ulbs *svc_ulbs_get(struct svc_ulbs *u);

/* Drop a reference; the last frees the table.  @u may be NULL. */
void svc_ulbs_put(struct svc_ulbs *u);

/*
 * svc_ulbs_bind - bind (@prog, @vers) to @ulb (may be NULL: nothing is
 * DDP-eligible), replacing its binding if it has one, once
 * @commit(@arg) said yes; @commit runs with the table locked, so
 * bindings of one table are made one at a time.  Returns 0, -ENOSPC
 * when the pair is new and the table is full (@commit is not run), or
 * -EPERM when @commit refused (the table is unchanged).
 */
int svc_ulbs_bind(struct svc_ulbs *u, rpcprog_t prog, rpcvers_t vers,
		  const struct rpcrdma_ulb *ulb, bool (*commit)(void *arg), void *arg);

/* The mask of @proc's DDP-eligible results in (@prog, @vers)'s binding; 0 without one. */
uint32_t svc_ulbs_res_ddp(struct svc_ulbs *u, rpcprog_t prog, rpcvers_t vers, rpcproc_t proc);

#endif
