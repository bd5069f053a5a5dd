;; table_big.wat: declares a table of 100 million entries (800 MB at
;; instantiation). Expect gate.memory_limit at Load.
(module
  (memory (export "memory") 2)
  (table 100000000 funcref)
  (func (export "gate_abi_version") (result i32) (i32.const 1))
  (func (export "gate_alloc") (param $n i32) (result i32) (i32.const 65536))
  (func (export "gate_evaluate") (param i32 i32) (result i64) (i64.const 0)))
