/* Options and connection information across library versions (the size rule). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <errno.h>

#include "rpcrdma/options.h"

/* A program built against a later version: this library's struct and options it does not know. */
struct options_v_next {
	struct rpcrdma_options o;
	uint64_t unknown;
};

struct conn_info_v_next {
	struct rpcrdma_conn_info ci;
	uint64_t unknown;
};

Test(options, null_takes_the_defaults)
{
	struct rpcrdma_options out, def;

	rpcrdma_options_init(&def);
	cr_assert_eq(rpcrdma_options_load(&out, NULL), 0);
	cr_assert_eq(memcmp(&out, &def, sizeof(def)), 0);
	cr_assert_eq(out.size, sizeof(out));
}

Test(options, init_sets_the_size_and_the_documented_defaults)
{
	struct rpcrdma_options o;

	memset(&o, 0xa5, sizeof(o));
	rpcrdma_options_init(&o);
	cr_assert_eq(o.size, sizeof(o));
	cr_assert_eq(o.inline_send, 4096);
	cr_assert_eq(o.inline_recv, 4096);
	cr_assert_eq(o.credits, 32);
	cr_assert_eq(o.max_rpc_size, RPCRDMA_MAX_RPC_SIZE_LIMIT);
	cr_assert_eq(o.connect_timeout_ms, 10000);
	cr_assert_eq(o.call_timeout.tv_sec, 25);
	cr_assert(o.remote_invalidate);
	cr_assert_not(o.use_ccp);
	cr_assert_not(o.reconnect_resend);
	cr_assert_null(o.ulb);
	cr_assert_eq(o.ack_timeout, 0);
	cr_assert_eq(o.tos, -1);
	cr_assert_eq(o.reply_batch, RPCRDMA_REPLY_BATCH_MAX);
}

Test(options, init_writes_within_the_programs_size_only)
{
	_Alignas(struct rpcrdma_options) unsigned char buf[sizeof(struct rpcrdma_options) + 16];
	struct options_v_next n;
	struct rpcrdma_options out;

	memset(buf, 0xa5, sizeof(buf));
	rpcrdma_options_init_sized((struct rpcrdma_options *)buf, RPCRDMA_OPTIONS_SIZE_V1);
	for (size_t i = RPCRDMA_OPTIONS_SIZE_V1; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xa5, "byte %zu past the size was written", i);
	memset(&n, 0xa5, sizeof(n));
	rpcrdma_options_init_sized(&n.o, sizeof(n)); /* a later header's rpcrdma_options_init */
	cr_assert_eq(n.o.size, sizeof(n));
	cr_assert_eq(n.unknown, 0);
	cr_assert_eq(n.o.credits, 32);
	cr_assert_eq(rpcrdma_options_load(&out, &n.o), 0);
	memset(buf, 0xa5, sizeof(buf));
	rpcrdma_options_init_sized((struct rpcrdma_options *)buf, RPCRDMA_OPTIONS_SIZE_V1 - 1);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xa5, "a size below the first version's wrote byte %zu", i);
}

Test(options, the_callers_values_are_taken)
{
	struct rpcrdma_options o, out;

	rpcrdma_options_init(&o);
	o.credits = 7;
	o.inline_recv = 8192;
	o.use_ccp = true;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	cr_assert_eq(memcmp(&out, &o, sizeof(o)), 0);
}

Test(options, a_struct_without_its_size_is_refused)
{
	struct rpcrdma_options o, out;

	rpcrdma_options_init(&o);
	o.size = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.size = RPCRDMA_OPTIONS_SIZE_V1 - 1;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.size = RPCRDMA_STRUCT_SIZE_MAX + 1; /* never set: stack garbage, not a later version */
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
}

