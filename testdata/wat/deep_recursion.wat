;; deep_recursion.wat: gate_evaluate recurses without end (not a tail call),
;; so wazero's stack would grow by megabytes. Expect gate.stack_limit.
(module
  (memory (export "memory") 2)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func $down (param $d i32) (result i32)
    (if (i32.eq (local.get $d) (i32.const -1)) (then (return (i32.const 0))))
    (i32.add (call $down (i32.add (local.get $d) (i32.const 1))) (i32.const 1)))
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (i64.extend_i32_u (call $down (i32.const 0)))))
