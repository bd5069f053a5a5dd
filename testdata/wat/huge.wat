;; huge.wat: answers 1 MiB (a JSON object padded with spaces). Expect
;; gate.output_too_large.
(module
  (memory (export "memory") 20)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param i32) (result i32) (i32.const 65536))
  (data (i32.const 131072) "{\"decision\":\"allow\",\"reason_code\":\"huge.ok\"}")
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (memory.fill (i32.const 131116) (i32.const 32) (i32.const 1048532))
    (i64.or (i64.shl (i64.const 131072) (i64.const 32)) (i64.const 1048576))))
