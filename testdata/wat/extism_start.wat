;; extism_start.wat: an Extism-ABI module whose start section never returns.
;; Expect gate.timeout at Gate.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (memory (export "memory") 1)
  (func $spin (loop $l (br $l)))
  (start $spin)
  (func (export "gate_evaluate") (result i32)
    (drop (call $input_length))
    (i32.const 0)))
