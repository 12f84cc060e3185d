// A C++ program using the installed headers (make abi-check): they
// compile as C++11 with -pedantic-errors, their functions link with C
// names, and RPCRDMA_CONN_INFO_INIT is valid C++.
#include <rpcrdma/netconfig.h>
#include <rpcrdma/rpcbind.h>
#include <rpcrdma/rpcrdma.h>

typedef void (*any_function)(void);

int main()
{
	struct rpcrdma_conn_info ci = RPCRDMA_CONN_INFO_INIT;
	struct rpcrdma_options o;
	// every exported function (volatile: kept at any -O), so that each must link by its C name
	const volatile any_function all[] = {
		(any_function)clnt_rdma_create,         (any_function)clnt_rdma_getinfo,
		(any_function)clnt_rdma_tli_create,     (any_function)rpcrdma_getnetconfigent,
		(any_function)rpcrdma_netid_family,     (any_function)rpcrdma_options_init_sized,
		(any_function)rpcrdma_rpcb_lookup,      (any_function)rpcrdma_rpcb_lookup_timed,
		(any_function)rpcrdma_rpcb_merge,       (any_function)rpcrdma_rpcb_set,
		(any_function)rpcrdma_rpcb_unset,       (any_function)rpcrdma_uaddr_format,
		(any_function)rpcrdma_uaddr_parse,      (any_function)svc_rdma_create,
		(any_function)svc_rdma_getinfo,         (any_function)svc_rdma_reg,
	};

	rpcrdma_options_init(&o);
	(void)all[0];
	return ci.size == sizeof(ci) && o.size == sizeof(o) ? 0 : 1;
}
