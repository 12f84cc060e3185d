rpcgen -h -o hello.h hello.x      # types, constants, prototypes
rpcgen -c -o hello_xdr.c hello.x  # XDR routines
rpcgen -m -o hello_svc.c hello.x  # the dispatch function hello_prog_1 (no main)
rpcgen -l -o hello_clnt.c hello.x # the client stub hello_1
cc -o hello_server hello_server.c hello_svc.c hello_xdr.c $(pkg-config --cflags --libs rpcrdma)
cc -o hello_client hello_client.c hello_clnt.c hello_xdr.c $(pkg-config --cflags --libs rpcrdma)
