;; reserved_name.wat: exports a mutable global under the host's interrupt
;; flag name, which would let it switch off its own deadline. Expect
;; gate.reserved_name at Load.
(module
  (memory (export "memory") 2)
  (global (export "__govhost_interrupt") (mut i32) (i32.const 0))
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64)
    (loop $l (br $l))
    (i64.const 0)))
