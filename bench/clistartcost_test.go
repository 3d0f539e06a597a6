package main

import (
	"testing"
)

func TestInitClockSumsThePackageInits(t *testing.T) {
	tests := []struct {
		name    string
		trace   string
		want    float64
		wantErr bool
	}{
		{name: "two inits and other lines", trace: "init os @0.66 ms, 0.027 ms clock, 432 bytes, 9 allocs\nhelm (devel)\ninit main @3.1 ms, 1.5 ms clock, 8544 bytes, 30 allocs\n", want: 1.527},
		{name: "no inits", trace: "helm (devel)\n", wantErr: true},
		{name: "a clock that is no number", trace: "init os @0.66 ms, x ms clock, 432 bytes, 9 allocs\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := initClock([]byte(tt.trace))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("initClock = %v, want an error", got)
				}
				return
			}
			if err != nil || got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Fatalf("initClock = %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}
