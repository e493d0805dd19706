// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

/*
#include <stdlib.h>
#include <shpmu/shpmu.h>
*/
import "C"

import "unsafe"

// TargetKind says what a Target counts.
type TargetKind int

const (
	TargetTask    TargetKind = C.SHPMU_TARGET_TASK    // one thread
	TargetCPU     TargetKind = C.SHPMU_TARGET_CPU     // one CPU or all CPUs
	TargetCgroup  TargetKind = C.SHPMU_TARGET_CGROUP  // a cgroup and its descendants
	TargetProcess TargetKind = C.SHPMU_TARGET_PROCESS // every thread of a process
)

// Target is the thing a handle counts. The zero value counts the calling
// OS thread on any CPU; make others with Task, Process, CPU,
// AllCPUsTarget, Cgroup or CgroupByID, or set Kind and the fields it
// uses. Each kind counts on every CPU unless BindCPU is set.
type Target struct {
	Kind TargetKind
	// PID is a task's tid or a process's pid; 0 is the calling OS
	// thread (Task) or the calling process (Process).
	PID int
	// BindCPU limits counting to CPU: a task or process only while it
	// runs there, a CPU or cgroup target on that CPU alone. Without it
	// tasks and processes count on any CPU, and CPU and cgroup targets
	// on all online CPUs.
	BindCPU bool
	CPU     int
	// CgroupID names a cgroup by id (its inode number on cgroup2);
	// when 0, CgroupPath names it, absolute or relative to the root.
	CgroupID   uint64
	CgroupPath string
}

// Task counts one thread (tid 0: the calling OS thread) on any CPU.
func Task(tid int) Target { return Target{Kind: TargetTask, PID: tid} }

// Process counts every thread of a process (pid 0: this one), present and
// future, on any CPU.
func Process(pid int) Target { return Target{Kind: TargetProcess, PID: pid} }

// CPU counts everything that runs on one CPU.
func CPU(cpu int) Target { return Target{Kind: TargetCPU, BindCPU: true, CPU: cpu} }

// AllCPUsTarget counts everything that runs on any online CPU.
func AllCPUsTarget() Target { return Target{Kind: TargetCPU} }

// Cgroup counts a cgroup and its descendants, by path, on all CPUs.
func Cgroup(path string) Target {
	return Target{Kind: TargetCgroup, CgroupPath: path}
}

// CgroupByID counts a cgroup and its descendants, by id, on all CPUs.
func CgroupByID(id uint64) Target { return Target{Kind: TargetCgroup, CgroupID: id} }

// cTarget is a Target in the library's form; free releases its path.
type cTarget struct{ t C.struct_shpmu_target }

func (t Target) toC() (*cTarget, error) {
	ct := &cTarget{}
	if t.PID < -1<<31 || t.PID >= 1<<31 ||
		(t.BindCPU && (t.CPU < 0 || t.CPU >= 1<<31)) {
		return nil, errInvalid("target", "PID or CPU out of range")
	}
	if err := checkCString("target", "cgroup path", t.CgroupPath, true); err != nil {
		return nil, err
	}
	ct.t.kind = uint32(t.Kind)
	ct.t.pid = C.pid_t(t.PID)
	// The zero C target counts everywhere; one CPU is asked for.
	if t.BindCPU {
		ct.t.cpu = C.int(t.CPU)
		ct.t.flags = C.SHPMU_TARGET_BIND_CPU
	}
	ct.t.cgroup_id = C.uint64_t(t.CgroupID)
	if t.Kind == TargetCgroup && t.CgroupID == 0 {
		ct.t.cgroup_path = C.CString(t.CgroupPath)
	}
	return ct, nil
}

func (ct *cTarget) free() { C.free(unsafe.Pointer(ct.t.cgroup_path)) }
