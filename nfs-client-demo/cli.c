/*
 * cli: what nfs-client-demo's commands share: coreutils-style messages
 * and exit statuses, output that breaks (SIGPIPE), names from the server
 * shown on a terminal, the mode string of ls and stat, looking up a
 * regular file.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nfs_proc.h"

void cli_vmsg(const char *fmt, va_list ap)
{
	fputs(CLI_NAME ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
}

void cli_sigpipe_mask(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(how, &set, NULL);
}

void cli_output_failed(int err)
{
	if (err != EPIPE)
		return;
	raise(SIGPIPE); /* pending while blocked, delivered when unblocked */
	cli_sigpipe_mask(SIG_UNBLOCK);
}

static bool shown_as_is(unsigned char ch)
{
	return ch >= 0x20 && ch < 0x7f;
}

const char *cli_shown_name(const char *name, bool tty, char *buf, size_t cap)
{
	size_t i = 0;

	if (!tty)
		return name;
	for (; name[i] && i + 1 < cap; i++)
		buf[i] = shown_as_is((unsigned char)name[i]) ? name[i] : '?';
	buf[i] = '\0';
	return buf;
}

int cli_fail(const struct cli *c, const char *path, struct nfs_status st)
{
	char buf[256];
	const char *msg = nfs_status_message(st, buf, sizeof(buf));
	const char *host = c->s->cfg.url.host;

	if (st.kind == NFS_STATUS_RPC && strchr(host, ':')) /* an IPv6 address, as in the URL */
		cli_msg("[%s]: %s", host, msg);
	else if (st.kind == NFS_STATUS_RPC)
		cli_msg("%s: %s", host, msg);
	else
		cli_msg("%s: %s", path, msg);
	return (int)nfs_status_exit(st);
}

void cli_mode_string(ftype3 type, uint32_t mode, char out[11])
{
	static const char types[] = "?-dbclsp";
	static const char rwx[] = "rwxrwxrwx";

	out[0] = (unsigned int)type < sizeof(types) - 1 ? types[type] : '?';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (0400u >> i) ? rwx[i] : '-';
	if (mode & 04000)
		out[3] = out[3] == 'x' ? 's' : 'S';
	if (mode & 02000)
		out[6] = out[6] == 'x' ? 's' : 'S';
	if (mode & 01000)
		out[9] = out[9] == 'x' ? 't' : 'T';
	out[10] = '\0';
}

struct nfs_status cli_regular_file(struct nfs_session *s, const char *path, struct nfs_node *n)
{
	struct nfs_status st = nfs_lookup_path(s, path, n);

	if (nfs_failed(st))
		return st;
	if (n->attr.type == NF3DIR)
		return nfs_err(NFS3ERR_ISDIR);
	if (n->attr.type != NF3REG)
		return nfs_err(NFS3ERR_INVAL);
	return st;
}
