/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/**
 * @file shpmu.h
 * @brief libshpmu: shared perf_event counters for monitoring agents.
 *
 * Identical counting requests (same normalized perf_event_attr, same target)
 * are served by one kernel event. Callers get virtual handles, small
 * non-negative ints like file descriptors, each of which reports only what
 * happened while that handle was enabled.
 *
 * Every function returning int returns 0 (or a handle >= 0) on success and a
 * negative errno on failure, which it also stores in errno. Functions
 * returning a pointer return NULL and set errno. Destructors accept NULL.
 * Every function may be called from any thread, except that shpmu_free()
 * must not race with other calls on the same context. A call made while
 * the same thread is already inside the library (from a signal handler,
 * or from the log callback) returns -EDEADLK instead of deadlocking:
 * shpmu_read() is not async-signal-safe. A forked child's calls on its
 * parent's context return -EPERM (the fds are shared with the parent);
 * the child may shpmu_free() it, which switches nothing off.
 */
#ifndef SHPMU_SHPMU_H
#define SHPMU_SHPMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SHPMU_API
#define SHPMU_API __attribute__((visibility("default")))
#endif

/* SHPMU_VERSION_MAJOR, _MINOR and _PATCH: the version of this header. */
#include <shpmu/version.h>

/** One number for a version, comparable with < and >. */
#define SHPMU_VERSION_CODE(major, minor, patch)                                \
	(((major) << 16) | ((minor) << 8) | (patch))
#define SHPMU_VERSION                                                          \
	SHPMU_VERSION_CODE(SHPMU_VERSION_MAJOR, SHPMU_VERSION_MINOR,           \
			   SHPMU_VERSION_PATCH)

/**
 * @brief The version of the library running, as SHPMU_VERSION_CODE(): it
 *        may be newer than the header the caller was built with.
 */
SHPMU_API unsigned int shpmu_version(void);

/** Opaque library context: owns every kernel fd and handle. */
struct shpmu;

/** Flags for shpmu_opts.flags. */
enum shpmu_flags {
	/** Every open gets its own kernel event (the no-sharing baseline). */
	SHPMU_F_NO_SHARING = 1u << 0,
};

/**
 * How cgroup targets are counted (libshpmu(7): BACKENDS). Task and
 * process targets go to the BPF backend only where this context runs the
 * program anyway (BPF, or AUTO once a cgroup is counted by BPF).
 *
 * PERF opens one classic cgroup event per cgroup per CPU. BPF opens one
 * event per CPU per distinct attr for all cgroups, and a BPF program at
 * every context switch credits each CPU's delta to the outgoing task's
 * counted cgroups: it needs cgroup2, CAP_BPF and CAP_PERFMON (or root),
 * and has room for 8 distinct attrs and a number of cgroups that shrinks
 * with the CPU count (16,384 up to 21 CPUs); past those, shpmu_open()
 * gives -ENOSPC with BPF, and with AUTO counts that cgroup the classic
 * way. A read of a BPF-counted cgroup first brings each CPU's running
 * delta up to date, one interrupt per CPU; shpmu_read_many() does that
 * once per batch.
 *
 * AUTO (process scope) counts a context's first cgroup events the classic
 * way, exact and with no program running at every switch of the machine,
 * up to its crossover: the new cgroup event with which the classic ones
 * would hold more fds than the BPF backend holds for one attr (its
 * program's and maps' 23, and one per CPU): the 13th on 2 CPUs, the 2nd
 * from 24 CPUs on. There it loads the program, which counts that cgroup
 * event and every later one; where BPF cannot work, classic events count
 * them. Events counted the classic way stay so until closed. In host
 * scope the domain's program counts cgroup2 cgroups from the first.
 */
enum shpmu_cgroup_backend {
	/** Classic events below a crossover in fds, BPF from it on */
	SHPMU_CGROUP_BACKEND_AUTO = 0,
	SHPMU_CGROUP_BACKEND_PERF =
		1, /**< one cgroup event per cgroup per CPU */
	SHPMU_CGROUP_BACKEND_BPF = 2, /**< one event per CPU for all cgroups */
};

