// Test plugin: a shared library that is not a clfilter plugin (no entry symbols).
extern "C" __attribute__((visibility("default"))) int not_a_plugin() { return 42; }
