package exit

import (
	"errors"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
)

// Wording is how the command line and the MCP server say a library
// hint: the command line's (CLI: words after "helm", keeping the global
// flags given but Drop) and the server's (Tool).
type Wording struct{ Drop, CLI, Tool string }

// WordsFor returns the wordings of err's hint, of kind k, when they need
// nothing from the error: hintWords', but for an entry that cannot be
// undone, which reads the logbook for another reason than a bearing's
// number.
func WordsFor(err error, k hint.Kind) (Wording, bool) {
	if k == hint.ReadLogbook && errors.Is(err, helm.ErrNotUndoable) {
		return Wording{"", "log, to see which actions were performed and which were undone", "call log, to see which actions were performed and which were undone"}, true
	}
	w, ok := hintWords[k]
	return w, ok
}

// hintWords are the wordings of the library's hint kinds that need
// nothing from the error.
var hintWords = map[hint.Kind]Wording{
	hint.Observe:       {"", "observe KIND ... first, or pass --observation FILE", "call observe first, or give bearing_take observation_files"},
	hint.StartVoyage:   {"--voyage", `voyage new "INTENT" to start another voyage`, "call voyage_start to start another voyage"},
	hint.ReadLogbook:   {"", "log, to see the bearings' numbers", "call log, to see the bearings' numbers"},
	hint.ReadSlate:     {"", "slate list", "call slate_list"},
	hint.ListVoyages:   {"--voyage", "voyage list --status all", "call voyage_list with status all"},
	hint.ListArtifacts: {"", "voyage show, to see the artifacts", "call artifact_list"},
	hint.Resume:        {"", "voyage resume --reason TEXT, to go on with it", "call voyage_resume with a reason, to go on with it"},
	hint.Reopen:        {"", "log, to see whether the change was recorded, before retrying", "call log, to see whether the change was recorded, before retrying"},
}

// DamagedVoyage is the short id of the voyage a damage error names, or "".
func DamagedVoyage(err error) string {
	var ve *helm.VoyageError
	var de *helm.DamageError
	if errors.As(err, &ve) && ve.Voyage != "" {
		return short(ve.Voyage)
	} else if errors.As(err, &de) && de.Voyage != "" {
		return short(de.Voyage)
	}
	return ""
}
