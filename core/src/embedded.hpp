// Kernel sources compiled into libclfilter by clf_embed_kernels (see core/CMakeLists.txt).
#pragma once
extern const char* const clf_kernel_contract_h;
extern const char* const clf_kernel_border_clh;
extern const char* const clf_kernel_stage_clh;
extern const char* const clf_kernel_correlate_clh;
extern const char* const clf_kernel_pack_cl;
extern const char* const clf_kernel_pad_cl;
extern const char* const clf_kernel_fft_cl;
