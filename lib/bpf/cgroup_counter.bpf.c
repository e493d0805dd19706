// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One perf event per CPU counts any number of cgroups, tasks and
 * processes (one shared event per CPU, as perf's bperf_cgroup). Each CPU
 * remembers the counted set of the task that switched in: the counted
 * cgroups among its ancestors, and the targets counting its thread or its
 * process. The delta of the CPU's events goes to that set when it is
 * settled:
 *
 *   - at a context switch, unless the incoming task has the same set,
 *     neither task is counted by itself and the CPU settled in this clock
 *     tick (then nothing is read: the time keeps accruing to the same
 *     targets; the commonest such switch, within one cgroup, is told
 *     before anything is resolved);
 *   - when the running task is moved to another cgroup: perf's own cgroup
 *     controller then runs a function on the task's CPU (an IPI, or a local
 *     call when the task moves itself), which is where classic cgroup
 *     events switch too; the csd_function_entry tracepoint runs us there;
 *   - when userspace flushes a CPU before a read, by test-running on_switch
 *     on that CPU with all-zero arguments.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/cgroup_counter.h"

/* The per-CPU events: index event * MAX_CPUS + cpu. They live as long as
 * the map, not as long as the fds they were put in with (host scope: the
 * process that opened them may be gone). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, MAX_EVENTS *MAX_CPUS);
	__uint(map_flags, BPF_F_PRESERVE_ELEMS);
} events SEC(".maps");

/* CPUs the maps below have room for (possible CPUs), set at load. */
const volatile __u32 nr_cpus = 1;

/* Counted cgroups: id -> slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, MAX_SLOTS);
} cgroup_slots SEC(".maps");

/* Each CPU's view (cgroup_counter.h): its raw readings and their seq. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cpu_view));
	__uint(max_entries, MAX_CPUS);
	__uint(map_flags, BPF_F_MMAPABLE);
} cpu_views SEC(".maps");

/* What each slot's cgroup counted on each CPU, at slot * nr_cpus + cpu.
 * Userspace sizes it at load and reads it through mmap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct slot_totals));
	__uint(max_entries, MAX_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
} totals SEC(".maps");

/* Links of counted tasks and processes (cgroup_counter.h): made by
 * userspace, and here for the children of an inherit target. Neither map
 * is preallocated: an entry costs memory only while it counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct task_link));
	__uint(max_entries, MAX_TASK_LINKS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} task_links SEC(".maps");

/* Each counted task target's total of each event it is counted for. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct counter_value));
	__uint(max_entries, MAX_TASK_TARGETS *MAX_EVENTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} task_totals SEC(".maps");

/* The task targets a task is counted by: its thread's and its process's,
 * plain and inherit (cgroup_counter.h). */
enum { TT_TID_PLAIN, TT_TID_INHERIT, TT_TGID_PLAIN, TT_TGID_INHERIT, TT_N };

/* A task's counted set: the slots of the counted cgroups among its own
 * cgroup and its ancestors, and the task targets counting it. */
struct counted_set {
	__u64 leaf;	  /* the cgroup id it was walked for; 0: none */
	__u64 generation; /* of the counted cgroups, when it was walked */
	__u32 nslots;	  /* > CACHED_SLOTS: more than a set holds (walk) */
	__u32 slots[CACHED_SLOTS];
	__u32 targets[TT_N]; /* NO_TARGET: none */
	__u32 ntargets;	     /* how many are not NO_TARGET */
};

/* Each CPU keeps the counted sets of recent cgroups in a small table
 * indexed by the low bits of the cgroup id: a hit costs one array lookup
 * instead of a walk down the hierarchy. */
struct ancestors {
	__u64 leaf;	  /* the cgroup id; 0: empty */
	__u64 generation; /* of the counted set, when this was walked */
	__u32 nslots;	  /* > CACHED_SLOTS: too many to hold */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct ancestors));
	__uint(max_entries, CACHED_LEAVES);
} ancestors_cache SEC(".maps");

