// go_exec — a Go contender as a worker (contenders/README.md): what a Go user writes with os/exec.
// Small capture: exec.Command with Stdin a bytes.Reader, Output(). Streaming: Stdin a
// bytes.Reader (os/exec feeds it from a goroutine), StdoutPipe read by a bufio.Scanner line by
// line, then Wait. Fan-out: a goroutine per child, each a small capture, joined with a
// sync.WaitGroup. Spawn-only: Run() with the child given our own stdin, stdout and stderr. The
// program is named as a user would (exec.Command looks "cat" up in PATH per command). Each
// iteration is timed with time.Now/time.Since (the monotonic clock) around exactly the work; the
// protocol's greeting, requests and answers are the rest of this file. Go's os package raises the
// soft RLIMIT_NOFILE to the hard limit at start (Go 1.19), so a fan-out at scale (two pipe ends
// per child in flight) needs nothing here (tests/test_languages.c starts it low).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type setup struct {
	kind     string
	program  string
	children int
	input    []byte
	idleFds  int
	peakFds  int
}

type counts struct{ bytes, lines, children, failures uint64 }

func (c *counts) add(o counts) {
	c.bytes += o.bytes
	c.lines += o.lines
	c.children += o.children
	c.failures += o.failures
}

// exited tells a child that ran but did not exit 0 (a failure to count) from an error of ours.
func exited(err error) (uint64, error) {
	var exit *exec.ExitError
	if err == nil {
		return 0, nil
	}
	if errors.As(err, &exit) {
		return 1, nil
	}
	return 0, err
}

func capture(program string, input []byte) (counts, error) {
	cmd := exec.Command(program)
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	failed, err := exited(err)
	if err != nil {
		return counts{}, err
	}
	return counts{uint64(len(out)), uint64(bytes.Count(out, []byte{'\n'})), 1, failed}, nil
}

func stream(program string, input []byte) (counts, error) {
	cmd := exec.Command(program)
	cmd.Stdin = bytes.NewReader(input)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return counts{}, err
	}
	if err := cmd.Start(); err != nil {
		return counts{}, err
	}
	var c counts
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		c.bytes += uint64(len(sc.Bytes())) + 1
		c.lines++
	}
	if err := sc.Err(); err != nil {
		cmd.Wait()
		return counts{}, err
	}
	failed, err := exited(cmd.Wait())
	if err != nil {
		return counts{}, err
	}
	c.children, c.failures = 1, failed
	return c, nil
}

func fanOut(program string, input []byte, n int) (counts, error) {
	results := make([]counts, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = capture(program, input)
		}(i)
	}
	wg.Wait()
	var total counts
	for i := range results {
		if errs[i] != nil {
			return counts{}, errs[i]
		}
		total.add(results[i])
	}
	return total, nil
}

func spawnOnly(program string) (counts, error) {
	cmd := exec.Command(program)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	failed, err := exited(cmd.Run())
	if err != nil {
		return counts{}, err
	}
	return counts{0, 0, 1, failed}, nil
}

func iterate(s *setup) (counts, error) {
	switch s.kind {
	case "capture":
		return capture(s.program, s.input)
	case "stream":
		return stream(s.program, s.input)
	case "fan_out":
		return fanOut(s.program, s.input, s.children)
	default:
		return spawnOnly(s.program)
	}
}

func openFds() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

// probeFds: the descriptors before a fan-out and with all its children started (untimed).
func probeFds(s *setup) error {
	s.idleFds = openFds()
	cmds := make([]*exec.Cmd, s.children)
	stdins := make([]io.WriteCloser, s.children)
	stdouts := make([]io.ReadCloser, s.children)
	for i := range cmds {
		cmds[i] = exec.Command(s.program)
		var err error
		if stdins[i], err = cmds[i].StdinPipe(); err != nil {
			return err
		}
		if stdouts[i], err = cmds[i].StdoutPipe(); err != nil {
			return err
		}
		if err := cmds[i].Start(); err != nil {
			return err
		}
	}
	s.peakFds = openFds() // every child started, none fed yet: all in flight
	for i, c := range cmds {
		stdins[i].Write(s.input)
		stdins[i].Close()
		io.Copy(io.Discard, stdouts[i])
		c.Wait()
	}
	return nil
}

// ---- the protocol ---------------------------------------------------------------------------

func decode(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			if x, err := strconv.ParseUint(v[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(x))
				i += 2
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func fields(line string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(line)[1:] {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k] = decode(v)
		}
	}
	return m
}

func newSetup(line string) (*setup, error) {
	f := fields(line)
	s := &setup{kind: f["kind"], program: f["program"]}
	switch s.kind {
	case "capture", "stream", "fan_out", "spawn_only":
	default:
		return nil, fmt.Errorf("unknown kind %q", s.kind)
	}
	n, err := strconv.Atoi(f["children"])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("children=%q is not a count", f["children"])
	}
	s.children = n
	if file := f["input_file"]; file != "" && file != "-" {
		if s.input, err = os.ReadFile(file); err != nil {
			return nil, err
		}
	}
	if s.kind == "fan_out" {
		if err := probeFds(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func rusageNs(who int) uint64 {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return uint64(ru.Utime.Nano() + ru.Stime.Nano())
}

func vmHWM() uint64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			v := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), "kB")
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func runBatch(s *setup, k uint64) (string, error) {
	if s.kind == "fan_out" {
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM from here on
	}
	c0, s0 := rusageNs(syscall.RUSAGE_CHILDREN), rusageNs(syscall.RUSAGE_SELF)
	var ns uint64
	var total counts
	for i := uint64(0); i < k; i++ {
		t0 := time.Now()
		c, err := iterate(s)
		ns += uint64(time.Since(t0).Nanoseconds())
		if err != nil {
			return "", err
		}
		total.add(c)
	}
	c1, s1 := rusageNs(syscall.RUSAGE_CHILDREN), rusageNs(syscall.RUSAGE_SELF)
	if ns == 0 {
		ns = 1
	}
	line := fmt.Sprintf("done %d ns=%d bytes=%d lines=%d children=%d failures=%d cpu_children_ns=%d cpu_self_ns=%d",
		k, ns, total.bytes, total.lines, total.children, total.failures, c1-c0, s1-s0)
	if s.kind == "fan_out" {
		line += fmt.Sprintf(" peak_rss_kib=%d idle_fds=%d peak_fds=%d", vmHWM(), s.idleFds, s.peakFds)
	}
	return line, nil
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	say := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	say("pkw 1 name=go_exec runtime=" + runtime.Version() + " kinds=capture,stream,fan_out,spawn_only")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	var s *setup
	for in.Scan() {
		line := in.Text()
		word, rest, _ := strings.Cut(line, " ")
		var answer string
		var err error
		switch word {
		case "setup":
			s, err = newSetup(line)
			answer = "ok"
		case "run":
			k, perr := strconv.ParseUint(rest, 10, 64)
			switch {
			case s == nil:
				err = errors.New("run before setup")
			case perr != nil || k == 0:
				err = fmt.Errorf("bad request: %s", line)
			default:
				answer, err = runBatch(s, k)
			}
		case "teardown":
			s, answer = nil, "ok"
		case "quit":
			return
		default:
			err = fmt.Errorf("unknown request: %s", line)
		}
		if err != nil {
			say("error " + strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			say(answer)
		}
	}
}
