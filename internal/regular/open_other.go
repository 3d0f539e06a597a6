//go:build !unix

package regular

import "os"

// openNoBlock opens path read-only and refuses anything but a regular
// file, checking the opened file's type. Systems without O_NONBLOCK for
// files have no FIFOs that block on open either: Windows' named pipes
// live in their own namespace (\\.\pipe\) and fail to open rather than
// wait.
func openNoBlock(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := checkRegular(path, info.Mode()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenDir opens a directory for listing.
func OpenDir(path string) (*os.File, error) { return os.Open(path) }
