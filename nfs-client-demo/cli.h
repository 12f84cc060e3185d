/*
 * cli: what the commands of nfs-client-demo share: the session, the
 * options, and coreutils-style error reporting.  Each command returns
 * the process's exit status (enum nfs_exit).
 */
#ifndef NFS_CLIENT_DEMO_CLI_H
#define NFS_CLIENT_DEMO_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "nfs_session.h"

#define CLI_NAME "nfs-client-demo"

struct cli {
	struct nfs_session *s;
	unsigned int inflight;
	bool verbose;
	bool progress;   /* draw the bar if stderr is a terminal */
	bool stdout_tty; /* ls shows bytes of names outside printable ASCII as '?' */
	bool stderr_tty; /* and so do its messages naming them */
};

/* The parsed command line after the URL. */
struct cli_command {
	const char *name;
	const char *arg[2];
	bool long_list;           /* ls -l */
	/* bench */
	const char *bench_kind;
	uint32_t bench_size;      /* 0: rsize or wsize */
	unsigned int bench_threads;
	double bench_seconds;
	int (*run)(struct cli *c, const struct cli_command *cmd);
};

/*
 * cli_fail - print "nfs-client-demo: PATH: MESSAGE" (or "HOST: RPC: ..."
 * for an RPC failure) to stderr and return the exit status for @st.
 */
int cli_fail(const struct cli *c, const char *path, struct nfs_status st);

/*
 * cli_output_failed - a write of the program's own output failed with
 * @err.  SIGPIPE is blocked from the start (main), so that a TCP
 * connection the server reset (libtirpc writes to it with write()) fails
 * an RPC instead of ending the process.  A broken pipe on the output
 * itself (EPIPE) still ends the process by SIGPIPE, as it ends cat;
 * returns if SIGPIPE is ignored or @err is another error.
 */
void cli_output_failed(int err);

/* cli_sigpipe_mask - SIG_BLOCK or SIG_UNBLOCK SIGPIPE in the calling thread. */
void cli_sigpipe_mask(int how);

/* "nfs-client-demo: " + the formatted text + newline, to stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_vmsg(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* mode_string - "drwxr-xr-x" for an NFSv3 type and mode (11 bytes with the NUL). */
void cli_mode_string(ftype3 type, uint32_t mode, char out[11]);

/*
 * cli_shown_name - @name (a name or link text from the server) as shown
 * on a stream that is a terminal (@tty) or not.  On a terminal a byte
 * outside printable ASCII is shown as '?', as ls -q shows it in the C
 * locale: C0 and C1 control characters (raw, or UTF-8 encoded as C2
 * 80..9F) could move the cursor or rewrite the screen; @buf (@cap bytes)
 * holds that copy.  Elsewhere @name itself.
 */
const char *cli_shown_name(const char *name, bool tty, char *buf, size_t cap);

/* cli_regular_file - look up a regular file: NFS3ERR_ISDIR for a directory, NFS3ERR_INVAL for others. */
struct nfs_status cli_regular_file(struct nfs_session *s, const char *path, struct nfs_node *n);

int cmd_ls(struct cli *c, const struct cli_command *cmd);
int cmd_stat(struct cli *c, const struct cli_command *cmd);
int cmd_cat(struct cli *c, const struct cli_command *cmd);
int cmd_get(struct cli *c, const struct cli_command *cmd);
int cmd_put(struct cli *c, const struct cli_command *cmd);
int cmd_mkdir(struct cli *c, const struct cli_command *cmd);
int cmd_rm(struct cli *c, const struct cli_command *cmd);
int cmd_rmdir(struct cli *c, const struct cli_command *cmd);
int cmd_mv(struct cli *c, const struct cli_command *cmd);
int cmd_ln(struct cli *c, const struct cli_command *cmd);
int cmd_readlink(struct cli *c, const struct cli_command *cmd);
int cmd_df(struct cli *c, const struct cli_command *cmd);
int cmd_bench(struct cli *c, const struct cli_command *cmd);

#endif
