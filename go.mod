module github.com/mcplro/lro

go 1.26

require (
	github.com/itchyny/gojq v0.12.20 // indirect
	github.com/itchyny/timefmt-go v0.1.9 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