/* The slots of each cached entry: way * CACHED_SLOTS + i. A map of its own,
 * so that the walk fills it by key and the verifier need not track how
 * many it has filled. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, CACHED_LEAVES *CACHED_SLOTS);
} cached_slots SEC(".maps");

/*
 * What a CPU is accruing to, between settles: the counted set of the task
 * that switched in, copied out of the cache (a settle must not depend on
 * an entry the next resolve may evict), and that of the task that left at
 * the same switch, for a task that comes back unreported (see
 * unseen_switches).
 */
struct cpu_state {
	__u64 task;	 /* the task that switched in last; 0: none seen yet */
	__u64 last_task; /* the task that left at that switch */
	struct counted_set now, last;
	struct counted_set here; /* room to resolve the task found here */
	/* Switches not settled yet (the set stayed the same): the two
	 * switch kinds count them at the next settle. */
	__u32 pending_switches;
	__u32 pending_cgroup_switches;
	__u64 settled_jiffies; /* the clock tick of the CPU's last settle */
	/* A run is under way on this CPU: a flush test-run on its own CPU
	 * runs with interrupts on, and a move check may land inside it. */
	__u32 busy;
	__u32 recheck; /* a move check arrived during that run */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cpu_state));
	__uint(max_entries, 1);
} cpu_states SEC(".maps");

/* Written by userspace through the mmapped .bss. */
__u32 num_events = 0;		  /* event indexes filled */
__u64 generation = 0;		  /* bumped when the counted set changes */
__u8 event_kind[MAX_EVENTS] = {}; /* enum counter_kind */
/*
 * Switches the tracepoint did not report: the task on a CPU is not the one
 * it last switched to (seen on a sandbox's kernel, whose supervisor's
 * threads are never reported leaving a CPU). Most are returns: the task
 * that left at the last reported switch came back, and what accrued goes
 * to the counted set it has: the one it left with, or, if it was moved
 * while away, the one it came back to (at a move check, where it may have
 * been moved while away or just now, as if just now). Otherwise it goes
 * to the task found on the CPU. Either way what the hidden task did in
 * its short run goes with it: strays are those where a counted cgroup was
 * on either side, so that a count may be off.
 */
__u64 unseen_switches = 0;
__u64 unseen_returns = 0;
__u64 unseen_strays = 0;
/* Moves of a running task the program settled at the moment they
 * happened (for tests and the debug log). */
__u64 moves_settled = 0;

/* How many counted cgroups have each low-bits value of their id: most
 * ancestors are not counted, and this array says so without a hash
 * lookup. */
__u16 counted_ids[COUNTED_FILTER_SIZE] = {};
/* The same for the links' tids and tgids (32-bit: the fork hook adds
 * to it atomically). */
__u32 counted_tasks[TASK_FILTER_SIZE] = {};
/* Children of an inherit target that found the links map full, and went
 * uncounted. */
__u64 children_lost = 0;
/* Nanoseconds per clock tick (USER_HZ), for start times. */
const volatile __u64 ns_per_tick = 10000000;

/* Typed pointers make the walks below plain loads (the verifier guards
 * them) instead of a helper call per pointer followed. */
extern void *bpf_rdonly_cast(void *obj, __u32 btf_id) __ksym;

static __always_inline struct task_struct *as_task(__u64 task)
{
	return bpf_rdonly_cast((void *)task,
			       bpf_core_type_id_kernel(struct task_struct));
}

/* A task's cgroup on the unified hierarchy. Tasks travel between the
 * functions below as plain numbers: global functions take no typed
 * pointers. */
static __always_inline struct cgroup *task_cgroup(__u64 task)
{
	return as_task(task)->cgroups->dfl_cgrp;
}

/* Event e's change on this CPU since the last settle, into delta. The
 * switch path counts context-switches and cgroup-switches after the
 * tracepoint has fired, so their counter would credit each switch to the
 * next task to leave the CPU: for those two the switches this settle
 * covers are given. Returns false when the CPU has no event e. */
