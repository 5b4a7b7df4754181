# The GDB extension: Python package over a C module over libloopscope.
