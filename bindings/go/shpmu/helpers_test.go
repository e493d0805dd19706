// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package shpmu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestMain skips the package, saying why in one line, where this process
// may not count itself (perf_event_paranoid, a seccomp filter): every test
// and example opens perf events.
func TestMain(m *testing.M) {
	a := rawAttr{Type: TypeSoftware, Size: uint32(unsafe.Sizeof(rawAttr{})),
		Config: SWTaskClock}
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN,
		uintptr(unsafe.Pointer(&a)), 0, ^uintptr(0), ^uintptr(0),
		perfFlagCloexec, 0)
	if errno != 0 {
		fmt.Printf("skipped: perf_event_open(task-clock) of this process: "+
			"%v (see /proc/sys/kernel/perf_event_paranoid)\n", errno)
		os.Exit(0)
	}
	syscall.Close(int(fd))
	os.Exit(m.Run())
}

// needRoot skips a test that makes cgroups or counts other processes.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes cgroups and counts other processes")
	}
}

func newContext(t testing.TB, opts *Options) *Context {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v (%s)", err, explanation(err))
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func explanation(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Explanation
	}
	return ""
}

func sw(config uint64, disabled bool) Attr {
	return Attr{Type: TypeSoftware, Config: config, Disabled: disabled}
}

func open(t testing.TB, c *Context, a Attr, tg Target) *Handle {
	t.Helper()
	h, err := c.Open(a, tg)
	if err != nil {
		t.Fatalf("Open(%+v, %+v): %v (%s)", a, tg, err, explanation(err))
	}
	return h
}

func read(t testing.TB, h *Handle) Count {
	t.Helper()
	c, err := h.Read()
	if err != nil {
		t.Fatalf("Read: %v (%s)", err, explanation(err))
	}
	return c
}

// child is a single-threaded process (dash) that waits for a line on its
// stdin, then does the work of script and exits: it counts nothing before
// go, so every window opened while it waits sees the same work.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

// workScript says it is ready, waits, then loops (CPU), grows a string
// (page faults) and forks sleeps (switches).
const workScript = `echo ready; read x
i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done
x=a; k=0; while [ $k -lt 18 ]; do x="$x$x"; k=$((k+1)); done
for j in 1 2 3 4 5 6 7 8; do sleep 0.002; done`

func spawn(t testing.TB) *child {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", workScript)
	// Its own process group, so that cleanup also ends a sleep it forked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, in: in}
	t.Cleanup(func() {
		if ch.cmd.ProcessState == nil {
			syscall.Kill(-ch.cmd.Process.Pid, syscall.SIGKILL)
			ch.cmd.Wait()
		}
	})
	ready := make([]byte, 6)
	if _, err := io.ReadFull(out, ready); err != nil {
		t.Fatalf("the child did not start: %v", err)
	}
	ch.waitAsleep(t)
	return ch
}

// waitAsleep waits until the child sleeps in its read: after "ready" it
// is the only place where it sleeps.
func (ch *child) waitAsleep(t testing.TB) {
	t.Helper()
	stat := fmt.Sprintf("/proc/%d/stat", ch.pid())
	for i := 0; i < 5000; i++ {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command's closing parenthesis.
		if at := bytes.LastIndexByte(b, ')'); at > 0 &&
			at+2 < len(b) && b[at+2] == 'S' {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the child never went to sleep in its read")
}

func (ch *child) pid() int { return ch.cmd.Process.Pid }

// run lets the child work and waits for it to exit.
func (ch *child) run(t testing.TB) {
	t.Helper()
	if _, err := ch.in.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	ch.in.Close()
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("the child failed: %v", err)
	}
}

// rawAttr is perf_event_attr up to config2 (PERF_ATTR_SIZE_VER1, which
// every kernel takes): the test's private raw events are independent of
// the library and its binding.
type rawAttr struct {
	Type, Size                                   uint32
	Config, SamplePeriod, SampleType, ReadFormat uint64
	Flags                                        uint64
	WakeupEvents, BpType                         uint32
	Config1, Config2                             uint64
}

const (
	rawDisabled     = 1 << 0
	rawReadTimes    = 1 | 2 // TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
	perfFlagCgroup  = 1 << 2
	perfFlagCloexec = 1 << 3
	iocEnable       = 0x2400
	iocDisable      = 0x2401
)

// rawFD is a private perf event opened with perf_event_open(2) itself.
type rawFD int

func rawOpen(t testing.TB, config uint64, pid, cpu int, flags uintptr) rawFD {
	t.Helper()
	a := rawAttr{Type: TypeSoftware, Size: uint32(unsafe.Sizeof(rawAttr{})),
		Config: config, ReadFormat: rawReadTimes, Flags: rawDisabled}
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN,
		uintptr(unsafe.Pointer(&a)), uintptr(pid), uintptr(cpu),
		^uintptr(0), flags|perfFlagCloexec, 0)
	if errno != 0 {
		t.Fatalf("perf_event_open(config %d, pid %d, cpu %d): %v",
			config, pid, cpu, errno)
	}
	r := rawFD(fd)
	t.Cleanup(func() { syscall.Close(int(r)) })
	return r
}

