/*
 * The public option and connection-information structs (rpcrdma.h)
 * across library versions: defaults, checks, endpoint parameters, and
 * the size rule that lets a later version append fields without
 * breaking programs built against an earlier one.
 */
#ifndef RPCRDMA_OPTIONS_H
#define RPCRDMA_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/rpcrdma.h"
#include "rpcrdma/verbs.h"

/* The sizes of the structs' first versions: nothing shorter is accepted. */
#define RPCRDMA_OPTIONS_SIZE_V1                                                                    \
	(offsetof(struct rpcrdma_options, ulb) + sizeof(((struct rpcrdma_options *)0)->ulb))
#define RPCRDMA_CONN_INFO_SIZE_V1                                                                  \
	(offsetof(struct rpcrdma_conn_info, local_invalidations) + sizeof(uint64_t))
/*
 * Where this version's last connection field ends (send_wr_inline ends
 * at 68 of 72 on x86-64): the store writes up to here and zeroes the
 * rest, tail padding included, so a later version's field there reads 0.
 * A field appended must be named here (the struct says so at its end).
 */
#define RPCRDMA_CONN_INFO_KNOWN_END                                                                \
	(offsetof(struct rpcrdma_conn_info, send_wr_inline) + sizeof(uint32_t))
/*
 * Where this version's last option ends (reply_batch, at 76 of 80 on
 * x86-64): bytes from here on, the zero field reserved among them, are
 * the options this library does not know.  A field appended must be
 * named here (the struct says so at its end); options.c asserts that
 * the struct has no tail padding, where a later version's field would
 * read what an older program left undefined.
 */
#define RPCRDMA_OPTIONS_KNOWN_END                                                                  \
	(offsetof(struct rpcrdma_options, reply_batch) + sizeof(((struct rpcrdma_options *)0)->reply_batch))
/* Larger sizes are taken for a size never set (stack garbage), not a later version. */
#define RPCRDMA_STRUCT_SIZE_MAX 4096u

/*
 * rpcrdma_options_load - the caller's options @o (NULL: the defaults)
 * as this library's struct in @out: fields a shorter (older) struct
 * lacks keep their defaults.  Returns 0; -EINVAL when @o->size is
 * below the first version's or above RPCRDMA_STRUCT_SIZE_MAX, or a
 * value cannot work (sizes, credits,
 * timeouts); -E2BIG when @o sets bytes past this library's last
 * option (RPCRDMA_OPTIONS_KNOWN_END, in the tail padding too), options
 * it does not know.
 */
int rpcrdma_options_load(struct rpcrdma_options *out, const struct rpcrdma_options *o);

/* A timeout libtirpc's clients take (clnt_vc's time_not_ok() refuses the rest). */
bool rpcrdma_timeout_valid(const struct timeval *tv);

/* Endpoint parameters for @o. */
void rpcrdma_options_ep_params(const struct rpcrdma_options *o, struct rpcrdma_ep_params *p);

/* Whether @info->size is one a caller can have set (see rpcrdma_conn_info_store). */
bool rpcrdma_conn_info_size_ok(const struct rpcrdma_conn_info *info);

/*
 * rpcrdma_conn_info_store - copy @src to the caller's @dst, whose size
 * field says how long it is: at most this library's struct is written,
 * bytes past it are zeroed (fields this library does not know), and
 * dst->size becomes the length of the fields filled.  Returns 0, or
 * -EINVAL (nothing written) when dst->size is below the first
 * version's or above RPCRDMA_STRUCT_SIZE_MAX.
 */
int rpcrdma_conn_info_store(struct rpcrdma_conn_info *dst, const struct rpcrdma_conn_info *src);

#endif
