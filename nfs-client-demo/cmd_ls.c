/*
 * cmd_ls: lists a directory.  Plain ls reads names with READDIR; ls -l
 * uses READDIRPLUS for the attributes (READDIR and a LOOKUP per entry
 * from a server that does not support it) and READLINK for link targets.
 * Both ask for large replies (LS_REPLY_BYTES), which over RDMA come back
 * through a reply chunk; entries are sorted bytewise as ls does in the C
 * locale.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfs_proc.h"

#define LS_REPLY_BYTES (64u * 1024u)

struct ls_entry {
	char *name;
	bool has_attr, has_fh;
	fattr3 attr;
	struct nfs_fh fh;
};

struct ls_list {
	struct ls_entry *v;
	size_t n, cap;
	bool nomem;
};

static bool ls_collect(const struct nfs_dirent *d, void *ctx)
{
	struct ls_list *l = ctx;
	struct ls_entry *e;

	if (!strcmp(d->name, ".") || !strcmp(d->name, ".."))
		return true;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct ls_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return !(l->nomem = true);
		l->v = v;
		l->cap = cap;
	}
	e = &l->v[l->n];
	memset(e, 0, sizeof(*e));
	e->name = strdup(d->name);
	if (!e->name)
		return !(l->nomem = true);
	e->has_attr = d->attr != NULL;
	if (d->attr)
		e->attr = *d->attr;
	e->has_fh = d->fh && nfs_fh_from_xdr(&e->fh, d->fh);
	l->n++;
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ls_entry *)a)->name, ((const struct ls_entry *)b)->name);
}

static void ls_free(struct ls_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
}

/* A name or link target (at most NFS3_MAXPATHLEN bytes) on stdout. */
static void put_name(const struct cli *c, const char *name)
{
	char buf[NFS3_MAXPATHLEN + 1];

	fputs(cli_shown_name(name, c->stdout_tty, buf, sizeof(buf)), stdout);
}

/*
 * @name, in directory @dir (NULL: @name is the operand), for a message
 * on stderr as GNU ls names it ("dir/name", "name" in "."), treated as
 * put_name treats it.
 */
