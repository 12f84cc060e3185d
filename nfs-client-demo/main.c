/*
 * nfs-client-demo: an NFSv3 client over RPC-over-RDMA (or TCP) with
 * coreutils-like commands.  main() parses the whole command line before
 * touching the network, so usage errors never leave a mount behind, then
 * opens the session, runs one command and closes it.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "nfs_transfer.h"

#define VERSION_TEXT CLI_NAME " (rpcrdma) 0.1.0"
#define BENCH_THREADS_MAX 256u

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " CLI_NAME " [OPTION]... nfs://HOST[:PORT]/EXPORT[?proto=rdma|tcp&uid=N&gid=N] COMMAND [ARG]...\n"
"NFSv3 client over RPC-over-RDMA (default, port 20049) or TCP (port 2049).\n"
"\n"
"Commands (paths are relative to the export's root):\n"
"  ls [-l] [PATH]         list a directory\n"
"  stat PATH              show attributes\n"
"  cat PATH               write a file to standard output\n"
"  get REMOTE LOCAL       copy a file from the server\n"
"  put LOCAL REMOTE       copy a file to the server\n"
"  mkdir PATH, rm PATH, rmdir PATH, mv FROM TO, ln -s TARGET PATH, readlink PATH\n"
"  df                     show the export's space and files\n"
"  bench read|write|getattr [--size BYTES] [--threads N] [--seconds S]\n"
"\n"
"Options:\n"
"  -v, --verbose          print the negotiated transport parameters and transfer summaries\n"
"  -j, --inflight N       READs or WRITEs in flight for get and put (1-%u, default %u)\n"
"      --rsize BYTES      largest READ (%u-%u; default: the server's, at most 1 MiB)\n"
"      --wsize BYTES      largest WRITE (same limits)\n"
"      --timeout SECONDS  time limit of each call (default 60)\n"
"      --retry            over RDMA, send a call cut off by a lost connection again on a\n"
"                         new connection, within its time limit\n"
"      --retry-timeout SECONDS\n"
"                         over RDMA, also take a call without a reply for SECONDS as\n"
"                         cut off: reset its connection and send it again (implies --retry)\n"
"      --no-progress      no progress bar for get and put\n"
"  -h, --help             display this help and exit\n"
"      --version          output version information and exit\n"
"\n"
"Exit status: 0 success, 1 the command failed, 2 usage error, 3 cannot reach the\n"
"server or mount the export, 4 an RPC failed during the command.\n"
"See nfs-client-demo(1).\n",
		NFS_TRANSFER_INFLIGHT_MAX, NFS_TRANSFER_INFLIGHT_DEFAULT, NFS_SESSION_IO_MIN,
		NFS_SESSION_IO_MAX);
}

static void try_help(void)
{
	fprintf(stderr, "Try '" CLI_NAME " --help' for more information.\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
	try_help();
	return NFS_EXIT_USAGE;
}

/*
 * Standard output flushed; a failed write is a failure, as in coreutils
 * ("write error").  A write that failed inside an earlier printf leaves
 * only the error flag, its errno long gone: a pipe or socket whose reader
 * is gone (POLLERR) was EPIPE, anything else is given no reason.
 */
static bool stdout_flushed(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	int err;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return true;
	err = errno;
	if (!err && poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		err = EPIPE;
	cli_output_failed(err);
	if (err)
		cli_msg("write error: %s", strerror(err));
	else
		cli_msg("write error");
	return false;
}

static bool parse_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s)) /* strtoul would take a sign or leading blanks */
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

struct command_spec {
	const char *name;
	int nargs;
	int (*run)(struct cli *, const struct cli_command *);
};

static const struct command_spec commands[] = {
	{ "stat", 1, cmd_stat },   { "cat", 1, cmd_cat },     { "get", 2, cmd_get },
	{ "put", 2, cmd_put },     { "mkdir", 1, cmd_mkdir }, { "rm", 1, cmd_rm },
	{ "rmdir", 1, cmd_rmdir }, { "mv", 2, cmd_mv },       { "readlink", 1, cmd_readlink },
	{ "df", 0, cmd_df },
};

