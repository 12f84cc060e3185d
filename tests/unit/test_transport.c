/* Helpers the CLIENT and the server share (rpcrdma/transport.c). */
#include <criterion/criterion.h>

#include "rpcrdma/transport.h"

Test(transport, flavors_that_only_carry_credentials_allow_ddp)
{
	cr_assert(rpcrdma_auth_ddp(AUTH_NONE));
	cr_assert(rpcrdma_auth_ddp(AUTH_SYS));
	cr_assert(rpcrdma_auth_ddp(AUTH_SHORT));
	cr_assert(rpcrdma_auth_ddp(AUTH_DH));
}

Test(transport, flavors_that_may_wrap_the_body_do_not)
{
	cr_assert_not(rpcrdma_auth_ddp(6)); /* RPCSEC_GSS */
	cr_assert_not(rpcrdma_auth_ddp(4)); /* AUTH_KERB */
	cr_assert_not(rpcrdma_auth_ddp(200777));
	cr_assert_not(rpcrdma_auth_ddp(-1));
}

Test(transport, only_flavors_with_fixed_state_are_pipelined)
{
	cr_assert(rpcrdma_auth_pipelined(AUTH_NONE));
	cr_assert(rpcrdma_auth_pipelined(AUTH_SYS));
	cr_assert_not(rpcrdma_auth_pipelined(AUTH_SHORT));
	cr_assert_not(rpcrdma_auth_pipelined(AUTH_DH));
	cr_assert_not(rpcrdma_auth_pipelined(6)); /* RPCSEC_GSS */
	cr_assert_not(rpcrdma_auth_pipelined(200777));
}

Test(transport, mask_count_counts_bits)
{
	cr_assert_eq(rpcrdma_mask_count(0), 0);
	cr_assert_eq(rpcrdma_mask_count(1), 1);
	cr_assert_eq(rpcrdma_mask_count(0x80000001u), 2);
	cr_assert_eq(rpcrdma_mask_count(~0u), 32);
}
