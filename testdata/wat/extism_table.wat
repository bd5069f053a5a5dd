;; extism_table.wat: an Extism-ABI module that grows an externref table by
;; 0xFFFFFFF0 entries. Expect gate.memory_limit.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (memory (export "memory") 1)
  (table $t 0 externref)
  (func (export "gate_evaluate") (result i32)
    (drop (call $input_length))
    (drop (table.grow $t (ref.null extern) (i32.const 0xFFFFFFF0)))
    (i32.const 0)))
