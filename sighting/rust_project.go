package sighting

func init() {
	Register("rust-project", func() Sighting { return &RustProject{} })
}

// RustProject answers a rust-project mark: the project's structure (every
// directory, except target/ and what .gitignore excludes) and its
// documentation and Cargo manifests. Source files appear in the listings
// but are not read: the mark orients, file-contents then targets.
type RustProject struct {
	Listings []DirectoryListing `json:"listings"`
	Contents []FileContents     `json:"contents"`
}

// Kind returns "rust-project".
func (*RustProject) Kind() string { return "rust-project" }
