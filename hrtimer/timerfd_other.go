//go:build !linux

package hrtimer

import "errors"

func newTimerfdAlarm(*Clock) (alarm, error) { return nil, errors.New("timerfd: Linux only") }
