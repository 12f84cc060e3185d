/* nfs-client-demo's URL parser: any bytes, NUL-terminated. */
#include <stdlib.h>
#include <string.h>

#include "nfs_url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct nfs_url u;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!nfs_url_parse(text, &u) &&
	    (u.port == 0 || !u.host[0] || u.export_path[0] != '/' ||
	     strlen(u.host) > NFS_URL_HOST_MAX || strlen(u.export_path) > NFS_URL_EXPORT_MAX))
		abort();
	free(text);
	return 0;
}
