package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/tamper"
)

// The tamper matrix through the CLI (the library's is the root's
// TestTamperMatrix): the test is the recorded agent, forging the log with
// helm's own writer so every checksum, both chains and WATERMARK are
// recomputed, and removing the caches unless the case leaves them. What
// the threat model says a local check finds, `voyage verify` finds alone;
// the rest needs a witness: the commit's trailer in the repository, or
// the head the user kept (`voyage head`), and verify names it, exit 1.
func TestCLITamperMatrix(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		forge func(t *testing.T, h *harness, id string, last uint64)
		bare  bool // found without a witness
	}{
		{name: "a note's text", forge: func(t *testing.T, h *harness, id string, _ uint64) {
			_, err := tamper.Replace(ctx, h.Home, id, "DENIED by security", "PASSED by security")
			require.NoError(t, err)
		}},
		{name: "the last units dropped", forge: func(t *testing.T, h *harness, id string, last uint64) {
			require.NoError(t, tamper.Edit(ctx, h.Home, id, func(r tamper.Record) []byte {
				if r.Seq > last-2 {
					return nil
				}
				return r.Data
			}))
		}},
		{name: "an event turned into a stub no jettison names", bare: true, forge: func(t *testing.T, h *harness, id string, _ uint64) {
			recs, err := tamper.Read(ctx, h.Home, id)
			require.NoError(t, err)
			for _, r := range recs {
				if strings.Contains(string(r.Data), "DENIED by security") {
					require.NoError(t, tamper.Stub(ctx, h.Home, id, r.Seq))
					return
				}
			}
			t.Fatal("no record holds the note")
		}},
		{name: "events/ restored whole from an older copy, caches left", bare: true},
		{name: "events/ restored whole from an older copy, caches removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, id, repo, sha := witnessedVoyage(t)
			backup := t.TempDir() + "/events"
			restore := strings.HasPrefix(tc.name, "events/ restored")
			head := strings.TrimSpace(h.ok("voyage", "head"))
			h.ok("voyage", "verify", "--witness", repo, "--witness", head)
			var last uint64
			for _, c := range head[:strings.IndexByte(head, ':')] {
				last = last*10 + uint64(c-'0')
			}
			if restore {
				require.NoError(t, tamper.CopyDir(tamper.Events(h.Home, id), backup))
				// Written after the adversary's copy: a writer's command
				// writes the caches as it ends.
				h.ok("note", "Shipped.")
				h.ok("note", "Waiting for review.")
				head = strings.TrimSpace(h.ok("voyage", "head"))
				require.NoError(t, tamper.Restore(h.Home, id, backup))
			} else {
				tc.forge(t, h, id, last)
			}
			if !strings.HasSuffix(tc.name, "caches left") {
				require.NoError(t, tamper.DropCaches(h.Home, id))
			}

			if tc.bare {
				r := h.fails(1, "voyage", "verify", id)
				assert.NotEmpty(t, r.Stdout+r.Stderr)
			} else {
				h.ok("voyage", "verify", id) // alone, the forgery checks out: that is what witnesses are for
			}
			// Salvage, with the witnesses the user holds: it carries what
			// can be told intact into a voyage that verifies, or refuses
			// saying why; the damaged voyage is left as it was.
			dir := filepath.Join(h.Home, "voyages", id)
			before := filesOf(t, dir)
			args := []string{"voyage", "salvage", id, "--as", "bob"}
			if !strings.Contains(tc.name, "stub") {
				args = append(args, "--witness", repo, "--witness", head)
			}
			if rs := h.run(args...); rs.Code == 0 {
				saved := strings.TrimSpace(rs.Stdout)
				assert.Contains(t, rs.Stderr, "Salvaged voyage "+id)
				assert.Contains(t, h.ok("voyage", "verify", saved), "OK: nothing damaged")
			} else {
				assert.Equal(t, 1, rs.Code, "%s", rs)
				assert.Regexp(t, `nothing of voyage \S+ can be told intact before its damage`, rs.Stderr)
			}
			assert.Equal(t, before, filesOf(t, dir), "salvage leaves the damaged voyage untouched")
			if strings.Contains(tc.name, "stub") {
				return // the chain holds through a stub: the witnesses have nothing to say
			}
			r := h.fails(1, "voyage", "verify", id, "--witness", head)
			assert.Contains(t, r.Stdout, "witness the given head "+head, "verify names the witness\n%s", r)
			if !restore { // a rollback to after the commit keeps the commit's seq
				r = h.fails(1, "voyage", "verify", id, "--witness", repo)
				assert.Contains(t, r.Stdout, "witness commit "+sha, "verify names the commit")
			}
		})
	}
}
