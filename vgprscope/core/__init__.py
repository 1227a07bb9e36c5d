"""The core: what every layer above passes and computes with, vendor-neutral and pure: typed errors, files,
the one arch table, records and configs, the compile job, the occupancy rules and the compiler-output parsers."""