static __always_inline bool take_delta(__u32 e, __u32 cpu, __u32 switches,
				       __u32 cgroup_switches,
				       struct counter_value *prev,
				       struct counter_value *delta)
{
	struct bpf_perf_event_value now;
	__u8 kind = event_kind[e];

	if (bpf_perf_event_read_value(&events, e * MAX_CPUS + cpu, &now,
				      sizeof(now)))
		return false;
	delta->counter = now.counter - prev->counter;
	if (kind == KIND_CONTEXT_SWITCHES)
		delta->counter = switches;
	else if (kind == KIND_CGROUP_SWITCHES)
		delta->counter = cgroup_switches;
	delta->enabled = now.enabled - prev->enabled;
	delta->running = now.running - prev->running;
	prev->counter = now.counter;
	prev->enabled = now.enabled;
	prev->running = now.running;
	return true;
}

/*
 * The pieces below are functions of their own (global, so not inlined):
 * the verifier checks each once instead of along every path through the
 * others, which keeps the program within its limits.
 */

/* Every event's delta on this CPU since the raw readings in view, which
 * move on to now. Returns whether any event was read. */
__noinline int take_deltas(__u32 switches, __u32 cgroup_switches,
			   struct cpu_view *view, struct slot_totals *delta)
{
	__u32 cpu = bpf_get_smp_processor_id(), used = num_events;
	int any = 0;

	if (!delta || !view || cpu >= MAX_CPUS)
		return 0;
		/* Unrolled, so that each delta->events[e] is at a constant
		 * offset. */
#pragma clang loop unroll(full)
	for (__u32 e = 0; e < MAX_EVENTS; e++)
		if (e < used && take_delta(e, cpu, switches, cgroup_switches,
					   &view->raw[e], &delta->events[e]))
			any = 1;
	return any;
}

/* Adds delta to what the slot's cgroup counted on this CPU. */
__noinline int add_delta(__u32 slot, const struct slot_totals *delta)
{
	__u32 index = slot * nr_cpus + bpf_get_smp_processor_id();
	struct slot_totals *total = bpf_map_lookup_elem(&totals, &index);
	__u32 used = num_events;

	if (!total || !delta)
		return 0;
	for (__u32 e = 0; e < MAX_EVENTS && e < used; e++) {
		total->events[e].counter += delta->events[e].counter;
		total->events[e].enabled += delta->events[e].enabled;
		total->events[e].running += delta->events[e].running;
	}
	return 0;
}

/* One walk down a cgroup's ancestors, from the root to the cgroup itself
 * (bpf_loop: the verifier checks one level, whatever the depth). Each
 * counted one is credited with delta (when given) and noted in the cache
 * entry way (when filling one). */
/* A walk down one cgroup's ancestors, read once: a task moved meanwhile
 * must not mix two cgroups' ancestors in one walk. */
struct walk {
	struct cgroup *cgrp;
	const struct slot_totals *delta;
	__u32 way;    /* the cache entry being filled; CACHED_LEAVES: none */
	__u32 nslots; /* counted ancestors found so far */
};

static long walk_level(__u32 level, void *arg)
{
	struct walk *w = arg;
	struct cgroup *ancestor = NULL;
	__u64 id;
	__u32 *slot;

	/* (A typed pointer takes no variable index: one read per level,
	 * on a cache miss only.) */
	if (level >= MAX_LEVELS ||
	    bpf_probe_read_kernel(&ancestor, sizeof(ancestor),
				  &w->cgrp->ancestors[level]) ||
	    !ancestor)
		return 1;
	id = BPF_CORE_READ(ancestor, kn, id);
	if (!counted_ids[id & (COUNTED_FILTER_SIZE - 1)])
		return 0;
	slot = bpf_map_lookup_elem(&cgroup_slots, &id);
	if (!slot)
		return 0;
	if (w->delta)
		add_delta(*slot, w->delta);
	if (w->way < CACHED_LEAVES && w->nslots < CACHED_SLOTS) {
		__u32 key = w->way * CACHED_SLOTS + w->nslots;
		__u32 *cached = bpf_map_lookup_elem(&cached_slots, &key);

		if (cached)
			*cached = *slot;
	}
	w->nslots++;
	return 0;
}

