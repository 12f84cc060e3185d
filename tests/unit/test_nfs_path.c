/*
 * nfs-client-demo's path walk (nfs_path.c) against a scripted server
 * holding a small tree: each component one LOOKUP, empty ones and "."
 * skipped, ".." sent to the server, a trailing "/" or "/." naming a
 * directory, the empty path nothing, lengths refused before any call, the type fetched by
 * GETATTR when LOOKUP brings no attributes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "nfs_proc.h"
#include "nfs_script.h"

/* The export: / (handle "dir!", the rig's), file, sub/, sub/f, noattr (LOOKUP without attributes). */
static const struct node {
	const char *parent, *name, *fh;
	ftype3 type;
	bool lookup_attr;
} tree[] = {
	{ "dir!", "file", "file", NF3REG, true },
	{ "dir!", "sub", "sub!", NF3DIR, true },
	{ "sub!", "f", "subf", NF3REG, true },
	{ "sub!", "..", "dir!", NF3DIR, true },
	{ "dir!", "noattr", "noat", NF3DIR, false },
};

/* The names the script was asked to LOOKUP, in order, '|'-separated. */
static char looked_up[512];
static unsigned int getattrs;

static const struct node *node_by_fh(const nfs_fh3 *fh)
{
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		if (fh->data.data_len == 4 && !memcmp(fh->data.data_val, tree[i].fh, 4))
			return &tree[i];
	return NULL;
}

static fattr3 attr_of(ftype3 type)
{
	fattr3 a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.mode = 0755;
	return a;
}

static bool answer_lookup(XDR *x, const LOOKUP3args *a)
{
	LOOKUP3res r;
	const struct node *n = NULL;

	size_t used = strlen(looked_up);

	snprintf(looked_up + used, sizeof(looked_up) - used, "%s|", a->what.name);
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]) && !n; i++)
		if (a->what.dir.data.data_len == 4 &&
		    !memcmp(a->what.dir.data.data_val, tree[i].parent, 4) &&
		    !strcmp(a->what.name, tree[i].name))
			n = &tree[i];
	memset(&r, 0, sizeof(r));
	r.status = n ? NFS3_OK : NFS3ERR_NOENT;
	if (n) {
		r.LOOKUP3res_u.resok.object.data.data_len = 4;
		r.LOOKUP3res_u.resok.object.data.data_val = (char *)n->fh;
		r.LOOKUP3res_u.resok.obj_attributes.attributes_follow = n->lookup_attr;
		r.LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes = attr_of(n->type);
	}
	return xdr_LOOKUP3res(x, &r);
}

static bool answer_getattr(XDR *x, const GETATTR3args *a)
{
	GETATTR3res r;
	const struct node *n = node_by_fh(&a->object);
	bool root = a->object.data.data_len == 4 && !memcmp(a->object.data.data_val, "dir!", 4);

	getattrs++;
	memset(&r, 0, sizeof(r));
	r.status = n || root ? NFS3_OK : NFS3ERR_STALE;
	r.GETATTR3res_u.resok.obj_attributes = attr_of(root ? NF3DIR : n ? n->type : NF3REG);
	return xdr_GETATTR3res(x, &r);
}

static bool answer_tree(struct script *sc, rpcproc_t proc, const void *args, XDR *x)
{
	(void)sc;
	if (proc == NFSPROC3_LOOKUP)
		return answer_lookup(x, args);
	if (proc == NFSPROC3_GETATTR)
		return answer_getattr(x, args);
	return false;
}

static struct rig rig;

static void rig_setup(void)
{
	rig_init(&rig, answer_tree);
	rig.s.root = rig.dir;
	looked_up[0] = '\0';
	getattrs = 0;
}

static void rig_teardown(void)
{
	rig_destroy(&rig);
}

TestSuite(nfs_path, .init = rig_setup, .fini = rig_teardown);

static struct nfs_status lookup(const char *path, struct nfs_node *n)
{
	return nfs_lookup_path(&rig.s, path, n);
}

static void check_node(const struct nfs_node *n, const char *fh, ftype3 type)
{
	cr_assert_eq(n->fh.len, 4);
	cr_assert(!memcmp(n->fh.data, fh, 4), "handle %.4s, expected %s", n->fh.data, fh);
	cr_assert_eq(n->attr.type, type);
}

Test(nfs_path, empty_components_and_dots_are_skipped_one_lookup_per_name)
{
	struct nfs_node n;

	cr_assert(!nfs_failed(lookup("/sub//./f", &n)));
	check_node(&n, "subf", NF3REG);
	cr_assert_str_eq(looked_up, "sub|f|");
	cr_assert_eq(rig.sc.calls, 3, "GETATTR of the root and two LOOKUPs");
}

Test(nfs_path, slash_and_dot_are_the_root_and_the_empty_path_names_nothing)
{
	struct nfs_node n;

	cr_assert(!nfs_failed(lookup("/", &n)));
	check_node(&n, "dir!", NF3DIR);
	cr_assert(!nfs_failed(lookup(".", &n)));
	check_node(&n, "dir!", NF3DIR);
	cr_assert_str_eq(looked_up, "");
	cr_assert(nfs_is(lookup("", &n), NFS3ERR_NOENT));
}

Test(nfs_path, dot_dot_goes_to_the_server)
{
	struct nfs_node n;

	cr_assert(!nfs_failed(lookup("sub/../file", &n)));
	check_node(&n, "file", NF3REG);
	cr_assert_str_eq(looked_up, "sub|..|file|");
}