static const char *msg_name(const struct cli *c, const char *dir, const char *name, char *buf,
			    size_t cap)
{
	char joined[2 * NFS3_MAXPATHLEN + 2];
	size_t len = dir ? strlen(dir) : 0;

	if (!dir || !strcmp(dir, ".")) /* GNU ls leaves "." out */
		return cli_shown_name(name, c->stderr_tty, buf, cap);
	snprintf(joined, sizeof(joined), "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name);
	if (c->stderr_tty)
		return cli_shown_name(joined, true, buf, cap);
	snprintf(buf, cap, "%s", joined);
	return buf;
}

/*
 * One line of ls -l.  A link whose target cannot be read is listed with
 * "?" and reported, as GNU ls does ("cannot read symbolic link").
 * Returns NFS_EXIT_OK or the exit status of that failure.
 */
static int print_long(struct cli *c, const char *dir, const char *name, const fattr3 *a,
		      const struct nfs_fh *fh)
{
	char mode[11], when[32], target[NFS3_MAXPATHLEN + 1] = "", buf[256];
	char shown[2 * NFS3_MAXPATHLEN + 2];
	time_t t = (time_t)a->mtime.seconds;
	struct nfs_status st = nfs_ok();
	struct tm tm;

	cli_mode_string(a->type, a->mode, mode);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", gmtime_r(&t, &tm));
	if (a->type == NF3LNK && fh)
		st = nfs3_readlink(c->s, NULL, fh, target);
	if (nfs_failed(st)) {
		snprintf(target, sizeof(target), "?");
		cli_msg("cannot read symbolic link '%s': %s", msg_name(c, dir, name, shown, sizeof(shown)),
			nfs_status_message(st, buf, sizeof(buf)));
	}
	printf("%s %3u %5u %5u %12llu %s ", mode, a->nlink, a->uid, a->gid,
	       (unsigned long long)a->size, when);
	put_name(c, name);
	if (a->type == NF3LNK) {
		fputs(" -> ", stdout);
		put_name(c, target);
	}
	putchar('\n');
	return nfs_failed(st) ? (int)nfs_status_exit(st) : NFS_EXIT_OK;
}

/* The worse of two exit statuses: an RPC failure over an NFS error. */
static int exit_worse(int a, int b)
{
	return a > b ? a : b;
}

/* READDIRPLUS may leave out an entry's attributes or handle: LOOKUP it. */
static struct nfs_status complete_entry(struct cli *c, const struct nfs_fh *dir,
					struct ls_entry *e)
{
	struct nfs_node n;
	struct nfs_status st;

	if (e->has_attr && (e->has_fh || e->attr.type != NF3LNK))
		return nfs_ok();
	st = nfs_lookup_name(c->s, dir, e->name, &n);
	if (nfs_failed(st))
		return st;
	e->attr = n.attr;
	e->fh = n.fh;
	e->has_attr = e->has_fh = true;
	return st;
}

/*
 * A write to stdout just failed: the error is reported here, once, and
 * what stdio still holds is dropped (printf drops it itself, putchar does
 * not), so main's last flush has nothing to write or report.
 */
static int output_failed(const struct cli *c, int err)
{
	cli_output_failed(err);
	clearerr(stdout);
	__fpurge(stdout);
	return cli_fail(c, "write error", nfs_local_err(err));
}

/* An entry that could not be completed: "cannot access 'dir/name'", as GNU ls says it. */
static int entry_failed(struct cli *c, const char *dir, const char *name, struct nfs_status st)
{
	char shown[2 * NFS3_MAXPATHLEN + 2], buf[256];

	if (st.kind == NFS_STATUS_RPC)
		return cli_fail(c, name, st);
	cli_msg("cannot access '%s': %s", msg_name(c, dir, name, shown, sizeof(shown)),
		nfs_status_message(st, buf, sizeof(buf)));
	return (int)nfs_status_exit(st);
}

static int list_dir(struct cli *c, const char *path, const struct nfs_node *dir, bool long_list)
{
	struct ls_list l = { NULL, 0, 0, false };
	struct nfs_status st = nfs3_readdir(c->s, &dir->fh, long_list, LS_REPLY_BYTES, ls_collect, &l);
	int rc = NFS_EXIT_OK, err;
	bool broken;

	/* RFC 1813 lets a server refuse READDIRPLUS: names by READDIR, each entry completed below. */
	if (long_list && nfs_is(st, NFS3ERR_NOTSUPP) && !l.n)
		st = nfs3_readdir(c->s, &dir->fh, false, LS_REPLY_BYTES, ls_collect, &l);
	if (!nfs_failed(st) && l.nomem)
		st = nfs_local_err(ENOMEM);
	if (nfs_failed(st)) {
		ls_free(&l);
		return cli_fail(c, path, st);
	}
	qsort(l.v, l.n, sizeof(l.v[0]), by_name);
	/*
	 * An entry gone meanwhile is reported and the rest listed, as ls
	 * does; not past a failed call, nor past broken output.
	 */
	for (size_t i = 0; i < l.n && rc != NFS_EXIT_RPC && !ferror(stdout); i++) {
		struct ls_entry *e = &l.v[i];

		if (!long_list) {
			put_name(c, e->name);
			putchar('\n');
			continue;
		}
		st = complete_entry(c, &dir->fh, e);
		if (nfs_failed(st))
			rc = exit_worse(rc, entry_failed(c, path, e->name, st));
		else
			rc = exit_worse(rc, print_long(c, path, e->name, &e->attr, &e->fh));
	}
	broken = ferror(stdout);
	err = errno; /* the failed printf's, before free() */
	ls_free(&l);
	return broken ? output_failed(c, err) : rc;
}

int cmd_ls(struct cli *c, const struct cli_command *cmd)
{
	const char *path = cmd->arg[0] ? cmd->arg[0] : ".";
	struct nfs_node n;
	struct nfs_status st = nfs_lookup_path(c->s, path, &n);

	if (nfs_failed(st))
		return cli_fail(c, path, st);
	if (n.attr.type == NF3DIR)
		return list_dir(c, path, &n, cmd->long_list);
	if (cmd->long_list)
		return print_long(c, NULL, path, &n.attr, &n.fh);
	printf("%s\n", path);
	return NFS_EXIT_OK;
}