/**
 * Who shares kernel events (libshpmu(7): SHARING ACROSS PROCESSES).
 *
 * PROCESS: the handles of one context. HOST: every process on the host
 * whose context joins the same domain (shpmu_opts.domain) under the same
 * BPF filesystem directory (shpmu_opts.bpffs_dir): cgroup, CPU, task and
 * process targets of counting attrs are counted by one BPF program and
 * one perf event per CPU per distinct attr for all of them, whatever the
 * number of processes and handles. It needs the BPF backend, a mounted
 * BPF filesystem (the library mounts nothing), CAP_BPF and CAP_PERFMON
 * (or CAP_SYS_ADMIN), and a domain is shared by one uid. Groups, task and
 * process targets bound to one CPU or enabled at exec, cgroups on a v1
 * hierarchy and a context with SHPMU_F_NO_SHARING stay process-local
 * (classic perf events). Each handle's windows stay its own: nothing one
 * process does changes another's counts.
 */
enum shpmu_scope {
	SHPMU_SCOPE_PROCESS = 0, /**< sharing within the context (default) */
	SHPMU_SCOPE_HOST = 1,	 /**< sharing with every process of a domain */
};

/** Levels passed to shpmu_opts.log. */
enum shpmu_log_level {
	SHPMU_LOG_ERROR = 0, /**< a call failed; the message says why */
	/** something degraded but the call went on, or a choice made for
	 *  the caller that it should know of (said once: which backend
	 *  AUTO counts cgroups with) */
	SHPMU_LOG_WARN = 1,
	SHPMU_LOG_INFO = 2,  /**< a decision worth knowing about */
	SHPMU_LOG_DEBUG = 3, /**< per-call detail */
};

/**
 * Options for shpmu_new(). Declare with SHPMU_OPTS() so that sz is set and
 * the rest zeroed; fields added in later versions go at the end, and a
 * caller built against an older header keeps working.
 */
struct shpmu_opts {
	size_t sz; /**< sizeof(struct shpmu_opts), set by SHPMU_OPTS() */
	unsigned int flags; /**< enum shpmu_flags */
	/** cgroup mount to use; NULL: discover the cgroup2 (or v1
	 *  perf_event) mount */
	const char *cgroup_root;
	enum shpmu_cgroup_backend cgroup_backend; /**< default AUTO */
	/** Called with each log message (no trailing newline); NULL: quiet. */
	void (*log)(int level, const char *msg, void *arg);
	void *log_arg; /**< passed to log */
	/* Added in 0.2. */
	enum shpmu_scope scope; /**< default SHPMU_SCOPE_PROCESS */
	/** Host scope: the domain to join, made if new: 1 to 64 letters,
	 *  digits, '_', '-' or '.', not starting with '.'; NULL: "default".
	 *  Unrelated groups of agents keep apart by domain. */
	const char *domain;
	/** Host scope: a directory on a BPF filesystem, made if missing
	 *  (mode 01777, as the layout directory in it, so that several
	 *  uids keep domains there; its parent must be on one); NULL:
	 *  "/sys/fs/bpf/shpmu". No component may be a symlink, and each
	 *  must be root's or this uid's, writable by nobody else unless
	 *  sticky. */
	const char *bpffs_dir;
	/* Added in 0.3. */
	/** Host scope: the longest wait for the domain's lock, in ms, before
	 *  a call gives up with -ETIMEDOUT; 0: 5000. */
	unsigned int lock_timeout_ms;
};

/** Declares a zeroed struct shpmu_opts named NAME with sz set. */
#define SHPMU_OPTS(NAME, ...)                                                  \
	struct shpmu_opts NAME = {.sz = sizeof(struct shpmu_opts), __VA_ARGS__}

/** What a handle counts. */
enum shpmu_target_kind {
	SHPMU_TARGET_TASK = 0,	 /**< one thread or process */
	SHPMU_TARGET_CPU = 1,	 /**< everything on one CPU or on all CPUs */
	SHPMU_TARGET_CGROUP = 2, /**< one cgroup (and its descendants) */
	/** every thread of a process, present and future (0.3); with
	 *  attr.inherit, its child processes forked from now on too */
	SHPMU_TARGET_PROCESS = 3,
};

/** shpmu_target.cpu value meaning every CPU: the same as 0 without
 *  SHPMU_TARGET_BIND_CPU. */
#define SHPMU_ALL_CPUS (-1)

/** Flags of struct shpmu_target (0.4). */
enum shpmu_target_flags {
	/** Count on shpmu_target.cpu alone: a task or process only while
	 *  it runs there, a CPU or cgroup target on that CPU. */
	SHPMU_TARGET_BIND_CPU = 1u << 0,
};