/* Walks cgrp's counted ancestors, from the root to itself (bpf_loop: the
 * verifier checks one level, whatever the depth): credits delta to them
 * (if given), and notes them in cache entry way (if < CACHED_LEAVES).
 * Returns how many. */
static __always_inline __u32 walk_cgroup(struct cgroup *cgrp,
					 const struct slot_totals *delta,
					 __u32 way)
{
	struct walk w = {.cgrp = cgrp, .delta = delta, .way = way};
	int level = cgrp->level;

	if (level < 0 || level >= MAX_LEVELS)
		return 0;
	bpf_loop(level + 1, walk_level, &w, 0);
	return w.nslots;
}

/* The counted set of task's cgroup for the current generation into out:
 * from the cache, walked first unless it is there. The cgroup is read once
 * for both its id and its walk: a task moved meanwhile must not get one
 * cgroup's id with another's set. */
__noinline int resolve_cgroups(__u64 task, struct counted_set *out)
{
	struct cgroup *cgrp = task_cgroup(task);
	__u64 leaf = cgrp->kn->id;
	__u32 way = leaf & (CACHED_LEAVES - 1), n;
	struct ancestors *entry = bpf_map_lookup_elem(&ancestors_cache, &way);
	/* Before the walk: a change to the counted set after this read
	 * makes what the walk caches stale at once. */
	__u64 gen = *(volatile __u64 *)&generation;

	if (!entry || !out)
		return 0;
	if (entry->leaf != leaf || entry->generation != gen) {
		entry->nslots = walk_cgroup(cgrp, NULL, way);
		entry->leaf = leaf;
		entry->generation = gen;
	}
	out->leaf = leaf;
	out->generation = gen;
	out->nslots = n = entry->nslots;
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++) {
		__u32 key = way * CACHED_SLOTS + i;
		__u32 *slot = bpf_map_lookup_elem(&cached_slots, &key);

		out->slots[i] = slot ? *slot : 0;
	}
	return 0;
}

static __always_inline __u64 start_ticks(struct task_struct *t)
{
	return t->start_boottime / ns_per_tick;
}

/* The link of (kind, id) if it counts the task whose start is starter's
 * (the thread's own, or its group leader's): the start is worked out (a
 * division) only for an id that has a link. */
static __always_inline struct task_link *link_of(__u32 kind, __u32 id,
						 struct task_struct *starter)
{
	__u64 key = task_link_key(kind, id);
	struct task_link *link;

	if (!counted_tasks[id & (TASK_FILTER_SIZE - 1)])
		return NULL;
	link = bpf_map_lookup_elem(&task_links, &key);
	return link && link->start_ticks == start_ticks(starter) ? link : NULL;
}

/* The task targets counting task into out (its targets and ntargets). */
__noinline int resolve_tasks(__u64 task, struct counted_set *out)
{
	struct task_struct *t = as_task(task);
	struct task_link *tid, *tgid;

	if (!out)
		return 0;
	tid = link_of(LINK_TID, t->pid, t);
	tgid = link_of(LINK_TGID, t->tgid, t->group_leader);
	out->targets[TT_TID_PLAIN] =
		tid ? tid->target[TARGET_PLAIN] : NO_TARGET;
	out->targets[TT_TID_INHERIT] =
		tid ? tid->target[TARGET_INHERIT] : NO_TARGET;
	out->targets[TT_TGID_PLAIN] =
		tgid ? tgid->target[TARGET_PLAIN] : NO_TARGET;
	out->targets[TT_TGID_INHERIT] =
		tgid ? tgid->target[TARGET_INHERIT] : NO_TARGET;
	out->ntargets = (tid ? 2 : 0) + (tgid ? 2 : 0);
	return 0;
}

/* Adds delta to task target t's totals of the events it is counted for:
 * atomically, for the threads of a process run on many CPUs at once. */
