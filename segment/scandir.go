package segment

import "context"

// ScanDir reads the log in dir without opening it for writing: it takes no
// lock, cuts nothing and creates nothing. It calls fn for every complete
// record with seq >= from, verifying checksums and the hash chain like
// Log.Scan. Use it to read a copy of a log, or a log another process owns.
func ScanDir(ctx context.Context, dir string, from uint64, fn func(Record) error) error {
	return scanDir(ctx, OSFS{}, dir, from, nil, fn)
}
