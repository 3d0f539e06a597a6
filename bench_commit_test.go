package helm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// BenchmarkCommitNoSync measures the commit path's own cost per event,
// without fsync (Options.NoSync): a note, a small observation (a new
// ~100-byte artifact stowed in the log) and a bearing (after a small
// observation, not timed apart). Run with -benchmem and -cpuprofile to
// see what one event costs beyond the disk.
func BenchmarkCommitNoSync(b *testing.B) {
	ctx := context.Background()
	for _, kind := range []string{"note", "observation", "bearing"} {
		b.Run(kind, func(b *testing.B) {
			h, err := helm.Open(b.TempDir(), &helm.Options{NoSync: true})
			require.NoError(b, err)
			v, err := h.Start(ctx, "bench", helm.OpenWaters, who, nil)
			require.NoError(b, err)
			defer v.Close()
			observe := func(i int) {
				_, err := v.Observe(ctx, &note{Topic: fmt.Sprint("file", i%8), Text: fmt.Sprintf("package cpu\n\n// Version %d of this file.\nfunc F%d() int { return %d }\n", i, i, 7*i)}, who, nil)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				switch kind {
				case "note":
					_, err = v.Note(ctx, fmt.Sprintf("Note %d: the parser keeps its state in the scanner; the lock is taken before the flush.", i), who)
				case "observation":
					observe(i)
				case "bearing":
					b.StopTimer()
					observe(i)
					b.StartTimer()
					_, err = v.TakeBearing(ctx, fmt.Sprintf("Reading %d: the scanner holds the lock until the flush.", i), who, nil)
				}
				require.NoError(b, err)
			}
		})
	}
}
