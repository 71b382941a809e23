// The CUDA compute core's C interface: the generator of generator_core.h (forward, backward, the
// marginal KL loss, Adam, generation = forward + sampling) on one NVIDIA GPU, GEMMs through cuBLAS.
//
// It lives in its own shared library, libsynthd_gpu.so (native/src/gpu/gpu_core.cu, built by
// native/build.js only when nvcc and cuBLAS are found), which the addon opens with dlopen when a
// core is created with device "gpu" (gpu_loader.h). So the addon itself never links CUDA: it
// builds and loads on machines without nvcc, cuBLAS or a GPU, where the CPU path stays the only one.
//
// Conventions (those of generator_core.h): row-major float32 matrices; parameters as one flat
// vector in the order of ParamIndex; latents z n x E; uniforms n x F float64 in [0, 1); codes
// F x n column-major int32. Every function returns 0 on success and -1 on failure, with the
// message in sg_last_error(handle) (or `err` for sg_create / sg_device_info). Host pointers are
// ordinary (pageable) memory; every call is synchronous (returns once the GPU is done).
#ifndef SYNTHD_NATIVE_GPU_GPU_API_H_
#define SYNTHD_NATIVE_GPU_GPU_API_H_

#include <stddef.h>
#include <stdint.h>

#define SYNTHD_GPU_ABI_VERSION 1

extern "C" {

// Shapes: E latent width, H hidden width, L residual blocks, F features, D = sum K_f;
// card[F] = K_f; off[F + 1] = feature offsets.
struct SgSpec {
  int64_t E, H, L, F, D;
  const int32_t* card;
  const int64_t* off;
};

// Offsets of the parameters in the flat vector; blocks[4 l + {0,1,2,3}] = ln.gamma, ln.beta, fc.W,
// fc.b of block l.
struct SgIndex {
  int64_t in_W, in_b, out_W, out_b, total;
  const int64_t* blocks;
};

// Sampling failure: kind 1 = a non-finite logit, 2 = logit / temperature overflows; index is the
// flat index into the n x D logits, value the logit. kind 0: none.
struct SgSampleError {
  int kind;
  int64_t index;
  double value;
};

typedef int (*sg_abi_version_fn)(void);
typedef int (*sg_device_info_fn)(char* name, size_t cap);
typedef void* (*sg_create_fn)(const SgSpec* spec, const SgIndex* index, int tf32, char* err, size_t cap);
typedef void (*sg_destroy_fn)(void* h);
typedef const char* (*sg_last_error_fn)(void* h);
typedef int (*sg_params_fn)(void* h, float* params, int upload);
typedef int (*sg_adam_fn)(void* h, float* m, float* v, int upload);
typedef int (*sg_set_targets_fn)(void* h, const float* q1, int64_t nblocks, const int32_t* f, const int64_t* c0,
                                 const int64_t* c1, const float* const* targets, double count, double neg_entropy,
                                 int dense);
typedef int (*sg_loss_fn)(void* h, const float* z, int64_t n, float* grad, double entropy_alpha, double* loss);
typedef int (*sg_train_step_fn)(void* h, const float* z, int64_t n, double lr, int64_t t_next, double entropy_alpha,
                                double* loss, int* applied);
typedef int (*sg_eval_loss_fn)(void* h, const float* z, int64_t n, double* loss);
typedef int (*sg_generate_fn)(void* h, const float* z, int64_t n, const double* uniforms, double temperature,
                              int truncate, double top_p, int32_t* codes, float* logits_out, SgSampleError* err,
                              int64_t* bad_input);
typedef int (*sg_release_fn)(void* h);

// Exported by libsynthd_gpu.so:
// int sg_abi_version(void): SYNTHD_GPU_ABI_VERSION.
// int sg_device_info(name, cap): the number of CUDA devices (> 0, with device 0's name in name),
//   or 0 with the reason in name (no driver, no device).
// void* sg_create(spec, index, tf32, err, cap): a core on device 0 with its parameters zeroed
//   (LayerNorm gains 1); tf32 != 0 lets cuBLAS use TF32 tensor cores for the GEMMs. NULL on failure.
// sg_params(h, params, upload): upload (1) or download (0) the flat parameters.
// sg_adam(h, m, v, upload): likewise Adam's moments (zeroed at creation).
// sg_set_targets(...): the targets of generator_core.h SetTargets; dense != 0: the 2-way products as
//   one D x D Gram matrix (P^T P), else per pair block.
// sg_loss(h, z, n, grad, alpha, loss): loss of the batch, and its gradient when grad is not NULL.
// sg_train_step(h, z, n, lr, t_next, alpha, loss, applied): forward, loss, backward, then Adam with
//   step count t_next (bias corrections 1 - beta^t_next) when the loss and every gradient are
//   finite (*applied = 1), else nothing is updated (*applied = 0).
// sg_eval_loss(h, z, n, loss): loss over n latents, summed over chunks.
// sg_generate(h, z, n, u, T, truncate, top_p, codes, logits_out, err, bad_input): forward + the
//   sampling kernel of sampling.h (bit-identical codes for identical logits and uniforms). z and u
//   are checked on the GPU: *bad_input = the first flat index of z that is not finite, or
//   n*E + the first index of u outside [0, 1), or -1. codes may be NULL (logits only).
// sg_release(h): frees every buffer but the parameters, the targets and Adam's moments.
}

#endif  // SYNTHD_NATIVE_GPU_GPU_API_H_
