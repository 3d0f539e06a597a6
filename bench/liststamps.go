package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// benchListStamps measures what bounds a list: the three stats a list
// takes of each voyage the home index vouches for (its events/
// directory, WATERMARK and last segment, relative to the voyages'
// directory: docs/design.md, "What a list trusts"), taken here alone,
// on one core, in the home benchList listed. The floor of a list on
// this machine is that times the voyages, over the cores.
func benchListStamps(cfg config, homeDir string, r *report) error {
	voyages := filepath.Join(homeDir, "voyages")
	ids, err := os.ReadDir(voyages)
	if err != nil {
		return err
	}
	type paths struct{ dir, watermark, segment string }
	var all []paths
	for _, e := range ids {
		events := filepath.Join(voyages, e.Name(), "events")
		segs, err := filepath.Glob(filepath.Join(events, "*.seg"))
		if err != nil || len(segs) == 0 {
			return fmt.Errorf("voyage %s: no segment", e.Name())
		}
		rel := e.Name() + "/events/"
		all = append(all, paths{rel, rel + "WATERMARK", rel + filepath.Base(segs[len(segs)-1])})
	}
	fd, err := unix.Open(voyages, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var per []float64
	for range cfg.OpenReps {
		var st unix.Stat_t
		start := time.Now()
		for _, p := range all {
			for _, name := range []string{p.dir, p.watermark, p.segment} {
				if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					return err
				}
			}
		}
		per = append(per, float64(time.Since(start).Nanoseconds())/float64(len(all))/1e3)
	}
	us := median(per)
	r.put("list_stamps_us_per_voyage", us, fmt.Sprintf("three fstatat per voyage, one core; %s", spread(per)))
	r.put("list_stamps_floor_ms", us*float64(len(all))/1e3/float64(runtime.GOMAXPROCS(0)),
		fmt.Sprintf("what %d voyages' stats cost spread over %d cores: no list that keeps the promise is faster here", len(all), runtime.GOMAXPROCS(0)))
	return nil
}
