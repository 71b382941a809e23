{
  "targets": [
    {
      "target_name": "synthd_native",
      "sources": ["src/addon.cc", "src/sampling.cc", "src/parallel.cc", "src/fdlibm_exp.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-O3", "-ffp-contract=off", "-pthread"],
      "ldflags": ["-pthread"]
    }
  ]
}
