// Package server owns govhost's HTTP API /v1: routing, bearer-token
// authentication, strict request decoding, the stable error body, the
// OpenAPI document (openapi.yaml, checked against the routes by a test),
// Prometheus metrics, health and readiness. The work is package service's;
// a handler decodes, calls one service operation and encodes.
package server
