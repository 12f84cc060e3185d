/* hello_client HOST [NAME]: call HELLO on HOST's HELLO_PROG over RDMA. */
#include <stdio.h>
#include <rpcrdma/rpcrdma.h>
#include "hello.h"

int main(int argc, char **argv)
{
	hello_msg name = argc > 2 ? argv[2] : "world", *reply;
	CLIENT *cl;

	if (argc < 2) {
		fprintf(stderr, "usage: hello_client HOST [NAME]\n");
		return 2;
	}
	cl = clnt_rdma_create(argv[1], HELLO_PROG, HELLO_V1, "rdma", NULL); /* NULL: default options */
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
