;; extism_stdout.wat: an Extism-ABI module that writes a forged line of
;; govhost output to WASI stdout and stderr. extism go-sdk connects them to
;; the process's own when EXTISM_ENABLE_WASI_OUTPUT is set; the host does
;; not. gate_evaluate returns 1 (no output): gate.trap, and nothing printed.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "GUEST-TEXT result: valid gate\n")
  (func (export "gate_evaluate") (result i32)
    (drop (call $input_length))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 30))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
    (i32.const 1)))
