package lexers

import (
	"github.com/alecthomas/chroma/v2"

	"regexp"
)

// TODO(moorereason): can this be factored away?
var zoneAnalyserRe = regexp.MustCompile(`(?m)^@\s+IN\s+SOA\s+`)

func setDNSAnalyser(reg *chroma.LexerRegistry) { // chroma sets it at init
	reg.Get("dns").SetAnalyser(func(text string) float32 {
		if zoneAnalyserRe.FindString(text) != "" {
			return 1.0
		}
		return 0.0
	})
}
