// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tools/shpmu-exporter/workload.c: what runs in a cgroup, from the paths
 * the kubelet, the runtimes and systemd make, and from the names of the
 * kubelet's log directories and links; hostile names give no label. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "workload.h"

#define ID    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2   "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UPPER "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID   "3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f"
#define UID_  "3f1c2d4e_5b6a_4c7d_8e9f_0a1b2c3d4e5f" /* the systemd driver's */
#define HASH  "0123456789abcdef0123456789abcdef"     /* a static pod's */

/* The pod slices of the systemd driver, and the cgroupfs driver's. */
#define BURSTABLE                                                              \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ \
	".slice"
#define BESTEFFORT                                                             \
	"/kubepods.slice/kubepods-besteffort.slice/"                           \
	"kubepods-besteffort-pod" UID_ ".slice"
#define GUARANTEED "/kubepods.slice/kubepods-pod" UID_ ".slice"
#define FS_POD	   "/kubepods/burstable/pod" UID

struct row {
	const char *path;
	enum workload_kind kind;
	enum workload_qos qos;
	enum workload_runtime runtime;
	const char *uid, *id, *unit;
};

static const struct row layouts[] = {
	/* The kubelet, systemd driver. */
	{BURSTABLE, WORKLOAD_POD, QOS_BURSTABLE, RUNTIME_NONE, UID, "", ""},
	{BURSTABLE "/cri-containerd-" ID ".scope", WORKLOAD_CONTAINER,
	 QOS_BURSTABLE, RUNTIME_CONTAINERD, UID, ID, ""},
	{BESTEFFORT "/crio-" ID ".scope", WORKLOAD_CONTAINER, QOS_BESTEFFORT,
	 RUNTIME_CRIO, UID, ID, ""},
	{BESTEFFORT "/crio-conmon-" ID ".scope", WORKLOAD_CONMON,
	 QOS_BESTEFFORT, RUNTIME_CRIO, UID, ID, ""},
	{GUARANTEED, WORKLOAD_POD, QOS_GUARANTEED, RUNTIME_NONE, UID, "", ""},
	{GUARANTEED "/docker-" ID ".scope", WORKLOAD_CONTAINER, QOS_GUARANTEED,
	 RUNTIME_DOCKER, UID, ID, ""},
	{"/kubepods.slice/kubepods-besteffort.slice/"
	 "kubepods-besteffort-pod" HASH ".slice",
	 WORKLOAD_POD, QOS_BESTEFFORT, RUNTIME_NONE, HASH, "", ""},
	/* Below the slices of the kubelet's --cgroup-root (kind's). */
	{"/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable."
	 "slice/kubelet-kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID
	 ".scope",
	 WORKLOAD_CONTAINER, QOS_BURSTABLE, RUNTIME_CONTAINERD, UID, ID, ""},
	/* The kubelet, cgroupfs driver. */
	{FS_POD, WORKLOAD_POD, QOS_BURSTABLE, RUNTIME_NONE, UID, "", ""},
	{FS_POD "/" ID, WORKLOAD_CONTAINER, QOS_BURSTABLE, RUNTIME_NONE, UID,
	 ID, ""},
	{"/kubepods/pod" UID, WORKLOAD_POD, QOS_GUARANTEED, RUNTIME_NONE, UID,
	 "", ""},
	{"/kubepods/besteffort/pod" UID "/crio-" ID, WORKLOAD_CONTAINER,
	 QOS_BESTEFFORT, RUNTIME_CRIO, UID, ID, ""},
	{"/kubepods/pod" UID "/crio-conmon-" ID, WORKLOAD_CONMON,
	 QOS_GUARANTEED, RUNTIME_CRIO, UID, ID, ""},
	{"/kubepods/pod" HASH "/" ID, WORKLOAD_CONTAINER, QOS_GUARANTEED,
	 RUNTIME_NONE, HASH, ID, ""},
	/* Docker and Podman. */
	{"/docker/" ID, WORKLOAD_CONTAINER, QOS_NONE, RUNTIME_DOCKER, "", ID,
	 ""},
	{"/system.slice/docker-" ID ".scope", WORKLOAD_CONTAINER, QOS_NONE,
	 RUNTIME_DOCKER, "", ID, ""},
	{"/machine.slice/libpod-" ID ".scope", WORKLOAD_CONTAINER, QOS_NONE,
	 RUNTIME_PODMAN, "", ID, ""},
	{"/machine.slice/libpod-conmon-" ID ".scope", WORKLOAD_CONMON, QOS_NONE,
	 RUNTIME_PODMAN, "", ID, ""},
	{"/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope",
	 WORKLOAD_CONTAINER, QOS_NONE, RUNTIME_PODMAN, "", ID, ""},
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
	 ".scope",
	 WORKLOAD_CONTAINER, QOS_NONE, RUNTIME_PODMAN, "", ID, ""},
	{"/libpod_parent/libpod-" ID, WORKLOAD_CONTAINER, QOS_NONE,
	 RUNTIME_PODMAN, "", ID, ""},
	/* systemd. */
	{"/system.slice/nginx.service", WORKLOAD_UNIT, QOS_NONE, RUNTIME_NONE,
	 "", "", "nginx.service"},
	{"system.slice/sshd.service", WORKLOAD_UNIT, QOS_NONE, RUNTIME_NONE, "",
	 "", "sshd.service"},
	{"/system.slice/system-getty.slice/getty@tty1.service", WORKLOAD_UNIT,
	 QOS_NONE, RUNTIME_NONE, "", "", "getty@tty1.service"},
	{"/system.slice/systemd-fsck@dev-disk-by\\x2duuid-1.service",
	 WORKLOAD_UNIT, QOS_NONE, RUNTIME_NONE, "", "",
	 "systemd-fsck@dev-disk-by\\x2duuid-1.service"},
	{"/init.scope", WORKLOAD_UNIT, QOS_NONE, RUNTIME_NONE, "", "",
	 "init.scope"},
	{"/user.slice/user-1000.slice/session-3.scope", WORKLOAD_UNIT, QOS_NONE,
	 RUNTIME_NONE, "", "", "session-3.scope"},
	{"/user.slice/user-1000.slice/user@1000.service", WORKLOAD_UNIT,
	 QOS_NONE, RUNTIME_NONE, "", "", "user@1000.service"},
	{"/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service",
	 WORKLOAD_UNIT, QOS_NONE, RUNTIME_NONE, "", "", "dbus.service"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Rows in a loop, each failure naming its path: as parameters, each row
 * would be a worker process of its own, a minute under valgrind. */
Test(workload, layouts)
{
	for (size_t i = 0; i < COUNT(layouts); i++) {
		const struct row *r = &layouts[i];
		struct workload w;

		workload_parse(r->path, &w);
		cr_expect_eq(w.kind, r->kind, "%s: kind %d, want %d", r->path,
			     w.kind, r->kind);
		cr_expect_eq(w.qos, r->qos, "%s: qos %d", r->path, w.qos);
		cr_expect_eq(w.runtime, r->runtime, "%s: runtime %d", r->path,
			     w.runtime);
		cr_expect_str_eq(w.pod_uid, r->uid, "%s: uid %s", r->path,
				 w.pod_uid);
		cr_expect_str_eq(w.container_id, r->id, "%s: id %s", r->path,
				 w.container_id);
		cr_expect_str_eq(w.unit, r->unit, "%s: unit %s", r->path,
				 w.unit);
	}
}

/* Paths that are no layout, or only nearly one: no label at all. */
static const char *const others[] = {
	"",
	"/",
	"/kubepods.slice",
	"/kubepods.slice/kubepods-burstable.slice",
	"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort.slice",
	"/kubepods",
	"/kubepods/burstable",
	"/kubepods/guaranteed/pod" UID,
	"/system.slice",
	"/user.slice/user-1000.slice",
	"/machine.slice/machine-libpod_pod_" ID2 ".slice",
	/* Ids: uppercase, 63 and 65 digits, not hex. */
	"/docker/" UPPER,
	"/docker/" ID "0",
	"/docker/"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
	"/docker/"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",
	"/system.slice/docker-" UPPER ".scope",
	"/system.slice/docker-xyz.scope",
	BURSTABLE "/cri-containerd-" ID ".scope.bak",
	BURSTABLE "/cri-containerd-" ID,
	FS_POD "/" UPPER,
	FS_POD "/crio-conmon-" ID ".scope",
	/* Pod uids: the other driver's separator, uppercase, lengths. */
	"/kubepods/pod" UID_,
	"/kubepods.slice/kubepods-pod" UID ".slice",
	"/kubepods/pod3F1C2D4E-5b6a-4c7d-8e9f-0a1b2c3d4e5f",
	"/kubepods/pod3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5",
	"/kubepods/pod" HASH "0",
	"/kubepods/pod3f1c2d4e-5b6a4-c7d-8e9f-0a1b2c3d4e5f",
	/* Nested below a container: crun's sub-cgroup, Docker in a pod. */
	BURSTABLE "/cri-containerd-" ID ".scope/container",
	BURSTABLE "/cri-containerd-" ID ".scope/docker/" ID2,
	FS_POD "/" ID "/docker/" ID2,
	"/docker/" ID "/docker/" ID2,
	"/machine.slice/libpod-" ID ".scope/container",
	/* Podman's runtime is none of the kubelet's. */
	BURSTABLE "/libpod-" ID ".scope",
	/* Slices that are not inside the one above: by hand, not systemd. */
	"/system.slice/kubepods.slice/kubepods-pod" UID_ ".slice",
	"/kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod" UID_
	".slice",
	"/system-foo.slice/x.service",
	"/user.slice/user-1000.slice/user@1000.service/kubepods.slice/"
	"kubepods-pod" UID_ ".slice",
	"/user.slice/user-1000.slice/user@1001.service/app.slice/x.service",
	"/user.slice/user-1000.slice/user@1000.service/kubepods/pod" UID "/" ID,
	/* Paths with ., .., empty or odd components. */
	"/kubepods/../docker/" ID,
	"/docker/./" ID,
	"/system.slice/../system.slice/x.service",
	"/system.slice//nginx.service",
	"/docker/" ID "/",
	"/system.slice/.service",
	"/system.slice/ng inx.service",
	"/system.slice/nginx.service/child",
	"/foo/session-1.scope",
	/* Not UTF-8, or UTF-8 outside systemd's characters. */
	"/system.slice/ng\xffinx.service",
	"/system.slice/n\xc3\xa9.service",
	"/docker/\xc3\xa9" ID,
};

static void expect_other(const char *path, const char *what)
{
	struct workload w;

	/* Filled with junk first: every field must come back empty. */
	memset(&w, 'x', sizeof(w));
	workload_parse(path, &w);
	cr_expect_eq(w.kind, WORKLOAD_OTHER, "%s: kind %d", what, w.kind);
	cr_expect(w.qos == QOS_NONE && w.runtime == RUNTIME_NONE &&
			  !w.pod_uid[0] && !w.container_id[0] && !w.unit[0],
		  "%s: a label of a path that is no layout", what);
}

Test(workload, others)
{
	for (size_t i = 0; i < COUNT(others); i++)
		expect_other(others[i], others[i]);
}

Test(workload, too_long)
{
	static char path[8192];
	int n;

	/* Past the kernel's PATH_MAX, a unit name past systemd's. */
	n = snprintf(path, sizeof(path), "/system.slice/");
	memset(path + n, 'a', 4100);
	strcpy(path + n + 4100, ".service");
	expect_other(path, "a path past PATH_MAX");
	n = snprintf(path, sizeof(path), "/system.slice/");
	memset(path + n, 'a', 256);
	strcpy(path + n + 256, ".service");
	expect_other(path, "a component past NAME_MAX");
	/* Deeper than any layout, each part valid. */
	path[0] = '\0';
	for (int i = 0; i < 20; i++)
		strcat(path, "/a.slice");
	strcat(path, "/x.service");
	expect_other(path, "20 levels");
	/* The longest a unit name may be is one. */
	n = snprintf(path, sizeof(path), "/system.slice/");
	memset(path + n, 'a', 255 - strlen(".service"));
	strcpy(path + n + 255 - strlen(".service"), ".service");
	{
		struct workload w;

		workload_parse(path, &w);
		cr_expect_eq(w.kind, WORKLOAD_UNIT);
		cr_expect_eq(strlen(w.unit), 255);
	}
}

Test(workload, names)
{
	cr_expect_str_eq(workload_qos_name(QOS_GUARANTEED), "guaranteed");
	cr_expect_str_eq(workload_qos_name(QOS_BURSTABLE), "burstable");
	cr_expect_str_eq(workload_qos_name(QOS_BESTEFFORT), "besteffort");
	cr_expect_null(workload_qos_name(QOS_NONE));
	cr_expect_str_eq(workload_runtime_name(RUNTIME_CONTAINERD),
			 "containerd");
	cr_expect_str_eq(workload_runtime_name(RUNTIME_CRIO), "cri-o");
	cr_expect_str_eq(workload_runtime_name(RUNTIME_DOCKER), "docker");
	cr_expect_str_eq(workload_runtime_name(RUNTIME_PODMAN), "podman");
	cr_expect_null(workload_runtime_name(RUNTIME_NONE));
}

Test(workload, pod_dirs)
{
	struct pod_dir d;
	static const char *const bad[] = {
		UID, /* the kubelet's layout before 1.14 */
		"default_web",
		"default_web_" UID "_x",
		"default_Web_" UID,
		"Default_web_" UID,
		"default_web_" UID_,
		"default_web_3F1C2D4E-5b6a-4c7d-8e9f-0a1b2c3d4e5f",
		"default_web_" UID "0",
		"_web_" UID,
		"default__" UID,
		"-ns_web_" UID,
		"ns-_web_" UID,
		"ns_web-_" UID,
		"ns_.web_" UID,
		"ns_a..b_" UID,
		"ns_a.-b_" UID,
		"ns_p\xff_" UID,
		"ns.dot_web_" UID,
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aa"
		"_web_" UID,
		"ns_"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaa_" UID,
	};

	cr_assert(workload_pod_dir("default_web-0_" UID, &d));
	cr_expect_str_eq(d.namespace, "default");
	cr_expect_str_eq(d.pod, "web-0");
	cr_expect_str_eq(d.uid, UID);
	cr_assert(workload_pod_dir("my-ns_api.v1-7d9f.x_" UID, &d));
	cr_expect_str_eq(d.pod, "api.v1-7d9f.x");
	cr_assert(workload_pod_dir("kube-system_etcd-node1_" HASH, &d));
	cr_expect_str_eq(d.uid, HASH);
	for (size_t i = 0; i < COUNT(bad); i++) {
		memset(&d, 'x', sizeof(d));
		cr_expect_not(workload_pod_dir(bad[i], &d), "%s", bad[i]);
		cr_expect_eq(d.namespace[0], 'x', "%s: written", bad[i]);
	}
}

Test(workload, log_links)
{
	struct log_link l;
	static char truncated[512];
	static const char *const bad[] = {
		"web-0_default_nginx-" UPPER ".log",
		"web-0_default_nginx-" ID "0.log",
		"web-0_default_nginx_" ID ".log",
		"web-0_default-" ID ".log",
		"web-0_default_nginx-" ID ".log.1",
		"web-0_default_nginx-" ID,
		"web-0_default_Nginx-" ID ".log",
		"web-0_default_-" ID ".log",
		"web-0_default_nginx-x" ID ".log",
		"-" ID ".log",
		ID ".log",
		"web_0_default_nginx-" ID ".log",
	};
	int n;

	cr_assert(workload_log_link("web-0_default_nginx-" ID ".log", &l));
	cr_expect_str_eq(l.pod, "web-0");
	cr_expect_str_eq(l.namespace, "default");
	cr_expect_str_eq(l.container, "nginx");
	cr_expect_str_eq(l.id, ID);
	cr_assert(workload_log_link("api.v1-7d9f.x_my-ns_side-car-2-" ID ".log",
				    &l));
	cr_expect_str_eq(l.pod, "api.v1-7d9f.x");
	cr_expect_str_eq(l.container, "side-car-2");
	for (size_t i = 0; i < COUNT(bad); i++) {
		memset(&l, 'x', sizeof(l));
		cr_expect_not(workload_log_link(bad[i], &l), "%s", bad[i]);
		cr_expect_eq(l.pod[0], 'x', "%s: written", bad[i]);
	}
	/* A name the kubelet cut at 251 bytes before ".log": its id is cut
	 * too, and no id is guessed from what is left. */
	n = snprintf(truncated, sizeof(truncated), "%s_default_app-%s",
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
		     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		     ID);
	cr_assert_gt(n, 251);
	strcpy(truncated + 251, ".log");
	cr_expect_not(workload_log_link(truncated, &l), "%s", truncated);
	cr_expect_not(
		workload_pod_dir(truncated, &(struct pod_dir){.uid = ""}));
}