/**
 * The thing to count. Zero-initialize it (a designated initializer does),
 * then set what the kind uses: the zero target counts everywhere (a task
 * or process on any CPU, a CPU or cgroup target on every online CPU), and
 * one CPU is asked for with SHPMU_TARGET_BIND_CPU. reserved is room for
 * fields later versions add, which must be zero until then (-EINVAL
 * otherwise).
 *
 * Binaries built against 0.3 or earlier keep that version's meaning of
 * cpu, where 0 is CPU 0 alone (their calls bind to the older symbol
 * versions).
 */
struct shpmu_target {
	enum shpmu_target_kind kind;
	/** TASK: 0 = the calling thread, else a tid or pid;
	 *  PROCESS: 0 = the calling process, else a process id (a
	 *  thread-group leader: any other tid gives -EINVAL) */
	pid_t pid;
	/** With SHPMU_TARGET_BIND_CPU: the CPU to count on (0 or more).
	 *  Without it: 0 or SHPMU_ALL_CPUS, both meaning every CPU; any
	 *  other value gives -EINVAL, so that no CPU number is taken for
	 *  every CPU unnoticed. */
	int cpu;
	uint64_t cgroup_id;	 /**< CGROUP: the cgroup's id, or 0 */
	const char *cgroup_path; /**< CGROUP: used when cgroup_id is 0 */
	/** enum shpmu_target_flags (0.4; in 0.3 this was reserved) */
	uint32_t flags;
	uint32_t reserved32;  /**< zero */
	uint64_t reserved[3]; /**< zero */
};

/** The most events one group (shpmu_open_group()) may hold. */
#define SHPMU_GROUP_MAX 64

/** One handle's reading. */
struct shpmu_count {
	uint64_t value; /**< events counted in the handle's windows */
	/** ns the event was enabled within the handle's windows, summed over
	 *  the CPUs it spans (N CPUs: about N x the wall time) */
	uint64_t time_enabled;
	uint64_t time_running; /**< ns of that the event was on the PMU */
};

/** Sharing statistics of a context. reserved is room for statistics
 *  later versions add: written as zero until then. */
struct shpmu_stats {
	uint64_t handles;	/**< open virtual handles */
	uint64_t kernel_events; /**< distinct kernel events behind them */
	uint64_t kernel_fds;	/**< perf_event fds held */
	uint64_t opens;		/**< successful opens since shpmu_new() */
	uint64_t shared_opens;	/**< of those, served by an existing event */
	/** (0.4) Context switches the kernel made without running the BPF
	 *  backend's program, on every CPU since it was loaded (in host
	 *  scope, the domain's); 0 without one. See shpmu_read_bound(). */
	uint64_t switches_unseen;
	/** (0.4) CPU time, in ns summed over CPUs, whose counts the BPF
	 *  backend could not attribute because of those switches. */
	uint64_t unattributed_ns;
	uint64_t reserved[6]; /**< zero */
};

/**
 * @brief Creates a context.
 * @param opts options, or NULL for defaults
 * @return the context, or NULL with errno set: EINVAL for malformed opts
 *         (sz too small, unknown flags, backend or scope, non-zero bytes
 *         past the fields this version knows, a bad domain name, host
 *         scope with SHPMU_CGROUP_BACKEND_PERF), EOPNOTSUPP for a cgroup
 *         backend or scope that cannot work here, ENOMEM. Host scope
 *         also: ENOENT (no BPF filesystem at bpffs_dir), EPERM (no CAP_BPF
 *         and CAP_PERFMON), EACCES (the domain belongs to another uid or
 *         has a mode other than 0700, or a directory on the way to it
 *         belongs to another uid or is writable by others without the
 *         sticky bit), ELOOP (a symlink on the way), EINVAL (also a
 *         ".." in bpffs_dir), ENAMETOOLONG (bpffs_dir), EPROTO (the domain
 * holds state this build does not make, or state another process corrupted),
 * EUSERS (1024 contexts have joined the domain), ETIMEDOUT (the domain's lock
 * was held longer than lock_timeout_ms). Each is logged with what to do about
 * it.
 */
SHPMU_API struct shpmu *shpmu_new(const struct shpmu_opts *opts);

/**
 * @brief Closes every handle and kernel event, then frees the context.
 * @param pmu context, or NULL (nothing happens)
 *
 * No other call on @p pmu may run concurrently or follow.
 */
