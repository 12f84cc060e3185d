/*
 * Status-code names: every module keeps a table indexed by its status
 * enum; this turns a code into text without reading past the table.
 */
#ifndef RPCRDMA_XDR_NAMES_H
#define RPCRDMA_XDR_NAMES_H

#include <stddef.h>

static inline const char *rpcrdma_name_lookup(const char *const *names, size_t count,
					      unsigned int code, const char *fallback)
{
	return code < count && names[code] ? names[code] : fallback;
}

#define RPCRDMA_NAME(table, code, fallback) \
	rpcrdma_name_lookup((table), sizeof(table) / sizeof((table)[0]), (unsigned int)(code), (fallback))

#endif
