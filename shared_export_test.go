package helm

import "time"

// OptionsWithConflictBudget returns Options under which a change on a
// shared store goes on deciding again for d at most, for a test of one
// that gives up.
func OptionsWithConflictBudget(d time.Duration) *Options { return &Options{conflictBudget: d} }
