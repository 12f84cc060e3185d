/*
 * nfs_url: parses the demo client's nfs:// locator.  Every field is
 * checked for length and syntax before it is copied; the result always
 * holds a host, a port and an absolute export path.
 */
#include "nfs_url.h"

#include <stdio.h>
#include <string.h>

#define SCHEME "nfs://"

static bool copy_bounded(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		return false;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return true;
}

/* A decimal number without sign, leading spaces or trailing junk, at most @max. */
static bool parse_uint(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* HOST or [V6] followed by an optional :PORT; @end is where the authority stops. */
static const char *parse_authority(const char *s, const char *end, struct nfs_url *url,
				   bool *has_port)
{
	const char *host = s, *host_end, *colon;
	uint32_t port;

	if (*s == '[') {
		host = s + 1;
		host_end = memchr(host, ']', (size_t)(end - host));
		if (!host_end)
			return "unterminated IPv6 literal";
		if (!memchr(host, ':', (size_t)(host_end - host)))
			return "bracketed host is not an IPv6 address";
		colon = host_end + 1 < end ? host_end + 1 : NULL;
		if (colon && *colon != ':')
			return "junk after the IPv6 literal";
	} else {
		colon = memchr(s, ':', (size_t)(end - s));
		host_end = colon ? colon : end;
	}
	if (host_end == host)
		return "missing host";
	if (!copy_bounded(url->host, sizeof(url->host), host, (size_t)(host_end - host)))
		return "host name too long";
	if (strpbrk(url->host, "[]@/?# "))
		return "invalid character in host";
	*has_port = colon != NULL;
	if (colon) {
		if (!parse_uint(colon + 1, (size_t)(end - colon - 1), 65535, &port) || port == 0)
			return "invalid port";
		url->port = (uint16_t)port;
	}
	return NULL;
}

static const char *parse_query_item(const char *s, size_t len, struct nfs_url *url)
{
	const char *eq = memchr(s, '=', len);
	size_t klen = eq ? (size_t)(eq - s) : len;
	const char *v = eq ? eq + 1 : s + len;
	size_t vlen = (size_t)(s + len - v);

	if (!eq)
		return "query item without '='";
	if (klen == 5 && !memcmp(s, "proto", 5)) {
		if (vlen == 4 && !memcmp(v, "rdma", 4))
			url->proto = NFS_URL_PROTO_RDMA;
		else if (vlen == 3 && !memcmp(v, "tcp", 3))
			url->proto = NFS_URL_PROTO_TCP;
		else
			return "proto must be rdma or tcp";
		return NULL;
	}
	if (klen == 3 && !memcmp(s, "uid", 3)) {
		url->has_uid = parse_uint(v, vlen, UINT32_MAX, &url->uid);
		return url->has_uid ? NULL : "uid must be a number";
	}
	if (klen == 3 && !memcmp(s, "gid", 3)) {
		url->has_gid = parse_uint(v, vlen, UINT32_MAX, &url->gid);
		return url->has_gid ? NULL : "gid must be a number";
	}
	return "unknown query key (known: proto, uid, gid)";
}

/* A bit for the known key of query item @s (@len bytes), 0 for none. */
static unsigned query_key_bit(const char *s, size_t len)
{
	static const char *const keys[] = { "proto", "uid", "gid" };
	const char *eq = memchr(s, '=', len);
	size_t klen = eq ? (size_t)(eq - s) : len;

	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (klen == strlen(keys[i]) && !memcmp(s, keys[i], klen))
			return 1u << i;
	return 0;
}

static const char *parse_query(const char *q, struct nfs_url *url)
{
	unsigned seen = 0;

	if (!*q)
		return "empty query";
	while (*q) {
		const char *amp = strchr(q, '&');
		size_t len = amp ? (size_t)(amp - q) : strlen(q);
		unsigned bit = query_key_bit(q, len);
		const char *err = bit & seen ? "repeated query key" : parse_query_item(q, len, url);

		if (err)
			return err;
		seen |= bit;
		q += len + (amp != NULL);
		if (amp && !*q)
			return "empty query item";
	}
	return NULL;
}

const char *nfs_url_parse(const char *text, struct nfs_url *url)
{
	const char *auth, *path, *query, *err;
	size_t plen;
	bool has_port;

	memset(url, 0, sizeof(*url));
	if (strncmp(text, SCHEME, strlen(SCHEME)) != 0)
		return "must start with nfs://";
	auth = text + strlen(SCHEME);
	path = strchr(auth, '/');
	query = strchr(auth, '?');
	if (!path || (query && query < path))
		return "missing export path";
	err = parse_authority(auth, path, url, &has_port);
	if (err)
		return err;
	plen = query ? (size_t)(query - path) : strlen(path); /* "/" alone is the root export */
	if (!copy_bounded(url->export_path, sizeof(url->export_path), path, plen))
		return "export path too long";
	if (strchr(url->export_path, '#'))
		return "fragments are not supported";
	if (query) {
		err = parse_query(query + 1, url);
		if (err)
			return err;
	}
	if (!has_port)
		url->port = url->proto == NFS_URL_PROTO_TCP ? NFS_URL_TCP_PORT : NFS_URL_RDMA_PORT;
	return NULL;
}

void nfs_url_export_name(const struct nfs_url *url, char out[NFS_URL_NAME_MAX])
{
	bool v6 = strchr(url->host, ':') != NULL;

	snprintf(out, NFS_URL_NAME_MAX, "%s%s%s:%s", v6 ? "[" : "", url->host, v6 ? "]" : "",
		 url->export_path);
}
