package durable

import "os"

// syncFile is FlushFileBuffers. Windows cannot flush a directory handle
// (NTFS journals the entries itself): Sync of a directory returns nil.
func syncFile(f *os.File) error {
	err := f.Sync()
	if err != nil {
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}
