// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"libshpmu/shpmu"
)

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
	if err := run(args, &buf, nil); err != nil {
		t.Fatal(err)
	}
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
	// One burner keeps one CPU busy: 100%. The machine has 2 CPUs and may
	// be shared, so the burner may get much less than a CPU; and the
	// interval is measured in user space, a little off the kernel's.
	busy, err := strconv.ParseFloat(rates["busy"], 64)
	if err != nil || busy < 30 || busy > 110 {
		t.Errorf("busy at %s%% CPU, want 30 to 110:\n%s", rates["busy"], buf.String())
	}
	if rates["idle"] != "0.0" {
		t.Errorf("idle at %s%% CPU, want 0:\n%s", rates["idle"], buf.String())
	}
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
