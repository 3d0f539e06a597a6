package segment

import "context"

// ScanDir reads the log in dir without opening it for writing: it takes no
// lock, cuts nothing and creates nothing. It calls fn for every complete
// record with seq >= from, verifying checksums and the hash chain like
// Log.Scan. Use it to read a copy of a log, or a log another process owns.
func ScanDir(ctx context.Context, dir string, from uint64, fn func(Record) error) error {
	return scanDir(ctx, OSFS{}, dir, from, nil, fn)
}

// ScanDirTail is ScanDir that also reports the torn final unit the scan
// stopped at (nil: the log ends on a complete unit): a copy of a log
// taken while a write was in progress, or cut short. Like ScanDir it
// cuts nothing and writes nothing; the Cut says what a writer opening
// the log would cut (SavedTo is empty).
func ScanDirTail(ctx context.Context, dir string, from uint64, fn func(Record) error) (*Cut, error) {
	t, err := scanDirTail(ctx, OSFS{}, dir, from, nil, fn)
	if err != nil || t == nil {
		return nil, err
	}
	return &Cut{File: t.file, Offset: t.off, Bytes: t.size - t.off}, nil
}
