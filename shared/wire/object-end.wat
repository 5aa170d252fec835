;; Where a JSON object or array ends, 64 bytes at a time (message-scan.ts),
;; and where the last member of a given name of an object starts (lastMember,
;; at the end).
;; Built into object-end-wasm.ts by `npm run wasm`; a unit test
;; assembles this text again and fails when the two differ.
;;
;; The rule is message-scan.ts's: from the bracket at `start`, count every
;; open and close bracket (of either kind) outside strings, and end just
;; past the one that brings the count back to zero. A string runs from a
;; quote to the next quote not escaped; inside a string a backslash escapes
;; the byte after it, whatever that is; outside one, it is a byte like any
;; other. Nothing else is checked (the scan's header comment says why that
;; is sound).
;;
;; Each block of 64 bytes becomes four 64-bit masks (bit k for byte k):
;; quotes, backslashes, open and close brackets. Without a backslash in
;; play, every quote is a real one; with one, the block's quotes and
;; backslashes are walked in order (agents escape rarely). The bytes inside
;; strings are the prefix XOR of the real quotes, so the brackets outside
;; them are known at once, and a block whose closes cannot bring the count
;; to zero is counted by popcount alone.
;;
;; The caller copies the bytes to memory at 0 and zeroes the 64 bytes after
;; them (a block may read that far; a zero byte is none of the four).
(module
  (memory (export "memory") 1)

  ;; The index just past the object or array at `start` (its open bracket)
  ;; among the `length` bytes at 0, or -1 when it does not end before them.
  (func (export "objectEnd") (param $start i32) (param $length i32) (result i32)
    (local $at i32)
    (local $depth i64)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $quotes i64) (local $backslashes i64) (local $opens i64) (local $closes i64)
    (local $real i64) (local $inside i64)
    ;; All ones while the block before ended inside a string, else zero.
    (local $inString i64)
    ;; Bit 0 set when the block before ended with an escaping backslash.
    (local $escapeIn i64)
    (local $escaped i64) (local $pending i64) (local $low i64) (local $open i32)
    (local.set $at (local.get $start))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $at) (local.get $length)))
        (local.set $v0 (v128.load offset=0 align=1 (local.get $at)))
        (local.set $v1 (v128.load offset=16 align=1 (local.get $at)))
        (local.set $v2 (v128.load offset=32 align=1 (local.get $at)))
        (local.set $v3 (v128.load offset=48 align=1 (local.get $at)))
        (local.set $quotes
          (i64.or
            (i64.or
              (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))) (i64.const 16)))
            (i64.or
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))) (i64.const 32))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))) (i64.const 48)))))
        (local.set $backslashes
          (i64.or
            (i64.or
              (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))) (i64.const 16)))
            (i64.or
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))) (i64.const 32))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))) (i64.const 48)))))
        ;; '[' and '{' are 0x5b and 0x7b, ']' and '}' 0x5d and 0x7d: with
        ;; bit 0x20 set, each pair is one byte, and no other byte becomes it.
        (local.set $v0 (v128.or (local.get $v0) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $v1 (v128.or (local.get $v1) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $v2 (v128.or (local.get $v2) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $v3 (v128.or (local.get $v3) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $opens
          (i64.or
            (i64.or
              (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b))))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b)))) (i64.const 16)))
            (i64.or
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b)))) (i64.const 32))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b)))) (i64.const 48)))))
        (local.set $closes
          (i64.or
            (i64.or
              (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d)))) (i64.const 16)))
            (i64.or
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d)))) (i64.const 32))
              (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d)))) (i64.const 48)))))

        ;; The real quotes: all of them, unless a backslash is in play.
        (local.set $real (local.get $quotes))
        (if (i64.ne (i64.or (local.get $backslashes) (local.get $escapeIn)) (i64.const 0))
          (then
            ;; In order: an escaped byte is skipped; a quote toggles the
            ;; string; a backslash in a string escapes the next byte.
            (local.set $real (i64.const 0))
            (local.set $escaped (local.get $escapeIn))
            (local.set $escapeIn (i64.const 0))
            (local.set $pending (i64.or (local.get $quotes) (local.get $backslashes)))
            (block $walked
              (loop $walk
                (br_if $walked (i64.eqz (local.get $pending)))
                (local.set $low (i64.and (local.get $pending) (i64.sub (i64.const 0) (local.get $pending))))
                (local.set $pending (i64.xor (local.get $pending) (local.get $low)))
                (br_if $walk (i64.ne (i64.and (local.get $low) (local.get $escaped)) (i64.const 0)))
                (if (i64.ne (i64.and (local.get $low) (local.get $quotes)) (i64.const 0))
                  (then
                    (local.set $real (i64.or (local.get $real) (local.get $low)))
                    (local.set $inString (i64.xor (local.get $inString) (i64.const -1))))
                  (else
                    (if (i64.ne (local.get $inString) (i64.const 0))
                      (then
                        ;; The last byte's escape falls on the next block.
                        (if (i64.eq (local.get $low) (i64.const 0x8000000000000000))
                          (then (local.set $escapeIn (i64.const 1)))
                          (else (local.set $escaped (i64.or (local.get $escaped) (i64.shl (local.get $low) (i64.const 1))))))))))
                (br $walk)))
            ;; The walk left $inString as the block ends; the mask below
            ;; wants it as the block began.
            (if (i32.and (i32.wrap_i64 (i64.popcnt (local.get $real))) (i32.const 1))
              (then (local.set $inString (i64.xor (local.get $inString) (i64.const -1)))))))

        ;; Bit k set when byte k is inside a string (its opening quote
        ;; included, its closing one not): the prefix XOR of the quotes.
        (local.set $inside (local.get $real))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 1))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 2))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 4))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 8))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 16))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 32))))
        (local.set $inside (i64.xor (local.get $inside) (local.get $inString)))
        (local.set $inString (i64.shr_s (local.get $inside) (i64.const 63)))
        (local.set $opens (i64.and (local.get $opens) (i64.xor (local.get $inside) (i64.const -1))))
        (local.set $closes (i64.and (local.get $closes) (i64.xor (local.get $inside) (i64.const -1))))

        (if (i64.gt_u (local.get $depth) (i64.popcnt (local.get $closes)))
          (then
            ;; Not enough closes to reach zero: counted, not walked.
            (local.set $depth
              (i64.sub (i64.add (local.get $depth) (i64.popcnt (local.get $opens))) (i64.popcnt (local.get $closes)))))
          (else
            (local.set $pending (i64.or (local.get $opens) (local.get $closes)))
            (block $counted
              (loop $count
                (br_if $counted (i64.eqz (local.get $pending)))
                (local.set $low (i64.and (local.get $pending) (i64.sub (i64.const 0) (local.get $pending))))
                (local.set $pending (i64.xor (local.get $pending) (local.get $low)))
                (if (i64.ne (i64.and (local.get $low) (local.get $opens)) (i64.const 0))
                  (then (local.set $depth (i64.add (local.get $depth) (i64.const 1))))
                  (else
                    (local.set $depth (i64.sub (local.get $depth) (i64.const 1)))
                    (if (i64.eqz (local.get $depth))
                      (then
                        (return
                          (i32.add
                            (i32.add (local.get $at) (i32.wrap_i64 (i64.ctz (local.get $low))))
                            (i32.const 1)))))))
                (br $count)))))
        (local.set $at (i32.add (local.get $at) (i32.const 64)))
        (br $block)))
    (i32.const -1))

  ;; Where the last string at depth 1 of the object at `start` (its open
  ;; brace) that starts with the `length` (2 to 8) bytes of `name` (read
  ;; little-endian) starts, among the bytes [start, end); -1 when none
  ;; does. The caller sees to it that those bytes hold no backslash, so
  ;; every quote among them is a real one: a string at depth 1 opens after
  ;; as many open brackets as closes plus one. message-scan.ts finds a row's
  ;; member by its quoted name with it, and checks the colon after it.
  (func (export "lastMember") (param $start i32) (param $end i32) (param $name i64) (param $length i32) (result i32)
    (local $at i32)
    (local $found i32)
    (local $depth i64)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $quotes i64) (local $opens i64) (local $closes i64)
    (local $inside i64) (local $inString i64) (local $pending i64) (local $low i64)
    (local $keep i64) (local $bit i32) (local $mask i64) (local $second v128) (local $follows i64)
    (local.set $found (i32.const -1))
    (local.set $mask
      (if (result i64) (i32.ge_u (local.get $length) (i32.const 8))
        (then (i64.const -1))
        (else (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (i32.shl (local.get $length) (i32.const 3)))) (i64.const 1)))))
    ;; The name's second byte, in every lane: only a quote before one is
    ;; compared with the whole name.
    (local.set $second (i8x16.splat (i32.wrap_i64 (i64.shr_u (local.get $name) (i64.const 8)))))
    (local.set $at (local.get $start))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $v0 (v128.load offset=0 align=1 (local.get $at)))
        (local.set $v1 (v128.load offset=16 align=1 (local.get $at)))
        (local.set $v2 (v128.load offset=32 align=1 (local.get $at)))
        (local.set $v3 (v128.load offset=48 align=1 (local.get $at)))
        ;; Bit k set when byte k + 1 is the name's second byte (bit 63: the
        ;; next block's first byte, not read here, may be).
        (local.set $follows
          (i64.or
            (i64.shr_u
              (i64.or
                (i64.or
                  (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (local.get $second))))
                  (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (local.get $second)))) (i64.const 16)))
                (i64.or
                  (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (local.get $second)))) (i64.const 32))
                  (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (local.get $second)))) (i64.const 48))))
              (i64.const 1))
            (i64.const 0x8000000000000000)))
        (local.set $quotes
          (i64.or
          (i64.or
            (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))))
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))) (i64.const 16)))
          (i64.or
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))) (i64.const 32))
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))) (i64.const 48)))))
        (local.set $v0 (v128.or (local.get $v0) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $v1 (v128.or (local.get $v1) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $v2 (v128.or (local.get $v2) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $v3 (v128.or (local.get $v3) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $opens
          (i64.or
          (i64.or
            (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b))))
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b)))) (i64.const 16)))
          (i64.or
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b)))) (i64.const 32))
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b)))) (i64.const 48)))))
        (local.set $closes
          (i64.or
          (i64.or
            (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))))
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d)))) (i64.const 16)))
          (i64.or
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d)))) (i64.const 32))
            (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d)))) (i64.const 48)))))
        ;; Inside a string, as objectEnd masks it: the prefix XOR of the quotes.
        (local.set $inside (local.get $quotes))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 1))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 2))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 4))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 8))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 16))))
        (local.set $inside (i64.xor (local.get $inside) (i64.shl (local.get $inside) (i64.const 32))))
        (local.set $inside (i64.xor (local.get $inside) (local.get $inString)))
        (local.set $inString (i64.shr_s (local.get $inside) (i64.const 63)))
        ;; The bytes of the block before `end`.
        (local.set $keep
          (if (result i64) (i32.lt_u (i32.sub (local.get $end) (local.get $at)) (i32.const 64))
            (then (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (i32.sub (local.get $end) (local.get $at)))) (i64.const 1)))
            (else (i64.const -1))))
        (local.set $opens (i64.and (local.get $opens) (i64.xor (local.get $inside) (i64.const -1))))
        (local.set $closes (i64.and (local.get $closes) (i64.xor (local.get $inside) (i64.const -1))))
        ;; Each quote that opens a string and starts with the name.
        (local.set $pending
          (i64.and (i64.and (i64.and (local.get $quotes) (local.get $inside)) (local.get $keep)) (local.get $follows)))
        (block $matched
          (loop $match
            (br_if $matched (i64.eqz (local.get $pending)))
            (local.set $low (i64.and (local.get $pending) (i64.sub (i64.const 0) (local.get $pending))))
            (local.set $pending (i64.xor (local.get $pending) (local.get $low)))
            (local.set $bit (i32.add (local.get $at) (i32.wrap_i64 (i64.ctz (local.get $low)))))
            (if (i64.eq (i64.and (i64.load align=1 (local.get $bit)) (local.get $mask)) (local.get $name))
              (then
                ;; Its depth: the brackets before it in the block, and before the block.
                (if (i64.eq
                      (i64.sub
                        (i64.add (local.get $depth) (i64.popcnt (i64.and (local.get $opens) (i64.sub (local.get $low) (i64.const 1)))))
                        (i64.popcnt (i64.and (local.get $closes) (i64.sub (local.get $low) (i64.const 1)))))
                      (i64.const 1))
                  (then (local.set $found (local.get $bit))))))
            (br $match)))
        (local.set $depth
          (i64.sub
            (i64.add (local.get $depth) (i64.popcnt (i64.and (local.get $opens) (local.get $keep))))
            (i64.popcnt (i64.and (local.get $closes) (local.get $keep)))))
        (local.set $at (i32.add (local.get $at) (i32.const 64)))
        (br $block)))
    (local.get $found)))
