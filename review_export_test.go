package helm

// OptionsWithSnapshotEvery returns Options under which a closing writer
// writes a voyage's snapshot once n events were folded since the last,
// for a test outside the package that damages one.
func OptionsWithSnapshotEvery(n uint64) *Options { return &Options{NoSync: true, snapshotEvery: n} }