static int parse_bench(int argc, char **argv, struct cli_command *cmd)
{
	unsigned long v;

	if (argc < 1)
		return usage_error("bench: missing kind (read, write or getattr)");
	cmd->bench_kind = argv[0];
	if (strcmp(argv[0], "read") && strcmp(argv[0], "write") && strcmp(argv[0], "getattr"))
		return usage_error("bench: unknown kind '%s' (read, write or getattr)", argv[0]);
	cmd->bench_threads = 1;
	cmd->bench_seconds = 5;
	for (int i = 1; i < argc; i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "--size") && strcmp(opt, "--threads") && strcmp(opt, "--seconds"))
			return usage_error("bench: unknown option '%s'", opt);
		if (!val)
			return usage_error("bench: option '%s' requires an argument", opt);
		if (!strcmp(opt, "--size") && parse_number(val, 1, NFS_SESSION_IO_MAX, &v))
			cmd->bench_size = (uint32_t)v;
		else if (!strcmp(opt, "--threads") && parse_number(val, 1, BENCH_THREADS_MAX, &v))
			cmd->bench_threads = (unsigned int)v;
		else if (!strcmp(opt, "--seconds") && parse_number(val, 1, 3600, &v))
			cmd->bench_seconds = (double)v;
		else
			return usage_error("bench: invalid value '%s'", val);
	}
	cmd->run = cmd_bench;
	return NFS_EXIT_OK;
}

/* COMMAND [ARG]... into @cmd; returns NFS_EXIT_OK or NFS_EXIT_USAGE (message printed). */
static int parse_command(int argc, char **argv, struct cli_command *cmd)
{
	const char *name = argv[0];

	memset(cmd, 0, sizeof(*cmd));
	cmd->name = name;
	argc--;
	argv++;
	if (!strcmp(name, "ls")) {
		if (argc && !strcmp(argv[0], "-l")) {
			cmd->long_list = true;
			argc--;
			argv++;
		}
		if (argc > 1)
			return usage_error("ls: extra operand '%s'", argv[1]);
		cmd->arg[0] = argc ? argv[0] : NULL;
		cmd->run = cmd_ls;
		return NFS_EXIT_OK;
	}
	if (!strcmp(name, "ln")) {
		if (!argc || strcmp(argv[0], "-s"))
			return usage_error("ln: only symbolic links are supported: ln -s TARGET PATH");
		if (argc != 3)
			return usage_error("ln: expected -s TARGET PATH");
		cmd->arg[0] = argv[1];
		cmd->arg[1] = argv[2];
		cmd->run = cmd_ln;
		return NFS_EXIT_OK;
	}
	if (!strcmp(name, "bench"))
		return parse_bench(argc, argv, cmd);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		if (argc < commands[i].nargs)
			return usage_error("%s: missing operand", name);
		if (argc > commands[i].nargs)
			return usage_error("%s: extra operand '%s'", name, argv[commands[i].nargs]);
		for (int k = 0; k < argc; k++)
			cmd->arg[k] = argv[k];
		cmd->run = commands[i].run;
		return NFS_EXIT_OK;
	}
	return usage_error("unknown command '%s'", name);
}

/* siw and rxe charge registered memory to RLIMIT_MEMLOCK; take what we may. */
static void raise_memlock(void)
{
	struct rlimit rl;

	if (setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY }) == 0)
		return;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
}