__noinline int add_task_delta(__u32 target, const struct slot_totals *delta)
{
	__u32 used = num_events;

	if (!delta || target == NO_TARGET)
		return 0;
	for (__u32 e = 0; e < MAX_EVENTS && e < used; e++) {
		__u64 key = task_total_key(target, e);
		struct counter_value *total =
			bpf_map_lookup_elem(&task_totals, &key);

		if (!total)
			continue;
		__sync_fetch_and_add(&total->counter, delta->events[e].counter);
		__sync_fetch_and_add(&total->enabled, delta->events[e].enabled);
		__sync_fetch_and_add(&total->running, delta->events[e].running);
	}
	return 0;
}

/* Whether time accruing to set a may go on accruing for b: the same
 * cgroup walked at the same generation, or cgroups with the same counted
 * ancestors, and no task of either counted by itself. */
__noinline int same_set(const struct counted_set *a,
			const struct counted_set *b)
{
	__u32 n;

	if (!a || !b)
		return 0;
	if (a->ntargets || b->ntargets)
		return 0;
	if (a->leaf == b->leaf && a->generation == b->generation)
		return 1;
	if (a->nslots != b->nslots || a->nslots > CACHED_SLOTS)
		return 0;
	n = a->nslots;
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++)
		if (a->slots[i] != b->slots[i])
			return 0;
	return 1;
}

/* Whose counted set a settle credits. */
enum owner {
	OWNER_NOW = 0,	/* the task that switched in last */
	OWNER_LAST = 1, /* the task that left at that switch, come back */
	OWNER_HERE = 2, /* the task here now: walk its cgroup */
};

/* Adds this CPU's deltas since the last settle to owner's counted set,
 * with now_switches / now_cgroup_switches for the switch being made (if
 * any). Returns how many counted cgroups it credited. */
__noinline int credit(struct cpu_state *st, struct cpu_view *view,
		      __u32 now_switches, __u32 now_cgroup_switches, int owner)
{
	/* An event not read this time adds zeros. */
	struct slot_totals delta = {};
	const struct counted_set *set;
	__u32 n;

	if (!st)
		return 0;
	if (!take_deltas(st->pending_switches + now_switches,
			 st->pending_cgroup_switches + now_cgroup_switches,
			 view, &delta))
		return 0;
	st->pending_switches = 0;
	st->pending_cgroup_switches = 0;
	set = owner == OWNER_LAST ? &st->last : &st->now;
	if (owner == OWNER_HERE) {
		resolve_tasks(bpf_get_current_task(), &st->here);
		set = &st->here;
	}
	for (__u32 i = 0; i < TT_N; i++)
		add_task_delta(set->targets[i], &delta);
	/* More counted ancestors than a set holds: walk the task here. */
	if (owner == OWNER_HERE || set->nslots > CACHED_SLOTS)
		return set->ntargets +
		       walk_cgroup(
			       bpf_get_current_task_btf()->cgroups->dfl_cgrp,
			       &delta, CACHED_LEAVES);
	n = set->nslots;
	for (__u32 i = 0; i < CACHED_SLOTS && i < n; i++)
		add_delta(set->slots[i], &delta);
	return n + set->ntargets;
}

/* credit(), with the CPU's view marked as being written for readers in
 * userspace (see struct cpu_view). */
static __always_inline int settle(struct cpu_state *st, __u32 now_switches,
				  __u32 now_cgroup_switches, int owner)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_view *view = bpf_map_lookup_elem(&cpu_views, &cpu);
	int n;

	if (!view || !st)
		return 0;
	__sync_fetch_and_add(&view->seq, 1);
	n = credit(st, view, now_switches, now_cgroup_switches, owner);
	__sync_fetch_and_add(&view->seq, 1);
	st->settled_jiffies = bpf_jiffies64();
	return n;
}

/* Both halves of a task's counted set. */
static __always_inline void resolve(__u64 task, struct counted_set *out)
{
	resolve_cgroups(task, out);
	resolve_tasks(task, out);
}

/* Whose set what accrued belongs to when task (in cgroup leaf), found on
 * the CPU, is not the one it saw switch in (see unseen_switches). */
