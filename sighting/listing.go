package sighting

import (
	"strings"
	"unicode/utf8"
)

// DirectoryListing is what is at one directory of a walked tree. Path is
// relative to the tree's root, slash-separated, "." for the root itself; a
// flat list of listings encodes the tree through their paths.
//
// A directory that could not be read still has a listing: Error says why and
// Entries is empty. One unreadable directory never fails a walk.
type DirectoryListing struct {
	Path string `json:"path"`
	// RawPath holds the path's bytes when they are not valid UTF-8; Path
	// then shows them with U+FFFD in place of the invalid bytes.
	RawPath []byte           `json:"raw_path,omitzero"`
	Entries []DirectoryEntry `json:"entries"`
	Error   string           `json:"error,omitempty"`
}

// DirectoryEntry is one name in a directory listing.
type DirectoryEntry struct {
	Name string `json:"name"`
	// RawName holds the name's bytes when they are not valid UTF-8 (file
	// names are bytes on Unix); Name then shows them with U+FFFD.
	RawName []byte `json:"raw_name,omitzero"`
	IsDir   bool   `json:"is_dir"`
	// SizeBytes is the size of a regular file; nil for directories,
	// symbolic links and other special files.
	SizeBytes *uint64 `json:"size_bytes,omitzero"`
	// Symlink is the target of a symbolic link, as stored in the link.
	// Links are listed, never followed.
	Symlink string `json:"symlink,omitempty"`
	// Error says why the entry could not be examined (it vanished
	// mid-walk, for example).
	Error string `json:"error,omitempty"`
}

// FSName is the entry's name as the file system spells it: RawName when set,
// otherwise Name.
func (e DirectoryEntry) FSName() string {
	if e.RawName != nil {
		return string(e.RawName)
	}
	return e.Name
}

// TextName returns a name that JSON can carry exactly, and the original
// bytes when they had to be replaced (nil when name is valid UTF-8). JSON
// strings are Unicode, so without this a non-UTF-8 file name would be
// silently altered on its way to the event log.
func TextName(name string) (text string, raw []byte) {
	if utf8.ValidString(name) {
		return name, nil
	}
	return strings.ToValidUTF8(name, "\uFFFD"), []byte(name)
}
