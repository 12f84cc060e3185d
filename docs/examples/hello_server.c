/* hello_server ADDRESS: serve HELLO_PROG over RDMA on ADDRESS (IPv4). */
#include <arpa/inet.h>
#include <stdio.h>
#include <rpcrdma/rpcrdma.h>
#include "hello.h"

void hello_prog_1(struct svc_req *rq, SVCXPRT *xprt); /* rpcgen -m hello.x */

hello_msg *hello_1_svc(hello_msg *name, struct svc_req *rq)
{
	static char buf[HELLO_MAX + 1], *reply = buf; /* a hello_msg: HELLO_MAX at most */

	(void)rq;
	snprintf(buf, sizeof(buf), "hello, %s", *name);
	return &reply;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET }; /* port 0: any free port */
	SVCXPRT *xprt;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: hello_server IPV4-ADDRESS\n");
		return 2;
	}
	xprt = svc_rdma_create((struct sockaddr *)&sin, NULL);
	if (!xprt || !svc_rdma_reg(xprt, HELLO_PROG, HELLO_V1, hello_prog_1, NULL)) {
		clnt_pcreateerror("hello_server");
		return 1;
	}
	svc_run(); /* serves the listener and every connection it accepts */
	return 1;
}
