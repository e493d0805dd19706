// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"libshpmu/shpmu"
)

// TestMain runs the test binary as shpmu-top itself where SHPMU_TOP_MAIN
// is 1, so that a test sees its exit status and output as a user does.
func TestMain(m *testing.M) {
	if os.Getenv("SHPMU_TOP_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shpmuTop runs shpmu-top with args: its exit status, stdout and stderr.
func shpmuTop(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SHPMU_TOP_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// cgroupRoot gives the cgroup mount the library uses, or skips.
func cgroupRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes cgroups and counts them")
	}
	ctx, err := shpmu.New(nil)
	if err != nil {
		t.Skip("no shpmu context here:", err)
	}
	defer ctx.Close()
	root, err := ctx.CgroupRoot()
	if err != nil {
		t.Skip("no cgroup hierarchy:", err)
	}
	return root
}

// lastBlock gives the rate column of each row of the last refresh in out,
// by path.
func lastBlock(t *testing.T, out string) (order []string, rates map[string]string) {
	t.Helper()
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	lines := strings.Split(blocks[len(blocks)-1], "\n")
	if len(blocks) != 3 || len(lines) < 2 {
		t.Fatalf("want 3 refreshes, got:\n%s", out)
	}
	rates = map[string]string{}
	for _, l := range lines[2:] { // after the header and the column titles
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("bad row %q in:\n%s", l, out)
		}
		order = append(order, f[1])
		rates[f[1]] = f[0]
	}
	return order, rates
}

func TestBusyCgroupTopsIdleOne(t *testing.T) {
	root := cgroupRoot(t)
	dir := filepath.Join(root, fmt.Sprintf("shpmu-top-test-%d", os.Getpid()))
	dirs := []string{dir, dir + "/busy", dir + "/idle"}
	t.Cleanup(func() {
		for i := len(dirs) - 1; i >= 0; i-- {
			rmdir(t, dirs[i])
		}
	})
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Cleanups run last first: the burner goes before its cgroup.
	burner := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { burner.Process.Kill(); burner.Wait() })
	pid := []byte(strconv.Itoa(burner.Process.Pid))
	if err := os.WriteFile(dir+"/busy/cgroup.procs", pid, 0); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	args := []string{"-root", dir, "-n", "3", "-i", "300ms", "-e", "task-clock"}
	ran0, wall0 := cpuTime(t, burner.Process.Pid), time.Now()
	if err := run(args, &buf, nil); err != nil {
		t.Fatal(err)
	}
	ranNs := time.Duration(cpuTime(t, burner.Process.Pid) - ran0)
	wall := time.Since(wall0)
	order, rates := lastBlock(t, buf.String())
	// "." is the test cgroup itself, counting busy too: it may come
	// before or after busy.
	at := map[string]int{}
	for i, p := range order {
		at[p] = i
	}
	if len(order) != 3 || at["busy"] > at["idle"] || order[2] != "idle" {
		t.Fatalf("want ., busy and idle, idle last, got:\n%s", buf.String())
	}
	// One burner keeps one CPU busy: 100% on an idle machine; a shared
	// one gives it what it gives, which may change from one interval to
	// the next. So the intervals' rates together are held to the CPU time
	// the scheduler gave the burner over the run: not above it, and below
	// it by no more than the run's time outside the intervals (its start)
	// could hold. 10% and 30 ms either way: the intervals are timed in
	// user space, a little off the kernel's.
	const interval = 0.3
	counted := 0.0
	for _, line := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[1] == "busy" {
			r, err := strconv.ParseFloat(f[0], 64)
			if err != nil || r < 0 || r > 110 {
				t.Fatalf("busy at %q%% CPU:\n%s", f[0], buf.String())
			}
			counted += r / 100 * interval
		}
	}
	given := ranNs.Seconds()
	outside := wall.Seconds() - 3*interval
	if counted > given*1.1+0.03 || counted < (given-outside)*0.9-0.03 {
		t.Errorf("busy for %.3f s in the intervals, the burner ran %.3f "+
			"s in %.3f s:\n%s", counted, given, wall.Seconds(),
			buf.String())
	}
	if busy, _ := strconv.ParseFloat(rates["busy"], 64); busy <= 0 &&
		given > outside+2*interval {
		t.Errorf("busy at 0%% CPU:\n%s", buf.String())
	}
	if rates["idle"] != "0.0" {
		t.Errorf("idle at %s%% CPU, want 0:\n%s", rates["idle"], buf.String())
	}
}

