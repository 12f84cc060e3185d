/*
 * cmd_files: the commands that each make one or two NFS calls on a path:
 * stat, cat, mkdir, rm, rmdir, mv, ln -s, readlink, df.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfs_proc.h"

static const char *type_name(ftype3 t)
{
	switch (t) {
	case NF3REG: return "regular file";
	case NF3DIR: return "directory";
	case NF3BLK: return "block special file";
	case NF3CHR: return "character special file";
	case NF3LNK: return "symbolic link";
	case NF3SOCK: return "socket";
	case NF3FIFO: return "fifo";
	}
	return "unknown";
}

int cmd_stat(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node n;
	struct nfs_status st = nfs_lookup_path(c->s, cmd->arg[0], &n);
	char mode[11], when[64];
	time_t t;
	struct tm tm;

	if (nfs_failed(st))
		return cli_fail(c, cmd->arg[0], st);
	cli_mode_string(n.attr.type, n.attr.mode, mode);
	t = (time_t)n.attr.mtime.seconds;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
	printf("  File: %s\n  Size: %llu\n  Type: %s\n  Mode: %04o (%s)\n   Uid: %u\n   Gid: %u\n"
	       " Links: %u\nFileid: %llu\nModify: %s.%09u UTC\n", cmd->arg[0],
	       (unsigned long long)n.attr.size, type_name(n.attr.type), n.attr.mode & 07777, mode,
	       n.attr.uid, n.attr.gid, n.attr.nlink, (unsigned long long)n.attr.fileid, when,
	       n.attr.mtime.nseconds);
	return NFS_EXIT_OK;
}

static struct nfs_status write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nfs_local_err(errno);
		buf += n;
		len -= (size_t)n;
	}
	return nfs_ok();
}

int cmd_cat(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node n;
	struct nfs_status st = cli_regular_file(c->s, cmd->arg[0], &n);
	char *buf = nfs_failed(st) ? NULL : malloc(c->s->rsize);
	uint64_t off = 0;
	uint32_t got;
	bool eof = false;

	if (!nfs_failed(st) && !buf)
		return cli_fail(c, cmd->arg[0], nfs_local_err(ENOMEM));
	while (!nfs_failed(st) && !eof) {
		st = nfs3_read(c->s, NULL, &n.fh, off, c->s->rsize, buf, &got, &eof);
		if (!nfs_failed(st) && got)
			st = write_all(STDOUT_FILENO, buf, got);
		if (nfs_failed(st))
			break;
		off += got; /* nothing without eof is an error (nfs3_read) */
	}
	free(buf);
	if (st.kind == NFS_STATUS_LOCAL) {
		cli_output_failed(st.code);
		return cli_fail(c, "write error", st);
	}
	return nfs_failed(st) ? cli_fail(c, cmd->arg[0], st) : NFS_EXIT_OK;
}

int cmd_mkdir(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node dir;
	char name[NFS3_MAXNAMLEN + 1];
	struct nfs_status st = nfs_lookup_parent(c->s, cmd->arg[0], &dir, name);

	/* "/", "." and "..": EEXIST if the path exists (not "missing/."; "" names nothing) */
	if (nfs_is(st, NFS3ERR_INVAL)) {
		struct nfs_node n;

		st = nfs_lookup_path(c->s, cmd->arg[0], &n);
		if (!nfs_failed(st))
			st = nfs_err(NFS3ERR_EXIST);
	} else if (!nfs_failed(st))
		st = nfs3_mkdir(c->s, &dir.fh, name, 0755);
	return nfs_failed(st) ? cli_fail(c, cmd->arg[0], st) : NFS_EXIT_OK;
}

int cmd_rm(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node dir, n;
	char name[NFS3_MAXNAMLEN + 1];
	struct nfs_status st = nfs_lookup_parent(c->s, cmd->arg[0], &dir, name);

	if (!nfs_failed(st))
		st = nfs_lookup_name(c->s, &dir.fh, name, &n);
	/* Servers may unlink directories for root (knfsd refuses with EISDIR or EPERM). */
	if (!nfs_failed(st) && n.attr.type == NF3DIR)
		st = nfs_err(NFS3ERR_ISDIR);
	else if (!nfs_failed(st) && nfs_path_names_dir(cmd->arg[0]))
		st = nfs_err(NFS3ERR_NOTDIR);
	if (!nfs_failed(st))
		st = nfs3_remove(c->s, &dir.fh, name);
	return nfs_failed(st) ? cli_fail(c, cmd->arg[0], st) : NFS_EXIT_OK;
}

