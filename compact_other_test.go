//go:build !unix

package helm_test

import "os"

func allocatedBytes(os.FileInfo) int64 { return 0 }
