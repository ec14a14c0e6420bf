#include <cuda_fp16.h>
template <typename T, bool kNchw, bool kSide, bool kBody>
__global__ void bn_infer(int count, int channels, int inner, const T* in, const float* scale, const float* offset,
                         const float* mean, const float* var, const T* side, float eps, T* out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    if (!kBody) { out[i] = in[i]; continue; }
    const int c = kNchw ? (i / inner) % channels : i % channels;
    float x = float(in[i]);
    float s = rsqrtf(var[c] + eps) * scale[c];
    float y = fmaf(x - mean[c], s, offset[c]);
    if (kSide) y += float(side[i]);
    out[i] = T(y < 0.f ? 0.f : y);
  }
}
#define I(T,a,b,c) template __global__ void bn_infer<T,a,b,c>(int,int,int,const T*,const float*,const float*,const float*,const float*,const T*,float,T*);
I(float,true,false,true) I(float,true,false,false) I(__half,true,false,true) I(__half,true,false,false) I(__half,true,true,true) I(__half,false,false,true) I(float,false,false,true)