Test(nfs_path, a_trailing_slash_or_slash_dot_names_a_directory)
{
	struct nfs_node n;
	const char *not_dirs[] = { "file/", "file/.", "file//", "sub/f/", "sub/f/./" };
	struct nfs_status st;

	for (size_t i = 0; i < sizeof(not_dirs) / sizeof(not_dirs[0]); i++) {
		st = lookup(not_dirs[i], &n);
		cr_assert(nfs_is(st, NFS3ERR_NOTDIR), "%s: kind %d code %d", not_dirs[i], st.kind,
			  st.code);
	}
	cr_assert(!nfs_failed(lookup("sub/", &n)));
	check_node(&n, "sub!", NF3DIR);
	cr_assert(!nfs_failed(lookup("sub/.", &n)));
	check_node(&n, "sub!", NF3DIR);
	cr_assert(!nfs_failed(lookup("file", &n)));
	check_node(&n, "file", NF3REG);
}

Test(nfs_path, a_path_through_a_regular_file_is_not_a_directory)
{
	struct nfs_node n;

	cr_assert(nfs_is(lookup("file/x", &n), NFS3ERR_NOTDIR));
	cr_assert_str_eq(looked_up, "file|", "nothing is looked up in a file");
}

Test(nfs_path, a_missing_name_is_the_servers_noent)
{
	struct nfs_node n;

	cr_assert(nfs_is(lookup("sub/nothing/f", &n), NFS3ERR_NOENT));
	cr_assert_str_eq(looked_up, "sub|nothing|");
}

Test(nfs_path, lookup_without_attributes_fetches_the_type_by_getattr)
{
	struct nfs_node n;

	cr_assert(!nfs_failed(lookup("noattr", &n)));
	check_node(&n, "noat", NF3DIR);
	cr_assert_eq(getattrs, 2, "the root's and noattr's");
	cr_assert(!nfs_failed(lookup("file", &n)));
	cr_assert_eq(getattrs, 3, "only the root's: LOOKUP brought file's attributes");
}

Test(nfs_path, a_name_of_255_bytes_is_asked_and_one_of_256_refused_without_a_call)
{
	char path[NFS3_MAXNAMLEN + 2];
	struct nfs_node n;
	unsigned int calls;

	memset(path, 'n', NFS3_MAXNAMLEN);
	path[NFS3_MAXNAMLEN] = '\0';
	cr_assert(nfs_is(lookup(path, &n), NFS3ERR_NOENT));
	cr_assert_eq(strlen(looked_up), NFS3_MAXNAMLEN + 1, "the whole name went to the server");
	calls = rig.sc.calls;
	path[NFS3_MAXNAMLEN] = 'n';
	path[NFS3_MAXNAMLEN + 1] = '\0';
	cr_assert(nfs_is(lookup(path, &n), NFS3ERR_NAMETOOLONG));
	cr_assert_eq(rig.sc.calls, calls + 1, "the root's GETATTR only");
}

Test(nfs_path, a_path_over_1024_bytes_is_refused_before_any_call)
{
	char path[NFS3_MAXPATHLEN + 2];
	struct nfs_node n, dir;
	char name[NFS3_MAXNAMLEN + 1];

	for (size_t i = 0; i < sizeof(path) - 1; i++)
		path[i] = i % 4 == 3 ? '/' : 'a';
	path[sizeof(path) - 1] = '\0';
	cr_assert(nfs_is(lookup(path, &n), NFS3ERR_NAMETOOLONG));
	cr_assert(nfs_is(nfs_lookup_parent(&rig.s, path, &dir, name), NFS3ERR_NAMETOOLONG));
	cr_assert_eq(rig.sc.calls, 0);
	path[NFS3_MAXPATHLEN] = '\0';
	cr_assert(!nfs_is(lookup(path, &n), NFS3ERR_NAMETOOLONG), "1024 bytes are a path");
}

Test(nfs_path, the_parent_and_the_last_name)
{
	struct nfs_node dir;
	char name[NFS3_MAXNAMLEN + 1];

	cr_assert(!nfs_failed(nfs_lookup_parent(&rig.s, "/sub//f//", &dir, name)));
	check_node(&dir, "sub!", NF3DIR);
	cr_assert_str_eq(name, "f");
	cr_assert(!nfs_failed(nfs_lookup_parent(&rig.s, "new", &dir, name)));
	check_node(&dir, "dir!", NF3DIR);
	cr_assert_str_eq(name, "new");
	cr_assert(nfs_is(nfs_lookup_parent(&rig.s, "file/x", &dir, name), NFS3ERR_NOTDIR));
}

Test(nfs_path, no_last_name_is_invalid)
{
	const char *none[] = { "/", ".", "..", "sub/.", "sub/..", "//" };
	struct nfs_node dir;
	char name[NFS3_MAXNAMLEN + 1];

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		cr_assert(nfs_is(nfs_lookup_parent(&rig.s, none[i], &dir, name), NFS3ERR_INVAL),
			  "'%s'", none[i]);
	cr_assert(nfs_is(nfs_lookup_parent(&rig.s, "", &dir, name), NFS3ERR_NOENT),
		  "the empty path names nothing");
}

Test(nfs_path, which_paths_name_a_directory)
{
	static const struct {
		const char *path;
		bool dir;
	} cases[] = {
		{ "a/", true },	  { "a/.", true }, { ".", true },   { "/", true },
		{ "a//", true },  { "a", false },  { "a.", false }, { "a/..", false },
		{ "a/b.", false }, { "", false },   { "..", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(nfs_path_names_dir(cases[i].path), cases[i].dir, "'%s'", cases[i].path);
}
