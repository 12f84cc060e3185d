/*
 * cmd_copy: get and put, the pipelined copies (nfs_transfer) with their
 * checks around them: what the remote path is, creating or truncating
 * the target, removing what a failed put created, the summary line.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nfs_proc.h"
#include "nfs_transfer.h"

static void summary(const struct cli *c, const char *what, uint64_t bytes, double seconds)
{
	if (!c->verbose)
		return;
	cli_msg("%s: %llu bytes in %.2f s (%.1f MB/s)", what, (unsigned long long)bytes, seconds,
		seconds > 0 ? (double)bytes / seconds / 1e6 : 0.0);
}

/*
 * get's local file: created with the remote file's permission bits
 * @mode (as cp(1): less the umask), then *@created, or an existing one
 * opened as it is.  Not through a dangling symbolic link (cp(1) refuses
 * one too), nor into a FIFO: opening one waits for a reader, and the
 * READs' data is written at its offsets.
 */
static int get_open(const char *local, uint32_t mode, bool *created)
{
	struct stat sb;
	int fd;

	*created = false;
	if (!stat(local, &sb) && S_ISFIFO(sb.st_mode)) {
		errno = ESPIPE;
		return -1;
	}
	fd = open(local, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)(mode & 0777));
	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(local, O_WRONLY | O_CLOEXEC);
	return fd;
}

int cmd_get(struct cli *c, const struct cli_command *cmd)
{
	const char *remote = cmd->arg[0], *local = cmd->arg[1];
	struct nfs_node n;
	struct nfs_transfer_result res;
	struct progress p;
	struct nfs_status st = cli_regular_file(c->s, remote, &n);
	bool created;
	double t0;
	int fd;

	if (nfs_failed(st))
		return cli_fail(c, remote, st);
	fd = get_open(local, n.attr.mode, &created);
	if (fd < 0)
		return cli_fail(c, local, nfs_local_err(errno));
	t0 = progress_now();
	progress_start(&p, stderr, c->progress, "get", n.attr.size, t0);
	st = nfs_transfer_get(c->s, &n.fh, fd, n.attr.size, c->inflight, &p, &res);
	progress_end(&p);
	if (close(fd) && !nfs_failed(st))
		st = nfs_local_err(errno);
	if (nfs_failed(st)) {
		if (created)
			unlink(local);
		return cli_fail(c, st.kind == NFS_STATUS_LOCAL ? local : remote, st);
	}
	summary(c, "get", res.bytes, progress_now() - t0);
	return NFS_EXIT_OK;
}

/* The verifier of put's EXCLUSIVE create: what matters is that a resend repeats it. */
static void put_verifier(char verf[NFS3_CREATEVERFSIZE])
{
	struct timespec ts;
	uint32_t w[2];

	if (getrandom(verf, NFS3_CREATEVERFSIZE, GRND_NONBLOCK) == NFS3_CREATEVERFSIZE)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	w[0] = (uint32_t)ts.tv_sec;
	w[1] = (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 8);
	memcpy(verf, w, NFS3_CREATEVERFSIZE);
}

/*
 * The remote file for put: truncated if it exists, created if not
 * (EXCLUSIVE, so that a CREATE sent again on a new connection finds
 * its own file instead of failing with NFS3ERR_EXIST).  *@created
 * once the CREATE succeeded, even if what follows it failed.
 */
static struct nfs_status put_target(struct cli *c, const char *remote, uint32_t mode,
				    struct nfs_node *dir, char *name, struct nfs_node *out,
				    bool *created)
{
	struct nfs_status st = nfs_lookup_parent(c->s, remote, dir, name);
	char verf[NFS3_CREATEVERFSIZE];

	*created = false;
	if (nfs_failed(st))
		return st;
	st = nfs_lookup_name(c->s, &dir->fh, name, out);
	if (!nfs_failed(st) && out->attr.type == NF3DIR)
		return nfs_err(NFS3ERR_ISDIR);
	if (nfs_failed(st) && !nfs_is(st, NFS3ERR_NOENT))
		return st;
	if (nfs_path_names_dir(remote)) /* a regular file is no directory */
		return nfs_err(NFS3ERR_NOTDIR);
	if (!nfs_failed(st))
		return nfs3_create(c->s, &dir->fh, name, mode, NULL, out, NULL);
	put_verifier(verf); /* NFS3ERR_NOENT: a new file */
	return nfs3_create(c->s, &dir->fh, name, mode, verf, out, created);
}

int cmd_put(struct cli *c, const struct cli_command *cmd)
{
	const char *local = cmd->arg[0], *remote = cmd->arg[1];
	char name[NFS3_MAXNAMLEN + 1];
	struct nfs_node dir, n;
	struct nfs_transfer_result res;
	struct progress p;
	struct nfs_status st;
	struct stat sb;
	bool created;
	double t0;
	/* not blocking on a FIFO's open, refused below; reads of a regular file never block */
	int fd = open(local, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &sb)) {
		st = nfs_local_err(errno);
		if (fd >= 0)
			close(fd);
		return cli_fail(c, local, st);
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return cli_fail(c, local, nfs_local_err(S_ISDIR(sb.st_mode) ? EISDIR : EINVAL));
	}
	if (c->s->maxfilesize && (uint64_t)sb.st_size > c->s->maxfilesize) {
		close(fd);
		return cli_fail(c, remote, nfs_err(NFS3ERR_FBIG));
	}
	st = put_target(c, remote, sb.st_mode & 0777, &dir, name, &n, &created);
	if (nfs_failed(st)) {
		close(fd);
		if (created)
			nfs3_remove(c->s, &dir.fh, name);
		return cli_fail(c, remote, st);
	}
	t0 = progress_now();
	progress_start(&p, stderr, c->progress, "put", (uint64_t)sb.st_size, t0);
	st = nfs_transfer_put(c->s, &n.fh, fd, (uint64_t)sb.st_size, c->inflight, &p, &res);
	progress_end(&p);
	close(fd);
	if (nfs_failed(st)) {
		/* Leave the export as it was: a file this put created goes again. */
		if (created)
			nfs3_remove(c->s, &dir.fh, name);
		return cli_fail(c, st.kind == NFS_STATUS_LOCAL ? local : remote, st);
	}
	if (res.rewrites)
		cli_msg("%s: the server restarted during the copy; written again with FILE_SYNC",
			remote);
	summary(c, "put", res.bytes, progress_now() - t0);
	return NFS_EXIT_OK;
}
