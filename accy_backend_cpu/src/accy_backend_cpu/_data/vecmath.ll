; accy CPU backend: f32 exp, log and tanh as straight-line arithmetic, so the loop vectorizer
; can turn a kernel's work-item loop into SIMD code (calls to libm's expf block it).
; Algorithms and coefficients: Cephes Math Library (S. L. Moshier), expf.c, logf.c, tanhf.c.
; Range reduction: exp(x) = 2^n * exp(r), n = rint(x / ln 2), r = x - n ln 2 (two-part ln 2);
; the scale 2^n is applied in two halves so subnormal results are kept.
; Accuracy measured against numpy (float32) over ~5.2M inputs per function (uniform over the
; whole finite range plus a dense core and the special values): exp <= 3 ulp, log <= 4 ulp,
; tanh <= 2 ulp; NaN, ±inf, ±0 and overflow/underflow follow libm.
; Every function is internal and alwaysinline: unused ones vanish from the object file.

declare float @llvm.rint.f32(float)
declare float @llvm.fabs.f32(float)
declare float @llvm.copysign.f32(float, float)
declare float @llvm.minnum.f32(float, float)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.fma.f32(float, float, float)

define internal float @accy_cpu_expf(float %x) alwaysinline nounwind readnone {
  %c0 = call float @llvm.maxnum.f32(float %x, float -1.040000e+02)
  %c = call float @llvm.minnum.f32(float %c0, float 8.900000e+01)
  %t = fmul float %c, 0x3FF7154760000000
  %n = call float @llvm.rint.f32(float %t)
  %r0 = call float @llvm.fma.f32(float %n, float -6.93359375e-01, float %c)
  %r = call float @llvm.fma.f32(float %n, float 0x3F2BD01060000000, float %r0)
  %p0 = call float @llvm.fma.f32(float 0x3F2A0D2CE0000000, float %r, float 0x3F56E879C0000000)
  %p1 = call float @llvm.fma.f32(float %p0, float %r, float 0x3F81112100000000)
  %p2 = call float @llvm.fma.f32(float %p1, float %r, float 0x3FA5553820000000)
  %p3 = call float @llvm.fma.f32(float %p2, float %r, float 0x3FC5555540000000)
  %p4 = call float @llvm.fma.f32(float %p3, float %r, float 0x3FE0000000000000)
  %rr = fmul float %r, %r
  %p5 = call float @llvm.fma.f32(float %p4, float %rr, float %r)
  %e = fadd float %p5, 1.000000e+00
  %ni = fptosi float %n to i32
  %n1 = ashr i32 %ni, 1
  %n2 = sub i32 %ni, %n1
  %b1 = add i32 %n1, 127
  %b2 = add i32 %n2, 127
  %s1i = shl i32 %b1, 23
  %s2i = shl i32 %b2, 23
  %s1 = bitcast i32 %s1i to float
  %s2 = bitcast i32 %s2i to float
  %v0 = fmul float %e, %s1
  %v1 = fmul float %v0, %s2
  %big = fcmp ogt float %x, 0x40562E4300000000
  %v2 = select i1 %big, float 0x7FF0000000000000, float %v1
  %nan = fcmp uno float %x, 0.000000e+00
  %v3 = select i1 %nan, float %x, float %v2
  ret float %v3
}

