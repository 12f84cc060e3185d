/*
 * nfs_path: resolves export-relative paths with one LOOKUP per
 * component.  NFSv3 servers do not walk paths: the client does, and so
 * decides that "/a//b/./c" is a/b/c.  ".." is sent to the server, which
 * keeps it inside the export.  A path ending in "/" or "/." names a
 * directory, as in POSIX path resolution: "file/" is NFS3ERR_NOTDIR.
 */
#include "nfs_proc.h"

#include <string.h>

/* The next component of *@p into @name; false at the end of the path. */
static bool next_component(const char **p, char name[NFS3_MAXNAMLEN + 1], struct nfs_status *st)
{
	const char *s = *p, *e;
	size_t len;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s)
			return false;
		e = strchr(s, '/');
		len = e ? (size_t)(e - s) : strlen(s);
		if (!(len == 1 && s[0] == '.'))
			break;
		s += len;
	}
	*p = s + len;
	if (len > NFS3_MAXNAMLEN) {
		*st = nfs_err(NFS3ERR_NAMETOOLONG);
		return false;
	}
	memcpy(name, s, len);
	name[len] = '\0';
	return true;
}

bool nfs_path_names_dir(const char *path)
{
	size_t len = strlen(path);

	return (len && path[len - 1] == '/') ||
	       (len && path[len - 1] == '.' && (len == 1 || path[len - 2] == '/'));
}

struct nfs_status nfs_lookup_name(struct nfs_session *s, const struct nfs_fh *dir,
				   const char *name, struct nfs_node *out)
{
	struct nfs_status st = nfs3_lookup(s, dir, name, out);

	/* LOOKUP's attributes are optional; callers need the type. */
	if (!nfs_failed(st) && out->attr.type == 0)
		st = nfs3_getattr(s, NULL, &out->fh, &out->attr);
	return st;
}

static struct nfs_status root_node(struct nfs_session *s, struct nfs_node *out)
{
	out->fh = s->root;
	return nfs3_getattr(s, NULL, &s->root, &out->attr);
}

struct nfs_status nfs_lookup_path(struct nfs_session *s, const char *path, struct nfs_node *out)
{
	char name[NFS3_MAXNAMLEN + 1];
	bool dir_only = nfs_path_names_dir(path);
	struct nfs_status st;
	struct nfs_node next;

	if (!*path) /* names nothing (POSIX); the root is "/" or "." */
		return nfs_err(NFS3ERR_NOENT);
	if (strlen(path) > NFS3_MAXPATHLEN)
		return nfs_err(NFS3ERR_NAMETOOLONG);
	st = root_node(s, out);
	while (!nfs_failed(st) && next_component(&path, name, &st)) {
		if (out->attr.type != NF3DIR)
			return nfs_err(NFS3ERR_NOTDIR);
		st = nfs_lookup_name(s, &out->fh, name, &next);
		if (!nfs_failed(st))
			*out = next;
	}
	if (!nfs_failed(st) && dir_only && out->attr.type != NF3DIR)
		st = nfs_err(NFS3ERR_NOTDIR);
	return st;
}

struct nfs_status nfs_lookup_parent(struct nfs_session *s, const char *path, struct nfs_node *dir,
				    char *name)
{
	char dirpath[NFS3_MAXPATHLEN + 1];
	const char *slash;
	size_t len = strlen(path);
	struct nfs_status st;

	if (!len)
		return nfs_err(NFS3ERR_NOENT);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len > NFS3_MAXPATHLEN)
		return nfs_err(NFS3ERR_NAMETOOLONG);
	memcpy(dirpath, path, len);
	dirpath[len] = '\0';
	slash = strrchr(dirpath, '/');
	if (slash)
		path = slash + 1;
	else
		path = dirpath;
	if (strlen(path) > NFS3_MAXNAMLEN)
		return nfs_err(NFS3ERR_NAMETOOLONG);
	if (!*path || !strcmp(path, ".") || !strcmp(path, ".."))
		return nfs_err(NFS3ERR_INVAL);
	strcpy(name, path);
	if (slash)
		dirpath[slash - dirpath + 1] = '\0'; /* "/" for a name at the root */
	else
		strcpy(dirpath, ".");
	st = nfs_lookup_path(s, dirpath, dir);
	if (!nfs_failed(st) && dir->attr.type != NF3DIR)
		st = nfs_err(NFS3ERR_NOTDIR);
	return st;
}
