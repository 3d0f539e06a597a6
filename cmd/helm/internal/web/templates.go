package web

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// pageNames are the pages: each is its own template file, executed within
// layout.html with the parts of parts.html.
var pageNames = []string{"voyages", "voyage", "sighting", "transcript", "error"}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse the %s page: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

var funcs = template.FuncMap{
	"short": short,
	"stamp": stamp,
	"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"size": func(n any) string {
		switch n := n.(type) {
		case int64:
			return size(n)
		case uint64:
			return size(int64(min(n, 1<<62)))
		case int:
			return size(int64(n))
		}
		return fmt.Sprint(n)
	},
	"join":   strings.Join,
	"next":   func(n uint64) uint64 { return n + 1 },
	"plural": plural,
	"ms": func(ms int64) string {
		return (time.Duration(ms) * time.Millisecond).String()
	},
	"by": func(identity, role string) string {
		if role == "" {
			return identity
		}
		return identity + " (" + role + ")"
	},
}

// plural counts n of what word names: "1 note", "2 notes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// short is the first 8 characters of an id or hash, as the CLI shows them.
func short(id string) string { return id[:min(8, len(id))] }

// stamp shows a time as the story does, in UTC to the second.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// size shows a byte count for people.
func size(n int64) string {
	f := float64(n)
	switch {
	case f < 1024:
		return fmt.Sprintf("%d B", n)
	case f < 1024*1024:
		return fmt.Sprintf("%.1f KiB", f/1024)
	case f < 1024*1024*1024:
		return fmt.Sprintf("%.1f MiB", f/1024/1024)
	}
	return fmt.Sprintf("%.1f GiB", f/1024/1024/1024)
}
