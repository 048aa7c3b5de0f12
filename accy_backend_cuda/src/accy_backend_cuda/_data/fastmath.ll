; accy CUDA backend: f32 transcendentals from PTX approximation instructions, linked when no
; libdevice is found (see docs/cuda.md for the error bounds). Each function is internalized
; after linking and dropped by GlobalDCE when the kernel does not call it.
target triple = "nvptx64-nvidia-cuda"

declare float @llvm.nvvm.ex2.approx.f(float)
declare float @llvm.nvvm.lg2.approx.f(float)
declare float @llvm.sin.f32(float)
declare float @llvm.cos.f32(float)
declare float @llvm.fabs.f32(float)
declare float @llvm.copysign.f32(float, float)

; exp(x) = 2^(x * log2(e))
define float @accy_cuda_fast_expf(float %x) alwaysinline {
  %y = fmul float %x, 0x3FF7154760000000
  %r = call float @llvm.nvvm.ex2.approx.f(float %y)
  ret float %r
}

; log(x) = log2(x) * ln(2)
define float @accy_cuda_fast_logf(float %x) alwaysinline {
  %l = call float @llvm.nvvm.lg2.approx.f(float %x)
  %r = fmul float %l, 0x3FE62E4300000000
  ret float %r
}

define float @accy_cuda_fast_log2f(float %x) alwaysinline {
  %r = call float @llvm.nvvm.lg2.approx.f(float %x)
  ret float %r
}

define float @accy_cuda_fast_exp2f(float %x) alwaysinline {
  %r = call float @llvm.nvvm.ex2.approx.f(float %x)
  ret float %r
}

; pow(x, y) = 2^(y * log2(x)); NaN for x < 0 (libdevice handles integer y)
define float @accy_cuda_fast_powf(float %x, float %y) alwaysinline {
  %l = call float @llvm.nvvm.lg2.approx.f(float %x)
  %p = fmul float %y, %l
  %r = call float @llvm.nvvm.ex2.approx.f(float %p)
  ret float %r
}

define float @accy_cuda_fast_sinf(float %x) alwaysinline {
  %r = call afn float @llvm.sin.f32(float %x)
  ret float %r
}

define float @accy_cuda_fast_cosf(float %x) alwaysinline {
  %r = call afn float @llvm.cos.f32(float %x)
  ret float %r
}

; tanh(x): odd Taylor polynomial x - x^3/3 + 2x^5/15 - 17x^7/315 below |x| = 0.0625,
; else sign(x) * (1 - 2 / (2^(2|x| log2 e) + 1)), which saturates to +-1 for large |x|
define float @accy_cuda_fast_tanhf(float %x) alwaysinline {
entry:
  %a = call float @llvm.fabs.f32(float %x)
  %small = fcmp olt float %a, 0x3FB0000000000000
  br i1 %small, label %poly, label %expo
poly:
  %x2 = fmul float %x, %x
  %c7 = fmul float %x2, 0xBFABA1BA20000000
  %c5 = fadd float %c7, 0x3FC1111120000000
  %m5 = fmul float %x2, %c5
  %c3 = fadd float %m5, 0xBFD5555560000000
  %m3 = fmul float %x2, %c3
  %m1 = fmul float %x, %m3
  %p = fadd float %x, %m1
  ret float %p
expo:
  %t = fmul float %a, 0x4007154760000000
  %e = call float @llvm.nvvm.ex2.approx.f(float %t)
  %d = fadd float %e, 1.0
  %q = fdiv float 2.0, %d
  %r = fsub float 1.0, %q
  %s = call float @llvm.copysign.f32(float %r, float %x)
  ret float %s
}
