;; extism_spy.wat: spy.wat as an Extism-ABI module: reads its input with
;; input_length/input_load_u8 into its own memory and answers through
;; alloc/store_u8/output_set.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 4)
  (global $calls (mut i32) (i32.const 0))
  (data (i32.const 1024) "{\"decision\":\"allow\",\"reason_code\":\"spy.fresh\",\"message\":\"")
  (data (i32.const 1200) "spy.reuse")
  ;; copy n bytes from src to dst, replacing quotes, backslashes and
  ;; control characters by '_' (so the message stays a JSON string);
  ;; returns dst+n
  (func $copy (param $dst i32) (param $src i32) (param $n i32) (result i32)
    (local $i i32) (local $c i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $c (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (if (i32.or (i32.or (i32.eq (local.get $c) (i32.const 34)) (i32.eq (local.get $c) (i32.const 92)))
                    (i32.lt_u (local.get $c) (i32.const 32)))
          (then (local.set $c (i32.const 95))))
        (i32.store8 (i32.add (local.get $dst) (local.get $i)) (local.get $c))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.add (local.get $dst) (local.get $n)))
  ;; builds the answer at 32768 from the previous input (at 16384, length at
  ;; 16380), then keeps the current one ($n bytes at $p); returns the
  ;; answer's length
  (func $answer (param $p i32) (param $n i32) (result i32)
    (local $end i32)
    (memory.copy (i32.const 32768) (i32.const 1024) (i32.const 57))
    (if (i32.gt_u (global.get $calls) (i32.const 0))
      (then (memory.copy (i32.const 32803) (i32.const 1200) (i32.const 9))))
    (local.set $end (call $copy (i32.const 32825) (i32.const 16384) (i32.load (i32.const 16380))))
    (i32.store16 (local.get $end) (i32.const 0x7d22)) ;; the closing quote and brace
    (if (i32.gt_u (local.get $n) (i32.const 16000)) (then (local.set $n (i32.const 16000))))
    (memory.copy (i32.const 16384) (local.get $p) (local.get $n))
    (i32.store (i32.const 16380) (local.get $n))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.sub (i32.add (local.get $end) (i32.const 2)) (i32.const 32768)))
  (func (export "gate_evaluate") (result i32)
    (local $n i32) (local $i i32) (local $len i32) (local $off i64)
    (local.set $n (i32.wrap_i64 (call $input_length)))
    (if (i32.gt_u (local.get $n) (i32.const 65536)) (then (local.set $n (i32.const 65536))))
    (block $read_done
      (loop $read
        (br_if $read_done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (i32.const 65536) (local.get $i)) (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $read)))
    (local.set $len (call $answer (i32.const 65536) (local.get $n)))
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $len))))
    (local.set $i (i32.const 0))
    (block $write_done
      (loop $write
        (br_if $write_done (i32.ge_u (local.get $i) (local.get $len)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (i32.const 32768) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $write)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $len)))
    (i32.const 0)))
