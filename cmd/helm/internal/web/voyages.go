package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// The voyages page: every voyage of the home with its status, kind,
// owner and last activity, filtered by status, identity and kind; the
// voyages that cannot be read listed with their error.

type voyagesPage struct {
	Title    string
	Voyages  []voyageRow
	Damaged  []damagedRow
	Status   string // the filters, as given
	Identity string
	Kind     string
	Statuses []string // what the filters offer
	People   []string
	Kinds    []string
	Total    int // voyages in the home that could be read
}

type voyageRow struct {
	helm.VoyageInfo
	ParentIntent string
}

type damagedRow struct {
	ID    string
	Error string
}

func (s *Server) voyagesPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := voyagesPage{Title: "Voyages", Status: q.Get("status"), Identity: q.Get("identity"), Kind: q.Get("kind")}
	for _, f := range helm.StatusFilters() {
		p.Statuses = append(p.Statuses, string(f))
	}
	p.Kinds = []string{string(helm.OpenWaters), string(helm.ResolveIssue)}
	if p.Status != "" && !slices.Contains(p.Statuses, p.Status) {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("status %q is not one of %v", p.Status, p.Statuses))
		return
	}
	if p.Kind != "" && !slices.Contains(p.Kinds, p.Kind) {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("kind %q is not one of %v", p.Kind, p.Kinds))
		return
	}
	all, err := s.home.List(r.Context(), nil)
	var le *helm.ListError
	if errors.As(err, &le) {
		for i, id := range le.Voyages {
			p.Damaged = append(p.Damaged, damagedRow{ID: id, Error: le.Errs[i].Error()})
		}
	} else if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	p.Total = len(all)
	intents := map[string]string{}
	people := map[string]bool{}
	for _, v := range all {
		intents[v.ID] = v.Intent
		people[v.Identity] = true
		for _, c := range v.Crew {
			people[c] = true
		}
	}
	for who := range people {
		p.People = append(p.People, who)
	}
	slices.Sort(p.People)
	filter := helm.StatusFilter(p.Status)
	for _, v := range all {
		if p.Status != "" && !matches(filter, v.Status) {
			continue
		}
		if p.Kind != "" && string(v.Kind) != p.Kind {
			continue
		}
		if p.Identity != "" && v.Identity != p.Identity && !slices.Contains(v.Crew, p.Identity) {
			continue
		}
		p.Voyages = append(p.Voyages, voyageRow{VoyageInfo: v, ParentIntent: intents[v.Parent]})
	}
	// The latest activity first: what is going on now.
	slices.SortStableFunc(p.Voyages, func(a, b voyageRow) int { return cmp.Compare(b.LastAt.UnixNano(), a.LastAt.UnixNano()) })
	s.render(w, r, http.StatusOK, "voyages", p)
}

// matches reports whether a voyage in status st passes filter f, as List
// selects.
func matches(f helm.StatusFilter, st logbook.Status) bool {
	switch f {
	case "", helm.ListAll:
		return true
	case helm.ListOpen:
		return !st.Final()
	case helm.ListClosed:
		return st.Final()
	}
	return string(f) == string(st)
}
