// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The directories of host scope against another uid: what uid 65534, with
 * no capability, plants in the shared directories (a symlink or a
 * directory in place of a domain, a layout directory it could swap
 * entries of, a symlink on the way) is refused and never followed, and
 * what root owns elsewhere stays untouched. A second uid with CAP_BPF and
 * CAP_PERFMON keeps a domain of its own beside root's.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shpmu/shpmu.h>

#include "host/host_layout.h"
#include "host_procs.h"

#define NOBODY 65534

TestSuite(host_dirs, .init = host_fs_setup, .fini = host_fs_teardown,
	  .timeout = 120);

static struct shpmu *join_at(const char *bpffs_dir, const char *domain)
{
	SHPMU_OPTS(o, .scope = SHPMU_SCOPE_HOST, .domain = domain,
		   .bpffs_dir = bpffs_dir, .log = host_keep_log);

	host_logged[0] = '\0';
	return shpmu_new(&o);
}

static struct shpmu *join(const char *domain)
{
	return join_at(host_bpffs(), domain);
}

/* A join that must fail with err, its message saying what. */
static void expect_refused(const char *bpffs_dir, const char *domain, int err,
			   const char *says)
{
	struct shpmu *pmu = join_at(bpffs_dir, domain);

	cr_expect_null(pmu, "%s joined", domain);
	cr_expect_eq(errno, err, "%s: %s, not %s", domain, strerror(errno),
		     strerror(err));
	cr_expect(strstr(host_logged, says), "no \"%s\" in: %s", says,
		  host_logged);
	shpmu_free(pmu);
}

static const char *layout_dir(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/layout-%u", host_bpffs(),
		 host_layout());
	return path;
}

enum plant { SYMLINK, DIRECTORY, OPEN_LAYOUT };

/* What uid 65534, every capability gone with its change of uid, plants
 * at path (to: a symlink's target). */
static void plant(enum plant what, const char *path, const char *to)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (!pid) {
		if (setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(2);
		switch (what) {
		case SYMLINK:
			_exit(symlink(to, path) ? 3 : 0);
		case DIRECTORY:
			_exit(mkdir(path, 0700) ? 3 : 0);
		case OPEN_LAYOUT:
			_exit(mkdir(path, 0700) || chmod(path, 0777) ? 3 : 0);
		}
		_exit(4);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "uid %d could not plant %s (status %d)", NOBODY, path,
		  status);
}

/* A root-only directory outside the BPF filesystem, with one file in. */
static char *root_only_dir(void)
{
	static char dir[] = "/tmp/shpmu-root-only-XXXXXX";
	char file[sizeof(dir) + 8];
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/keep", dir);
	f = fopen(file, "w");
	cr_assert(f);
	fclose(f);
	return dir;
}

