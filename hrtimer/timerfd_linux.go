package hrtimer

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdAlarm is an alarm on a Linux timerfd read through Go's network poller by a goroutine
// of its own; the file's read deadline is armed for the same instant (a busy scheduler runs
// timers more often than it polls), and whichever comes first wakes the reader.
type timerfdAlarm struct {
	fd   int // kept apart: os.File.Fd would put the file in blocking mode, off the poller
	file *os.File
}

func newTimerfdAlarm(c *Clock) (*timerfdAlarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	file := os.NewFile(uintptr(fd), "timerfd")
	// A file the poller cannot watch would block a thread in read with no deadline.
	if err := file.SetReadDeadline(time.Time{}); err != nil {
		file.Close()
		return nil, fmt.Errorf("timerfd is not pollable: %w", err)
	}
	a := &timerfdAlarm{fd: fd, file: file}
	go a.read(c)
	return a, nil
}

// read calls c.fire each time the timer expires or the deadline passes, until released; any
// other read error hands the clock over to Go timers.
func (a *timerfdAlarm) read(c *Clock) {
	var buf [8]byte
	for {
		_, err := a.file.Read(buf[:])
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			c.fallBack(a)
			return
		}
		if !c.fire(a) {
			return
		}
	}
}

func (a *timerfdAlarm) arm(due time.Time) {
	wait := time.Until(due)
	if wait <= 0 {
		wait = 1 // a zero it_value would disarm the timer
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(wait))}
	_ = unix.TimerfdSettime(a.fd, 0, &spec, nil)
	_ = a.file.SetReadDeadline(due)
}

func (a *timerfdAlarm) release() { _ = a.file.Close() }