static __always_inline int owner_after_hidden(struct cpu_state *st, __u64 task,
					      __u64 leaf, int at_move_check)
{
	__sync_fetch_and_add(&unseen_switches, 1);
	if (task != st->last_task)
		return OWNER_HERE;
	__sync_fetch_and_add(&unseen_returns, 1);
	return leaf == st->last.leaf || at_move_check ? OWNER_LAST : OWNER_HERE;
}

/* Counts a stray: a counted cgroup was credited, or the hidden task's own
 * set had one. */
static __always_inline void count_stray(struct cpu_state *st, int credited)
{
	if (credited || st->now.nslots)
		__sync_fetch_and_add(&unseen_strays, 1);
}

/* Settles what accrued and starts again from the set of the task here now
 * (the counted set may have changed): a flush, or a move check that found
 * another task than it expected. */
__noinline int restart(struct cpu_state *st, int at_move_check)
{
	__u64 task = bpf_get_current_task();
	__u64 leaf = bpf_get_current_cgroup_id();
	int owner = OWNER_NOW, credited;

	if (!st)
		return 0;
	if (!st->task)
		owner = OWNER_HERE;
	else if (st->task != task)
		owner = owner_after_hidden(st, task, leaf, at_move_check);
	credited = settle(st, 0, 0, owner);
	if (st->task && st->task != task)
		count_stray(st, credited);
	st->task = task;
	resolve(task, &st->now);
	return 0;
}

/* The running task may have moved to another cgroup: if so, what it ran
 * before goes to the cgroups it left, and the rest to those it joined. */
__noinline int check_move(struct cpu_state *st)
{
	__u64 task = bpf_get_current_task();

	if (!st || !st->task)
		return 0;
	if (st->task != task)
		return restart(st, 1);
	if (bpf_get_current_cgroup_id() == st->now.leaf)
		return 0;
	settle(st, 0, 0, OWNER_NOW);
	resolve(task, &st->now);
	__sync_fetch_and_add(&moves_settled, 1);
	return 0;
}

static __always_inline struct cpu_state *enter(void)
{
	__u32 zero = 0;
	struct cpu_state *st = bpf_map_lookup_elem(&cpu_states, &zero);

	if (!st)
		return NULL;
	if (st->busy) {
		st->recheck = 1;
		return NULL;
	}
	st->busy = 1;
	return st;
}

static __always_inline void leave(struct cpu_state *st)
{
	/* A move check that landed inside this run: do it now. */
	if (st->recheck) {
		st->recheck = 0;
		check_move(st);
	}
	st->busy = 0;
}

/* Whether the switch to next needs nothing read, told without resolving
 * it: next is in the very cgroup the CPU's set was walked for, at the
 * counted cgroups' current generation, no link can count it (the filter
 * holds none for its tid or tgid), the outgoing set has no task target,
 * and the CPU settled in this clock tick. Most switches within a counted
 * cgroup are of this kind; the rest take the full resolve. */
static __always_inline int quick_same(const struct cpu_state *st, __u64 next)
{
	struct task_struct *t = as_task(next);

	if (st->now.ntargets ||
	    st->now.generation != *(volatile __u64 *)&generation ||
	    bpf_jiffies64() != st->settled_jiffies)
		return 0;
	if (task_cgroup(next)->kn->id != st->now.leaf)
		return 0;
	return !counted_tasks[t->pid & (TASK_FILTER_SIZE - 1)] &&
	       !counted_tasks[t->tgid & (TASK_FILTER_SIZE - 1)];
}

