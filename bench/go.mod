module github.com/helmlog/helm/bench

go 1.26.0

require (
	github.com/helmlog/helm v0.0.0-00010101000000-000000000000
	github.com/klauspost/compress v1.20.3
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/zeebo/blake3 v0.2.4
	golang.org/x/sys v0.49.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/mod v0.42.0 // indirect
	lukechampine.com/blake3 v1.4.1 // indirect
)

replace github.com/helmlog/helm => ../
