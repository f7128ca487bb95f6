package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// hookTimeout bounds each hook command.
const hookTimeout = 10 * time.Second

// maxHookOutput bounds what is kept of a hook's output.
const maxHookOutput = 4096

// errorf is fmt.Errorf (a short name for the one-sentence start errors).
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// runHooks runs the commands of hook key in order, with "%i" replaced by
// ifname in every argument and GMTUN_INTERFACE=ifname in the environment,
// each within timeout, and logs each with logf (its first output line
// too). It stops at the first failure and returns one
// sentence naming the command.
func runHooks(logf func(string, ...any), key, ifname string, cmds [][]string, timeout time.Duration) error {
	for i, argv := range cmds {
		args := make([]string, len(argv))
		for j, a := range argv {
			args[j] = strings.ReplaceAll(a, "%i", ifname)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "GMTUN_INTERFACE="+ifname)
		out := &capped{max: maxHookOutput}
		cmd.Stdout, cmd.Stderr = out, out
		setHookProcessGroup(cmd)
		cmd.WaitDelay = time.Second
		start := time.Now()
		err := cmd.Run()
		cancel()
		text := strings.TrimSpace(out.String())
		if err != nil {
			why := err.Error()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				why = fmt.Sprintf("did not finish within %v and was killed", timeout)
			}
			if first, _, _ := strings.Cut(text, "\n"); first != "" {
				why += ": " + first
			}
			return fmt.Errorf("%s command %d (%s) failed: %s", key, i+1, args[0], why)
		}
		if first, _, _ := strings.Cut(text, "\n"); first != "" {
			logf("%s: ran %s (%v): %s", key, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), first)
		} else {
			logf("%s: ran %s (%v)", key, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		}
	}
	return nil
}

// capped is a writer that keeps the first max bytes.
type capped struct {
	max int
	b   bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.b.String() }

// preUp runs before the TUN interface is created: the pre_up hooks, then
// the automatic MTU. An error aborts the start.
func (d *daemon) preUp() error {
	if err := runHooks(d.log.Infof, "pre_up", d.name, d.cfg.Interface.Hooks.PreUp, hookTimeout); err != nil {
		return fmt.Errorf("up: %w; not starting", err)
	}
	d.resolveMTU()
	return nil
}

// postUp runs the post_up hooks once the interface is up; an error aborts
// the start (which is then undone).
func (d *daemon) postUp() error {
	if err := runHooks(d.log.Infof, "post_up", d.name, d.cfg.Interface.Hooks.PostUp, hookTimeout); err != nil {
		return fmt.Errorf("up: %w; stopping", err)
	}
	return nil
}

// preDown runs the pre_down hooks at the beginning of the shutdown of a
// daemon that started; failures are logged.
func (d *daemon) preDown() {
	if d.started.IsZero() {
		return
	}
	if err := runHooks(d.log.Infof, "pre_down", d.name, d.cfg.Interface.Hooks.PreDown, hookTimeout); err != nil {
		d.log.Warnf("%v", err)
	}
}

// postDown runs the post_down hooks at the end of the shutdown of a daemon
// that started; failures are logged.
func (d *daemon) postDown() {
	if d.started.IsZero() {
		return
	}
	if err := runHooks(d.log.Infof, "post_down", d.name, d.cfg.Interface.Hooks.PostDown, hookTimeout); err != nil {
		d.log.Warnf("%v", err)
	}
}