func (r rawFD) ioctl(t testing.TB, req uintptr) {
	t.Helper()
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(r), req,
		0); errno != 0 {
		t.Fatalf("ioctl %#x: %v", req, errno)
	}
}

func (r rawFD) value(t testing.TB) uint64 {
	t.Helper()
	var buf [24]byte
	if n, err := syscall.Read(int(r), buf[:]); err != nil || n != 24 {
		t.Fatalf("read of a raw fd: %d bytes, %v", n, err)
	}
	return binary.LittleEndian.Uint64(buf[:8])
}

// rawSet is one raw event per CPU (a CPU or cgroup target) or one (a task).
type rawSet []rawFD

func (s rawSet) enable(t testing.TB) {
	for _, r := range s {
		r.ioctl(t, iocEnable)
	}
}

func (s rawSet) disable(t testing.TB) {
	for _, r := range s {
		r.ioctl(t, iocDisable)
	}
}

func (s rawSet) value(t testing.TB) uint64 {
	var sum uint64
	for _, r := range s {
		sum += r.value(t)
	}
	return sum
}

func onlineCPUs(t testing.TB) []int {
	t.Helper()
	var cpus []int
	for cpu := 0; cpu < 4096; cpu++ {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d", cpu)
		if _, err := os.Stat(dir); err != nil {
			break
		}
		b, err := os.ReadFile(dir + "/online")
		if err == nil && len(b) > 0 && b[0] == '0' {
			continue
		}
		cpus = append(cpus, cpu)
	}
	return cpus
}

// rawCPUs opens config on every online CPU: everything there, or only a
// cgroup's tasks when cgroupFD >= 0.
func rawCPUs(t testing.TB, config uint64, cgroupFD int) rawSet {
	var s rawSet
	for _, cpu := range onlineCPUs(t) {
		if cgroupFD >= 0 {
			s = append(s, rawOpen(t, config, cgroupFD, cpu,
				perfFlagCgroup))
		} else {
			s = append(s, rawOpen(t, config, -1, cpu, 0))
		}
	}
	return s
}

var cgroupSerial atomic.Int32

// makeCgroup makes a cgroup under the context's root, removed when the
// test ends; it gives the absolute path.
func makeCgroup(t testing.TB, c *Context) string {
	t.Helper()
	root, err := c.CgroupRoot()
	if err != nil {
		t.Fatalf("CgroupRoot: %v", err)
	}
	dir := filepath.Join(root, "shpmu-go-"+strconv.Itoa(os.Getpid())+"-"+
		strconv.Itoa(int(cgroupSerial.Add(1))))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("making a cgroup: %v", err)
	}
	t.Cleanup(func() { removeCgroup(t, dir) })
	return dir
}

func moveTo(t testing.TB, cgroup string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cgroup, "cgroup.procs"),
		[]byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatalf("moving %d into %s: %v", pid, cgroup, err)
	}
}

// removeCgroup kills what is left in a cgroup (a test that failed early)
// and removes it; a cgroup whose last task just exited can stay busy
// for a moment.
func removeCgroup(t testing.TB, dir string) {
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	var err error
	for try := 0; try < 200; try++ {
		if err = syscall.Rmdir(dir); err != syscall.EBUSY {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("removing %s: %v", dir, err)
	}
}
