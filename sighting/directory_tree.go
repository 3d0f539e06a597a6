package sighting

func init() {
	Register("directory-tree", func() Sighting { return &DirectoryTree{} })
}

// DirectoryTree answers a directory-tree mark: one listing per directory
// walked, parents before children, siblings in byte order of their names.
type DirectoryTree struct {
	Listings []DirectoryListing `json:"listings"`
}

// Kind returns "directory-tree".
func (*DirectoryTree) Kind() string { return "directory-tree" }