SEC("raw_tp/sched_switch")
int on_switch(__u64 *ctx)
{
	/* A real switch has an outgoing and an incoming task; a flush
	 * passes zeros. */
	__u64 prev = ctx[1], next = prev ? ctx[2] : 0, prev_leaf;
	struct cpu_state *st = enter();
	struct counted_set incoming = {};
	int owner = OWNER_NOW, credited;

	/* A flush that found the CPU busy (another process's flush of it
	 * may be under way there) asks its caller to try again. */
	if (!st)
		return prev ? 0 : 1;
	if (!next) {
		restart(st, 0);
		goto out;
	}
	if (!st->task) {
		owner = OWNER_HERE;
		prev_leaf = bpf_get_current_cgroup_id();
	} else if (st->task != prev) {
		prev_leaf = bpf_get_current_cgroup_id();
		owner = owner_after_hidden(st, prev, prev_leaf, 0);
	} else if (quick_same(st, next)) {
		/* The leaving task's set is the CPU's: so is the next's. */
		st->pending_switches++;
		st->last = st->now;
		st->last_task = prev;
		st->task = next;
		goto out;
	} else {
		prev_leaf = st->now.leaf;
	}
	resolve(next, &incoming);
	if (owner == OWNER_NOW && same_set(&st->now, &incoming) &&
	    bpf_jiffies64() == st->settled_jiffies) {
		/* Nothing to read: the time goes on to the same cgroups. */
		st->pending_switches++;
		st->pending_cgroup_switches += prev_leaf != incoming.leaf;
	} else {
		credited = settle(st, 1, prev_leaf != incoming.leaf, owner);
		if (owner != OWNER_NOW && st->task)
			count_stray(st, credited);
	}
	/* The task that leaves, with its set, should it come back
	 * unreported. */
	if (owner == OWNER_HERE)
		resolve(prev, &st->last);
	else if (owner == OWNER_NOW)
		st->last = st->now;
	st->last_task = prev;
	st->task = next;
	st->now = incoming;
out:
	leave(st);
	return 0;
}

static __always_inline int on_move_point(void)
{
	struct cpu_state *st = enter();

	if (st) {
		check_move(st);
		leave(st);
	}
	return 0;
}

/* Perf's cgroup controller calls a function on a moved task's CPU, where
 * the task runs (an IPI; a local call when it moves itself). */
SEC("raw_tp/csd_function_entry")
int on_ipi(__u64 *ctx)
{
	return on_move_point();
}

/* Where the kernel has no csd tracepoints (before 6.4): the moves a task
 * makes itself are still settled at once; a running task moved by another
 * is settled at its next switch. */
SEC("raw_tp/cgroup_attach_task")
int on_attach(__u64 *ctx)
{
	return on_move_point();
}

/* A link for child, forked by parent, to parent's inherit target of
 * kind, if it has one: the child counts from its first instruction. */
static __always_inline void inherit_link(__u32 kind, __u32 parent_id,
					 struct task_struct *parent_starter,
					 __u32 child_id,
					 struct task_struct *child)
{
	struct task_link *from = link_of(kind, parent_id, parent_starter);
	struct task_link link = {.target = {NO_TARGET, NO_TARGET}};
	__u64 key = task_link_key(kind, child_id);

	if (!from || from->target[TARGET_INHERIT] == NO_TARGET)
		return;
	link.start_ticks = start_ticks(child);
	link.target[TARGET_INHERIT] = from->target[TARGET_INHERIT];
	if (!bpf_map_update_elem(&task_links, &key, &link, BPF_NOEXIST))
		__sync_fetch_and_add(
			&counted_tasks[child_id & (TASK_FILTER_SIZE - 1)], 1);
	/* A link left by an exited task whose id the child reuses. */
	else if (bpf_map_update_elem(&task_links, &key, &link, BPF_EXIST))
		__sync_fetch_and_add(&children_lost, 1);
}

/* A new thread is in its process's targets already; a thread of an
 * inherit task target, and a new process forked from an inherit process
 * target, get links of their own. Runs before the child first runs. */
SEC("raw_tp/sched_process_fork")
int on_fork(__u64 *ctx)
{
	struct task_struct *parent = as_task(ctx[0]), *child = as_task(ctx[1]);
	__u32 child_pid = child->pid, child_tgid = child->tgid;

	inherit_link(LINK_TID, parent->pid, parent, child_pid, child);
	if (child_pid == child_tgid)
		inherit_link(LINK_TGID, parent->tgid, parent->group_leader,
			     child_tgid, child);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