static void print_verbose(struct nfs_session *s)
{
	char buf[1024], *line, *save = NULL;

	nfs_session_describe(s, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		cli_msg("%s", line);
}

static int open_failed(const struct nfs_session *s, struct nfs_status st, const char *why)
{
	char buf[256];

	if (st.kind == NFS_STATUS_MOUNT)
		cli_msg("%s: mount failed: %s", s->what, nfs_status_message(st, buf, sizeof(buf)));
	else if (st.kind == NFS_STATUS_CONNECT)
		cli_msg("%s: %s", s->what, why);
	else
		cli_msg("%s: %s: %s", s->what, why, nfs_status_message(st, buf, sizeof(buf)));
	return NFS_EXIT_CONNECT;
}

enum {
	OPT_RSIZE = 256, OPT_WSIZE, OPT_TIMEOUT, OPT_RETRY, OPT_RETRY_TIMEOUT, OPT_NO_PROGRESS,
	OPT_VERSION
};

static const struct option long_options[] = {
	{ "verbose", no_argument, NULL, 'v' },
	{ "inflight", required_argument, NULL, 'j' },
	{ "rsize", required_argument, NULL, OPT_RSIZE },
	{ "wsize", required_argument, NULL, OPT_WSIZE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "retry", no_argument, NULL, OPT_RETRY },
	{ "retry-timeout", required_argument, NULL, OPT_RETRY_TIMEOUT },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct nfs_session_config cfg = { .timeout_s = 60 };
	struct cli c = { .inflight = NFS_TRANSFER_INFLIGHT_DEFAULT, .progress = true };
	struct nfs_session s;
	struct cli_command cmd;
	struct nfs_status st;
	const char *err;
	char why[512];
	unsigned long v;
	int opt, rc;

	argv[0] = (char *)CLI_NAME; /* getopt's own messages name the program, not its path */
	cli_sigpipe_mask(SIG_BLOCK); /* before any thread: each inherits it (cli_output_failed says why) */
	c.stdout_tty = isatty(STDOUT_FILENO);
	c.stderr_tty = isatty(STDERR_FILENO);
	while ((opt = getopt_long(argc, argv, "+vj:h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'v': c.verbose = true; break;
		case 'j':
			if (!parse_number(optarg, 1, NFS_TRANSFER_INFLIGHT_MAX, &v))
				return usage_error("invalid number of calls in flight '%s'", optarg);
			c.inflight = (unsigned int)v;
			break;
		case OPT_RSIZE:
		case OPT_WSIZE:
			if (!parse_number(optarg, NFS_SESSION_IO_MIN, NFS_SESSION_IO_MAX, &v))
				return usage_error("invalid I/O size '%s'", optarg);
			*(opt == OPT_RSIZE ? &cfg.rsize_cap : &cfg.wsize_cap) = (uint32_t)v;
			break;
		case OPT_TIMEOUT:
			if (!parse_number(optarg, 1, 86400, &v))
				return usage_error("invalid timeout '%s'", optarg);
			cfg.timeout_s = (unsigned int)v;
			break;
		case OPT_RETRY: cfg.retry = true; break;
		case OPT_RETRY_TIMEOUT:
			if (!parse_number(optarg, 1, 86400, &v))
				return usage_error("invalid retry timeout '%s'", optarg);
			cfg.retry_timeout_s = (unsigned int)v;
			cfg.retry = true;
			break;
		case OPT_NO_PROGRESS: c.progress = false; break;
		case 'h':
			usage(stdout);
			return stdout_flushed() ? NFS_EXIT_OK : NFS_EXIT_FAILED;
		case OPT_VERSION:
			puts(VERSION_TEXT);
			return stdout_flushed() ? NFS_EXIT_OK : NFS_EXIT_FAILED;
		default: /* getopt said what was wrong */
			try_help();
			return NFS_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("missing URL");
	err = nfs_url_parse(argv[optind], &cfg.url);
	if (err) {
		return usage_error("invalid URL '%s': %s", argv[optind], err);
	}
	if (optind + 1 >= argc)
		return usage_error("missing command");
	rc = parse_command(argc - optind - 1, argv + optind + 1, &cmd);
	if (rc != NFS_EXIT_OK)
		return rc;
	c.progress = c.progress && isatty(STDERR_FILENO);
	raise_memlock();
	st = nfs_session_open(&s, &cfg, why, sizeof(why));
	if (nfs_failed(st)) {
		rc = open_failed(&s, st, why);
	} else {
		c.s = &s;
		if (c.verbose)
			print_verbose(&s);
		rc = cmd.run(&c, &cmd);
	}
	nfs_session_close(&s);
	if (!stdout_flushed())
		rc = rc ? rc : NFS_EXIT_FAILED;
	return rc;
}