SHPMU_API void shpmu_free(struct shpmu *pmu);

/**
 * @brief Opens a counting handle, sharing a kernel event when one with the
 *        same normalized attr and target is already open.
 * @param pmu context
 * @param attr the event; attr->disabled == 0 means the handle counts from
 *        now, 1 means it counts nothing until shpmu_enable().
 *        read_format and the sampling-only side-band bits are ignored.
 * @param target what to count
 * Requests share a kernel event unless SHPMU_F_NO_SHARING is set, the
 * attr has remove_on_exec, or its type is the kprobe or uprobe PMU (whose
 * config1 is a pointer). A task event is not shared once its thread has
 * exited: a new request for a reused tid gets a new event.
 *
 * @return a handle >= 0, or -EINVAL (NULL pointer, bad size, bad target,
 *         a CPU that is not online, non-zero target->reserved, unknown
 *         target->flags, a cpu other than 0 and SHPMU_ALL_CPUS without
 *         SHPMU_TARGET_BIND_CPU or a negative one with it),
 *         -E2BIG (attr bytes past what this version knows are non-zero, or
 *         a size over a page),
 *         -EOPNOTSUPP (sampling, sigtrap), -ENOENT (no such cgroup),
 *         -EXDEV (a cgroup path outside the cgroup root), -ENOTDIR and
 *         -ENAMETOOLONG (a cgroup path, see shpmu_cgroup_id()),
 *         -EMFILE/-ENFILE (out of fds), -ENOSPC (handle table full; in
 *         host scope also past this context's share of the domain's
 *         cgroups, task entries or refs, when the cgroup backend is
 *         SHPMU_CGROUP_BACKEND_BPF: AUTO counts it with classic events), or
 *         what perf_event_open(2) returned (-ENOENT: no such event here,
 *         -EACCES: not allowed, see the log for what to change). Host
 *         scope also: -ETIMEDOUT (the domain's lock was held longer than
 *         opts.lock_timeout_ms), -EPROTO (another process corrupted the
 *         domain's shared state).
 */
SHPMU_API int shpmu_open(struct shpmu *pmu, const struct perf_event_attr *attr,
			 const struct shpmu_target *target);

/** Flags of struct shpmu_open_opts (0.3). */
enum shpmu_open_flags {
	/**
	 * Refuse (-EBUSY) a new distinct hardware event that would not fit
	 * in the core counters of any CPU it counts on (its PMU's general
	 * counters, less the NMI watchdog's, and the fixed counter of
	 * cycles, instructions or ref-cycles where free), so that nothing
	 * this context counts is multiplexed because of it. The budget is
	 * shpmu_pmu_budget()'s, host-wide in host scope. An open that shares an
	 * existing kernel event costs no counter and is never refused.
	 */
	SHPMU_OPEN_NO_MULTIPLEX = 1u << 0,
};

/**
 * Options of shpmu_open_opts(). Declare with SHPMU_OPEN_OPTS() so that sz
 * is set and the rest zeroed; later versions add fields at the end.
 */
struct shpmu_open_opts {
	size_t sz;	    /**< sizeof(struct shpmu_open_opts); at most 4096 */
	unsigned int flags; /**< enum shpmu_open_flags */
	unsigned int pad;   /**< zero */
	uint64_t reserved[6]; /**< zero */
};

/** Declares a zeroed struct shpmu_open_opts named NAME with sz set. */
#define SHPMU_OPEN_OPTS(NAME, ...)                                             \
	struct shpmu_open_opts NAME = {.sz = sizeof(struct shpmu_open_opts),   \
				       __VA_ARGS__}

/**
 * @brief shpmu_open() with options (0.3).
 * @param opts options, or NULL: the same as shpmu_open()
 * @return shpmu_open()'s, and -EINVAL (opts->sz too small, unknown flags,
 *         non-zero pad, reserved or bytes past what this version knows),
 *         -EBUSY (SHPMU_OPEN_NO_MULTIPLEX: the event would not fit in the
 *         counters of a CPU it counts on; the log names the PMU, the CPU,
 *         the counters and what holds them; nothing is left open).
 */
SHPMU_API int shpmu_open_opts(struct shpmu *pmu,
			      const struct perf_event_attr *attr,
			      const struct shpmu_target *target,
			      const struct shpmu_open_opts *opts);

