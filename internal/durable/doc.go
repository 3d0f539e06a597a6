// Package durable is the one place where helm's storage touches the
// operating system's promises: every fsync, fdatasync, directory sync,
// file lock, preallocation write and free-space query that keeps
// "acknowledged means durable" and "writers are serialised" goes through
// it, per platform, behind build tags.
//
// It is named for that job, not for files in general: a helper that does
// not make bytes durable or serialise writers belongs with its caller.
//
// The seam (fs.go) is the FS and File interfaces: segment and the artifact
// pack open, write, read, truncate and sync their files through them, so a
// test can inject a short write, a failing fsync or a full disk into
// exactly the calls the code makes (raft-wal's VFS has the same job).
// OSFS is the production implementation. SyncDir makes a directory entry
// (a create or a rename) durable through an FS; WriteZeros preallocates
// through a File. Lock is a cross-process lock on a file; FreeBytes asks
// how much room a file system has;
// ReadFileAt reads a small file with as few system calls as the platform
// allows; IsNoSpace recognises a full disk or quota.
//
// What differs per platform:
//
//	                Linux              macOS (darwin)          Windows                    other unix
//	File.Datasync   fdatasync(2)       F_FULLFSYNC (File.Sync) FlushFileBuffers (Sync)    fsync(2) (Sync)
//	File.Sync       fsync(2)           F_FULLFSYNC             FlushFileBuffers           fsync(2)
//	SyncDir         fsync(dir)         F_FULLFSYNC(dir)        nothing (see below)        fsync(dir)
//	Lock            flock(2)           flock(2)                LockFileEx, 1 byte at 0    flock(2)
//	FreeBytes       statfs f_bavail    statfs f_bavail         GetDiskFreeSpaceEx         -1 (unknown)
//	ReadFileAt      open+pread+close   open+pread+close        os.Open+ReadAt+Close       open+pread+close
//	IsNoSpace       ENOSPC, EDQUOT     ENOSPC, EDQUOT          ERROR_DISK_FULL,           ENOSPC, EDQUOT
//	                                                           ERROR_HANDLE_DISK_FULL,
//	                                                           ERROR_DISK_QUOTA_EXCEEDED
//	OSFS.OpenFile   os.OpenFile        os.OpenFile             CreateFile sharing delete  os.OpenFile
//	WriteZeros      pwrite of zeros    pwrite of zeros         WriteFile of zeros         pwrite of zeros
//
// Why:
//   - macOS: fsync(2) hands the data to the drive but does not make the
//     drive write its cache, so a power cut can lose what fsync
//     acknowledged; only fcntl(F_FULLFSYNC) flushes it. Go's File.Sync
//     already issues F_FULLFSYNC on darwin (falling back to fsync where a
//     file system refuses it, such as SMB), so Datasync is File.Sync:
//     slower than Linux's fdatasync (milliseconds, not microseconds), but
//     the only call that keeps the promise. F_BARRIERFSYNC orders writes
//     without making them durable, so it is not used.
//   - Linux: fdatasync(2) skips the inode's timestamps but flushes the size
//     and every other piece of metadata needed to read the data back, so
//     after an append into preallocated space it is one data flush.
//   - Windows has no directory fsync: FlushFileBuffers refuses a
//     directory handle. NTFS journals its metadata, so a create or rename
//     is durable once the journal commits; SyncDir does nothing there
//     (SQLite does the same). A File opened on a directory returns nil from
//     Sync.
//   - Windows forbids renaming or removing a file that another handle holds
//     open unless every handle shares delete access, and Go's os.OpenFile
//     does not. segment renames a new segment while it holds it open, so
//     OSFS.OpenFile on Windows opens with FILE_SHARE_DELETE.
//   - Locks: flock and LockFileEx both lock per open file (two opens of
//     the same file in one process exclude each other) and are released
//     when the file is closed or the process dies. A LockFileEx lock is
//     mandatory for the locked byte, so a lock file must hold no data. A
//     Lock is taken either shared or exclusive; it is never converted.
//   - Free space is unknown on platforms other than Linux, macOS and
//     Windows: FreeBytes returns -1, and callers bound what they
//     preallocate by their own steps alone.
//
// Linux is where the storage engine is tested and measured; macOS and
// Windows are built and vetted in CI (GOOS=darwin and GOOS=windows go vet).
package durable
