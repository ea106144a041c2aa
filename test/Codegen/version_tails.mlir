// RUN: linnet-opt %s --linnet-codegen-version-tails | FileCheck %s
// RUN: linnet-opt %s --linnet-codegen-version-tails --canonicalize | FileCheck %s --check-prefix=FOLDED

// Two run-time choices on one condition (a routed gate and up projection
// and its down projection), an op between them reading the first's result
// and one after the second: the ops after the first go into both of its
// branches, the second's condition there the branch's constant, and the
// function returns what the new if yields.

// CHECK-LABEL: func.func @two_choices
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[C:.+]]: i1)
// CHECK: %[[TAIL:.+]] = scf.if %[[C]] -> (tensor<4xf32>)
// CHECK-NOT: linnet.form_choice
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: %[[A:.+]] = arith.addf %[[X]], %[[X]]
// CHECK: %[[B:.+]] = arith.mulf %[[A]], %[[A]]
// CHECK: %[[D:.+]] = scf.if %[[TRUE]]
// CHECK: arith.subf %[[B]], %[[X]]
// CHECK: arith.divf %[[B]], %[[X]]
// CHECK: %[[E:.+]] = arith.negf %[[D]]
// CHECK: scf.yield %[[E]]
// CHECK: } else {
// CHECK: %[[FALSE:.+]] = arith.constant false
// CHECK: %[[A2:.+]] = arith.subf %[[X]], %[[X]]
// CHECK: %[[B2:.+]] = arith.mulf %[[A2]], %[[A2]]
// CHECK: %[[D2:.+]] = scf.if %[[FALSE]]
// CHECK: %[[E2:.+]] = arith.negf %[[D2]]
// CHECK: scf.yield %[[E2]]
// CHECK: return %[[TAIL]]

// The second choice folds in each branch.
// FOLDED-LABEL: func.func @two_choices
// FOLDED: scf.if
// FOLDED-NEXT: arith.addf
// FOLDED-NEXT: arith.mulf
// FOLDED-NEXT: arith.subf
// FOLDED-NEXT: arith.negf
// FOLDED: } else {
// FOLDED-NEXT: arith.subf
// FOLDED-NEXT: arith.mulf
// FOLDED-NEXT: arith.divf
// FOLDED-NEXT: arith.negf
// FOLDED-NOT: scf.if
// FOLDED-LABEL: func.func @last_choice
func.func @two_choices(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %a = scf.if %c -> (tensor<4xf32>) {
    %g = arith.addf %x, %x : tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  } else {
    %p = arith.subf %x, %x : tensor<4xf32>
    scf.yield %p : tensor<4xf32>
  } {linnet.form_choice}
  %b = arith.mulf %a, %a : tensor<4xf32>
  %d = scf.if %c -> (tensor<4xf32>) {
    %g = arith.subf %b, %x : tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  } else {
    %p = arith.divf %b, %x : tensor<4xf32>
    scf.yield %p : tensor<4xf32>
  } {linnet.form_choice}
  %e = arith.negf %d : tensor<4xf32>
  return %e : tensor<4xf32>
}

// A choice whose results the terminator reads directly, beside a value
// from before it: both are yielded, the latter as it is.
// CHECK-LABEL: func.func @last_choice
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[C:.+]]: i1)
// CHECK: %[[TAIL:.+]]:2 = scf.if %[[C]] -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[G:.+]] = arith.addf
// CHECK: scf.yield %[[G]], %[[X]]
// CHECK: } else {
// CHECK: %[[P:.+]] = arith.subf
// CHECK: scf.yield %[[P]], %[[X]]
// CHECK: return %[[TAIL]]#0, %[[TAIL]]#1
func.func @last_choice(%x: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = scf.if %c -> (tensor<4xf32>) {
    %g = arith.addf %x, %x : tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  } else {
    %p = arith.subf %x, %x : tensor<4xf32>
    scf.yield %p : tensor<4xf32>
  } {linnet.form_choice}
  return %a, %x : tensor<4xf32>, tensor<4xf32>
}

// An unmarked if, and a marked one of a constant condition, stay as they
// are (the canonicalizer folds the latter).
// CHECK-LABEL: func.func @unmarked
// CHECK: %[[A:.+]] = scf.if
// CHECK: %[[B:.+]] = scf.if %true
// CHECK-NOT: linnet.form_choice
// CHECK: %[[S:.+]] = arith.addf %[[A]], %[[B]]
// CHECK-NEXT: return %[[S]]
func.func @unmarked(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %true = arith.constant true
  %a = scf.if %c -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    %p = arith.subf %x, %x : tensor<4xf32>
    scf.yield %p : tensor<4xf32>
  }
  %b = scf.if %true -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    %p = arith.subf %x, %x : tensor<4xf32>
    scf.yield %p : tensor<4xf32>
  } {linnet.form_choice}
  %s = arith.addf %a, %b : tensor<4xf32>
  return %s : tensor<4xf32>
}