/**
 * @brief Opens an event by name, as shpmu_open() does with its attr.
 * @param event a libpfm4 name: generic ("cycles", "task-clock", "cs"),
 *        "perf::TASK-CLOCK", PMU-specific ("INST_RETIRED.ANY"), with
 *        modifiers (":u" user only, ":k" kernel only). It counts from now.
 * @return a handle, -ENOENT (no such event name; the log says libpfm4's
 *         reason), -EINVAL (bad modifier or NULL), or shpmu_open()'s
 *         errors (-ENOENT too for a hardware event on a machine without a
 *         hardware PMU: the log says so).
 */
SHPMU_API int shpmu_open_name(struct shpmu *pmu, const char *event,
			      const struct shpmu_target *target);

/**
 * @brief Encodes an event name into a counting attr (enabled, size set),
 *        for shpmu_open_group() or for changing it before shpmu_open().
 *        libpfm4 knows every PMU of the machine; where it does not know
 *        the CPU, the kernel's generic names ("cycles", "task-clock",
 *        "cs", "L1-dcache-load-misses", with ":u", ":k") still encode,
 *        as libpfm4 would.
 * @return 0, -ENOENT (unknown name), -EINVAL (bad modifier or NULL).
 */
SHPMU_API int shpmu_event_attr(struct shpmu *pmu, const char *event,
			       struct perf_event_attr *attr);

/**
 * @brief Calls cb with every event this machine's PMUs have ("pmu::event"
 *        and its description), as libpfm4 knows them.
 * @param cb returns 0 to go on; anything else stops the walk and is
 *        returned
 * Where libpfm4 cannot initialize (a CPU it does not know), the kernel's
 * generic events are listed, with the names shpmu_event_attr() then
 * takes.
 * @return 0, cb's non-zero return, -EINVAL (NULL cb).
 */
SHPMU_API int shpmu_list_events(struct shpmu *pmu,
				int (*cb)(const char *name, const char *desc,
					  void *arg),
				void *arg);

/**
 * @brief Opens events as one kernel group per CPU (scheduled all or
 *        nothing), shared only with an identical group on the same target.
 * @param attrs n attrs, leader first; attrs[0].disabled says whether the
 *        group counts from now, the members' disabled is ignored
 * @param n 1 to SHPMU_GROUP_MAX
 * @return a group handle, used like any handle (enable, disable, reset,
 *         close; shpmu_read gives the leader), or shpmu_open()'s errors.
 */
SHPMU_API int shpmu_open_group(struct shpmu *pmu,
			       const struct perf_event_attr *attrs, size_t n,
			       const struct shpmu_target *target);

/**
 * @brief Starts counting on a handle.
 *
 * A no-op on a handle that already counts, except on a pinned event:
 * there it brings the handle up to date, and brings its kernel event back
 * from the error state a pinned event goes to when it cannot get a
 * counter (reads give -ENODATA): the kernel tries to schedule it again.
 * @return 0, -EBADF for a handle that is not open, -ENODATA (its kernel
 *         event is pinned and still cannot get a counter: see
 *         shpmu_explain()), or the kernel's error (a disabled handle then
 *         stays disabled).
 */
SHPMU_API int shpmu_enable(struct shpmu *pmu, int h);

/**
 * @brief Stops counting on a handle, keeping what it counted (a no-op if it
 *        is already disabled). A handle whose kernel event is in error
 *        state (-ENODATA) keeps what it counted up to its last good
 *        reading.
 * @return 0, -EBADF for a handle that is not open, or the kernel's error
 *         (the handle then stays enabled).
 */
SHPMU_API int shpmu_disable(struct shpmu *pmu, int h);

/**
 * @brief Zeroes a handle's count and times; other handles on the same
 *        kernel event are untouched (the kernel event is never reset).
 * @return 0, -EBADF, -ENODATA (the kernel event is in error state, see
 *         shpmu_read()), or the kernel's read error (nothing changed).
 */
SHPMU_API int shpmu_reset(struct shpmu *pmu, int h);

/**
 * @brief Closes a handle; the kernel event closes with its last handle.
 * In host scope, a close that cannot take the domain's lock within
 * opts.lock_timeout_ms still closes the handle (logging why); what it
 * held in the domain is dropped when the context leaves.
 * @return 0, or -EBADF for a handle that is not open (closed twice, stale,
 *         made up).
 */
SHPMU_API int shpmu_close(struct shpmu *pmu, int h);

