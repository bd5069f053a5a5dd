;; extism_recursion.wat: an Extism-ABI module (it imports extism:host/env)
;; whose gate_evaluate recurses 2^60 times without a loop. wazero's
;; WithCloseOnContextDone alone never stops it. Expect gate.timeout.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (memory (export "memory") 1)
  (func $r (param $d i32)
    (if (i32.gt_u (local.get $d) (i32.const 0))
      (then
        (call $r (i32.sub (local.get $d) (i32.const 1)))
        (call $r (i32.sub (local.get $d) (i32.const 1))))))
  (func (export "gate_evaluate") (result i32)
    (drop (call $input_length))
    (call $r (i32.const 60))
    (i32.const 0)))
