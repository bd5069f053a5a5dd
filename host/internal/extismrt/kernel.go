package extismrt

import (
	"slices"

	"github.com/tetratelabs/wazero/api"
)

// kernel lists the functions of extism:host/env that extism go-sdk v1.7.1
// provides (its instantiateEnvModule), with their signatures. An Extism
// module importing anything else from that module, or with another
// signature, would fail when instantiated; the host refuses it at load
// (gate.bad_import) instead. Keep in step with the go-sdk version in go.mod:
// TestKernelFunctions_MatchSDK checks this list against the SDK's module.
var kernel = map[string][2][]api.ValueType{
	"alloc":            {{i64}, {i64}},
	"free":             {{i64}, nil},
	"load_u8":          {{i64}, {i32}},
	"input_load_u8":    {{i64}, {i32}},
	"store_u64":        {{i64, i64}, nil},
	"store_u8":         {{i64, i32}, nil},
	"input_set":        {{i64, i64}, nil},
	"output_set":       {{i64, i64}, nil},
	"input_length":     {nil, {i64}},
	"input_offset":     {nil, {i64}},
	"output_length":    {nil, {i64}},
	"output_offset":    {nil, {i64}},
	"length":           {{i64}, {i64}},
	"length_unsafe":    {{i64}, {i64}},
	"reset":            {nil, nil},
	"error_set":        {{i64}, nil},
	"error_get":        {nil, {i64}},
	"memory_bytes":     {nil, {i64}},
	"input_load_u64":   {{i64}, {i64}},
	"load_u64":         {{i64}, {i64}},
	"config_get":       {{i64}, {i64}},
	"var_get":          {{i64}, {i64}},
	"var_set":          {{i64, i64}, nil},
	"http_request":     {{i64, i64}, {i64}},
	"http_status_code": {nil, {i32}},
	"http_headers":     {nil, {i64}},
	"get_log_level":    {nil, {i32}},
	"log_trace":        {{i64}, nil},
	"log_debug":        {{i64}, nil},
	"log_info":         {{i64}, nil},
	"log_warn":         {{i64}, nil},
	"log_error":        {{i64}, nil},
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// KernelFunction reports whether extism:host/env provides name with these
// parameter and result types.
func KernelFunction(name string, params, results []api.ValueType) bool {
	sig, ok := kernel[name]
	return ok && slices.Equal(sig[0], params) && slices.Equal(sig[1], results)
}