/**
 * @brief Reads a handle: its count and times summed over the CPUs it spans.
 *
 * When more distinct hardware events are scheduled than the PMU has
 * counters, the kernel multiplexes them: time_running then falls short of
 * time_enabled, and shpmu_scale() estimates the count over the whole
 * window.
 * @param out receives the reading
 * @return 0, -EINVAL (out NULL), -EBADF, -ENODATA (the kernel event is in
 *         error state: it is pinned and could not get a counter, held by
 *         other pinned or exclusive events or the NMI watchdog; free
 *         counters and shpmu_enable() the handle again, see
 *         shpmu_explain()), or the kernel's read error (-EIO for a short
 *         read).
 */
SHPMU_API int shpmu_read(struct shpmu *pmu, int h, struct shpmu_count *out);

/**
 * @brief Reads a handle like shpmu_read(), without a system call, as of
 *        each CPU's last settle.
 *
 * Handles counted by the BPF backend (process or host scope) keep their
 * per-CPU totals in memory that the program updates when it settles a
 * CPU: at a context switch between tasks of different counted sets, at
 * any switch in a later clock tick than the CPU's last settle (a tick is
 * 1/HZ: 1 to 10 ms on common kernels), when a running task moves to
 * another cgroup, and at any exact read (shpmu_read and friends, from any
 * process of a host domain). What a CPU ran since its last settle is
 * missing until the next: a CPU that runs one task without a switch is
 * not settled. Counts never go backwards between cached and exact reads.
 * @return 0, -EINVAL (out NULL), -EBADF, -EOPNOTSUPP (a handle counted by
 *         classic perf fds: shpmu_read() it).
 */
SHPMU_API int shpmu_read_cached(struct shpmu *pmu, int h,
				struct shpmu_count *out);

/**
 * @brief Reads a handle like shpmu_read(), with how far below the truth
 *        its value may be (0.4).
 *
 * Classic perf events and the BPF backend's CPU targets count exactly:
 * their bound is 0. The BPF backend credits each CPU's counts to the
 * cgroups and tasks of the task that ran, which it learns at each context
 * switch. Some kernels make some switches without running any BPF
 * program (one that hides certain tasks from BPF; a kernel that skips a
 * program for recursion). The program knows exactly how many it missed,
 * from a context-switches count per CPU, and never guesses whose the
 * time across such a switch was: where the tasks on both sides count for
 * the same targets it credits them exactly; otherwise it credits only
 * what they share and keeps the rest as that CPU's unattributed totals
 * (shpmu_read_unattributed()). The handle's value then never exceeds
 * the truth, and falls short of it by at most @p bound: what went
 * unattributed on its CPUs, of its event, while it was enabled. A task
 * or process may run on any CPU, so every CPU's counts. The bound is in
 * the value's units (not scaled).
 * @param out receives the reading, as shpmu_read() gives it
 * @param bound receives the bound
 * @return 0, or what shpmu_read() returns; -EINVAL also for bound NULL.
 */
SHPMU_API int shpmu_read_bound(struct shpmu *pmu, int h,
			       struct shpmu_count *out, uint64_t *bound);

/**
 * @brief What the BPF backend left unattributed of a handle's event
 *        (0.4): see shpmu_read_bound().
 *
 * Totals since the backend began counting the handle's event attr (in
 * host scope, the domain's), for every handle of that attr; value,
 * time_enabled and time_running as they accrued across the switches
 * concerned. As of each CPU's last settle, like shpmu_read_cached(): no
 * CPU is brought up to now, so that an agent can read every CPU of every
 * event after one batched read (shpmu_read_many()) brought them there.
 * @param cpu a CPU, or -1 for the sum over every CPU
 * @return 0, -EINVAL (out NULL, or a CPU the backend does not know),
 *         -EBADF, -EOPNOTSUPP (a handle counted by classic perf fds,
 *         which leave nothing unattributed).
 */
SHPMU_API int shpmu_read_unattributed(struct shpmu *pmu, int h, int cpu,
				      struct shpmu_count *out);

/**
 * @brief Reads one CPU's share of a handle.
 * @param cpu a CPU the handle spans; for a handle on one fd (a task, or one
 *        CPU), that CPU or -1
 * @return 0, -EINVAL (out NULL), -EBADF, -ENOENT (the handle does not span
 *         @p cpu), -ENODATA (that CPU's event is in error state, see
 *         shpmu_read()), or the kernel's read error.
 */