int cmd_rmdir(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node dir;
	char name[NFS3_MAXNAMLEN + 1];
	struct nfs_status st = nfs_lookup_parent(c->s, cmd->arg[0], &dir, name);

	if (!nfs_failed(st))
		st = nfs3_rmdir(c->s, &dir.fh, name);
	return nfs_failed(st) ? cli_fail(c, cmd->arg[0], st) : NFS_EXIT_OK;
}

/* A trailing "/" moves only a directory (rename(2)): NFS3ERR_NOTDIR for anything else. */
static struct nfs_status directory_only(struct nfs_session *s, const struct nfs_node *dir,
					const char *name)
{
	struct nfs_node n;
	struct nfs_status st = nfs_lookup_name(s, &dir->fh, name, &n);

	if (!nfs_failed(st) && n.attr.type != NF3DIR)
		st = nfs_err(NFS3ERR_NOTDIR);
	return st;
}

int cmd_mv(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node from_dir, to_dir;
	char from[NFS3_MAXNAMLEN + 1], to[NFS3_MAXNAMLEN + 1], buf[256];
	struct nfs_status st = nfs_lookup_parent(c->s, cmd->arg[0], &from_dir, from);

	if (!nfs_failed(st))
		st = nfs_lookup_parent(c->s, cmd->arg[1], &to_dir, to);
	if (!nfs_failed(st) && (nfs_path_names_dir(cmd->arg[0]) || nfs_path_names_dir(cmd->arg[1])))
		st = directory_only(c->s, &from_dir, from);
	if (!nfs_failed(st))
		st = nfs3_rename(c->s, &from_dir.fh, from, &to_dir.fh, to);
	if (!nfs_failed(st))
		return NFS_EXIT_OK;
	if (st.kind == NFS_STATUS_RPC)
		return cli_fail(c, cmd->arg[0], st);
	cli_msg("cannot move '%s' to '%s': %s", cmd->arg[0], cmd->arg[1],
		nfs_status_message(st, buf, sizeof(buf)));
	return (int)nfs_status_exit(st);
}

int cmd_ln(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node dir;
	char name[NFS3_MAXNAMLEN + 1];
	struct nfs_status st = nfs_lookup_parent(c->s, cmd->arg[1], &dir, name);

	if (!nfs_failed(st) && strlen(cmd->arg[0]) > NFS3_MAXPATHLEN)
		st = nfs_err(NFS3ERR_NAMETOOLONG);
	if (!nfs_failed(st) && nfs_path_names_dir(cmd->arg[1])) /* symlink(2): a link is no directory */
		st = nfs_err(NFS3ERR_NOENT);
	if (!nfs_failed(st))
		st = nfs3_symlink(c->s, &dir.fh, name, cmd->arg[0]);
	return nfs_failed(st) ? cli_fail(c, cmd->arg[1], st) : NFS_EXIT_OK;
}

int cmd_readlink(struct cli *c, const struct cli_command *cmd)
{
	struct nfs_node n;
	char text[NFS3_MAXPATHLEN + 1], shown[NFS3_MAXPATHLEN + 1];
	struct nfs_status st = nfs_lookup_path(c->s, cmd->arg[0], &n);

	if (!nfs_failed(st) && n.attr.type != NF3LNK)
		st = nfs_err(NFS3ERR_INVAL);
	if (!nfs_failed(st))
		st = nfs3_readlink(c->s, NULL, &n.fh, text);
	if (nfs_failed(st))
		return cli_fail(c, cmd->arg[0], st);
	printf("%s\n", cli_shown_name(text, c->stdout_tty, shown, sizeof(shown)));
	return NFS_EXIT_OK;
}

int cmd_df(struct cli *c, const struct cli_command *cmd)
{
	FSSTAT3resok fs;
	struct nfs_status st = nfs3_fsstat(c->s, &c->s->root, &fs);
	uint64_t used, pct;

	(void)cmd;
	if (nfs_failed(st))
		return cli_fail(c, c->s->what, st);
	used = fs.tbytes > fs.fbytes ? fs.tbytes - fs.fbytes : 0;
	/* As df(1): used / (used + available), rounded up; 128 bits: a server's sizes may be any */
	__extension__ typedef unsigned __int128 u128;
	u128 whole = (u128)used + fs.abytes;

	pct = whole ? (uint64_t)(((u128)used * 100 + whole - 1) / whole) : 0;
	printf("%-20s %15s %15s %15s %4s %12s %12s\n", "Export", "Size", "Used", "Avail", "Use%",
	       "Files", "Ifree");
	printf("%-20s %15llu %15llu %15llu %3llu%% %12llu %12llu\n", c->s->what,
	       (unsigned long long)fs.tbytes, (unsigned long long)used,
	       (unsigned long long)fs.abytes, (unsigned long long)pct,
	       (unsigned long long)fs.tfiles, (unsigned long long)fs.ffiles);
	return NFS_EXIT_OK;
}
