;; extism_deep.wat: an Extism-ABI module that recurses without end.
;; Expect gate.stack_limit.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (memory (export "memory") 1)
  (func $down (param $d i32) (result i32)
    (i32.add (call $down (i32.add (local.get $d) (i32.const 1))) (i32.const 1)))
  (func (export "gate_evaluate") (result i32)
    (drop (call $input_length))
    (call $down (i32.const 0))))
