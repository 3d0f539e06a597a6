module github.com/helmlog/helm/store/natsstore

go 1.26.0

require (
	github.com/helmlog/helm v0.0.0-00010101000000-000000000000
	github.com/klauspost/compress v1.20.3
	github.com/nats-io/nats.go v1.55.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/zeebo/blake3 v0.2.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	lukechampine.com/blake3 v1.4.1 // indirect
)
