package storetest_test

import (
	"testing"

	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/storetest"
)

// The store on disk that tests of a shared home use passes the
// conformance suite.
func TestDirConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() store.Store {
		root := t.TempDir()
		return func() store.Store { return storetest.OpenDir(root, nil) }
	})
}
