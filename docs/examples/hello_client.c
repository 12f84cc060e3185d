/* hello_client HOST [NAME]: call HELLO on HOST's HELLO_PROG over RDMA. */
#include <stdio.h>
#include <rpcrdma/rpcrdma.h>
#include "hello.h"

/*
 * The upper-layer binding: HELLO's reply is at most a length word and
 * HELLO_MAX bytes, so it always comes inline.  Without reply_max the
 * client would offer a reply chunk of max_rpc_size (16 MiB) each call.
 */
static uint32_t hello_reply_max(const void *args)
{
	(void)args;
	return 4 + HELLO_MAX;
}

static const struct rpcrdma_ulb_proc hello_procs[] = {
	{ .proc = HELLO, .reply_max = hello_reply_max },
};
static const struct rpcrdma_ulb hello_ulb = { HELLO_PROG, HELLO_V1, hello_procs, 1 };

int main(int argc, char **argv)
{
	hello_msg name = argc > 2 ? argv[2] : "world", *reply;
	struct rpcrdma_options o;
	CLIENT *cl;

	if (argc < 2) {
		fprintf(stderr, "usage: hello_client HOST [NAME]\n");
		return 2;
	}
	rpcrdma_options_init(&o);
	o.ulb = &hello_ulb;
	cl = clnt_rdma_create(argv[1], HELLO_PROG, HELLO_V1, "rdma", &o);
	if (!cl) {
		clnt_pcreateerror(argv[1]);
		return 1;
	}
	reply = hello_1(&name, cl); /* the rpcgen stub: clnt_call(cl, HELLO, ...) */
	if (!reply) {
		clnt_perror(cl, argv[1]);
		return 1;
	}
	printf("%s\n", *reply);
	clnt_destroy(cl);
	return 0;
}
