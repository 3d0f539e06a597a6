package sighting

import "fmt"

func init() {
	Register("file-contents", func() Sighting { return &Files{} })
}

// Files answers a file-contents mark: what was in each file, in the order
// the mark named them. (The per-file record is FileContents, as in the
// original design; the kind's sighting is named Files so the two do not
// collide.)
type Files struct {
	Contents []FileContents `json:"contents"`
}

// Kind returns "file-contents".
func (*Files) Kind() string { return "file-contents" }

// FileContents is a file and what was in it. Path is spelled as the mark
// spelled it (cleaned), or relative to the root for project marks.
type FileContents struct {
	Path    string      `json:"path"`
	Content FileContent `json:"content"`
}

// ContentType says which of FileContent's shapes a value has.
type ContentType string

// The shapes of FileContent.
const (
	// ContentText is UTF-8 text, held in Text.
	ContentText ContentType = "text"
	// ContentBinary is content that is not UTF-8 text (or contains NUL
	// bytes, as git judges binaries); only SizeBytes is kept.
	ContentBinary ContentType = "binary"
	// ContentError is a file that could not be read; Error says why.
	ContentError ContentType = "error"
)

// FileContent is what was found when reading a file: text, binary (size
// only) or an error message. There is deliberately no file-type field: the
// extension is in the path and the consumer knows what to do with it.
type FileContent struct {
	Type ContentType `json:"type"`
	// Text is the content when Type is "text".
	Text string `json:"text,omitempty"`
	// SizeBytes is the size of text and binary content.
	SizeBytes uint64 `json:"size_bytes,omitempty"`
	// Error is the reason when Type is "error", such as "no such file",
	// "permission denied" or "is a directory".
	Error string `json:"error,omitempty"`
	// Truncated says Text or SizeBytes cover only the first part of the
	// content, because it was larger than the observer's cap; Text then
	// ends with a visible "… [truncated …]" marker.
	Truncated bool `json:"truncated,omitempty"`
	// Source, when set, stands for Text: the text of a file too large to
	// hold in memory, read from Source when the sighting is encoded
	// (Encode streams it; Marshal reads it whole). Type is then "text"
	// and SizeBytes the size the file had when it was looked at.
	Source TextSource `json:"-"`
}

// TextContent is UTF-8 text content.
func TextContent(text string) FileContent {
	return FileContent{Type: ContentText, Text: text, SizeBytes: uint64(len(text))}
}

// BinaryContent is content that is not text, recorded by size.
func BinaryContent(size uint64) FileContent {
	return FileContent{Type: ContentBinary, SizeBytes: size}
}

// ErrorContent is a file that could not be read.
func ErrorContent(message string) FileContent {
	return FileContent{Type: ContentError, Error: message}
}

// String renders the content's shape for people: "text, 12 bytes",
// "binary, 3 bytes", "error: permission denied".
func (c FileContent) String() string {
	switch c.Type {
	case ContentText, ContentBinary:
		return fmt.Sprintf("%s, %d bytes", c.Type, c.SizeBytes)
	case ContentError:
		return "error: " + c.Error
	}
	return string(c.Type)
}