// cpuTime is the CPU time the scheduler gave process pid so far
// (/proc/PID/schedstat's first field), in ns.
func cpuTime(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no /proc/PID/schedstat here (a kernel without " +
			"CONFIG_SCHED_INFO): the burner's CPU time is unknown")
	}
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		t.Fatalf("/proc/%d/schedstat: %q", pid, b)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// rmdir removes a cgroup directory if it is there. A cgroup whose last
// task was just reaped may still be busy for a moment: retry for a while.
func rmdir(t *testing.T, dir string) {
	for i := 0; ; i++ {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if !errors.Is(err, syscall.EBUSY) || i == 100 {
			t.Error(err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBadInput(t *testing.T) {
	root := cgroupRoot(t)
	var buf bytes.Buffer
	err := run([]string{"-e", "no-such-event", "-n", "1"}, &buf, nil)
	if !errors.Is(err, syscall.ENOENT) {
		t.Errorf("unknown event: got %v, want ENOENT", err)
	}
	missing := filepath.Join(root, fmt.Sprintf("shpmu-top-none-%d", os.Getpid()))
	if err := run([]string{"-root", missing, "-n", "1"}, &buf, nil); err == nil {
		t.Errorf("-root %s: no error", missing)
	}
	for _, args := range [][]string{{"-no-such-flag"}, {"-i", "0"},
		{"-backend", "gpu"}, {"extra"}} {
		var ue usageError
		if err := run(args, &buf, nil); !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("refreshes printed on bad input:\n%s", buf.String())
	}
}

// What issue 41's new user tripped over, run as a user runs shpmu-top: a
// misspelt event said as shpmu-stat says it, a -root that is not there
// with the full path tried and what -root is relative to, and the exit
// statuses.
func TestNewUserMistakes(t *testing.T) {
	mount := cgroupRoot(t)
	rc, out, errs := shpmuTop(t, "-e", "bogus", "-n", "1")
	if want := "shpmu-top: event 'bogus': event not found (shpmu-top -list shows what this machine has)\n"; rc != 1 || out != "" || errs != want {
		t.Errorf("-e bogus: exit %d, stdout %q, stderr %q; want 1 and %q", rc, out, errs, want)
	}
	missing := fmt.Sprintf("/shpmu-top-none-%d", os.Getpid())
	rc, out, errs = shpmuTop(t, "-root", missing, "-n", "1")
	tried := filepath.Join(mount, missing)
	if rc != 1 || out != "" || !strings.Contains(errs, "no cgroup "+tried+" ") ||
		!strings.Contains(errs, "under the cgroup mount "+mount) {
		t.Errorf("-root %s: exit %d, stdout %q, stderr %q; want 1, the path %s and the mount", missing, rc, out, errs, tried)
	}
	rc, out, _ = shpmuTop(t, "-list")
	if rc != 0 || !strings.Contains(out, "\n") {
		t.Errorf("-list: exit %d, stdout %q; want 0 and the events", rc, out)
	}
	if rc, _, errs = shpmuTop(t, "-h"); rc != 0 || !strings.Contains(errs, "-root") {
		t.Errorf("-h: exit %d, %q; want 0 and the usage", rc, errs)
	}
	if rc, _, _ = shpmuTop(t, "-no-such-flag"); rc != 2 {
		t.Errorf("-no-such-flag: exit %d, want 2", rc)
	}
}

// The root cgroup's task-clock holds every CPU's idle time: it is shown
// apart, last and labelled, never ranked as the busiest cgroup.
func TestRootShownApart(t *testing.T) {
	cgroupRoot(t)
	rc, out, errs := shpmuTop(t, "-root", "/", "-depth", "1", "-n", "1", "-i", "300ms")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if rc != 0 || len(lines) < 3 {
		t.Fatalf("exit %d, stdout %q, stderr %q", rc, out, errs)
	}
	last := lines[len(lines)-1]
	const label = "  / (the root cgroup, not ranked: every task, and every CPU's idle time)"
	if !strings.HasSuffix(last, label) {
		t.Errorf("last line %q: want the root, labelled:\n%s", last, out)
	}
	for _, l := range lines[2 : len(lines)-1] {
		if f := strings.Fields(l); len(f) != 2 || f[1] == "." || f[1] == "/" {
			t.Errorf("ranked row %q: want a cgroup below the root:\n%s", l, out)
		}
	}
	// Busy or idle, each CPU's time is the root's: about 100% a CPU
	// (the interval is measured in user space, a little off the
	// kernel's).
	rate, err := strconv.ParseFloat(strings.Fields(last)[0], 64)
	if min := 75.0 * float64(runtime.NumCPU()); err != nil || rate < min {
		t.Errorf("the root at %q%% CPU, want at least %.0f:\n%s", strings.Fields(last)[0], min, out)
	}
}
