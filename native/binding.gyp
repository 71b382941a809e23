{
  "targets": [
    {
      "target_name": "synthd_native",
      "sources": [
        "src/addon.cc", "src/sampling.cc", "src/parallel.cc", "src/fdlibm_exp.cc", "src/calibrate.cc",
        "src/calibrate_binding.cc", "src/draws.cc", "src/draws_binding.cc", "src/mixture_binding.cc", "src/repair.cc", "src/repair_binding.cc", "src/csv_rows.cc", "src/csv_rows_binding.cc", "src/decode_loops.cc", "src/decode_loops_binding.cc",
        "src/train/core_binding.cc", "src/train/generator_core.cc", "src/train/gemm.cc",
        "src/train/gemm_kernels.cc", "src/train/vmath.cc", "src/train/thread_pool.cc", "src/train/cpu.cc",
        "src/train/background.cc", "src/gpu/gpu_loader.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-O3", "-ffp-contract=off", "-fno-math-errno", "-pthread"],
      "ldflags": ["-pthread"],
      "libraries": ["-ldl"]
    }
  ]
}