/* Exactly what root_only_dir() made is there. */
static void expect_untouched(const char *dir)
{
	char cmd[256], out[256] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
	p = popen(cmd, "r");
	cr_assert(p);
	cr_expect(fgets(out, sizeof(out), p));
	pclose(p);
	cr_expect_str_eq(out, "keep\n", "%s now holds: %s", dir, out);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(host_dirs, a_symlink_in_place_of_a_domain_is_not_followed)
{
	struct shpmu *first = join("default");
	char *target = root_only_dir();

	cr_assert(first, "%s", host_logged);
	plant(SYMLINK, host_domain_dir("victim"), target);
	expect_refused(host_bpffs(), "victim", ELOOP, "is a symlink");
	/* The operator's view and remove do not follow it either. */
	{
		char out[4096];

		cr_expect_neq(host_tool(out, sizeof(out), "show victim"), 0);
		cr_expect_neq(host_tool(out, sizeof(out), "remove victim"), 0);
	}
	expect_untouched(target);
	shpmu_free(first);
	cr_expect_eq(unlink(host_domain_dir("victim")), 0);
	cr_expect_eq(rmdir(layout_dir()), 0);
}

Test(host_dirs, another_uid_s_directory_in_place_of_a_domain_is_refused)
{
	struct shpmu *first = join("default"), *second;

	cr_assert(first, "%s", host_logged);
	plant(DIRECTORY, host_domain_dir("planted"), NULL);
	expect_refused(host_bpffs(), "planted", EACCES, "belongs to uid 65534");
	/* Root's own domain with its mode changed: refused too. */
	cr_assert_eq(chmod(host_domain_dir("default"), 0755), 0);
	expect_refused(host_bpffs(), "default", EACCES, "has mode 0755");
	cr_assert_eq(chmod(host_domain_dir("default"), 0700), 0);
	second = join("default");
	cr_expect(second, "%s", host_logged);
	shpmu_free(second);
	shpmu_free(first);
	cr_expect_eq(rmdir(host_domain_dir("planted")), 0);
	cr_expect_eq(rmdir(layout_dir()), 0);
}

Test(host_dirs, a_layout_directory_another_uid_could_swap_is_refused)
{
	struct shpmu *pmu = join("default");

	/* A first join and leave leave bpffs_dir (01777) behind only. */
	cr_assert(pmu, "%s", host_logged);
	shpmu_free(pmu);
	cr_assert_str_empty(host_residue());
	plant(OPEN_LAYOUT, layout_dir(), NULL);
	expect_refused(host_bpffs(), "default", EACCES,
		       "could have its entries swapped");
	/* Sticky too: in a sticky directory its owner can still rename
	 * every entry (swap two of root's domains, say). */
	cr_assert_eq(chmod(layout_dir(), 01777), 0);
	expect_refused(host_bpffs(), "default", EACCES,
		       "could have its entries swapped");
	/* Root's own, made by a join, is taken. */
	cr_assert_eq(rmdir(layout_dir()), 0);
	pmu = join("default");
	cr_expect(pmu, "%s", host_logged);
	shpmu_free(pmu);
	cr_expect_str_empty(host_residue());
}

Test(host_dirs, a_symlink_or_dot_dot_on_the_way_is_refused)
{
	char link[] = "/tmp/shpmu-link-XXXXXX", via[PATH_MAX + 32];
	char parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", host_bpffs());
	slash = strrchr(parent, '/');
	cr_assert(slash);
	*slash = '\0';
	cr_assert(mkdtemp(link));
	cr_assert_eq(rmdir(link), 0);
	cr_assert_eq(symlink(parent, link), 0);
	snprintf(via, sizeof(via), "%s/shpmu", link);
	expect_refused(via, "default", ELOOP, "is a symlink");
	snprintf(via, sizeof(via), "%s/../%s/shpmu", parent, slash + 1);
	expect_refused(via, "default", EINVAL, "\"..\"");
	unlink(link);
}

Test(host_dirs, a_second_uid_keeps_its_own_domain_beside_root_s)
{
	struct helper root, other;
	char out[8192];
	int h[2];

	cr_assert(helper_start(&root, NULL, NULL));
	cr_assert(helper_start(&other, NULL, "--uid", "65534", "--domain",
			       "other", NULL),
		  "uid 65534 with CAP_BPF and CAP_PERFMON cannot make a "
		  "domain beside root's");
	h[0] = atoi(helper_ok(&root, "open h task-clock cpu:0"));
	h[1] = atoi(helper_ok(&other, "open h task-clock cpu:0"));
	cr_expect_gt(strtoull(helper_ok(&root, "read h %d", h[0]), NULL, 10),
		     0);
	cr_expect_gt(strtoull(helper_ok(&other, "read h %d", h[1]), NULL, 10),
		     0);
	cr_expect(strstr(host_residue(), "/default/map_books\n"));
	cr_expect(strstr(host_residue(), "/other/map_books\n"));
	/* Root's operator tool reads the other uid's domain too. */
	cr_expect_eq(host_tool(out, sizeof(out), "show other"), 0, "%s", out);
	helper_quit(&other);
	cr_expect_null(strstr(host_residue(), "/other/"));
	helper_quit(&root);
}
