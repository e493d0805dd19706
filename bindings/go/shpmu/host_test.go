// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"path/filepath"
	"syscall"
	"testing"
)

// mountBPFFS mounts a BPF filesystem of the test's own (each mount is its
// own instance), unmounted when the test ends.
func mountBPFFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Fatalf("mounting a BPF filesystem on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// Two host-scope contexts of one domain count one cgroup with the
// domain's events: each sees the child's work exactly as the other (both
// windows opened while it slept), and as classic cgroup events within
// the BPF backend's tolerance.
func TestHostScopeContextsShareADomain(t *testing.T) {
	needRoot(t)
	opts := &Options{Scope: ScopeHost, Backend: BackendBPF,
		BPFFSDir: filepath.Join(mountBPFFS(t), "shpmu"), Domain: "go-test"}
	a := newContext(t, opts)
	b := newContext(t, opts)
	classic := newContext(t, &Options{Backend: BackendPerf})
	dir := makeCgroup(t, classic)
	ch := spawn(t)
	moveTo(t, dir, ch.pid())
	ha := open(t, a, sw(SWContextSwitches, false), Cgroup(dir))
	hb := open(t, b, sw(SWContextSwitches, false), Cgroup(dir))
	hc := open(t, classic, sw(SWContextSwitches, false), Cgroup(dir))
	ch.run(t)
	ca, cb, cc := read(t, ha), read(t, hb), read(t, hc)
	if ca.Value != cb.Value {
		t.Errorf("two members of a domain: %d and %d switches",
			ca.Value, cb.Value)
	}
	if d := int64(ca.Value) - int64(cc.Value); d < -1 || d > 1 || cc.Value < 8 {
		t.Errorf("host scope %d switches, classic %d (at least 8, 1 apart)",
			ca.Value, cc.Value)
	}

	// A domain name the library refuses, and a directory that is not
	// on a BPF filesystem.
	bad, err := New(&Options{Scope: ScopeHost, Backend: BackendBPF,
		BPFFSDir: opts.BPFFSDir, Domain: ".hidden"})
	if bad != nil {
		bad.Close()
	}
	expectErrno(t, "a domain starting with '.'", err, syscall.EINVAL)
	bad, err = New(&Options{Scope: ScopeHost, Backend: BackendBPF,
		BPFFSDir: t.TempDir(), Domain: "go-test"})
	if bad != nil {
		bad.Close()
	}
	expectErrno(t, "host scope outside a BPF filesystem", err,
		syscall.ENOENT)
	if explanation(err) == "" {
		t.Errorf("no explanation for %v", err)
	}
}
