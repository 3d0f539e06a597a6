package helm

import "time"

// SetConflictBudget sets how long a change on a shared store goes on
// deciding again, for a test of one that gives up; it returns what
// restores it.
func SetConflictBudget(d time.Duration) func() {
	old := conflictBudget
	conflictBudget = d
	return func() { conflictBudget = old }
}
