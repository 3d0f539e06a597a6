package searchindex

// Voyages returns how many voyages the index covers.
func (ix *Index) Voyages() int { return len(ix.owner) }
