; LLVM 22's SPIR-V backend crashes on this module (SPIRVPreLegalizer assertion or segfault):
; a GELU's tanh as once lowered for Vulkan, select(x < 0.0, -m, m) inside a second select,
; reduced by replacing values with copies of the input (issue 10).
target triple = "spirv-unknown-vulkan1.3-compute"
@.binding.0 = private unnamed_addr constant [13 x i8] c"accy.b0.out0\00", align 1
@.binding.1 = private unnamed_addr constant [12 x i8] c"accy.b1.in0\00", align 1
attributes #0 = { "hlsl.numthreads"="64,1,1" "hlsl.shader"="compute" }
attributes #1 = { convergent nounwind }

declare float @llvm.exp.f32(float)
declare float @llvm.fabs.f32(float)
declare i32 @llvm.spv.thread.id.i32(i32)
declare ptr addrspace(11) @llvm.spv.resource.getpointer.p11.tspirv.VulkanBuffer_a0f32_12_1t(target("spirv.VulkanBuffer", [0 x float], 12, 1), i32)
declare target("spirv.VulkanBuffer", [0 x float], 12, 1) @llvm.spv.resource.handlefrombinding.tspirv.VulkanBuffer_a0f32_12_1t(i32, i32, i32, i32, ptr)

define void @main() #0 {
entry:
  %b0 = call target("spirv.VulkanBuffer", [0 x float], 12, 1) @llvm.spv.resource.handlefrombinding.tspirv.VulkanBuffer_a0f32_12_1t(i32 0, i32 0, i32 1, i32 0, ptr @.binding.0)
  %b1 = call target("spirv.VulkanBuffer", [0 x float], 12, 1) @llvm.spv.resource.handlefrombinding.tspirv.VulkanBuffer_a0f32_12_1t(i32 0, i32 1, i32 1, i32 0, ptr @.binding.1)
  %var.gid.2 = alloca i32, align 8
  %var.v1.8 = alloca float, align 8
  %var.v2.11 = alloca float, align 8
  %var.v3.15 = alloca float, align 8
  %var.v4.19 = alloca float, align 8
  %var.v5.22 = alloca float, align 8
  %var.v6.26 = alloca float, align 8
  %var.v7.29 = alloca float, align 8
  %var.v8.54 = alloca float, align 8
  %var.v9.57 = alloca float, align 8
  %var.v10.61 = alloca float, align 8
  %v1 = call i32 @llvm.spv.thread.id.i32(i32 0)
  store i32 %v1, ptr %var.gid.2
  %v3 = load i32, ptr %var.gid.2
  %v4 = sext i32 %v3 to i64
  %v5 = trunc i64 %v4 to i32
  %v6 = call ptr addrspace(11) @llvm.spv.resource.getpointer.p11.tspirv.VulkanBuffer_a0f32_12_1t(target("spirv.VulkanBuffer", [0 x float], 12, 1) %b1, i32 %v5)
  %v7 = load float, ptr addrspace(11) %v6, align 4
  store float %v7, ptr %var.v1.8
  %v9 = fadd float %v7, 0.0
  %v10 = fadd float %v7, 0.0
  store float %v10, ptr %var.v2.11
  %v12 = fadd float %v7, 0.0
  %v13 = fadd float %v7, 0.0
  %v14 = fadd float %v7, 0.0
  store float %v14, ptr %var.v3.15
  %v16 = fadd float %v7, 0.0
  %v17 = fadd float %v7, 0.0
  %v18 = fadd float %v7, 0.0
  store float %v18, ptr %var.v4.19
  %v20 = fadd float %v7, 0.0
  %v21 = fadd float %v7, 0.0
  store float %v21, ptr %var.v5.22
  %v23 = fadd float %v7, 0.0
  %v24 = fadd float %v7, 0.0
  %v25 = fadd float %v7, 0.0
  store float %v25, ptr %var.v6.26
  %v27 = fadd float %v7, 0.0
  %v28 = fmul float 0x3FE9884540000000, %v27
  store float %v28, ptr %var.v7.29
  %v30 = load float, ptr %var.v7.29
  %v31 = fadd float %v7, 0.0
  %v32 = fadd float %v7, 0.0
  %v33 = fadd float %v7, 0.0
  %v34 = fadd float %v7, 0.0
  %v35 = fadd float %v7, 0.0
  %v36 = fadd float %v7, 0.0
  %v37 = fadd float %v7, 0.0
  %v38 = fadd float %v7, 0.0
  %v39 = fadd float %v7, 0.0
  %v40 = fadd float %v7, 0.0
  %v41 = fadd float %v7, 0.0
  %v42 = fadd float %v7, 0.0
  %v43 = fmul float %v30, %v42
  %v44 = fadd float %v7, 0.0
  %v45 = fadd float %v7, 0.0
  %v46 = fadd float %v7, 0.0
  %v47 = fadd float %v7, 0.0
  %v48 = fadd float %v7, 0.0
  %v49 = fcmp olt float %v30, 0x0000000000000000
  %v50 = fneg float %v48
  %v51 = select i1 %v49, float %v50, float %v48
  %v52 = fcmp olt float %v31, 0x3FD0000000000000
  %v53 = select i1 %v52, float %v43, float %v51
  store float %v53, ptr %var.v8.54
  %v55 = load float, ptr %var.v8.54
  %v56 = fadd float 0x3FF0000000000000, %v55
  store float %v56, ptr %var.v9.57
  %v58 = fadd float %v7, 0.0
  %v59 = load float, ptr %var.v9.57
  %v60 = fmul float %v58, %v59
  store float %v60, ptr %var.v10.61
  %v62 = load float, ptr %var.v10.61
  %v63 = load i32, ptr %var.gid.2
  %v64 = sext i32 %v63 to i64
  %v65 = trunc i64 %v64 to i32
  %v66 = call ptr addrspace(11) @llvm.spv.resource.getpointer.p11.tspirv.VulkanBuffer_a0f32_12_1t(target("spirv.VulkanBuffer", [0 x float], 12, 1) %b0, i32 %v65)
  store float %v62, ptr addrspace(11) %v66, align 4
  ret void
}
