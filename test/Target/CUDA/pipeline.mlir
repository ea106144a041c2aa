// The CUDA pipeline from linalg on tensors to cubins: dispatch regions with
// the GPU's block tiles (a SiLU row by row, a row sum with its fill fused,
// 8 rows a block: a warp reduction, each row a warp's),
// bufferized, each region a kernel (gpu.func), the two independent ones
// one launch of two parts, and each kernel through NVVM and ptxas to a
// cubin for sm_90a.
// REQUIRES: ptxas
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=LINALG
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=KERNELS
// RUN: linnet-opt %s --linnet-cuda-pipeline | FileCheck %s --check-prefix=BINARY
// RUN: not linnet-opt %s --linnet-cuda-pipeline="features=+ptx60" 2>&1 | FileCheck %s --check-prefix=OLD-PTX
// RUN: not linnet-opt %s --linnet-cuda-pipeline="chip=sm_50" 2>&1 | FileCheck %s --check-prefix=CHIP

// LINALG-LABEL: func.func @silu_rowsum
// LINALG: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (%{{.*}}, 256) step (1, 256)
// LINALG: mapping = [#gpu.block<linear_dim_0>, #gpu.block<linear_dim_1>]
// LINALG: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (8)
// LINALG: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(
// LINALG: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// LINALG: scf.forall.in_parallel

// KERNELS-LABEL: func.func @silu_rowsum
// KERNELS: gpu.launch_func @silu_rowsum_kernels::@silu_rowsum_0_generic_and_1 blocks in (%{{.*}}, %c1, %c1) threads in (%c256, %c1, %c1)
// KERNELS-NOT: gpu.launch_func
// KERNELS: gpu.module @silu_rowsum_kernels
// KERNELS: gpu.func @silu_rowsum_0_generic_and_1({{.*}}) kernel
// KERNELS: scf.if
// KERNELS: math.exp
// KERNELS: } {linnet.launch_part}
// KERNELS: scf.if
// KERNELS: vector.load {{.*}} {alignment = 16 : i64} : memref<?x256xf32, {{.*}}>, vector<4xf32>
// KERNELS: gpu.shuffle xor
// KERNELS: gpu.barrier
// KERNELS: } {linnet.launch_part}

// BINARY: llvm.func @silu_rowsum
// BINARY: gpu.binary @silu_rowsum_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx81">, properties = {{.*}}, bin = "\7FELF

// LLVM 22 cannot write sm_90a in PTX 6.0 (and aborts the process if asked
// to): the pipeline checks the options first.
// OLD-PTX: error: `features=+ptx60`: sm_90a needs PTX 8.0 to 9.0 (+ptx80 to +ptx90)
// CHIP: error: `chip=sm_50` is not a GPU the CUDA target knows (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a)

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @silu_rowsum(%x: tensor<?x256xf32>) -> (tensor<?x256xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x256xf32>
  %e = tensor.empty(%n) : tensor<?x256xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %neg = arith.negf %a : f32
    %ex = math.exp %neg : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %a, %d : f32
    linalg.yield %s : f32
  } -> tensor<?x256xf32>
  %z = arith.constant 0.0 : f32
  %er = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%z : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
       ins(%x : tensor<?x256xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %y, %r : tensor<?x256xf32>, tensor<?xf32>
}
