package load

import "syscall"

// killPID sends SIGKILL to pid's process group (the hub and anything it
// started; proc starts each child in a group of its own).
func killPID(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
