/* The smaller and the larger of two sizes, for every module's size arithmetic. */
#ifndef RPCRDMA_XDR_MINMAX_H
#define RPCRDMA_XDR_MINMAX_H

#include <stdint.h>

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

#endif