SHPMU_API int shpmu_read_cpu(struct shpmu *pmu, int h, int cpu,
			     struct shpmu_count *out);

/**
 * @brief Reads a handle's share on one core PMU (0.3). On a hybrid machine
 *        (cpu_core and cpu_atom) a generic hardware event (cycles,
 *        instructions, a cache event, without an extended type) counts on
 *        each CPU with that CPU's PMU, and a task or process with one
 *        kernel event per PMU: shpmu_read() sums them, this call gives
 *        one PMU's. Such a task handle has one source per PMU, not per
 *        CPU: shpmu_read_cpu() gives -ENOENT for it.
 * @param pmu_name a core PMU's name, as shpmu_pmu_budget() gives it
 *        ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3_0")
 * @param out receives that PMU's share
 * @return 0, -EINVAL (a NULL argument), -EBADF, -ENOENT (the handle counts
 *         nothing on that PMU: no such PMU, or a software event; also a
 *         task counted by the BPF backend, which sums its CPUs into one
 *         total), -ENODATA (a pinned event in error state, see
 *         shpmu_read()), or the kernel's read error.
 */
SHPMU_API int shpmu_read_pmu(struct shpmu *pmu, int h, const char *pmu_name,
			     struct shpmu_count *out);

/** Longest core PMU name with its NUL (struct shpmu_pmu_budget.pmu). */
#define SHPMU_PMU_NAME_MAX 32

/**
 * The counter budget of one core PMU on one CPU (0.3): see
 * shpmu_pmu_budget(). Counters are what one CPU has; used and wanted
 * count a group's members one each, and an event with no core counter
 * (software, tracepoint, uncore) not at all.
 */
struct shpmu_pmu_budget {
	char pmu[SHPMU_PMU_NAME_MAX]; /**< the PMU: "cpu", "cpu_core", ... */
	uint32_t type;		      /**< its perf type */
	/** the CPU, or -1: the events that follow a task (task and
	 *  process targets on any CPU), counted as if they all ran
	 *  together on one CPU: an upper bound for any one task */
	int32_t cpu;
	uint32_t general;  /**< general-purpose counters; 0: unknown */
	uint32_t fixed;	   /**< fixed counters */
	uint32_t watchdog; /**< general counters the NMI watchdog holds */
	/** counters this context's distinct kernel events need here */
	uint32_t used;
	uint32_t used_fixed; /**< of used, those on fixed counters */
	/** 1: used does not fit: counts are scaled (a pinned event that
	 *  does not fit is not scaled but stops counting) */
	uint32_t multiplexing;
	/** counters its handles would need with an event each (no sharing) */
	uint64_t wanted;
	uint64_t saved;	      /**< wanted - used: what sharing saves */
	uint64_t reserved[8]; /**< zero */
};

/**
 * @brief The counter budget (0.3): for each core PMU and each of its CPUs
 *        (then one entry with cpu -1 for task events), its counters and
 *        what this context's hardware events need of them. A generic
 *        cycles, instructions or ref-cycles event goes on its fixed
 *        counter while that is free, every other on a general counter;
 *        the CPU multiplexes when the general ones needed are more than
 *        there are, less the watchdog's. The BPF backend's perf events
 *        (one per attr and CPU, whatever the number of targets) count
 *        once each: in host scope those of every member of the domain,
 *        which makes the budget host-wide for what the domain counts
 *        (classic events other processes hold are not seen).
 * @param out room for n entries, or NULL with n 0 to ask how many there are
 * @return the number of entries there are (at most n written), 0 where
 *         the machine has no core PMU, -EINVAL (out NULL with n > 0), or
 *         the error reading sysfs.
 */
SHPMU_API int shpmu_pmu_budget(struct shpmu *pmu, struct shpmu_pmu_budget *out,
			       size_t n);

/**
 * @brief Reads every member of a group with one read(2) per CPU.
 * @param out room for n counts; member i (in shpmu_open_group() order)
 *        goes to out[i]; the times are the group's
 * @return 0, -EINVAL (out NULL), -EBADF, -ERANGE (n is smaller than the
 *         group), -ENODATA (the group is pinned and in error state, see
 *         shpmu_read()), or the kernel's read error.
 */
SHPMU_API int shpmu_read_group(struct shpmu *pmu, int gh,
			       struct shpmu_count *out, size_t n);

