package segment

import "github.com/helmlog/helm/internal/durable"

// FS is the file-system seam of a Log. It exists so tests can inject short
// writes, failing fsyncs and a full disk into exactly the calls a Log makes;
// production code leaves Options.FS nil and gets the operating system.
// It is internal/durable's seam, which every fsync, fdatasync, directory
// sync and preallocation write of helm goes through (see that package for
// what each call is on every platform).
//
// The advisory lock on dir/LOCK is always taken on the real file system.
type FS = durable.FS

// File is an open file of an FS. Sync is fsync (used for new files and
// directories); Datasync is fdatasync (used after appending records).
type File = durable.File

// OSFS is the operating system's file system.
type OSFS = durable.OSFS
