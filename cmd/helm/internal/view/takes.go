package view

import (
	"fmt"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// TakesChanges refuses a voyage that is not active, as the verbs do (an
// error matching helm.ErrVoyageCompleted, or helm.ErrVoyagePaused when it
// may be resumed), before anything in the world is touched for it: the
// command line and the MCP server's tools say so from the voyage's views;
// the verbs check again against the voyage's tail.
func TakesChanges(v *helm.Voyage) error {
	info := v.Info()
	var err error
	switch {
	case info.Status == logbook.StatusActive:
		return nil
	case info.Status.Resumable():
		err = fmt.Errorf("%w: it is %s (since %s): resume it first", helm.ErrVoyagePaused, info.Status, Stamp(info.CompletedAt))
	default:
		err = fmt.Errorf("%w (%s at %s)", helm.ErrVoyageCompleted, info.Status, Stamp(info.CompletedAt))
	}
	return &helm.VoyageError{Op: "check that the voyage takes changes", Voyage: info.ID, Err: err}
}