/**
 * @brief Reads n handles with one read(2) per kernel fd involved, however
 *        many of the handles share it; out[i] is exactly what
 *        shpmu_read(hs[i]) would give.
 * @return 0, -EINVAL (NULL arrays), -EBADF (any handle not open), -ENOMEM
 *         (also for an n whose counts would not fit in memory), -ENODATA
 *         (an event in error state, see shpmu_read(): read the handles
 *         one by one to find it), or the kernel's read error; on error
 *         out is not written.
 */
SHPMU_API int shpmu_read_many(struct shpmu *pmu, const int *hs, size_t n,
			      struct shpmu_count *out);

/**
 * @brief Scales a count for multiplexing: value * time_enabled /
 *        time_running, computed without overflow.
 * @return the scaled value, rounded down, UINT64_MAX when it does not
 *         fit; 0 when the event never ran; the value itself when it ran
 *         all the time it was enabled. NULL gives 0.
 */
SHPMU_API uint64_t shpmu_scale(const struct shpmu_count *c);

/**
 * @brief Says in words what an error a call returned means, and what to
 *        do about it.
 * @param h the handle the call was on, or -1 for a call that made none
 *        (an open's error)
 * @param err the negative errno the call returned: -ENODATA (a pinned
 *        event in error state: which event, why, how to bring it back),
 *        -EBUSY (no counter left for another distinct hardware event),
 *        -ENOENT, -EACCES/-EPERM, -EMFILE/-ENFILE, -EOPNOTSUPP (from an
 *        open; on a handle of classic perf fds, from a call only the BPF
 *        backend answers), -EBADF; others get strerror()'s text
 * @param buf receives the text, NUL-terminated
 * @param len its size
 * @return 0, -EINVAL (pmu or buf NULL, len 0, err not negative, h below
 *         -1), -EBADF (h is not an open handle), -ERANGE (len is too small
 *         for the text: buf is not written).
 */
SHPMU_API int shpmu_explain(struct shpmu *pmu, int h, int err, char *buf,
			    size_t len);

/**
 * @brief Reads a consistent snapshot of the sharing statistics.
 * @return 0 or -EINVAL (a NULL argument).
 */
SHPMU_API int shpmu_get_stats(struct shpmu *pmu, struct shpmu_stats *out);

/*
 * Cgroups. Ids are the kernel's: on cgroup2 the directory's inode number,
 * as bpf_get_current_cgroup_id() and PERF_SAMPLE_CGROUP report them. Paths
 * are absolute under the cgroup root, or relative to it ("" is the root
 * itself); empty and "." components are skipped, ".." is refused with
 * -EINVAL, a symlink with -EINVAL, and an absolute path outside the root
 * with -EXDEV. Without a cgroup mount every call returns -ENOENT.
 */

/**
 * @brief Copies the cgroup root in use (opts.cgroup_root, or the mount
 *        found: cgroup2 first, else a v1 perf_event hierarchy).
 * @return 0, -EINVAL (buf NULL), -ERANGE (len too small), -ENOENT (no
 *         cgroup hierarchy on this host).
 */
SHPMU_API int shpmu_cgroup_root(struct shpmu *pmu, char *buf, size_t len);

/**
 * @brief Gives the id of the cgroup at path.
 * @return 0, -EINVAL (NULL argument, "..", symlink), -EXDEV (absolute path
 *         outside the root), -ENOENT (no such cgroup), -ENOTDIR (path
 *         names a file of a cgroup, not a cgroup), -ENAMETOOLONG (path
 *         longer than PATH_MAX; a component longer than NAME_MAX gets
 *         the cgroup filesystem's answer, -ENOENT).
 */
SHPMU_API int shpmu_cgroup_id(struct shpmu *pmu, const char *path,
			      uint64_t *id);

/**
 * @brief Gives the absolute path of the cgroup with this id. Uses
 *        open_by_handle_at(2) where the process has CAP_DAC_READ_SEARCH,
 *        else a walk of the hierarchy, cached and refreshed on a miss.
 * @return 0, -EINVAL (buf NULL), -ERANGE (len too small), -ENOENT (no
 *         cgroup with this id under the root, e.g. removed, or an id that
 *         kernfs gave to one of a cgroup's files).
 */
SHPMU_API int shpmu_cgroup_path(struct shpmu *pmu, uint64_t id, char *buf,
				size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SHPMU_SHPMU_H */
