package durable

import "golang.org/x/sys/windows"

// FreeBytes returns the bytes available to the caller (quotas included) on
// the volume holding path (GetDiskFreeSpaceEx), or -1 when it cannot tell.
func FreeBytes(path string) int64 {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return -1
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return -1
	}
	return int64(min(avail, 1<<62))
}