define internal float @accy_cpu_logf(float %x) alwaysinline nounwind readnone {
  %tiny = fcmp olt float %x, 0x3810000000000000
  %xs = fmul float %x, 0x4160000000000000
  %xx = select i1 %tiny, float %xs, float %x
  %adj = select i1 %tiny, i32 -23, i32 0
  %bits = bitcast float %xx to i32
  %ex0 = lshr i32 %bits, 23
  %ex1 = and i32 %ex0, 255
  %ex2 = add i32 %ex1, -126
  %ex = add i32 %ex2, %adj
  %mb0 = and i32 %bits, 8388607
  %mb = or i32 %mb0, 1056964608
  %m = bitcast i32 %mb to float
  %small = fcmp olt float %m, 0x3FE6A09E60000000
  %exm = sub i32 %ex, 1
  %e_i = select i1 %small, i32 %exm, i32 %ex
  %m2 = fadd float %m, %m
  %ma = fadd float %m2, -1.000000e+00
  %mb1 = fadd float %m, -1.000000e+00
  %f = select i1 %small, float %ma, float %mb1
  %e = sitofp i32 %e_i to float
  %z = fmul float %f, %f
  %q0 = call float @llvm.fma.f32(float 0x3FB2043760000000, float %f, float 0xBFBD7A3700000000)
  %q1 = call float @llvm.fma.f32(float %q0, float %f, float 0x3FBDE4A340000000)
  %q2 = call float @llvm.fma.f32(float %q1, float %f, float 0xBFBFCBA9E0000000)
  %q3 = call float @llvm.fma.f32(float %q2, float %f, float 0x3FC23D37E0000000)
  %q4 = call float @llvm.fma.f32(float %q3, float %f, float 0xBFC555CA00000000)
  %q5 = call float @llvm.fma.f32(float %q4, float %f, float 0x3FC999D580000000)
  %q6 = call float @llvm.fma.f32(float %q5, float %f, float 0xBFCFFFFF80000000)
  %q7 = call float @llvm.fma.f32(float %q6, float %f, float 0x3FD5555540000000)
  %q8 = fmul float %q7, %f
  %y0 = fmul float %q8, %z
  %y1 = call float @llvm.fma.f32(float %e, float 0xBF2BD01060000000, float %y0)
  %y2 = call float @llvm.fma.f32(float %z, float -5.000000e-01, float %y1)
  %s0 = fadd float %f, %y2
  %r = call float @llvm.fma.f32(float %e, float 6.93359375e-01, float %s0)
  %neg = fcmp olt float %x, 0.000000e+00
  %r1 = select i1 %neg, float 0x7FF8000000000000, float %r
  %zero = fcmp oeq float %x, 0.000000e+00
  %r2 = select i1 %zero, float 0xFFF0000000000000, float %r1
  %inf = fcmp oeq float %x, 0x7FF0000000000000
  %r3 = select i1 %inf, float %x, float %r2
  %nan = fcmp uno float %x, 0.000000e+00
  %r4 = select i1 %nan, float %x, float %r3
  ret float %r4
}

define internal float @accy_cpu_tanhf(float %x) alwaysinline nounwind readnone {
  %a = call float @llvm.fabs.f32(float %x)
  %z = fmul float %x, %x
  %p0 = call float @llvm.fma.f32(float 0xBF775E1D40000000, float %z, float 0x3F952269C0000000)
  %p1 = call float @llvm.fma.f32(float %p0, float %z, float 0xBFAB83C5A0000000)
  %p2 = call float @llvm.fma.f32(float %p1, float %z, float 0x3FC1107260000000)
  %p3 = call float @llvm.fma.f32(float %p2, float %z, float 0xBFD5555320000000)
  %p4 = fmul float %p3, %z
  %small = call float @llvm.fma.f32(float %p4, float %x, float %x)
  %a2 = fadd float %a, %a
  %t = call float @accy_cpu_expf(float %a2)
  %t1 = fadd float %t, 1.000000e+00
  %q = fdiv float 2.000000e+00, %t1
  %l = fsub float 1.000000e+00, %q
  %large = call float @llvm.copysign.f32(float %l, float %x)
  %is_small = fcmp olt float %a, 6.250000e-01
  %r = select i1 %is_small, float %small, float %large
  %nan = fcmp uno float %x, 0.000000e+00
  %r1 = select i1 %nan, float %x, float %r
  %zero = fcmp oeq float %x, 0.000000e+00 ; tanh(-0.0) = -0.0: the fma above gives +0.0
  %r2 = select i1 %zero, float %x, float %r1
  ret float %r2
}
