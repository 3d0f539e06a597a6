package store_test

import (
	"testing"

	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/storetest"
)

// The store of a home on disk passes the conformance suite.
func TestDirConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() store.Store {
		root := t.TempDir()
		return func() store.Store { return store.OpenDir(root, nil) }
	})
}
