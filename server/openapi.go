package server

import _ "embed"

// OpenAPI is the API's OpenAPI 3.1 document, served at /v1/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
