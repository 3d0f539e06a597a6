package sighting

func init() {
	Register("go-project", func() Sighting { return &GoProject{} })
}

// GoProject answers a go-project mark: the project's structure, its
// documentation, the facts of every go.mod in the tree, and each package's
// name and doc comment. Function bodies are never read.
type GoProject struct {
	Listings []DirectoryListing `json:"listings"`
	Contents []FileContents     `json:"contents"`
	Modules  []GoModule         `json:"modules"`
	Packages []GoPackage        `json:"packages"`
}

// Kind returns "go-project".
func (*GoProject) Kind() string { return "go-project" }

// GoModule holds the facts of one go.mod file. File is its path relative to
// the project root. When the file cannot be read or parsed, Error says why
// and the other facts are empty.
type GoModule struct {
	File      string      `json:"file"`
	Module    string      `json:"module,omitempty"`
	Go        string      `json:"go,omitempty"`
	Toolchain string      `json:"toolchain,omitempty"`
	Requires  []GoRequire `json:"requires,omitzero"`
	Replaces  []GoReplace `json:"replaces,omitzero"`
	Error     string      `json:"error,omitempty"`
}

// GoRequire is one require directive.
type GoRequire struct {
	Path     string `json:"path"`
	Version  string `json:"version"`
	Indirect bool   `json:"indirect,omitempty"`
}

// GoReplace is one replace directive; OldVersion is empty when the
// replacement applies to every version, NewVersion when New is a directory.
type GoReplace struct {
	Old        string `json:"old"`
	OldVersion string `json:"old_version,omitempty"`
	New        string `json:"new"`
	NewVersion string `json:"new_version,omitempty"`
}

// GoPackage is one package: the directory holding it (relative to the
// project root), its name, and its doc comment (empty when it has none).
// Test files are not consulted. Error reports a file whose package clause
// could not be parsed.
type GoPackage struct {
	Dir   string `json:"dir"`
	Name  string `json:"name"`
	Doc   string `json:"doc,omitempty"`
	Error string `json:"error,omitempty"`
}