Test(options, bad_values_are_refused)
{
	struct rpcrdma_options o, out;

	rpcrdma_options_init(&o);
	o.credits = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	rpcrdma_options_init(&o);
	o.inline_send = 512;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	rpcrdma_options_init(&o);
	o.max_rpc_size = RPCRDMA_MAX_RPC_SIZE_LIMIT + 1;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	rpcrdma_options_init(&o); /* an inline call of inline_recv bytes would pass the limit */
	o.inline_recv = 65536;
	o.max_rpc_size = 65535;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.max_rpc_size = 65536;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	rpcrdma_options_init(&o);
	o.connect_timeout_ms = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	rpcrdma_options_init(&o); /* a server pulls read chunks, a client is read from */
	o.ird = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	rpcrdma_options_init(&o);
	o.ord = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.ord = 1;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	rpcrdma_options_init(&o);
	o.ack_timeout = 32;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.ack_timeout = 31;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	cr_assert_eq(out.ack_timeout, 31);
	rpcrdma_options_init(&o);
	o.tos = 256;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.tos = -2;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.tos = 255;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	o.tos = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	cr_assert_eq(out.tos, 0);
	rpcrdma_options_init(&o);
	o.reply_batch = 0;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.reply_batch = RPCRDMA_REPLY_BATCH_MAX + 1;
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.reply_batch = 1;
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	cr_assert_eq(out.reply_batch, 1);
	rpcrdma_options_init(&o); /* refused as CLSET_TIMEOUT refuses */
	o.call_timeout = (struct timeval){ -1, 0 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.call_timeout = (struct timeval){ 0, -1 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.call_timeout = (struct timeval){ 0, 1000001 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.call_timeout = (struct timeval){ 100000001, 0 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), -EINVAL);
	o.call_timeout = (struct timeval){ 100000000, 1000000 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	o.call_timeout = (struct timeval){ 0, 1000000 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
	o.call_timeout = (struct timeval){ 0, 0 };
	cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
}

/* A program built against the first version: what follows its struct is not its own. */
Test(options, a_first_version_struct_gets_the_defaults_of_later_fields)
{
	_Alignas(struct rpcrdma_options) unsigned char buf[sizeof(struct rpcrdma_options) + 16];
	struct rpcrdma_options *o = (struct rpcrdma_options *)buf, out;

	memset(buf, 0xa5, sizeof(buf));
	rpcrdma_options_init_sized(o, RPCRDMA_OPTIONS_SIZE_V1);
	o->credits = 9;
	cr_assert_eq(rpcrdma_options_load(&out, o), 0);
	cr_assert_eq(out.credits, 9);
	cr_assert_eq(out.ack_timeout, 0);
	cr_assert_eq(out.tos, -1);
	cr_assert_eq(out.reply_batch, RPCRDMA_REPLY_BATCH_MAX);
	cr_assert_eq(out.size, sizeof(out));
}

Test(options, a_longer_struct_is_taken_when_its_extra_options_are_zero)
{
	struct options_v_next n;
	struct rpcrdma_options out;

	memset(&n, 0, sizeof(n));
	rpcrdma_options_init(&n.o);
	n.o.size = sizeof(n);
	n.o.credits = 9;
	cr_assert_eq(rpcrdma_options_load(&out, &n.o), 0);
	cr_assert_eq(out.credits, 9);
	cr_assert_eq(out.size, sizeof(out));
	n.unknown = 1;
	cr_assert_eq(rpcrdma_options_load(&out, &n.o), -E2BIG);
	n.unknown = (uint64_t)1 << 63;
	cr_assert_eq(rpcrdma_options_load(&out, &n.o), -E2BIG);
}

/* A later version's first field may take the place of reserved, which must be zero. */
Test(options, a_nonzero_reserved_field_is_an_unknown_option)
{
	struct rpcrdma_options o, out;
	unsigned char *b = (unsigned char *)&o;

	cr_assert_eq(RPCRDMA_OPTIONS_KNOWN_END, offsetof(struct rpcrdma_options, reserved));
	cr_assert_eq(sizeof(o), offsetof(struct rpcrdma_options, reserved) + sizeof(o.reserved),
		     "no tail padding");
	rpcrdma_options_init(&o);
	cr_assert_eq(o.reserved, 0);
	for (size_t at = RPCRDMA_OPTIONS_KNOWN_END; at < sizeof(o); at++) {
		rpcrdma_options_init(&o);
		cr_assert_eq(rpcrdma_options_load(&out, &o), 0);
		b[at] = 1;
		cr_assert_eq(rpcrdma_options_load(&out, &o), -E2BIG, "a byte set at %zu", at);
	}
}

Test(options, endpoint_parameters_follow_the_options)
{
	struct rpcrdma_options o;
	struct rpcrdma_ep_params p;

	rpcrdma_options_init(&o);
	o.credits = 10;
	o.inline_send = 2048;
	rpcrdma_options_ep_params(&o, &p);
	cr_assert_eq(p.send_size, 2048);
	cr_assert_eq(p.recv_size, 4096);
	cr_assert_eq(p.recv_count, 10);
	cr_assert_eq(p.timeout_ms, 10000);
	cr_assert_eq(p.rd.ird, 16);
	cr_assert_eq(p.ack_timeout, 0);
	cr_assert_eq(p.tos, -1);
	o.ack_timeout = 14;
	o.tos = 0x48;
	rpcrdma_options_ep_params(&o, &p);
	cr_assert_eq(p.ack_timeout, 14);
	cr_assert_eq(p.tos, 0x48);
}

static struct rpcrdma_conn_info sample_info(void)
{
	return (struct rpcrdma_conn_info){ .size = sizeof(struct rpcrdma_conn_info),
					   .inline_send = 4096,
					   .credits = 32,
					   .iwarp = true,
					   .local_invalidations = 77,
					   .ack_timeout = 14,
					   .send_wr_inline = 80 };
}

Test(conn_info, the_init_macro_sets_the_size)
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;

	cr_assert_eq(ci.size, sizeof(ci));
	cr_assert_eq(ci.credits, 0);
}

Test(conn_info, stored_whole_for_this_version)
{
	struct rpcrdma_conn_info src = sample_info(), dst = RPCRDMA_CONN_INFO_INIT;

	cr_assert_eq(rpcrdma_conn_info_store(&dst, &src), 0);
	cr_assert_eq(dst.size, RPCRDMA_CONN_INFO_KNOWN_END);
	cr_assert_eq(memcmp((char *)&dst + sizeof(dst.size), (char *)&src + sizeof(src.size),
			    RPCRDMA_CONN_INFO_KNOWN_END - sizeof(src.size)),
		     0);
}

/* A later version's field in this version's tail padding must read 0, whatever src held there. */
Test(conn_info, the_tail_padding_is_zeroed_not_copied)
{
	struct rpcrdma_conn_info src, dst = RPCRDMA_CONN_INFO_INIT;
	const unsigned char *d = (const unsigned char *)&dst;

	cr_assert_lt(RPCRDMA_CONN_INFO_KNOWN_END, sizeof(src), "no tail padding: nothing to test");
	memset(&src, 0xa5, sizeof(src));
	src.size = sizeof(src);
	memset(&dst, 0x5a, sizeof(dst));
	dst.size = sizeof(dst);
	cr_assert_eq(rpcrdma_conn_info_store(&dst, &src), 0);
	cr_assert_eq(dst.size, RPCRDMA_CONN_INFO_KNOWN_END);
	cr_assert_eq(dst.send_wr_inline, 0xa5a5a5a5u);
	for (size_t at = RPCRDMA_CONN_INFO_KNOWN_END; at < sizeof(dst); at++)
		cr_assert_eq(d[at], 0, "padding byte %zu is %#x", at, d[at]);
}

Test(conn_info, a_longer_struct_gets_zero_past_what_the_library_knows)
{
	struct rpcrdma_conn_info src = sample_info();
	struct conn_info_v_next dst;

	memset(&dst, 0xa5, sizeof(dst));
	dst.ci.size = sizeof(dst);
	cr_assert_eq(rpcrdma_conn_info_store(&dst.ci, &src), 0);
	cr_assert_eq(dst.unknown, 0);
	cr_assert_eq(dst.ci.size, RPCRDMA_CONN_INFO_KNOWN_END);
	cr_assert_eq(dst.ci.local_invalidations, 77);
	cr_assert_eq(dst.ci.ack_timeout, 14);
	cr_assert_eq(dst.ci.send_wr_inline, 80);
}

Test(conn_info, a_first_version_struct_gets_the_first_versions_fields_only)
{
	struct rpcrdma_conn_info src = sample_info();
	_Alignas(struct rpcrdma_conn_info) unsigned char buf[sizeof(src) + 16];
	struct rpcrdma_conn_info *dst = (struct rpcrdma_conn_info *)buf;

	memset(buf, 0xa5, sizeof(buf));
	dst->size = RPCRDMA_CONN_INFO_SIZE_V1;
	cr_assert_eq(rpcrdma_conn_info_store(dst, &src), 0);
	cr_assert_eq(dst->size, RPCRDMA_CONN_INFO_SIZE_V1);
	cr_assert_eq(dst->local_invalidations, 77);
	for (size_t i = RPCRDMA_CONN_INFO_SIZE_V1; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xa5, "byte %zu past the size was written", i);
}

Test(conn_info, a_struct_without_its_size_is_refused_and_left_alone)
{
	struct rpcrdma_conn_info src = sample_info(), dst;

	memset(&dst, 0, sizeof(dst));
	cr_assert_eq(rpcrdma_conn_info_store(&dst, &src), -EINVAL);
	cr_assert_eq(dst.credits, 0);
	dst.size = RPCRDMA_CONN_INFO_SIZE_V1 - 1;
	cr_assert_eq(rpcrdma_conn_info_store(&dst, &src), -EINVAL);
	cr_assert_eq(dst.credits, 0);
	dst.size = RPCRDMA_STRUCT_SIZE_MAX + 1;
	cr_assert_eq(rpcrdma_conn_info_store(&dst, &src), -EINVAL);
	cr_assert_eq(dst.credits, 0);
}
