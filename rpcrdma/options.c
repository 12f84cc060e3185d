/*
 * Options and connection information as they cross the library's
 * interface: the defaults, the checks every create function applies,
 * the endpoint parameters they imply, and the size field that keeps
 * both structs extensible (a caller's struct may be shorter or longer
 * than this library's).
 */
#include "rpcrdma/options.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "rpcrdma/transport.h"

void rpcrdma_options_init_sized(struct rpcrdma_options *o, size_t size)
{
	size_t n = size < sizeof(*o) ? size : sizeof(*o);
	struct rpcrdma_options d;

	if (size < RPCRDMA_OPTIONS_SIZE_V1)
		return;
	memset(&d, 0, sizeof(d)); /* padding too: a longer struct's check reads raw bytes */
	d.inline_send = 4096;
	d.inline_recv = 4096;
	d.credits = 32;
	d.max_rpc_size = RPCRDMA_MAX_RPC_SIZE_LIMIT;
	d.ird = 16;
	d.ord = 16;
	d.remote_invalidate = true;
	d.connect_timeout_ms = 10000;
	d.tos = -1;
	d.reply_batch = RPCRDMA_REPLY_BATCH_MAX;
	d.call_timeout.tv_sec = 25;
	memset(o, 0, size);
	memcpy(o, &d, n);
	o->size = (uint32_t)size;
}

bool rpcrdma_timeout_valid(const struct timeval *tv)
{
	return tv->tv_sec >= 0 && tv->tv_sec <= 100000000 && tv->tv_usec >= 0 &&
	       tv->tv_usec <= 1000000;
}

static int options_check(const struct rpcrdma_options *o)
{
	if (o->inline_send < 1024 || o->inline_recv < 1024 || o->inline_send > 262144 ||
	    o->inline_recv > 262144 || !o->credits || o->credits > 1024 ||
	    o->max_rpc_size < o->inline_send || o->max_rpc_size < o->inline_recv ||
	    o->max_rpc_size > RPCRDMA_MAX_RPC_SIZE_LIMIT ||
	    !o->ird || !o->ord ||
	    o->connect_timeout_ms <= 0 || o->ack_timeout > 31 || o->tos < -1 || o->tos > 255 ||
	    !o->reply_batch || o->reply_batch > RPCRDMA_REPLY_BATCH_MAX ||
	    !rpcrdma_timeout_valid(&o->call_timeout))
		return -EINVAL;
	return 0;
}

_Static_assert(sizeof(struct rpcrdma_conn_info) - RPCRDMA_CONN_INFO_KNOWN_END <
		       _Alignof(struct rpcrdma_conn_info),
	       "RPCRDMA_CONN_INFO_KNOWN_END must be the end of the last field (options.h)");
_Static_assert(offsetof(struct rpcrdma_options, reserved) == RPCRDMA_OPTIONS_KNOWN_END,
	       "RPCRDMA_OPTIONS_KNOWN_END must be the end of the last option (options.h)");
_Static_assert(offsetof(struct rpcrdma_options, reserved) + sizeof(uint32_t) ==
		       sizeof(struct rpcrdma_options),
	       "struct rpcrdma_options must end with a named field: no tail padding");

/* Whether bytes [@from, @to) of @p are all zero. */
static bool bytes_zero(const void *p, size_t from, size_t to)
{
	const unsigned char *b = p;

	for (size_t i = from; i < to; i++)
		if (b[i])
			return false;
	return true;
}

int rpcrdma_options_load(struct rpcrdma_options *out, const struct rpcrdma_options *o)
{
	rpcrdma_options_init(out);
	if (!o)
		return 0;
	if (o->size < RPCRDMA_OPTIONS_SIZE_V1 || o->size > RPCRDMA_STRUCT_SIZE_MAX)
		return -EINVAL;
	if (o->size > RPCRDMA_OPTIONS_KNOWN_END && !bytes_zero(o, RPCRDMA_OPTIONS_KNOWN_END, o->size))
		return -E2BIG;
	memcpy(out, o, o->size < sizeof(*out) ? o->size : sizeof(*out));
	out->size = sizeof(*out);
	return options_check(out);
}

void rpcrdma_options_ep_params(const struct rpcrdma_options *o, struct rpcrdma_ep_params *p)
{
	*p = (struct rpcrdma_ep_params){
		.send_size = o->inline_send,
		.recv_size = o->inline_recv,
		.recv_count = o->credits,
		.send_depth = RPCRDMA_SEND_DEPTH + 3 * o->credits,
		.max_send_sge = RPCRDMA_SEND_SGES,
		.rd = { .ird = o->ird, .ord = o->ord },
		.remote_invalidate = o->remote_invalidate,
		.timeout_ms = o->connect_timeout_ms,
		.ack_timeout = (uint8_t)o->ack_timeout,
		.tos = (int16_t)o->tos,
	};
}

bool rpcrdma_conn_info_size_ok(const struct rpcrdma_conn_info *info)
{
	return info->size >= RPCRDMA_CONN_INFO_SIZE_V1 && info->size <= RPCRDMA_STRUCT_SIZE_MAX;
}

int rpcrdma_conn_info_store(struct rpcrdma_conn_info *dst, const struct rpcrdma_conn_info *src)
{
	size_t have = dst->size, n = have < RPCRDMA_CONN_INFO_KNOWN_END ? have : RPCRDMA_CONN_INFO_KNOWN_END;

	if (!rpcrdma_conn_info_size_ok(dst))
		return -EINVAL;
	memcpy(dst, src, n);
	memset((unsigned char *)dst + n, 0, have - n);
	dst->size = (uint32_t)n;
	return 0;
}
